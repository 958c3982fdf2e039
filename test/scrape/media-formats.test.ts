// The media formats' candidate loop (src/scrape/formats/media.ts) against a loopback server: a
// candidate that fails (an error status, a web page) is skipped for the next with a warning, and
// its downloaded files are removed at once, so the disk holds one item's files at a time.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { DEFAULT_MEDIA_CONFIG } from '../../src/config.ts';
import { HttpEngine } from '../../src/scrape/engines/http.ts';
import { renderMediaFormats } from '../../src/scrape/formats/media.ts';
import type { MediaCandidate } from '../../src/scrape/media/discover.ts';
import { Ffmpeg, isExecutable } from '../../src/scrape/media/ffmpeg.ts';

const run = promisify(execFile);
let dir: string;
let server: Server;
let origin: string;
const http = new HttpEngine({ allowPrivateNetwork: true, maxBytes: 1024 * 1024 });

before(async () => {
  assert.ok(
    isExecutable('ffmpeg') && isExecutable('ffprobe'),
    'ffmpeg and ffprobe are needed (Debian package ffmpeg; .ci/run installs it)',
  );
  dir = await mkdtemp(join(tmpdir(), 'gleaner-media-formats-test-'));
  await run('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'testsrc=duration=1:size=96x64:rate=10',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
    '-f',
    'mpegts',
    join(dir, 'clip.ts'),
  ]);
  const clip = await readFile(join(dir, 'clip.ts'));
  server = createServer((req, res) => {
    if (req.url === '/clip.ts') res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(clip);
    else if (req.url === '/player')
      res.writeHead(200, { 'content-type': 'text/html' }).end(`<!doctype html><p>${'A player. '.repeat(500)}</p>`);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  await http.close();
  await new Promise((resolve) => server.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

test("a failed candidate's files are removed before the next is tried; the one taken is kept", async () => {
  const work = await mkdtemp(join(dir, 'scrape-'));
  const video = (path: string): MediaCandidate => ({ url: `${origin}${path}`, track: 'video', from: 'video-element' });
  let onDisk: string[] | undefined;
  const signal = AbortSignal.timeout(30_000);
  const result = await renderMediaFormats(
    { video: true, audio: false },
    [video('/missing.mp4'), video('/player'), video('/clip.ts')],
    {
      http,
      ffmpeg: new Ffmpeg(DEFAULT_MEDIA_CONFIG),
      dir: work,
      keep: async (file) => {
        onDisk = (await readdir(work, { recursive: true })).sort();
        assert.equal(file.path, join(work, 'video-2', 'source'));
        return 'stored:clip';
      },
      signal,
      deadlineAt: Date.now() + 30_000,
      maxBytes: DEFAULT_MEDIA_CONFIG.maxBytes,
      pageUrl: `${origin}/page`,
      proxy: 'basic',
      skipTlsVerification: false,
      mobile: false,
    },
  );
  assert.equal(result.video?.url, 'stored:clip');
  assert.equal(result.video?.mimeType, 'video/mp2t');
  assert.match(
    result.warnings.join('; '),
    /missing\.mp4 could not be used \(SCRAPE_MEDIA_FETCH_FAILED\); .*\/clip\.ts was taken instead/,
  );
  // The 404's empty file and the player page's HTML went with their candidates.
  assert.deepEqual(onDisk, ['video-2', join('video-2', 'source')]);
});
