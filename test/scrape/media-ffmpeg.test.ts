// ffmpeg and ffprobe as the media formats run them: only local files, never the network (a
// playlist or a concat list disguised as a media file is refused before anything is fetched),
// remuxing and MP3 extraction checked on a generated clip, the MIME type of probed containers,
// and a missing binary reported by name.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { FfmpegUnavailableError } from '../../src/scrape/errors.ts';
import { Ffmpeg, FfmpegFailed, isExecutable, mediaType } from '../../src/scrape/media/ffmpeg.ts';

const run = promisify(execFile);
const ffmpeg = new Ffmpeg({ ffmpegPath: 'ffmpeg', ffprobePath: 'ffprobe' });
const signal = () => AbortSignal.timeout(30_000);
let dir: string;
let server: Server;
let origin: string;
const requests: string[] = [];

before(async () => {
  assert.ok(isExecutable('ffmpeg') && isExecutable('ffprobe'), 'ffmpeg and ffprobe are needed (Debian package ffmpeg; .ci/run installs it)');
  dir = await mkdtemp(join(tmpdir(), 'gleaner-ffmpeg-test-'));
  server = createServer((req, res) => {
    requests.push(req.url ?? '');
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await run('ffmpeg', [
    '-hide_banner', '-loglevel', 'error', '-y',
    '-f', 'lavfi', '-i', 'testsrc=duration=2:size=96x64:rate=10',
    '-f', 'lavfi', '-i', 'sine=frequency=500:duration=2',
    '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-c:a', 'aac', '-shortest',
    '-f', 'mpegts', join(dir, 'clip.ts'),
  ]);
});

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
      ['stream.sdp', 'v=0\no=- 0 0 IN IP4 127.0.0.1\ns=x\nc=IN IP4 127.0.0.1\nt=0 0\nm=video 5004 RTP/AVP 96\n', guarded],
      ['concat.mp4', `ffconcat version 1.0\nfile ${origin}/part.ts\n`, guarded],
    ];
    for (const [name, text, reason] of disguised) {
      const path = join(dir, name);
      await writeFile(path, text);
      await assert.rejects(ffmpeg.probe(path, signal()), (err: Error) => err instanceof FfmpegFailed && reason.test(err.message), name);
      await assert.rejects(ffmpeg.extractMp3(path, join(dir, `${name}.mp3`), signal()), (err: Error) => err instanceof FfmpegFailed && reason.test(err.message), name);
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
    assert.deepEqual((await ffmpeg.probe(videoOnly, signal())).streams.map((s) => s.type), ['video']);

    const mp3 = join(dir, 'clip.mp3');
    await ffmpeg.extractMp3(mp4, mp3, signal());
    const audio = await ffmpeg.probe(mp3, signal());
    assert.deepEqual(mediaType(audio), { mimeType: 'audio/mpeg', ext: 'mp3' });
    assert.deepEqual(audio.streams.map((s) => `${s.type}:${s.codec}`), ['audio:mp3']);
    await assert.rejects(ffmpeg.extractMp3(videoOnly, join(dir, 'none.mp3'), signal()), FfmpegFailed, 'no audio track');
  });

  test('an aborted run is killed and rejects with the reason', async () => {
    const controller = new AbortController();
    const running = ffmpeg.extractMp3(join(dir, 'clip.ts'), join(dir, 'aborted.mp3'), controller.signal);
    controller.abort(new Error('deadline'));
    await assert.rejects(running, /deadline|abort/i);
  });

  test('MIME types of probed containers', () => {
    const p = (format: string, types: string[], codecs: string[] = [], brand?: string) => ({
      format,
      streams: types.map((type, i) => ({ type, codec: codecs[i] ?? '' })),
      ...(brand ? { brand } : {}),
    });
    assert.deepEqual(mediaType(p('mov,mp4,m4a,3gp,3g2,mj2', ['audio'])), { mimeType: 'audio/mp4', ext: 'm4a' });
    assert.deepEqual(mediaType(p('mov,mp4,m4a,3gp,3g2,mj2', ['video'], [], 'qt  ')), { mimeType: 'video/quicktime', ext: 'mov' });
    assert.deepEqual(mediaType(p('matroska,webm', ['video', 'audio'], ['vp9', 'opus'])), { mimeType: 'video/webm', ext: 'webm' });
    assert.deepEqual(mediaType(p('matroska,webm', ['video', 'audio'], ['h264', 'aac'])), { mimeType: 'video/x-matroska', ext: 'mkv' });
    assert.deepEqual(mediaType(p('ogg', ['audio'], ['vorbis'])), { mimeType: 'audio/ogg', ext: 'ogg' });
    assert.deepEqual(mediaType(p('wav', ['audio'])), { mimeType: 'audio/wav', ext: 'wav' });
  });

  test('a missing binary: MEDIA_FFMPEG_UNAVAILABLE naming it, the package and the variable', async () => {
    const missing = new Ffmpeg({ ffmpegPath: '/nonexistent/ffmpeg', ffprobePath: '/nonexistent/ffprobe' });
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
