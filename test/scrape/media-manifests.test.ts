// Streaming manifests read without fetching: HLS master playlists (variants by bandwidth,
// alternative audio renditions) and media playlists (segments, durations, fMP4 init sections, live),
// DASH MPDs (SegmentTemplate with a SegmentTimeline or a fixed duration, $Number%05d$ / $Time$ /
// $RepresentationID$ / $Bandwidth$, SegmentList, one file per representation, BaseURL inheritance),
// and every feature that cannot be assembled refused by name. Also the byte ranges of GET
// /v2/files/{id}.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { byteRange } from '../../src/api/routes/files.ts';
import { DashUnsupported, isoDuration, parseMpd } from '../../src/scrape/media/dash.ts';
import {
  HlsUnsupported,
  MAX_SEGMENTS,
  audioRendition,
  bestVariant,
  parsePlaylist,
} from '../../src/scrape/media/hls.ts';

const M3U8 = 'https://cdn.test/show/master.m3u8';

describe('HLS playlists', () => {
  test('master: variants with bandwidth and audio group; the best is the highest bandwidth, not the first', () => {
    const master = parsePlaylist(
      [
        '#EXTM3U',
        '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="English",LANGUAGE="en",DEFAULT=NO,URI="audio/en.m3u8"',
        '#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="aud",NAME="Main, stereo",DEFAULT=YES,URI="audio/main.m3u8"',
        '#EXT-X-STREAM-INF:BANDWIDTH=800000,RESOLUTION=640x360,CODECS="avc1.4d401e,mp4a.40.2",AUDIO="aud"',
        'low/index.m3u8',
        '#EXT-X-I-FRAME-STREAM-INF:BANDWIDTH=90000,URI="iframes.m3u8"',
        '#EXT-X-STREAM-INF:BANDWIDTH=2400000,RESOLUTION=1280x720,AUDIO="aud"',
        'https://other.test/high/index.m3u8',
        '',
      ].join('\r\n'),
      M3U8,
    );
    assert.equal(master.kind, 'master');
    if (master.kind !== 'master') return;
    assert.deepEqual(master.variants, [
      { url: 'https://cdn.test/show/low/index.m3u8', bandwidth: 800000, audioGroup: 'aud' },
      { url: 'https://other.test/high/index.m3u8', bandwidth: 2400000, audioGroup: 'aud' },
    ]);
    const best = bestVariant(master);
    assert.equal(best.url, 'https://other.test/high/index.m3u8');
    assert.deepEqual(audioRendition(master, best), {
      type: 'AUDIO',
      groupId: 'aud',
      url: 'https://cdn.test/show/audio/main.m3u8',
      isDefault: true,
    });
    assert.equal(
      audioRendition(master, { url: 'x', bandwidth: 1 }),
      undefined,
      'no group: the audio is in the variant',
    );
  });

  test('media: segments in order with their total duration; an fMP4 init section; VOD vs live', () => {
    const vod = parsePlaylist(
      '#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXT-X-MAP:URI="init.mp4"\n#EXT-X-KEY:METHOD=NONE\n#EXTINF:4.0,\nseg1.m4s\n#EXTINF:3.5,title\n/abs/seg2.m4s\n#EXT-X-ENDLIST\n',
      'https://cdn.test/v/720p.m3u8',
    );
    assert.deepEqual(vod, {
      kind: 'media',
      segments: ['https://cdn.test/v/seg1.m4s', 'https://cdn.test/abs/seg2.m4s'],
      duration: 7.5,
      init: 'https://cdn.test/v/init.mp4',
      ended: true,
    });
    const live = parsePlaylist('#EXTM3U\n#EXT-X-MEDIA-SEQUENCE:100\n#EXTINF:2,\na100.ts\n#EXTINF:2,\na101.ts\n', M3U8);
    assert.equal(live.kind === 'media' && live.ended, false);
  });

  test('refused by name: encryption, byte ranges, several init sections, not a playlist, empty', () => {
    const refused: [string, RegExp][] = [
      [
        '#EXTM3U\n#EXT-X-KEY:METHOD=AES-128,URI="k.bin"\n#EXTINF:1,\na.ts\n',
        /encrypted HLS \(EXT-X-KEY METHOD=AES-128\)/,
      ],
      ['#EXTM3U\n#EXT-X-KEY:METHOD=SAMPLE-AES,URI="skd://k"\n#EXTINF:1,\na.ts\n', /SAMPLE-AES/],
      ['#EXTM3U\n#EXTINF:1,\n#EXT-X-BYTERANGE:1000@0\nall.ts\n', /EXT-X-BYTERANGE/],
      [
        '#EXTM3U\n#EXT-X-MAP:URI="a.mp4"\n#EXTINF:1,\n1.m4s\n#EXT-X-MAP:URI="b.mp4"\n#EXTINF:1,\n2.m4s\n',
        /more than one initialisation section/,
      ],
      ['<html><body>Not found</body></html>', /no #EXTM3U/],
      ['#EXTM3U\n#EXT-X-ENDLIST\n', /no segment/],
      // URIs that are no http(s) URL: refused by name here (not a TypeError, not the SSRF guard's "body.url").
      [
        '#EXTM3U\n#EXTINF:1,\nfile:///etc/passwd\n#EXT-X-ENDLIST\n',
        /"file:\/\/\/etc\/passwd", which is not an http\(s\) URL/,
      ],
      ['#EXTM3U\n#EXTINF:1,\nhttp://[broken\n', /"http:\/\/\[broken", which is not an http\(s\) URL/],
      [
        '#EXTM3U\n#EXT-X-MAP:URI="data:video/mp4;base64,AAAA"\n#EXTINF:1,\na.ts\n',
        /"data:video\/mp4;base64,AAAA", which is not/,
      ],
      ['#EXTM3U\n#EXT-X-STREAM-INF:BANDWIDTH=1\nftp://x.test/v.m3u8\n', /"ftp:\/\/x\.test\/v\.m3u8"/],
      [`#EXTM3U\n${'#EXTINF:1,\na.ts\n'.repeat(MAX_SEGMENTS + 1)}`, new RegExp(`more than ${MAX_SEGMENTS} segments`)],
    ];
    for (const [text, message] of refused)
      assert.throws(
        () => parsePlaylist(text, M3U8),
        (err: Error) => err instanceof HlsUnsupported && message.test(err.message),
        text,
      );
  });
});

const MPD = 'https://cdn.test/dash/stream.mpd';
const mpd = (period: string, attrs = 'type="static" mediaPresentationDuration="PT4.0S"') =>
  `<?xml version="1.0" encoding="utf-8"?>\n<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" ${attrs}><Period id="0">${period}</Period></MPD>`;

describe('DASH manifests', () => {
  test("ffmpeg's SegmentTimeline (with a repeat): the highest-bandwidth video and the audio, $Number%05d$ from startNumber", () => {
    const m = parseMpd(
      mpd(
        '<AdaptationSet contentType="video">' +
          '<Representation id="0" mimeType="video/mp4" bandwidth="300000"><SegmentTemplate timescale="10240" initialization="init-$RepresentationID$.m4s" media="chunk-$RepresentationID$-$Number%05d$.m4s" startNumber="1"><SegmentTimeline><S t="0" d="10240" r="3"/></SegmentTimeline></SegmentTemplate></Representation>' +
          '<Representation id="1" mimeType="video/mp4" bandwidth="900000"><SegmentTemplate timescale="10240" initialization="init-$RepresentationID$.m4s" media="chunk-$RepresentationID$-$Number%05d$.m4s" startNumber="1"><SegmentTimeline><S t="0" d="10240" r="3"/></SegmentTimeline></SegmentTemplate></Representation>' +
          '</AdaptationSet>' +
          '<AdaptationSet contentType="audio"><Representation id="2" mimeType="audio/mp4" bandwidth="32000"><SegmentTemplate timescale="44100" initialization="init-$RepresentationID$.m4s" media="chunk-$RepresentationID$-$Number%05d$.m4s" startNumber="1"><SegmentTimeline><S t="0" d="44032"/><S d="45056"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet>',
      ),
      MPD,
    );
    assert.equal(m.duration, 4);
    assert.deepEqual(m.video, {
      contentType: 'video',
      bandwidth: 900000,
      init: 'https://cdn.test/dash/init-1.m4s',
      segments: [1, 2, 3, 4].map((n) => `https://cdn.test/dash/chunk-1-0000${n}.m4s`),
    });
    assert.deepEqual(m.audio?.segments, [
      'https://cdn.test/dash/chunk-2-00001.m4s',
      'https://cdn.test/dash/chunk-2-00002.m4s',
    ]);
  });

  test('SegmentTemplate@duration inherited from the AdaptationSet: segment count from the presentation duration; $Time$ and $Bandwidth$; r="-1"', () => {
    const m = parseMpd(
      mpd(
        '<AdaptationSet mimeType="video/mp4"><SegmentTemplate timescale="1000" duration="1500" media="$Bandwidth$/$Number$.m4s" initialization="$Bandwidth$/init.m4s" startNumber="10"/>' +
          '<Representation id="v" bandwidth="500000"/></AdaptationSet>' +
          '<AdaptationSet mimeType="audio/mp4"><Representation id="a" bandwidth="64000"><SegmentTemplate timescale="1000" media="a/$Time$.m4s"><SegmentTimeline><S t="0" d="2000" r="-1"/></SegmentTimeline></SegmentTemplate></Representation></AdaptationSet>',
      ),
      MPD,
    );
    // 4 s in 1.5 s segments: 3 segments, numbered from 10.
    assert.deepEqual(m.video?.segments, [
      'https://cdn.test/dash/500000/10.m4s',
      'https://cdn.test/dash/500000/11.m4s',
      'https://cdn.test/dash/500000/12.m4s',
    ]);
    assert.equal(m.video?.init, 'https://cdn.test/dash/500000/init.m4s');
    assert.deepEqual(m.audio?.segments, ['https://cdn.test/dash/a/0.m4s', 'https://cdn.test/dash/a/2000.m4s']);
  });

  test('BaseURL inheritance (MPD → Period → AdaptationSet → Representation), SegmentList, one file per representation', () => {
    const m = parseMpd(
      `<MPD type="static" mediaPresentationDuration="PT1M2.5S"><BaseURL>https://media.test/root/</BaseURL><Period><BaseURL>p1/</BaseURL>` +
        '<AdaptationSet contentType="video"><BaseURL>video/</BaseURL><Representation id="v" bandwidth="1"><BaseURL>720/</BaseURL>' +
        '<SegmentList><Initialization sourceURL="init.mp4"/><SegmentURL media="s1.m4s"/><SegmentURL media="s2.m4s"/></SegmentList></Representation></AdaptationSet>' +
        '<AdaptationSet contentType="audio"><Representation id="a" bandwidth="1"><BaseURL>/audio/full.m4a</BaseURL><SegmentBase indexRange="800-1000"/></Representation></AdaptationSet>' +
        '</Period></MPD>',
      MPD,
    );
    assert.equal(m.duration, 62.5);
    assert.deepEqual(m.video, {
      contentType: 'video',
      bandwidth: 1,
      init: 'https://media.test/root/p1/video/720/init.mp4',
      segments: ['https://media.test/root/p1/video/720/s1.m4s', 'https://media.test/root/p1/video/720/s2.m4s'],
    });
    assert.deepEqual(m.audio, { contentType: 'audio', bandwidth: 1, segments: ['https://media.test/audio/full.m4a'] });
  });

  test('refused by name: live, several periods, DRM, byte ranges, no segment information, not an MPD', () => {
    const rep =
      '<AdaptationSet contentType="video"><Representation id="v" bandwidth="1"><BaseURL>v.mp4</BaseURL></Representation></AdaptationSet>';
    const refused: [string, RegExp][] = [
      [mpd(rep, 'type="dynamic"'), /live DASH/],
      [`<MPD type="static"><Period>${rep}</Period><Period>${rep}</Period></MPD>`, /multi-period/],
      [
        mpd(
          `<AdaptationSet contentType="video"><ContentProtection schemeIdUri="urn:mpeg:dash:mp4protection:2011"/><Representation id="v" bandwidth="1"/></AdaptationSet>`,
        ),
        /DRM/,
      ],
      [
        mpd(
          '<AdaptationSet contentType="video"><Representation id="v" bandwidth="1"><SegmentList><SegmentURL mediaRange="0-99"/></SegmentList></Representation></AdaptationSet>',
        ),
        /mediaRange/,
      ],
      [
        mpd('<AdaptationSet contentType="video"><Representation id="v" bandwidth="1"/></AdaptationSet>'),
        /without segment information/,
      ],
      [
        mpd(
          '<AdaptationSet contentType="text"><Representation id="t" bandwidth="1"><BaseURL>subs.vtt</BaseURL></Representation></AdaptationSet>',
        ),
        /no video or audio/,
      ],
      [
        mpd(
          rep.replace('<BaseURL>v.mp4</BaseURL>', '<SegmentTemplate media="$Number$.m4s" duration="2"/>'),
          'type="static"',
        ),
        /without a presentation duration/,
      ],
      ['<html><body>no</body></html>', /no MPD element/],
      [mpd(rep.replace('v.mp4', 'file:///etc/passwd')), /"file:\/\/\/etc\/passwd", which is not an http\(s\) URL/],
      [
        mpd(rep.replace('<BaseURL>v.mp4</BaseURL>', '<SegmentTemplate media="http://[x/$Number$.m4s" duration="1"/>')),
        /"http:\/\/\[x\/1\.m4s", which is not/,
      ],
      [
        mpd(
          rep.replace(
            '<BaseURL>v.mp4</BaseURL>',
            '<SegmentList><Initialization sourceURL="gopher://x.test/i"/><SegmentURL media="1.m4s"/></SegmentList>',
          ),
        ),
        /gopher/,
      ],
      // A padding of a billion digits would build gigabytes of URL for each segment.
      [
        mpd(
          rep.replace('<BaseURL>v.mp4</BaseURL>', '<SegmentTemplate media="$Number%0999999999d$.m4s" duration="1"/>'),
        ),
        /\$Number\$ padding of 999999999 digits/,
      ],
      [
        mpd(rep.replace('<BaseURL>v.mp4</BaseURL>', '<SegmentTemplate media="$Time%021d$.m4s" duration="1"/>')),
        /\$Time\$ padding of 21 digits/,
      ],
      [
        mpd(
          rep.replace(
            '<BaseURL>v.mp4</BaseURL>',
            '<SegmentTemplate media="$Number$.m4s"><SegmentTimeline><S d="1" r="60000"/></SegmentTimeline></SegmentTemplate>',
          ),
        ),
        /more than 50000 segments/,
      ],
    ];
    for (const [xml, message] of refused)
      assert.throws(
        () => parseMpd(xml, MPD),
        (err: Error) => err instanceof DashUnsupported && message.test(err.message),
        xml,
      );
  });

  test('a padding up to 20 digits (any 64-bit number) is taken', () => {
    const m = parseMpd(
      mpd(
        '<AdaptationSet contentType="video"><Representation id="v" bandwidth="1"><SegmentTemplate media="$Number%020d$.m4s" duration="2"/></Representation></AdaptationSet>',
      ),
      MPD,
    );
    assert.deepEqual(m.video?.segments, [
      `https://cdn.test/dash/${'1'.padStart(20, '0')}.m4s`,
      `https://cdn.test/dash/${'2'.padStart(20, '0')}.m4s`,
    ]);
  });

  test('ISO 8601 durations', () => {
    assert.equal(isoDuration('PT4.0S'), 4);
    assert.equal(isoDuration('PT1H2M3.5S'), 3723.5);
    assert.equal(isoDuration('P1DT1S'), 86401);
    assert.equal(isoDuration('4 seconds'), undefined);
  });
});

describe('file byte ranges', () => {
  test('one range, open-ended, suffix; unsatisfiable; forms served whole', () => {
    assert.deepEqual(byteRange('bytes=0-99', 1000), { start: 0, end: 99 });
    assert.deepEqual(byteRange('bytes=900-', 1000), { start: 900, end: 999 });
    assert.deepEqual(byteRange('bytes=990-5000', 1000), { start: 990, end: 999 });
    assert.deepEqual(byteRange('bytes=-10', 1000), { start: 990, end: 999 });
    assert.deepEqual(byteRange('bytes=-5000', 1000), { start: 0, end: 999 });
    assert.deepEqual(byteRange('bytes=20-20', 1000), { start: 20, end: 20 });
    // An empty file: no first byte to start from (416); a suffix is satisfiable but empty (the whole file, 200).
    assert.equal(byteRange('bytes=0-', 0), 'unsatisfiable');
    assert.equal(byteRange('bytes=-5', 0), undefined);
    assert.equal(byteRange('bytes=1000-', 1000), 'unsatisfiable');
    assert.equal(byteRange('bytes=-0', 1000), 'unsatisfiable');
    for (const whole of ['bytes=0-1,5-9', 'items=0-1', 'bytes=9-1', 'bytes=-', 'nonsense'])
      assert.equal(byteRange(whole, 1000), undefined, whole);
  });
});
