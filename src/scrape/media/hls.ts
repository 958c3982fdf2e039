// HLS playlists (RFC 8216), read without fetching: a master playlist lists variants (and
// alternative renditions), a media playlist lists segments. What cannot be assembled by
// concatenating segments is refused by name: encryption (EXT-X-KEY other than NONE), byte-range
// segments (EXT-X-BYTERANGE), more than one initialisation section (EXT-X-MAP), a URI that is not
// an http(s) URL, and more than MAX_SEGMENTS segments.
import { httpUrl } from './discover.ts';

/** Most segments a media playlist may list (as for DASH: a bound on a hostile or broken list). */
export const MAX_SEGMENTS = 50_000;

export interface HlsVariant {
  url: string;
  bandwidth: number;
  /** GROUP-ID of its alternative audio renditions (EXT-X-MEDIA TYPE=AUDIO). */
  audioGroup?: string;
}

export interface HlsRendition {
  type: string;
  groupId: string;
  /** Absent: the rendition is carried inside the variant's own segments. */
  url?: string;
  isDefault: boolean;
}

export interface HlsMaster {
  kind: 'master';
  variants: HlsVariant[];
  renditions: HlsRendition[];
}

export interface HlsMedia {
  kind: 'media';
  /** Segment URLs in play order. */
  segments: string[];
  /** Sum of the EXTINF durations, in seconds. */
  duration: number;
  /** The initialisation section (fMP4 segments), fetched once before the segments. */
  init?: string;
  /** False for a live playlist (no EXT-X-ENDLIST): only the segments listed now are taken. */
  ended: boolean;
}

/** Why a playlist cannot be used (the caller names the URL). */
export class HlsUnsupported extends Error {}

export function parsePlaylist(text: string, baseUrl: string): HlsMaster | HlsMedia {
  const lines = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .map((l) => l.trim());
  if (lines[0] !== '#EXTM3U') throw new HlsUnsupported('not an HLS playlist (no #EXTM3U header)');
  const resolve = (u: string) => {
    const url = httpUrl(u, baseUrl);
    if (!url) throw new HlsUnsupported(`the playlist lists "${u.slice(0, 200)}", which is not an http(s) URL`);
    return url.href;
  };
  if (lines.some((l) => l.startsWith('#EXT-X-STREAM-INF'))) {
    const variants: HlsVariant[] = [];
    const renditions: HlsRendition[] = [];
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i];
      if (line.startsWith('#EXT-X-MEDIA:')) {
        const a = attributes(line.slice('#EXT-X-MEDIA:'.length));
        renditions.push({
          type: a.TYPE ?? '',
          groupId: a['GROUP-ID'] ?? '',
          ...(a.URI ? { url: resolve(a.URI) } : {}),
          isDefault: a.DEFAULT === 'YES',
        });
      } else if (line.startsWith('#EXT-X-STREAM-INF:')) {
        const a = attributes(line.slice('#EXT-X-STREAM-INF:'.length));
        const uri = lines.slice(i + 1).find((l) => l && !l.startsWith('#'));
        if (!uri) continue;
        variants.push({
          url: resolve(uri),
          bandwidth: Number(a.BANDWIDTH) || 0,
          ...(a.AUDIO ? { audioGroup: a.AUDIO } : {}),
        });
      }
    }
    if (!variants.length) throw new HlsUnsupported('the master playlist lists no variant');
    return { kind: 'master', variants, renditions };
  }
  const segments: string[] = [];
  let duration = 0;
  let pending: number | undefined;
  let init: string | undefined;
  let ended = false;
  for (const line of lines.slice(1)) {
    if (!line) continue;
    if (line.startsWith('#EXTINF:')) pending = Number.parseFloat(line.slice('#EXTINF:'.length)) || 0;
    else if (line.startsWith('#EXT-X-ENDLIST')) ended = true;
    else if (line.startsWith('#EXT-X-KEY:') || line.startsWith('#EXT-X-SESSION-KEY:')) {
      const method = attributes(line.slice(line.indexOf(':') + 1)).METHOD ?? '';
      if (method !== 'NONE') throw new HlsUnsupported(`encrypted HLS (EXT-X-KEY METHOD=${method}) is not supported`);
    } else if (line.startsWith('#EXT-X-BYTERANGE')) {
      throw new HlsUnsupported('byte-range segments (EXT-X-BYTERANGE) are not supported');
    } else if (line.startsWith('#EXT-X-MAP:')) {
      const a = attributes(line.slice('#EXT-X-MAP:'.length));
      if (a.BYTERANGE)
        throw new HlsUnsupported('a byte-range initialisation section (EXT-X-MAP BYTERANGE) is not supported');
      if (!a.URI) throw new HlsUnsupported('EXT-X-MAP without a URI');
      const url = resolve(a.URI);
      if (init !== undefined && init !== url)
        throw new HlsUnsupported('more than one initialisation section (EXT-X-MAP) is not supported');
      init = url;
    } else if (!line.startsWith('#')) {
      if (segments.length >= MAX_SEGMENTS) throw new HlsUnsupported(`more than ${MAX_SEGMENTS} segments`);
      segments.push(resolve(line));
      duration += pending ?? 0;
      pending = undefined;
    }
  }
  if (!segments.length) throw new HlsUnsupported('the media playlist lists no segment');
  return { kind: 'media', segments, duration, ...(init ? { init } : {}), ended };
}

/** The variant with the highest BANDWIDTH (the first of equals). */
export function bestVariant(master: HlsMaster): HlsVariant {
  return master.variants.reduce((best, v) => (v.bandwidth > best.bandwidth ? v : best));
}

/** The variant's alternative audio with its own playlist: the DEFAULT=YES one, else the first. */
export function audioRendition(master: HlsMaster, variant: HlsVariant): HlsRendition | undefined {
  if (!variant.audioGroup) return undefined;
  const group = master.renditions.filter((r) => r.type === 'AUDIO' && r.groupId === variant.audioGroup && r.url);
  return group.find((r) => r.isDefault) ?? group[0];
}

// KEY=value,KEY="quoted, value" (RFC 8216 §4.2).
function attributes(list: string): Record<string, string> {
  const out: Record<string, string> = {};
  const re = /([A-Z0-9-]+)=("[^"]*"|[^,]*)/g;
  for (let m = re.exec(list); m; m = re.exec(list)) out[m[1]] = m[2].startsWith('"') ? m[2].slice(1, -1) : m[2];
  return out;
}
