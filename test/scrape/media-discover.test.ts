// Media discovery without any fetch: <video>/<audio> and their <source>s (blob: and data: skipped,
// larger declared players first), og:video/og:audio (player pages skipped by type), schema.org
// VideoObject/AudioObject contentUrl in JSON-LD and microdata, the scrape URL itself as media (by
// type, or by its first bytes under application/octet-stream), what bytes sniff as (manifests and
// media containers), and which candidates each format takes (audio: an <audio> first, then the videos).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDocument } from 'htmlparser2';
import { extractStructuredData } from '../../src/extractors/structured-data.ts';
import {
  type MediaCandidate,
  candidatesFor,
  directMedia,
  discoverMedia,
  isMediaFile,
} from '../../src/scrape/media/discover.ts';
import { sniffMedia } from '../../src/documents/sniff.ts';

const BASE = 'https://example.test/watch/page.html';

function discover(html: string): MediaCandidate[] {
  const doc = parseDocument(html);
  return discoverMedia(doc, BASE, extractStructuredData(doc, { baseUrl: BASE }));
}

const urls = (list: MediaCandidate[]) => list.map((c) => c.url);

// The first bytes of media files, as ffmpeg writes them.
const box = (type: string, brand: string) =>
  Buffer.concat([Buffer.from([0, 0, 0, 0x20]), Buffer.from(type + brand), Buffer.alloc(20)]);
const MP4 = box('ftyp', 'isom');
const M4A = box('ftyp', 'M4A ');
const ID3 = Buffer.concat([Buffer.from('ID3'), Buffer.from([4, 0, 0, 0, 0, 0, 0x23])]);
const TS = Buffer.alloc(3 * 188, 0xff);
for (const at of [0, 188, 376]) TS[at] = 0x47;

describe('media discovery', () => {
  test('<video src> and <audio src>, resolved against the base, in page order', () => {
    const found = discover('<video src="clip.mp4"></video><p>text</p><audio src="/a/tone.mp3"></audio>');
    assert.deepEqual(found, [
      { url: 'https://example.test/watch/clip.mp4', track: 'video', from: 'video-element' },
      { url: 'https://example.test/a/tone.mp3', track: 'audio', from: 'audio-element' },
    ]);
  });

  test('<source>: the first downloadable one of an element whose src is a blob:', () => {
    const found = discover(
      '<video src="blob:https://example.test/1234"><source src="data:video/mp4;base64,AAAA"><source src="/v.webm" type="video/webm"><source src="/v.mp4" type="video/mp4"></video>',
    );
    assert.deepEqual(found, [
      { url: 'https://example.test/v.webm', track: 'video', from: 'source', mimeType: 'video/webm' },
    ]);
  });

  test('a larger declared player ranks before a small decorative loop; undeclared sizes keep page order', () => {
    const found = discover(
      '<video src="/loop.mp4" width="40" height="30"></video><video src="/other.mp4"></video><video src="/main.mp4" width="640" height="360"></video>',
    );
    assert.deepEqual(urls(found), [
      'https://example.test/main.mp4',
      'https://example.test/loop.mp4',
      'https://example.test/other.mp4',
    ]);
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
          {
            '@type': 'PodcastEpisode',
            associatedMedia: {
              '@type': 'AudioObject',
              contentUrl: 'https://cdn.test/ep1.mp3',
              encodingFormat: 'audio/mpeg',
            },
          },
        ],
      })}</script>` +
        '<div itemscope itemtype="https://schema.org/VideoObject"><link itemprop="contentUrl" href="/micro.mp4"></div>',
    );
    assert.deepEqual(
      found.map((c) => [c.url, c.track, c.from]),
      [
        ['https://example.test/media/clip.m3u8', 'video', 'json-ld'],
        ['https://example.test/micro.mp4', 'video', 'microdata'],
        ['https://cdn.test/ep1.mp3', 'audio', 'json-ld'],
      ],
    );
  });

  test('the same URL found several ways counts once, where it was found first; fragments dropped', () => {
    const found = discover(
      '<head><meta property="og:video" content="/v.mp4"></head><body><video src="/v.mp4#t=10"></video></body>',
    );
    assert.deepEqual(found, [{ url: 'https://example.test/v.mp4', track: 'video', from: 'video-element' }]);
  });

  test('no media, or only URLs that cannot be downloaded: nothing', () => {
    assert.deepEqual(discover('<p>Words.</p><img src="/a.png"><iframe src="https://player.test/e/1"></iframe>'), []);
    assert.deepEqual(
      discover(
        '<video src="blob:x"></video><audio src="javascript:void 0"></audio><video src="ftp://x.test/a.mp4"></video>',
      ),
      [],
    );
  });

  test('the scrape URL itself: media by type, manifests by type or by their first bytes', () => {
    const none = Buffer.alloc(0);
    assert.deepEqual(directMedia('https://x.test/v', 'video/mp4', none), {
      url: 'https://x.test/v',
      track: 'video',
      from: 'direct',
      mimeType: 'video/mp4',
    });
    assert.equal(directMedia('https://x.test/a', 'audio/mpeg; charset=binary', none)?.track, 'audio');
    assert.ok(directMedia('https://x.test/a', 'audio/mpegurl', Buffer.from('#EXTM3U\n')));
    assert.ok(directMedia('https://x.test/p', 'text/plain', Buffer.from('\uFEFF#EXTM3U\n#EXTINF:1,\na.ts\n')));
    assert.ok(directMedia('https://x.test/m', 'application/dash+xml', none));
    assert.ok(
      directMedia('https://x.test/m', 'application/xml', Buffer.from('<?xml version="1.0"?>\n<MPD type="static">')),
    );
    assert.equal(directMedia('https://x.test/', 'text/html', Buffer.from('<html>')), undefined);
    assert.equal(isMediaFile('video/mp4', none), true);
    assert.equal(isMediaFile('audio/x-mpegurl', Buffer.from('#EXTM3U\n')), false, 'a playlist is read as the page');
    assert.equal(isMediaFile('text/html', none), false);
  });

  test('served as application/octet-stream (or untyped): the first bytes decide, manifests included', () => {
    for (const type of ['application/octet-stream', 'binary/octet-stream', '']) {
      assert.deepEqual(directMedia('https://x.test/clip.mp4', type, MP4), {
        url: 'https://x.test/clip.mp4',
        track: 'video',
        from: 'direct',
        ...(type ? { mimeType: type } : {}),
      });
      assert.equal(isMediaFile(type, MP4), true, type);
    }
    const octet = 'application/octet-stream';
    assert.equal(directMedia('https://x.test/a.mp3', octet, ID3)?.track, 'audio');
    assert.equal(directMedia('https://x.test/a.m4a', octet, M4A)?.track, 'audio');
    assert.ok(directMedia('https://x.test/p.m3u8', octet, Buffer.from('#EXTM3U\n#EXTINF:1,\na.ts\n')));
    assert.ok(
      directMedia(
        'https://x.test/m.mpd',
        octet,
        Buffer.from('<?xml version="1.0"?>\n<!-- by ffmpeg -->\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011">'),
      ),
    );
    assert.equal(isMediaFile(octet, Buffer.from('#EXTM3U\n')), false, 'a manifest is read as the page, not skipped');
    // Not media, or a type that says what it is: not sniffed.
    assert.equal(directMedia('https://x.test/f.bin', octet, Buffer.from('%PDF-1.7\n')), undefined);
    assert.equal(directMedia('https://x.test/f.bin', octet, Buffer.alloc(2048, 0x41)), undefined);
    assert.equal(isMediaFile('application/pdf', MP4), false);
    assert.equal(isMediaFile('image/png', MP4), false);
  });

  test('sniffing: MP4 ftyp (audio brands), QuickTime atoms, EBML, MPEG-TS, ID3 and MP3 frames, Ogg, FLAC, WAVE, AVI; manifests', () => {
    const riff = (form: string) => Buffer.concat([Buffer.from('RIFF'), Buffer.alloc(4), Buffer.from(form)]);
    const cases: [string, Buffer, ReturnType<typeof sniffMedia>][] = [
      ['mp4', MP4, { kind: 'file', track: 'video' }],
      ['m4a', M4A, { kind: 'file', track: 'audio' }],
      [
        'mov without ftyp',
        Buffer.concat([Buffer.from([0, 0, 0, 8]), Buffer.from('wide')]),
        { kind: 'file', track: 'video' },
      ],
      ['webm', Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x86, 0x81]), { kind: 'file', track: 'video' }],
      ['mpeg-ts', TS, { kind: 'file', track: 'video' }],
      ['id3', ID3, { kind: 'file', track: 'audio' }],
      ['mp3 frame', Buffer.from([0xff, 0xfb, 0x90, 0x64, 0, 0]), { kind: 'file', track: 'audio' }],
      ['ogg vorbis', Buffer.from('OggS\0\x02\x01vorbis', 'latin1'), { kind: 'file', track: 'audio' }],
      ['ogg theora', Buffer.from('OggS\0\x02\x80theora', 'latin1'), { kind: 'file', track: 'video' }],
      ['flac', Buffer.from('fLaC\0\0\0\x22'), { kind: 'file', track: 'audio' }],
      ['wave', riff('WAVEfmt '), { kind: 'file', track: 'audio' }],
      ['avi', riff('AVI LIST'), { kind: 'file', track: 'video' }],
      ['hls', Buffer.from('\uFEFF  #EXTM3U\n'), { kind: 'hls' }],
      ['dash', Buffer.from('<mpd:MPD xmlns:mpd="urn:mpeg:dash:schema:mpd:2011">'), { kind: 'dash' }],
      // Near misses: one TS sync byte; a frame sync of layer I (not MP3); reserved bitrate; an
      // MPD mentioned inside another document; text and nothing.
      ['one ts packet', Buffer.concat([Buffer.from([0x47]), Buffer.alloc(400, 0)]), undefined],
      ['layer I', Buffer.from([0xff, 0xff, 0x90, 0x64]), undefined],
      ['bad bitrate', Buffer.from([0xff, 0xfb, 0xf0, 0x64]), undefined],
      ['html', Buffer.from('<html><body><pre>&lt;MPD&gt; <MPD type="static"></pre>'), undefined],
      ['text', Buffer.from('Hello'), undefined],
      ['empty', Buffer.alloc(0), undefined],
    ];
    for (const [name, bytes, expected] of cases) assert.deepEqual(sniffMedia(bytes), expected, name);
  });

  test('candidates per format: video takes videos only; audio takes <audio> first, then videos', () => {
    const found = discover('<video src="/v.mp4"></video><audio src="/a.mp3"></audio>');
    assert.deepEqual(urls(candidatesFor(found, 'video')), ['https://example.test/v.mp4']);
    assert.deepEqual(urls(candidatesFor(found, 'audio')), ['https://example.test/a.mp3', 'https://example.test/v.mp4']);
    assert.deepEqual(candidatesFor(discover('<audio src="/a.mp3"></audio>'), 'video'), []);
  });
});
