// The audio and video formats end to end: the real service against fixture pages carrying small
// media generated here with ffmpeg (test/fixtures/site/media.ts) through <video src>, <source>,
// og:video, JSON-LD, HLS (master and media playlists, alternative audio), DASH and <audio>, and a
// media URL as the scrape URL. Every returned URL is downloaded and checked with ffprobe (codec,
// size, duration) and decoded in full by ffmpeg. Also: no media (a warning), fallbacks, the size cap
// (files, chunked bodies, the sum of HLS segments), the SSRF guard on media, playlist segments and
// redirects, the caller's headers kept to the page's origin across redirects, zero data retention
// (and its error messages without URLs), credits per started minute, Range requests on /v2/files,
// the cache, the browser engine, media served as application/octet-stream, ffmpeg missing, an MP3
// over the cap, the deadline killing ffmpeg, temporary files removed whatever happened, batch
// scrapes, and the options refused with them.
// ffmpeg and ffprobe are required (CI installs them): without them this file fails, it never skips.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { DEFAULT_MEDIA_CONFIG } from '../../src/config.ts';
import { scrapeRequest } from '../../src/contract/scrape.ts';
import { TeamConcurrency } from '../../src/scrape/team-concurrency.ts';
import { HttpEngine } from '../../src/scrape/engines/http.ts';
import { isExecutable } from '../../src/scrape/media/ffmpeg.ts';
import { Scraper } from '../../src/scrape/scrape.ts';
import type { Db } from '../../src/store/db-types.ts';
import { type FixtureSite, buildMediaFixtures, mediaClips, startFixtureSite } from '../fixtures/site/index.ts';
import { type Api, type ApiResponse, apiClient } from '../helpers/api.ts';
import { type TestService, startTestService } from '../helpers/service.ts';

const run = promisify(execFile);
type Res = ApiResponse;

interface Probed {
  format: string;
  duration: number;
  streams: { codec_type: string; codec_name: string; width?: number; height?: number }[];
}

let site: FixtureSite;
let svc: TestService;
let api: Api;
let mediaDir: string;
let work: string;
/** TMPDIR of this test process while it runs: where the scrapes' temporary media directories go. */
let scratch: string;
let savedTmpDir: string | undefined;
/** A stand-in for ffprobe that records its pid, then sleeps for a minute. */
let sleepyProbe: string;
let probes = 0;
const FILE_URL = /^http:\/\/127\.0\.0\.1:\d+\/v2\/files\/[0-9a-f]{32}\.(mp4|mp3)$/;

/** Bytes of a generated fixture file (path under /media/). */
const fixture = (path: string) => readFile(join(mediaDir, path.replace(/^\/media\//, '')));

async function probe(bytes: Buffer): Promise<Probed> {
  const file = join(work, `probe-${++probes}`);
  await writeFile(file, bytes);
  const { stdout } = await run('ffprobe', [
    '-v',
    'error',
    '-print_format',
    'json',
    '-show_format',
    '-show_streams',
    file,
  ]);
  const json = JSON.parse(stdout);
  // Every frame decodes without an error: the file plays.
  const { stderr } = await run('ffmpeg', ['-v', 'error', '-nostdin', '-i', file, '-f', 'null', '-']);
  assert.equal(stderr.trim(), '', `decoding errors: ${stderr}`);
  return { format: json.format.format_name, duration: Number(json.format.duration), streams: json.streams };
}

const codecs = (p: Probed) => p.streams.map((s) => `${s.codec_type}:${s.codec_name}`).sort();
const videoStream = (p: Probed) => p.streams.find((s) => s.codec_type === 'video')!;

function near(actual: number, expected: number, tolerance = 0.25): void {
  assert.ok(Math.abs(actual - expected) <= tolerance, `${actual} is not within ${tolerance} of ${expected}`);
}

/** GET a URL handed out by the service, without an API key. */
async function download(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Headers; body: Buffer }> {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, body: Buffer.from(await res.arrayBuffer()) };
}

/** The stored file behind a data.video / data.audio URL: 200, its type, and its ffprobe. */
async function stored(url: string, type: string): Promise<{ body: Buffer; probed: Probed }> {
  assert.match(url, FILE_URL);
  const res = await download(url);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), type);
  return { body: res.body, probed: await probe(res.body) };
}

function ok(res: Res): any {
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.success, true);
  return res.json.data;
}

function assertError(res: Res, status: number, code: string, message?: RegExp): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json.success, false);
  assert.equal(res.json.code, code);
  if (message) assert.match(res.json.error, message);
}

const pageUrl = (name: string) => site.url(`/media-pages/${name}`);
/** Temporary media directories of scrapes (src/scrape/scrape.ts #attachMedia) still on disk. */
const leftovers = async () => (await readdir(scratch)).filter((name) => name.startsWith('gleaner-media-'));
/** Requests the fixture saw for paths starting with `prefix` since index `from`. */
const seen = (prefix: string, from = 0) =>
  site.requests
    .slice(from)
    .filter((r) => r.path.startsWith(prefix))
    .map((r) => r.path);

before(async () => {
  assert.ok(
    isExecutable('ffmpeg') && isExecutable('ffprobe'),
    'ffmpeg and ffprobe are needed (Debian package ffmpeg; .ci/run installs it)',
  );
  mediaDir = await mkdtemp(join(tmpdir(), 'gleaner-media-fixtures-'));
  work = await mkdtemp(join(tmpdir(), 'gleaner-media-test-'));
  await buildMediaFixtures(mediaDir);
  scratch = await mkdtemp(join(tmpdir(), 'gleaner-media-scratch-'));
  savedTmpDir = process.env.TMPDIR;
  process.env.TMPDIR = scratch;
  sleepyProbe = join(work, 'sleepy-ffprobe');
  await writeFile(sleepyProbe, `#!/bin/sh\necho $$ >> '${sleepyProbe}.pids'\nexec sleep 60\n`);
  await chmod(sleepyProbe, 0o755);
  site = await startFixtureSite({ mediaDir });
  const started: { db?: Db } = {};
  svc = await startTestService({
    configure(app) {
      // The pipeline behind a route whose HTTP engine has the SSRF test hook (as in
      // test/api/scrape.test.ts): "public.test" stands for a public site, resolves to the fixture
      // on loopback and is the only name let through; 127.0.0.1 and localhost stay private. Its
      // media limits put the zero-data-retention inline cap under the clip's size; ?media=capped
      // has a MEDIA_MAX_BYTES of 200 kB, ?media=sleepy an ffprobe that never finishes.
      const http = new HttpEngine({
        allowPrivateNetwork: false,
        maxBytes: 1024 * 1024,
        ssrf: {
          resolver: async () => [{ address: '127.0.0.1', family: 4 }],
          isAllowed: (_ip, hostname) => hostname === 'public.test',
        },
      });
      app.addHook('onClose', () => http.close());
      const media = {
        default: { ...DEFAULT_MEDIA_CONFIG, zdrMaxBytes: 10_000 },
        capped: { ...DEFAULT_MEDIA_CONFIG, maxBytes: 200_000 },
        sleepy: { ...DEFAULT_MEDIA_CONFIG, ffprobePath: sleepyProbe },
      };
      const scrapers = new Map<string, Scraper>();
      app.post('/test/guarded-scrape', async (request) => {
        const variant = ((request.query as { media?: string }).media ?? 'default') as keyof typeof media;
        let scraper = scrapers.get(variant);
        if (!scraper) {
          scraper = new Scraper({
            db: started.db!,
            http,
            concurrency: new TeamConcurrency(),
            maxConcurrency: 10,
            log: app.log,
            fileTtlMs: 60_000,
            media: media[variant],
          });
          scrapers.set(variant, scraper);
        }
        const { document } = await scraper.scrape(request.caller, scrapeRequest.parse(request.body), {
          publicUrl: `${request.protocol}://${request.host}`,
        });
        return { success: true, data: document };
      });
    },
  });
  started.db = svc.db;
  api = apiClient(svc);
});

after(async () => {
  await svc?.destroy();
  await site?.close();
  if (savedTmpDir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpDir;
  if (scratch) await rm(scratch, { recursive: true, force: true });
  if (mediaDir) await rm(mediaDir, { recursive: true, force: true });
  if (work) await rm(work, { recursive: true, force: true });
});

describe('video: discovery and the stored file', () => {
  test('<video src>: the larger declared player, stored as served, served by Gleaner and playable', async () => {
    const data = ok(await api.scrape({ url: pageUrl('video-src'), formats: ['markdown', 'video'] }));
    assert.ok(data.markdown.includes('# Video element'));
    assert.equal(data.audio, undefined);
    assert.equal(data.warning, undefined);
    const original = await fixture(mediaClips.clip.path);
    const { body, probed } = await stored(data.video, 'video/mp4');
    assert.ok(body.equals(original), 'the file as served');
    assert.deepEqual(codecs(probed), ['audio:aac', 'video:h264']);
    assert.equal(videoStream(probed).width, mediaClips.clip.width);
    near(probed.duration, mediaClips.clip.duration);
    const m = data.metadata;
    assert.equal(m.videoSourceURL, site.url(mediaClips.clip.path));
    assert.equal(m.videoMimeType, 'video/mp4');
    assert.equal(m.videoSize, original.length);
    near(m.videoDuration, mediaClips.clip.duration);
    assert.equal(m.creditsUsed, 2, 'the page and one started minute');
  });

  test('<source>: the first downloadable source of an element whose src is a blob:', async () => {
    const data = ok(await api.scrape({ url: pageUrl('video-source'), formats: [{ type: 'video' }] }));
    assert.equal(data.metadata.videoSourceURL, site.url(mediaClips.short.path));
    const { body, probed } = await stored(data.video, 'video/mp4');
    assert.ok(body.equals(await fixture(mediaClips.short.path)));
    near(probed.duration, mediaClips.short.duration);
  });

  test('og:video: the player page declared text/html is skipped (never fetched), the mp4 is taken', async () => {
    const from = site.requests.length;
    const data = ok(await api.scrape({ url: pageUrl('og-video'), formats: ['video'] }));
    assert.equal(data.metadata.videoSourceURL, site.url(mediaClips.clip.path));
    near((await stored(data.video, 'video/mp4')).probed.duration, mediaClips.clip.duration);
    assert.deepEqual(seen('/media-pages/player', from), []);
  });

  test('JSON-LD VideoObject contentUrl (not its embedUrl)', async () => {
    const data = ok(await api.scrape({ url: pageUrl('json-ld'), formats: ['video'] }));
    assert.equal(data.metadata.videoSourceURL, site.url(mediaClips.short.path));
    assert.deepEqual(codecs((await stored(data.video, 'video/mp4')).probed), ['audio:aac', 'video:h264']);
  });

  test('HLS master playlist: the highest-bandwidth variant (listed second), its segments in order, remuxed to MP4', async () => {
    const from = site.requests.length;
    const data = ok(await api.scrape({ url: pageUrl('hls-master'), formats: ['video'] }));
    assert.equal(data.metadata.videoSourceURL, site.url(mediaClips.hls.master));
    assert.equal(data.metadata.videoMimeType, 'video/mp4');
    const { body, probed } = await stored(data.video, 'video/mp4');
    assert.equal(data.metadata.videoSize, body.length);
    assert.match(probed.format, /mp4/);
    assert.deepEqual(codecs(probed), ['audio:aac', 'video:h264']);
    assert.equal(videoStream(probed).width, mediaClips.hls.highWidth);
    near(probed.duration, mediaClips.hls.duration);
    assert.deepEqual(seen('/media/hls/', from), [
      '/media/hls/master.m3u8',
      '/media/hls/v0.m3u8',
      '/media/hls/v0_000.ts',
      '/media/hls/v0_001.ts',
      '/media/hls/v0_002.ts',
      '/media/hls/v0_003.ts',
    ]);
  });

  test('HLS media playlist given as a <source type="application/x-mpegURL">', async () => {
    const data = ok(await api.scrape({ url: pageUrl('hls-media'), formats: ['video'] }));
    const { probed } = await stored(data.video, 'video/mp4');
    assert.equal(videoStream(probed).width, mediaClips.hls.lowWidth);
    near(probed.duration, mediaClips.hls.duration);
  });

  test('HLS with an alternative audio rendition: the video variant and the rendition muxed together', async () => {
    const data = ok(await api.scrape({ url: pageUrl('hls-alt-audio'), formats: ['video', 'audio'] }));
    const { probed } = await stored(data.video, 'video/mp4');
    assert.deepEqual(codecs(probed), ['audio:aac', 'video:h264']);
    near(probed.duration, mediaClips.hlsAltAudio.duration);
    const audio = await stored(data.audio, 'audio/mpeg');
    assert.deepEqual(codecs(audio.probed), ['audio:mp3']);
    near(audio.probed.duration, mediaClips.hlsAltAudio.duration, 0.3);
  });

  test('DASH: SegmentTimeline and numbered SegmentTemplate manifests, video and audio representations assembled', async () => {
    for (const [name, clip] of [
      ['dash', mediaClips.dash],
      ['dash-number', mediaClips.dashNumber],
    ] as const) {
      const data = ok(await api.scrape({ url: pageUrl(name), formats: ['video'] }));
      assert.equal(data.metadata.videoSourceURL, site.url(clip.mpd));
      const { probed } = await stored(data.video, 'video/mp4');
      assert.deepEqual(codecs(probed), ['audio:aac', 'video:h264'], name);
      assert.equal(videoStream(probed).width, clip.width);
      near(probed.duration, clip.duration);
    }
  });

  test('the scrape URL itself a video file: its body is left to the media stage (and not cached); other formats get a warning', async () => {
    const url = site.url(`${mediaClips.clip.path}?direct=1`);
    for (let i = 0; i < 2; i++) {
      const data = ok(await api.scrape({ url, formats: ['markdown', 'video'] }));
      assert.equal(data.metadata.cacheState, 'miss', 'a skipped body is never cached');
      assert.equal(data.metadata.contentType, 'video/mp4');
      assert.equal(data.markdown, undefined);
      assert.match(data.warning, /markdown: not available for a media file/);
      assert.ok((await stored(data.video, 'video/mp4')).body.equals(await fixture(mediaClips.clip.path)));
    }
  });

  test('the scrape URL itself an HLS playlist', async () => {
    const data = ok(await api.scrape({ url: site.url(mediaClips.hls.master), formats: ['video'] }));
    assert.equal(videoStream((await stored(data.video, 'video/mp4')).probed).width, mediaClips.hls.highWidth);
  });

  test('the scrape URL itself served as application/octet-stream: MP4, MP3, HLS and DASH known by their bytes', async () => {
    const octet = (path: string) => site.url(`${path}?octet=1`);
    for (let i = 0; i < 2; i++) {
      const data = ok(await api.scrape({ url: octet(mediaClips.clip.path), formats: ['video'] }));
      assert.equal(data.metadata.contentType, 'application/octet-stream');
      assert.equal(data.metadata.cacheState, 'miss', 'its body was left to the media stage, never cached');
      assert.equal(data.metadata.videoMimeType, 'video/mp4', 'the type ffprobe read');
      assert.ok((await stored(data.video, 'video/mp4')).body.equals(await fixture(mediaClips.clip.path)));
    }
    // An MP3 is audio: no video, its audio extracted.
    const mp3 = ok(await api.scrape({ url: octet(mediaClips.long.path), formats: ['video', 'audio'] }));
    assert.equal(mp3.video, undefined);
    assert.match(mp3.warning, /video: no video was found on the page \(it has audio/);
    near((await stored(mp3.audio, 'audio/mpeg')).probed.duration, mediaClips.long.duration, 0.5);
    const hls = ok(await api.scrape({ url: octet(mediaClips.hls.master), formats: ['video'] }));
    assert.equal(videoStream((await stored(hls.video, 'video/mp4')).probed).width, mediaClips.hls.highWidth);
    const dash = ok(await api.scrape({ url: octet(mediaClips.dash.mpd), formats: ['video'] }));
    near((await stored(dash.video, 'video/mp4')).probed.duration, mediaClips.dash.duration);
    // Without the media formats such a body is what it was: bytes Gleaner cannot convert.
    assertError(
      await api.scrape({ url: octet(mediaClips.clip.path), formats: ['markdown'] }),
      415,
      'SCRAPE_UNSUPPORTED_FILE_ERROR',
    );
  });

  test('a page without media: success with a warning, no video or audio, only the page charged', async () => {
    const data = ok(await api.scrape({ url: pageUrl('none'), formats: ['markdown', 'video', 'audio'] }));
    assert.ok(data.markdown.includes('# No media'));
    assert.equal(data.video, undefined);
    assert.equal(data.audio, undefined);
    assert.match(data.warning, /video: no video was found on the page/);
    assert.match(data.warning, /audio: no audio or video was found on the page/);
    assert.equal(data.metadata.creditsUsed, 1);
    assert.equal(data.metadata.videoSourceURL, undefined);
  });

  test('a candidate answering 404 is skipped for the next one, with a warning; a lone one is an error, as is a web page', async () => {
    const data = ok(await api.scrape({ url: pageUrl('fallback'), formats: ['video'] }));
    assert.equal(data.metadata.videoSourceURL, site.url(mediaClips.short.path));
    assert.match(data.warning, /missing\.mp4 could not be used \(SCRAPE_MEDIA_FETCH_FAILED\)/);
    assertError(
      await api.scrape({ url: site.url('/media-pages/video?src=/media/missing.mp4'), formats: ['video'] }),
      502,
      'SCRAPE_MEDIA_FETCH_FAILED',
      /404/,
    );
    assertError(
      await api.scrape({ url: site.url('/media-pages/video?src=/media-pages/player'), formats: ['video'] }),
      422,
      'SCRAPE_MEDIA_UNSUPPORTED',
      /web page/,
    );
    // Bytes that are neither media nor a manifest: ffprobe cannot read them.
    assertError(
      await api.scrape({ url: site.url('/media-pages/video?src=/robots.txt'), formats: ['video'] }),
      422,
      'SCRAPE_MEDIA_UNSUPPORTED',
      /not a media file/,
    );
  });

  test('after rendering: a <video> added by JavaScript is found when the browser ran, not in the served HTML', async () => {
    const served = ok(await api.scrape({ url: pageUrl('js-video'), formats: ['video'] }));
    assert.equal(served.metadata.engine, 'http');
    assert.match(served.warning, /no video was found/);
    const rendered = ok(await api.scrape({ url: pageUrl('js-video'), formats: ['video'], waitFor: 500, maxAge: 0 }));
    assert.equal(rendered.metadata.engine, 'browser');
    assert.equal(rendered.metadata.videoSourceURL, site.url(mediaClips.short.path));
    near((await stored(rendered.video, 'video/mp4')).probed.duration, mediaClips.short.duration);
  });

  test('a cached page still gets its media: downloaded again, a new file', async () => {
    const url = site.url('/media-pages/video-src?cache=1');
    const first = ok(await api.scrape({ url, formats: ['video'] }));
    const from = site.requests.length;
    const second = ok(await api.scrape({ url, formats: ['video'] }));
    assert.equal(first.metadata.cacheState, 'miss');
    assert.equal(second.metadata.cacheState, 'hit');
    assert.deepEqual(seen('/media/', from), [mediaClips.clip.path]);
    assert.notEqual(second.video, first.video);
    assert.ok((await stored(second.video, 'video/mp4')).body.equals(await fixture(mediaClips.clip.path)));
  });
});

describe('audio', () => {
  test('an <audio> is preferred over the video for the audio format; MP3; both charged per started minute', async () => {
    const data = ok(await api.scrape({ url: pageUrl('audio-and-video'), formats: ['video', 'audio'] }));
    assert.equal(data.metadata.videoSourceURL, site.url(mediaClips.clip.path));
    assert.equal(data.metadata.audioSourceURL, site.url(mediaClips.tone.path));
    assert.equal(data.metadata.audioMimeType, 'audio/mpeg');
    const { body, probed } = await stored(data.audio, 'audio/mpeg');
    assert.equal(data.metadata.audioSize, body.length);
    assert.deepEqual(codecs(probed), ['audio:mp3']);
    near(probed.duration, mediaClips.tone.duration, 0.3);
    near(data.metadata.audioDuration, mediaClips.tone.duration, 0.3);
    assert.equal(data.metadata.creditsUsed, 3);
  });

  test('a page with only a video: the audio track extracted from it, downloaded once for both formats', async () => {
    const from = site.requests.length;
    const data = ok(
      await api.scrape({ url: site.url('/media-pages/video?src=/media/clip.mp4'), formats: ['audio', 'video'] }),
    );
    assert.equal(data.metadata.audioSourceURL, site.url(mediaClips.clip.path));
    const { probed } = await stored(data.audio, 'audio/mpeg');
    assert.deepEqual(codecs(probed), ['audio:mp3']);
    near(probed.duration, mediaClips.clip.duration, 0.3);
    assert.deepEqual(seen('/media/', from), [mediaClips.clip.path]);
  });

  test('a video taken after a fallback serves the audio too: each file downloaded once', async () => {
    const from = site.requests.length;
    const data = ok(await api.scrape({ url: pageUrl('fallback'), formats: ['video', 'audio'] }));
    assert.equal(data.metadata.videoSourceURL, site.url(mediaClips.short.path));
    assert.equal(data.metadata.audioSourceURL, site.url(mediaClips.short.path));
    assert.deepEqual(codecs((await stored(data.audio, 'audio/mpeg')).probed), ['audio:mp3']);
    assert.deepEqual(seen('/media/', from), ['/media/missing.mp4', mediaClips.short.path]);
  });

  test('audio alone from a page with an <audio> source; a video without an audio track gives a warning', async () => {
    const data = ok(await api.scrape({ url: pageUrl('audio-only'), formats: ['audio'] }));
    assert.equal(data.video, undefined);
    assert.deepEqual(codecs((await stored(data.audio, 'audio/mpeg')).probed), ['audio:mp3']);
    const silent = ok(await api.scrape({ url: pageUrl('no-audio'), formats: ['audio'] }));
    assert.equal(silent.audio, undefined);
    assert.match(silent.warning, /audio: the media has no audio track/);
    assert.equal(silent.metadata.creditsUsed, 1);
  });

  test('credits: one per started minute per media format, on the team ledger (61 s is two minutes)', async () => {
    const before = await api.creditsUsed();
    const data = ok(await api.scrape({ url: pageUrl('long-audio'), formats: ['audio'] }));
    near(data.metadata.audioDuration, mediaClips.long.duration, 0.5);
    assert.equal(data.metadata.creditsUsed, 3, 'the page and two started minutes');
    assert.equal((await api.creditsUsed()) - before, 3);
  });
});

describe('files: Range requests', () => {
  test('206 for one range (start-end, start-, -suffix), 416 past the end, 200 with Accept-Ranges otherwise', async () => {
    const data = ok(await api.scrape({ url: pageUrl('video-src'), formats: ['video'] }));
    const original = await fixture(mediaClips.clip.path);
    const size = original.length;
    const whole = await download(data.video);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('accept-ranges'), 'bytes');
    assert.equal(Number(whole.headers.get('content-length')), size);
    const etag = whole.headers.get('etag')!;
    for (const [range, start, end] of [
      ['bytes=0-99', 0, 99],
      [`bytes=${size - 1000}-`, size - 1000, size - 1],
      ['bytes=-10', size - 10, size - 1],
      [`bytes=100-${size + 5000}`, 100, size - 1],
    ] as const) {
      const part = await download(data.video, { range });
      assert.equal(part.status, 206, range);
      assert.equal(part.headers.get('content-range'), `bytes ${start}-${end}/${size}`);
      assert.equal(part.headers.get('content-type'), 'video/mp4');
      assert.ok(part.body.equals(original.subarray(start, end + 1)), range);
    }
    const past = await download(data.video, { range: `bytes=${size}-` });
    assert.equal(past.status, 416);
    assert.equal(past.headers.get('content-range'), `bytes */${size}`);
    assert.equal(
      (await download(data.video, { range: 'bytes=0-1,5-9' })).status,
      200,
      'several ranges: the whole file',
    );
    assert.equal(
      (await download(data.video, { range: 'bytes=0-9', 'if-range': '"other"' })).status,
      200,
      'a stale If-Range: the whole file',
    );
    assert.equal((await download(data.video, { range: 'bytes=0-9', 'if-range': etag })).status, 206);
    const unknown = `${svc.url}/v2/files/${'0'.repeat(32)}.mp4`;
    for (const headers of [{}, { range: 'bytes=0-9' }] as Record<string, string>[]) {
      const res = await download(unknown, headers);
      assert.equal(res.status, 404);
      assert.equal(JSON.parse(res.body.toString()).code, 'FILE_NOT_FOUND');
    }
  });
});

describe('zero data retention', () => {
  test('media comes back as data: URLs, nothing stored', async () => {
    const data = ok(
      await api.scrape({ url: pageUrl('video-src'), formats: ['video', 'audio'], zeroDataRetention: true }),
    );
    assert.match(data.video, /^data:video\/mp4;base64,/);
    assert.match(data.audio, /^data:audio\/mpeg;base64,/);
    const video = Buffer.from(data.video.split(',')[1], 'base64');
    assert.ok(video.equals(await fixture(mediaClips.clip.path)));
    assert.deepEqual(codecs(await probe(Buffer.from(data.audio.split(',')[1], 'base64'))), ['audio:mp3']);
    await svc.settled();
    const { rows } = await svc.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM stored_files WHERE job_id = $1',
      [data.metadata.scrapeId],
    );
    assert.equal(rows[0].n, 0);
    assert.equal((await api.getScrape(data.metadata.scrapeId)).status, 404);
  });

  test('media larger than MEDIA_ZDR_MAX_BYTES is refused under zero data retention', async () => {
    const res = await api('POST', '/test/guarded-scrape', {
      url: `http://public.test:${site.port}/media-pages/video?src=/media/clip.mp4`,
      formats: ['video'],
      zeroDataRetention: true,
    });
    assertError(res, 502, 'SCRAPE_MEDIA_TOO_LARGE', /MEDIA_ZDR_MAX_BYTES/);
    // The same without zero data retention is stored.
    const stored = await api('POST', '/test/guarded-scrape', {
      url: `http://public.test:${site.port}/media-pages/video?src=/media/clip.mp4`,
      formats: ['video'],
    });
    assert.equal(stored.status, 200, stored.text);
  });

  test('an error names no URL read from the target (it may be logged): not the media URL, not its host', async () => {
    const res = await api.scrape({
      url: site.url('/media-pages/video?src=/media/missing.mp4'),
      formats: ['video'],
      zeroDataRetention: true,
    });
    assertError(res, 502, 'SCRAPE_MEDIA_FETCH_FAILED', /404/);
    assert.doesNotMatch(res.json.error, /missing\.mp4|127\.0\.0\.1|http:/);
    // Without zero data retention the message names it.
    assertError(
      await api.scrape({ url: site.url('/media-pages/video?src=/media/missing.mp4'), formats: ['video'] }),
      502,
      'SCRAPE_MEDIA_FETCH_FAILED',
      /missing\.mp4/,
    );
  });
});

describe('SSRF on media URLs', () => {
  const pub = () => `http://public.test:${site.port}`;
  const guarded = (body: Record<string, unknown>) => api('POST', '/test/guarded-scrape', body);

  test('the page is allowed; its media on a private address is refused, directly, through a redirect, or as HLS segments', async () => {
    const control = ok(await guarded({ url: `${pub()}/media-pages/video?src=/media/short.mp4`, formats: ['video'] }));
    assert.equal(control.metadata.videoSourceURL, `${pub()}${mediaClips.short.path}`);

    const privateClip = site.url(mediaClips.clip.path);
    let from = site.requests.length;
    assertError(
      await guarded({ url: `${pub()}/media-pages/video?src=${encodeURIComponent(privateClip)}`, formats: ['video'] }),
      403,
      'SCRAPE_BLOCKED_URL',
    );
    assert.deepEqual(seen('/media/', from), [], 'the private media was never requested');
    assert.equal(seen('/media-pages/video', from).length, 1, 'the page itself was fetched');

    from = site.requests.length;
    const redirect = `${pub()}/redirect/to?url=${encodeURIComponent(privateClip)}`;
    assertError(
      await guarded({ url: `${pub()}/media-pages/video?src=${encodeURIComponent(redirect)}`, formats: ['video'] }),
      403,
      'SCRAPE_BLOCKED_URL',
    );
    assert.deepEqual(seen('/media/', from), []);
    assert.equal(seen('/redirect/to', from).length, 1, 'only the redirecting hop reached the fixture');

    from = site.requests.length;
    const playlist = `${pub()}/media-pages/playlist.m3u8?base=${encodeURIComponent(`${site.origin}/media/hls/`)}`;
    assertError(
      await guarded({ url: `${pub()}/media-pages/video?src=${encodeURIComponent(playlist)}`, formats: ['video'] }),
      403,
      'SCRAPE_BLOCKED_URL',
    );
    assert.equal(seen('/media-pages/playlist.m3u8', from).length, 1, 'the playlist was read');
    assert.deepEqual(seen('/media/hls/', from), [], 'no segment was requested');
    // The same playlist with public segments assembles.
    const publicPlaylist = `${pub()}/media-pages/playlist.m3u8?base=${encodeURIComponent(`${pub()}/media/hls/`)}`;
    const assembled = ok(
      await guarded({
        url: `${pub()}/media-pages/video?src=${encodeURIComponent(publicPlaylist)}`,
        formats: ['video'],
      }),
    );
    near(
      (await stored(assembled.video.replace(/^http:\/\/[^/]+/, svc.url), 'video/mp4')).probed.duration,
      mediaClips.hls.duration,
    );
  });
});

describe("the caller's headers", () => {
  test("go to the page's origin only, on every hop: not to another origin a same-origin media URL redirects to", async () => {
    const headers = { authorization: 'Bearer page-secret', 'x-page-token': 'page-secret' };
    const elsewhere = `${site.hostOrigin('localhost')}${mediaClips.clip.path}`;
    const src = `/redirect/to?url=${encodeURIComponent(elsewhere)}`;
    const from = site.requests.length;
    const data = ok(
      await api.scrape({
        url: site.url(`/media-pages/video?src=${encodeURIComponent(src)}`),
        formats: ['video'],
        headers,
      }),
    );
    assert.equal(data.metadata.videoSourceURL, elsewhere);
    const hops = site.requests.slice(from);
    const page = hops.find((r) => r.path.startsWith('/media-pages/video'))!;
    const redirect = hops.find((r) => r.path.startsWith('/redirect/to'))!;
    const media = hops.find((r) => r.path === mediaClips.clip.path)!;
    assert.equal(page.headers.authorization, 'Bearer page-secret');
    assert.equal(redirect.headers.authorization, 'Bearer page-secret', "the media URL on the page's origin gets them");
    assert.equal(redirect.headers['x-page-token'], 'page-secret');
    assert.equal(media.host, 'localhost');
    assert.equal(media.headers.authorization, undefined, 'not after the redirect to another origin');
    assert.equal(media.headers['x-page-token'], undefined);
    assert.equal(media.headers.referer, data.metadata.url, 'the Referer is the page');
  });
});

describe('limits and failures', () => {
  let small: TestService;
  let apiSmall: Api;
  let cap: number;

  before(async () => {
    // A cap over the largest 160×120 HLS segment but under the four together and under the clip.
    const segments = await Promise.all(
      [0, 1, 2, 3].map(async (i) => (await stat(join(mediaDir, 'hls', `v1_00${i}.ts`))).size),
    );
    cap = Math.max(...segments) + 1000;
    const clip = (await stat(join(mediaDir, 'clip.mp4'))).size;
    const tone = (await stat(join(mediaDir, 'tone.m4a'))).size;
    assert.ok(
      cap < segments.reduce((a, b) => a + b, 0) && cap < clip && tone < cap,
      `fixture sizes do not fit the test: ${JSON.stringify({ cap, segments, clip, tone })}`,
    );
    // This service also has no ffmpeg: what fails before ffmpeg runs shows the cap, the rest 503.
    // Its pages may be 4 kB at most (SCRAPE_MAX_BYTES): a media file as the scrape URL is not read
    // as a page, whatever its size.
    small = await startTestService({
      env: {
        MEDIA_MAX_BYTES: String(cap),
        SCRAPE_MAX_BYTES: '4096',
        FFMPEG_PATH: '/nonexistent/ffmpeg',
        FFPROBE_PATH: '/nonexistent/ffprobe',
      },
    });
    apiSmall = apiClient(small);
  });
  after(async () => {
    await small?.destroy();
  });

  test('MEDIA_MAX_BYTES: a larger file (declared length or chunked), the scrape URL itself, and HLS segments summed', async () => {
    const tooLarge = (res: Res) =>
      assertError(res, 502, 'SCRAPE_MEDIA_TOO_LARGE', new RegExp(`${cap} bytes.*MEDIA_MAX_BYTES`));
    tooLarge(await apiSmall.scrape({ url: pageUrl('video-src'), formats: ['video'] }));
    tooLarge(
      await apiSmall.scrape({
        url: site.url(`/media-pages/video?src=${encodeURIComponent('/media/clip.mp4?chunked=1')}`),
        formats: ['video'],
      }),
    );
    tooLarge(await apiSmall.scrape({ url: site.url(mediaClips.clip.path), formats: ['video'] }));
    tooLarge(await apiSmall.scrape({ url: site.url(`${mediaClips.clip.path}?octet=1`), formats: ['video'] }));
    // The same URL read as a page is over SCRAPE_MAX_BYTES: the cap above is the media stage's.
    assertError(
      await apiSmall.scrape({ url: site.url(`${mediaClips.clip.path}?octet=1`), formats: ['rawHtml'] }),
      502,
      'SCRAPE_RESPONSE_TOO_LARGE',
    );
    const from = site.requests.length;
    tooLarge(await apiSmall.scrape({ url: pageUrl('hls-media'), formats: ['video'] }));
    assert.ok(seen('/media/hls/v1_', from).length >= 2, 'each segment fits: the sum is what overflowed');
  });

  test('without ffmpeg: 503 MEDIA_FFMPEG_UNAVAILABLE naming the package; a page without media still succeeds', async () => {
    assertError(
      await apiSmall.scrape({ url: pageUrl('audio-only'), formats: ['audio'] }),
      503,
      'MEDIA_FFMPEG_UNAVAILABLE',
      /apt-get install ffmpeg/,
    );
    const none = await apiSmall.scrape({ url: pageUrl('none'), formats: ['video'] });
    assert.equal(none.status, 200, none.text);
    assert.match(none.json.data.warning, /no video was found/);
  });
});

describe('ffmpeg bounded', () => {
  const guarded = (body: Record<string, unknown>, media: string) =>
    api('POST', `/test/guarded-scrape?media=${media}`, body);
  const pub = () => `http://public.test:${site.port}`;

  test('an MP3 larger than MEDIA_MAX_BYTES is refused though its source fits (ffmpeg stops at the cap)', async () => {
    const source = (await stat(join(mediaDir, 'silence.flac'))).size;
    assert.ok(source < 200_000, String(source));
    const page = `${pub()}/media-pages/video?src=${mediaClips.silence.path}`;
    assertError(
      await guarded({ url: page, formats: ['audio'] }, 'capped'),
      502,
      'SCRAPE_MEDIA_TOO_LARGE',
      /silence\.flac exceeds 200000 bytes.*MEDIA_MAX_BYTES/,
    );
    // The source itself, as the video format keeps it, is within the cap.
    const data = ok(await guarded({ url: page, formats: ['video'] }, 'capped'));
    assert.equal(data.metadata.videoSize, source);
  });

  test("the scrape's deadline kills ffmpeg (here a stand-in ffprobe that never ends): 408, the process gone, nothing left on disk", async () => {
    const started = Date.now();
    const pending = guarded(
      { url: `${pub()}/media-pages/video?src=${mediaClips.short.path}`, formats: ['video'], timeout: 2000 },
      'sleepy',
    );
    const pidFile = `${sleepyProbe}.pids`;
    while (!(await stat(pidFile).catch(() => undefined))) await new Promise((r) => setTimeout(r, 20));
    // Meanwhile the scrape's directory is where leftovers() looks (so its checks can fail).
    assert.equal((await leftovers()).length, 1);
    const res = await pending;
    assertError(res, 408, 'SCRAPE_TIMEOUT');
    assert.ok(Date.now() - started < 10_000);
    const pids = (await readFile(pidFile, 'utf8')).split('\n').filter(Boolean).map(Number);
    assert.equal(pids.length, 1, 'the stand-in ran');
    assert.throws(() => process.kill(pids[0], 0), { code: 'ESRCH' });
    assert.deepEqual(await leftovers(), []);
  });
});

describe('requests, batches', () => {
  test('refused with cache-only reads (lockdown, minAge), which never contact the target', async () => {
    for (const extra of [{ lockdown: true }, { minAge: 1000 }]) {
      const res = await api.scrape({ url: pageUrl('video-src'), formats: ['video'], ...extra });
      assertError(res, 400, 'BAD_REQUEST', /audio and video download the media from the target/);
      assert.ok(res.json.details.some((d: { path: string }) => d.path === 'body.formats'));
    }
  });

  test('batch scrape pages get their media through the same pipeline (files of the batch job)', async () => {
    const started = await api.batchScrape({ urls: [pageUrl('video-src'), pageUrl('none')], formats: ['video'] });
    assert.equal(started.status, 200, started.text);
    const status = await api.waitForBatch(started.json.id, 60_000);
    assert.equal(status.status, 'completed', JSON.stringify(status));
    assert.equal(status.creditsUsed, 3, 'two pages and one started minute');
    const [withVideo, without] = status.data;
    assert.ok((await stored(withVideo.video, 'video/mp4')).body.equals(await fixture(mediaClips.clip.path)));
    assert.equal(without.video, undefined);
    assert.match(without.warning, /no video was found/);
    const { rows } = await svc.db.query<{ n: number; expires: Date }>(
      'SELECT count(*)::int AS n, max(expires_at) AS expires FROM stored_files WHERE job_id = $1',
      [started.json.id],
    );
    assert.equal(rows[0].n, 1);
    // The batch's results expire in 24 h; its files with them, not FILE_TTL_HOURS (7 days) later.
    assert.ok(
      rows[0].expires.getTime() <= new Date(status.expiresAt).getTime(),
      `file expires ${rows[0].expires.toISOString()}, batch ${status.expiresAt}`,
    );
  });
});

describe('temporary files', () => {
  test('every scrape above (stored, inline, refused, failed, timed out) removed its temporary media directory', async () => {
    // (The deadline test above saw one there while its scrape ran.)
    assert.deepEqual(await leftovers(), []);
  });
});
