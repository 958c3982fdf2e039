// ffmpeg and ffprobe as the media formats run them: only local files, never the network (a
// playlist or a concat list disguised as a media file is refused before anything is fetched),
// remuxing and MP3 extraction checked on a generated clip, the output cap (-fs) on a source that
// inflates when re-encoded, the bound on processes running at once, an abort killing the process,
// the MIME type of probed containers, and a missing binary reported by name.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { Ffmpeg, FfmpegFailed, FfmpegOutputTooLarge, isExecutable, mediaType } from '../../src/scrape/media/ffmpeg.ts';
import { FfmpegUnavailableError } from '../../src/errors.ts';

const run = promisify(execFile);
const OPTIONS = { ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe', maxProcesses: 2, maxBytes: 100 * 1024 * 1024 };
const ffmpeg = new Ffmpeg(OPTIONS);
const signal = () => AbortSignal.timeout(30_000);
let dir: string;
let server: Server;
let origin: string;
const requests: string[] = [];

before(async () => {
  assert.ok(
    isExecutable('ffmpeg') && isExecutable('ffprobe'),
    'ffmpeg and ffprobe are needed (Debian package ffmpeg; .ci/run installs it)',
  );
  dir = await mkdtemp(join(tmpdir(), 'gleaner-ffmpeg-test-'));
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await run('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc=duration=2:size=96x64:rate=10',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=500:duration=2',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-c:a',
    'aac',
    '-shortest',
    '-f',
    'mpegts',
    join(dir, 'clip.ts'),
  ]);
  // Two minutes of FLAC silence: about 25 kB, and about 480 kB once encoded as MP3.
  await run('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'anullsrc=r=44100:cl=stereo',
    '-t',
    '120',
    '-c:a',
    'flac',
    join(dir, 'silence.flac'),
  ]);
});

/**
 * A stand-in for ffprobe that logs "start PID" and "end PID" lines to `log` around `body`, then
 * prints an empty JSON object (a probe of nothing).
 */
async function fakeProbe(name: string, log: string, body: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, `#!/bin/sh\necho "start $$" >> '${log}'\n${body}\necho "end $$" >> '${log}'\necho '{}'\n`);
  await chmod(path, 0o755);
  return path;
}

const logLines = async (log: string) => (await readFile(log, 'utf8').catch(() => '')).split('\n').filter(Boolean);

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; !(await check());) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

after(async () => {
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('ffmpeg on local files only', () => {
  test('a playlist, a concat list or an SDP disguised as media is refused and nothing is fetched', async () => {
    // The playlist, concat and SDP demuxers are refused by our list ("Format not on whitelist")
    // before they open anything: without it, ffmpeg's own HLS and concat demuxers would decide
    // for themselves which files or URLs to open (only their own, version-dependent checks in the
    // way), and the SDP one RTP sockets.
    const guarded = /Format not on whitelist 'mov,mp4/;
    const disguised: [string, string, RegExp][] = [
      ['playlist.mp4', `#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n${origin}/segment.ts\n#EXT-X-ENDLIST\n`, guarded],
      ['local.bin', '#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n', guarded],
      [
        'stream.sdp',
        'v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nt=0 0\nm=video 5004 RTP/AVP 96\n',
        guarded,
      ],
      ['concat.mp4', `ffconcat version 1.0\nfile ${origin}/part.ts\n`, guarded],
    ];
    for (const [name, text, reason] of disguised) {
      const path = join(dir, name);
      await writeFile(path, text);
      await assert.rejects(
        ffmpeg.probe(path, signal()),
        (err: Error) => err instanceof FfmpegFailed && reason.test(err.message),
        name,
      );
      await assert.rejects(
        ffmpeg.extractMp3(path, join(dir, `${name}.mp3`), signal()),
        (err: Error) => err instanceof FfmpegFailed && reason.test(err.message),
        name,
      );
    }
    assert.deepEqual(requests, [], 'no request left ffmpeg');
  });

  test('probe, remux to MP4 without re-encoding, and MP3 extraction of a generated clip', async () => {
    const ts = await ffmpeg.probe(join(dir, 'clip.ts'), signal());
    assert.equal(ts.format, 'mpegts');
    assert.deepEqual(ts.streams.map((s) => `${s.type}:${s.codec}`).sort(), ['audio:aac', 'video:h264']);
    assert.deepEqual(mediaType(ts), { mimeType: 'video/mp2t', ext: 'ts' });

    const mp4 = join(dir, 'clip.mp4');
    await ffmpeg.remuxToMp4([{ path: join(dir, 'clip.ts'), streams: 'all' }], mp4, signal());
    const remuxed = await ffmpeg.probe(mp4, signal());
    assert.deepEqual(mediaType(remuxed), { mimeType: 'video/mp4', ext: 'mp4' });
    assert.deepEqual(remuxed.streams.map((s) => `${s.type}:${s.codec}`).sort(), ['audio:aac', 'video:h264']);
    assert.ok(Math.abs((remuxed.duration ?? 0) - 2) < 0.25, String(remuxed.duration));

    const videoOnly = join(dir, 'video-only.mp4');
    await ffmpeg.remuxToMp4([{ path: join(dir, 'clip.ts'), streams: 'video' }], videoOnly, signal());
    assert.deepEqual(
      (await ffmpeg.probe(videoOnly, signal())).streams.map((s) => s.type),
      ['video'],
    );

    const mp3 = join(dir, 'clip.mp3');
    await ffmpeg.extractMp3(mp4, mp3, signal());
    const audio = await ffmpeg.probe(mp3, signal());
    assert.deepEqual(mediaType(audio), { mimeType: 'audio/mpeg', ext: 'mp3' });
    assert.deepEqual(
      audio.streams.map((s) => `${s.type}:${s.codec}`),
      ['audio:mp3'],
    );
    await assert.rejects(ffmpeg.extractMp3(videoOnly, join(dir, 'none.mp3'), signal()), FfmpegFailed, 'no audio track');
  });

  test('what ffmpeg writes is capped at maxBytes (-fs): an MP3 far larger than its source is refused, not kept', async () => {
    const source = (await stat(join(dir, 'silence.flac'))).size;
    const maxBytes = 200_000;
    assert.ok(source < maxBytes / 4, `the source fits well under the cap (${source})`);
    const capped = new Ffmpeg({ ...OPTIONS, maxBytes });
    const out = join(dir, 'silence-capped.mp3');
    await assert.rejects(
      capped.extractMp3(join(dir, 'silence.flac'), out, signal()),
      (err: unknown) => err instanceof FfmpegOutputTooLarge && err.maxBytes === maxBytes,
    );
    // ffmpeg stopped at the cap rather than writing the whole file.
    assert.ok((await stat(out)).size < maxBytes + 64 * 1024, String((await stat(out)).size));
    const whole = join(dir, 'silence.mp3');
    await ffmpeg.extractMp3(join(dir, 'silence.flac'), whole, signal());
    assert.ok((await stat(whole)).size > maxBytes, 'uncapped, the MP3 is larger than the cap');
    // A remux is capped the same way.
    await assert.rejects(
      new Ffmpeg({ ...OPTIONS, maxBytes: 10_000 }).remuxToMp4(
        [{ path: join(dir, 'clip.ts'), streams: 'all' }],
        join(dir, 'capped.mp4'),
        signal(),
      ),
      FfmpegOutputTooLarge,
    );
  });

  test('an aborted run is killed (the process is gone) and rejects with the reason', async () => {
    const log = join(dir, 'abort.log');
    const slow = new Ffmpeg({
      ...OPTIONS,
      ffprobePath: await fakeProbe('sleepy-probe', log, 'exec sleep 30'),
      maxProcesses: 1,
    });
    const controller = new AbortController();
    const running = slow.probe(join(dir, 'clip.ts'), controller.signal);
    await until(async () => (await logLines(log)).length === 1, 'the process to start');
    const pid = Number((await logLines(log))[0].split(' ')[1]);
    assert.ok(alive(pid));
    controller.abort(new Error('deadline'));
    await assert.rejects(running, /deadline/);
    assert.equal(alive(pid), false, 'killed, and reaped before the run settled');
    // Its slot is free again (maxProcesses 1): the next run starts at once.
    const quick = new Ffmpeg({ ...OPTIONS, ffprobePath: await fakeProbe('quick-probe', log, ''), maxProcesses: 1 });
    assert.deepEqual(await quick.probe(join(dir, 'clip.ts'), signal()), { format: '', streams: [] });
  });

  test("maxProcesses: at most that many processes at once; a wait for a slot ends with the caller's deadline", async () => {
    const log = join(dir, 'concurrency.log');
    const limited = new Ffmpeg({
      ...OPTIONS,
      ffprobePath: await fakeProbe('slow-probe', log, 'sleep 0.3'),
      maxProcesses: 2,
    });
    await Promise.all(Array.from({ length: 5 }, () => limited.probe(join(dir, 'clip.ts'), signal())));
    const lines = await logLines(log);
    assert.equal(lines.length, 10);
    let running = 0;
    let most = 0;
    for (const line of lines) {
      running += line.startsWith('start') ? 1 : -1;
      most = Math.max(most, running);
    }
    assert.equal(most, 2, lines.join(', '));

    const busyLog = join(dir, 'busy.log');
    const one = new Ffmpeg({
      ...OPTIONS,
      ffprobePath: await fakeProbe('busy-probe', busyLog, 'exec sleep 30'),
      maxProcesses: 1,
    });
    const holder = new AbortController();
    const first = one.probe(join(dir, 'clip.ts'), holder.signal);
    await until(async () => (await logLines(busyLog)).length === 1, 'the first process to start');
    const started = Date.now();
    await assert.rejects(one.probe(join(dir, 'clip.ts'), AbortSignal.timeout(200)), { name: 'TimeoutError' });
    assert.ok(Date.now() - started < 5000);
    assert.equal((await logLines(busyLog)).length, 1, 'the waiting run never started a process');
    holder.abort(new Error('done'));
    await assert.rejects(first, /done/);
  });

  test('MIME types of probed containers', () => {
    const p = (format: string, types: string[], codecs: string[] = [], brand?: string) => ({
      format,
      streams: types.map((type, i) => ({ type, codec: codecs[i] ?? '' })),
      ...(brand ? { brand } : {}),
    });
    assert.deepEqual(mediaType(p('mov,mp4,m4a,3gp,3g2,mj2', ['audio'])), { mimeType: 'audio/mp4', ext: 'm4a' });
    assert.deepEqual(mediaType(p('mov,mp4,m4a,3gp,3g2,mj2', ['video'], [], 'qt  ')), {
      mimeType: 'video/quicktime',
      ext: 'mov',
    });
    assert.deepEqual(mediaType(p('matroska,webm', ['video', 'audio'], ['vp9', 'opus'])), {
      mimeType: 'video/webm',
      ext: 'webm',
    });
    assert.deepEqual(mediaType(p('matroska,webm', ['video', 'audio'], ['h264', 'aac'])), {
      mimeType: 'video/x-matroska',
      ext: 'mkv',
    });
    assert.deepEqual(mediaType(p('ogg', ['audio'], ['vorbis'])), { mimeType: 'audio/ogg', ext: 'ogg' });
    assert.deepEqual(mediaType(p('wav', ['audio'])), { mimeType: 'audio/wav', ext: 'wav' });
  });

  test('a missing binary: MEDIA_FFMPEG_UNAVAILABLE naming it, the package and the variable', async () => {
    const missing = new Ffmpeg({ ...OPTIONS, ffmpegPath: '/nonexistent/ffmpeg', ffprobePath: '/nonexistent/ffprobe' });
    await assert.rejects(missing.probe(join(dir, 'clip.ts'), signal()), (err: unknown) => {
      assert.ok(err instanceof FfmpegUnavailableError);
      assert.equal(err.code, 'MEDIA_FFMPEG_UNAVAILABLE');
      assert.equal(err.statusCode, 503);
      assert.match(err.message, /ffprobe.*\/nonexistent\/ffprobe.*apt-get install ffmpeg.*FFPROBE_PATH/);
      return true;
    });
    await assert.rejects(missing.extractMp3(join(dir, 'clip.ts'), join(dir, 'x.mp3'), signal()), /FFMPEG_PATH/);
    assert.equal(isExecutable('/nonexistent/ffmpeg'), false);
    assert.equal(isExecutable('sh'), true);
  });
});
