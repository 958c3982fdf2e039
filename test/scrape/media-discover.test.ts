// Media discovery without any fetch: <video>/<audio> and their <source>s (blob: and data: skipped,
// larger declared players first), og:video/og:audio (player pages skipped by type), schema.org
// VideoObject/AudioObject contentUrl in JSON-LD and microdata, the kind (file, HLS, DASH) from the
// declared type or the extension, the scrape URL itself as media, and which candidates each format
// takes (audio: an <audio> first, then the videos).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDocument } from 'htmlparser2';
import { extractStructuredData } from '../../src/extract/structured-data.ts';
import { type MediaCandidate, candidatesFor, directMedia, discoverMedia, isMediaFileType, kindOf } from '../../src/scrape/media/discover.ts';

const BASE = 'https://example.test/watch/page.html';

function discover(html: string): MediaCandidate[] {
  const doc = parseDocument(html);
  return discoverMedia(doc, BASE, extractStructuredData(doc, { baseUrl: BASE }));
}

const urls = (list: MediaCandidate[]) => list.map((c) => c.url);

describe('media discovery', () => {
  test('<video src> and <audio src>, resolved against the base, in page order', () => {
    const found = discover('<video src="clip.mp4"></video><p>text</p><audio src="/a/tone.mp3"></audio>');
    assert.deepEqual(found, [
      { url: 'https://example.test/watch/clip.mp4', kind: 'file', track: 'video', from: 'video-element' },
      { url: 'https://example.test/a/tone.mp3', kind: 'file', track: 'audio', from: 'audio-element' },
    ]);
  });

  test('<source>: the first downloadable one of an element whose src is a blob:', () => {
    const found = discover(
      '<video src="blob:https://example.test/1234"><source src="data:video/mp4;base64,AAAA"><source src="/v.webm" type="video/webm"><source src="/v.mp4" type="video/mp4"></video>',
    );
    assert.deepEqual(found, [{ url: 'https://example.test/v.webm', kind: 'file', track: 'video', from: 'source', mimeType: 'video/webm' }]);
  });

  test('a larger declared player ranks before a small decorative loop; undeclared sizes keep page order', () => {
    const found = discover('<video src="/loop.mp4" width="40" height="30"></video><video src="/other.mp4"></video><video src="/main.mp4" width="640" height="360"></video>');
    assert.deepEqual(urls(found), ['https://example.test/main.mp4', 'https://example.test/loop.mp4', 'https://example.test/other.mp4']);
    assert.equal(found[0].area, 640 * 360);
  });

  test('og:video: secure_url first, player pages (text/html, flash) skipped by their declared type; og:audio', () => {
    const found = discover(
      '<head>' +
        '<meta property="og:video" content="https://player.test/embed/1"><meta property="og:video:type" content="text/html">' +
        '<meta property="og:video" content="http://cdn.test/v/1.mp4"><meta property="og:video:type" content="video/mp4">' +
        '<meta property="og:video:secure_url" content="https://cdn.test/v/1-secure.mp4">' +
        '<meta property="og:audio" content="/podcast.mp3">' +
        '</head><body></body>',
    );
    assert.deepEqual(
      found.map((c) => [c.url, c.track, c.from, c.mimeType]),
      [
        ['https://cdn.test/v/1-secure.mp4', 'video', 'og', undefined],
        ['http://cdn.test/v/1.mp4', 'video', 'og', 'video/mp4'],
        ['https://example.test/podcast.mp3', 'audio', 'og', undefined],
      ],
    );
  });

  test('JSON-LD VideoObject and AudioObject contentUrl (embedUrl is a player, not media); microdata too', () => {
    const found = discover(
      `<script type="application/ld+json">${JSON.stringify({
        '@context': 'https://schema.org',
        '@graph': [
          { '@type': 'VideoObject', name: 'Clip', embedUrl: 'https://player.test/e/1', contentUrl: '/media/clip.m3u8' },
          { '@type': 'PodcastEpisode', associatedMedia: { '@type': 'AudioObject', contentUrl: 'https://cdn.test/ep1.mp3', encodingFormat: 'audio/mpeg' } },
        ],
      })}</script>` +
        '<div itemscope itemtype="https://schema.org/VideoObject"><link itemprop="contentUrl" href="/micro.mp4"></div>',
    );
    assert.deepEqual(
      found.map((c) => [c.url, c.kind, c.track, c.from]),
      [
        ['https://example.test/media/clip.m3u8', 'hls', 'video', 'json-ld'],
        ['https://example.test/micro.mp4', 'file', 'video', 'microdata'],
        ['https://cdn.test/ep1.mp3', 'file', 'audio', 'json-ld'],
      ],
    );
  });

  test('the same URL found several ways counts once, where it was found first; fragments dropped', () => {
    const found = discover('<head><meta property="og:video" content="/v.mp4"></head><body><video src="/v.mp4#t=10"></video></body>');
    assert.deepEqual(found, [{ url: 'https://example.test/v.mp4', kind: 'file', track: 'video', from: 'video-element' }]);
  });

  test('no media, or only URLs that cannot be downloaded: nothing', () => {
    assert.deepEqual(discover('<p>Words.</p><img src="/a.png"><iframe src="https://player.test/e/1"></iframe>'), []);
    assert.deepEqual(discover('<video src="blob:x"></video><audio src="javascript:void 0"></audio><video src="ftp://x.test/a.mp4"></video>'), []);
  });

  test('kind: declared HLS and DASH types win, else the extension', () => {
    assert.equal(kindOf('https://x.test/a', 'application/x-mpegURL'), 'hls');
    assert.equal(kindOf('https://x.test/a', 'application/vnd.apple.mpegurl'), 'hls');
    assert.equal(kindOf('https://x.test/a', 'application/dash+xml'), 'dash');
    assert.equal(kindOf('https://x.test/live/index.m3u8?token=1'), 'hls');
    assert.equal(kindOf('https://x.test/manifest.mpd'), 'dash');
    assert.equal(kindOf('https://x.test/clip.mp4', 'video/mp4'), 'file');
    const found = discover('<video><source src="/stream" type="application/x-mpegURL"></video>');
    assert.equal(found[0].kind, 'hls');
  });

  test('the scrape URL itself: media by type, manifests by type or by their first bytes', () => {
    const none = Buffer.alloc(0);
    assert.deepEqual(directMedia('https://x.test/v', 'video/mp4', none), { url: 'https://x.test/v', kind: 'file', track: 'video', from: 'direct', mimeType: 'video/mp4' });
    assert.equal(directMedia('https://x.test/a', 'audio/mpeg; charset=binary', none)?.track, 'audio');
    assert.equal(directMedia('https://x.test/a', 'audio/mpegurl', Buffer.from('#EXTM3U\n'))?.kind, 'hls');
    assert.equal(directMedia('https://x.test/p', 'text/plain', Buffer.from('\uFEFF#EXTM3U\n#EXTINF:1,\na.ts\n'))?.kind, 'hls');
    assert.equal(directMedia('https://x.test/m', 'application/dash+xml', none)?.kind, 'dash');
    assert.equal(directMedia('https://x.test/m', 'application/xml', Buffer.from('<?xml version="1.0"?>\n<MPD type="static">'))?.kind, 'dash');
    assert.equal(directMedia('https://x.test/', 'text/html', Buffer.from('<html>')), undefined);
    assert.equal(isMediaFileType('video/mp4'), true);
    assert.equal(isMediaFileType('audio/x-mpegurl'), false, 'a playlist is read as the page');
    assert.equal(isMediaFileType('text/html'), false);
  });

  test('candidates per format: video takes videos only; audio takes <audio> first, then videos', () => {
    const found = discover('<video src="/v.mp4"></video><audio src="/a.mp3"></audio>');
    assert.deepEqual(urls(candidatesFor(found, 'video')), ['https://example.test/v.mp4']);
    assert.deepEqual(urls(candidatesFor(found, 'audio')), ['https://example.test/a.mp3', 'https://example.test/v.mp4']);
    assert.deepEqual(candidatesFor(discover('<audio src="/a.mp3"></audio>'), 'video'), []);
  });
});
