// Where a page's media is: <video>/<audio> elements and their <source>s, og:video/og:audio, and
// schema.org VideoObject/AudioObject contentUrl (JSON-LD, microdata, RDFa), or the scrape URL
// itself when it answers with media or a streaming manifest. Pure: it reads the parsed page (the
// rendered DOM when the browser ran) and never fetches. blob: and data: URLs (players feeding
// Media Source Extensions, inline media) cannot be downloaded and are skipped.
import { selectAll } from 'css-select';
import type { AnyNode, Document, Element } from 'domhandler';
import { type StructuredData, asList, findByType, isObj } from '../../extract/structured-data.ts';

/** How the media is delivered: one file, or a stream assembled from an HLS or DASH manifest. */
export type MediaKind = 'file' | 'hls' | 'dash';
/** What the page says the media is. */
export type MediaTrack = 'video' | 'audio';
export type MediaOrigin = 'video-element' | 'audio-element' | 'source' | 'og' | 'json-ld' | 'microdata' | 'rdfa' | 'direct';

export interface MediaCandidate {
  /** Absolute http(s) URL. */
  url: string;
  kind: MediaKind;
  track: MediaTrack;
  from: MediaOrigin;
  /** The type the page declares (<source type>, og:video:type, encodingFormat). */
  mimeType?: string;
  /** Declared width × height of the element, when both are given (larger ranks first). */
  area?: number;
}

const HLS_TYPE = /mpegurl/i;
const DASH_TYPE = /dash\+xml/i;
// Declared types that are a player page or a plugin, never a media file.
const NOT_MEDIA_TYPE = /^(text\/html|application\/xhtml|application\/x-shockwave-flash)/i;

/** Every media candidate of the page, best first within each origin: elements, og, schema.org. */
export function discoverMedia(doc: Document, baseUrl: string, structured: StructuredData): MediaCandidate[] {
  const out: MediaCandidate[] = [];
  out.push(...elementCandidates(doc, baseUrl));
  out.push(...openGraphCandidates(structured.openGraph, baseUrl, 'video'));
  out.push(...openGraphCandidates(structured.openGraph, baseUrl, 'audio'));
  for (const [type, track] of [
    ['VideoObject', 'video'],
    ['AudioObject', 'audio'],
  ] as const) {
    for (const { node, source } of findByType(structured, type)) {
      const format = typeof node.encodingFormat === 'string' ? node.encodingFormat : undefined;
      for (const value of asList(node.contentUrl)) {
        const raw = typeof value === 'string' ? value : isObj(value) && typeof value.url === 'string' ? value.url : undefined;
        const c = candidate(raw, baseUrl, track, source, format);
        if (c) out.push(c);
      }
    }
  }
  return unique(out);
}

/**
 * The scrape URL's own answer as media: a video/audio file, or an HLS/DASH manifest (by type, or
 * by its first bytes when the type says nothing useful).
 */
export function directMedia(url: string, contentType: string, body: Buffer): MediaCandidate | undefined {
  const type = contentType.split(';', 1)[0].trim().toLowerCase();
  const head = body.subarray(0, 1024).toString('latin1').replace(/^\uFEFF|^\xEF\xBB\xBF/, '').trimStart();
  if (HLS_TYPE.test(type) || head.startsWith('#EXTM3U')) return { url, kind: 'hls', track: 'video', from: 'direct', mimeType: type || undefined };
  if (DASH_TYPE.test(type) || (/xml/.test(type) && /<MPD[\s>]/.test(head))) return { url, kind: 'dash', track: 'video', from: 'direct', mimeType: type };
  if (type.startsWith('video/')) return { url, kind: kindOf(url, type), track: 'video', from: 'direct', mimeType: type };
  if (type.startsWith('audio/')) return { url, kind: kindOf(url, type), track: 'audio', from: 'direct', mimeType: type };
  return undefined;
}

/** A Content-Type of a media file (not a manifest): such a body is left to the media stage. */
export function isMediaFileType(contentType: string): boolean {
  const type = contentType.split(';', 1)[0].trim().toLowerCase();
  return (type.startsWith('video/') || type.startsWith('audio/')) && !HLS_TYPE.test(type);
}

/**
 * The candidates for a format, best first: for `video` the video candidates; for `audio` the
 * audio candidates, then the videos (whose audio track is extracted).
 */
export function candidatesFor(candidates: MediaCandidate[], format: MediaTrack): MediaCandidate[] {
  const audio = candidates.filter((c) => c.track === 'audio');
  const video = candidates.filter((c) => c.track === 'video');
  return format === 'video' ? video : [...audio, ...video];
}

/** file, hls or dash: from the declared type, else the URL's extension. */
export function kindOf(url: string, mimeType?: string): MediaKind {
  if (mimeType && HLS_TYPE.test(mimeType)) return 'hls';
  if (mimeType && DASH_TYPE.test(mimeType)) return 'dash';
  const path = URL.canParse(url) ? new URL(url).pathname.toLowerCase() : '';
  if (path.endsWith('.m3u8') || path.endsWith('.m3u')) return 'hls';
  if (path.endsWith('.mpd')) return 'dash';
  return 'file';
}

// <video> and <audio> in page order, each by its src or else its first usable <source>; larger
// declared sizes first (a page's main player over a decorative loop), page order otherwise.
function elementCandidates(doc: Document, baseUrl: string): MediaCandidate[] {
  const found: MediaCandidate[] = [];
  for (const el of selectAll<AnyNode, Element>('video, audio', doc.children)) {
    const track: MediaTrack = el.name === 'audio' ? 'audio' : 'video';
    const area = declaredArea(el);
    let c = candidate(el.attribs.src, baseUrl, track, track === 'video' ? 'video-element' : 'audio-element', el.attribs.type, area);
    if (!c) {
      for (const source of el.children) {
        if (source.type !== 'tag' || (source as Element).name !== 'source') continue;
        const a = (source as Element).attribs;
        c = candidate(a.src, baseUrl, track, 'source', a.type, area);
        if (c) break;
      }
    }
    if (c) found.push(c);
  }
  return found.map((c, i) => ({ c, i })).sort((x, y) => (y.c.area ?? 0) - (x.c.area ?? 0) || x.i - y.i).map((x) => x.c);
}

function declaredArea(el: Element): number | undefined {
  const w = Number.parseInt(el.attribs.width ?? '', 10);
  const h = Number.parseInt(el.attribs.height ?? '', 10);
  return w > 0 && h > 0 ? w * h : undefined;
}

// og:video:secure_url, og:video:url, og:video (likewise og:audio); og:video:type applies to the
// value at the same position when there are as many types as values, else the single one.
function openGraphCandidates(og: Record<string, string | string[]>, baseUrl: string, track: MediaTrack): MediaCandidate[] {
  const types = asList(og[`og:${track}:type`]).map(String);
  const out: MediaCandidate[] = [];
  for (const key of [`og:${track}:secure_url`, `og:${track}:url`, `og:${track}`]) {
    const values = asList(og[key]).map(String);
    values.forEach((v, i) => {
      const type = types.length === values.length ? types[i] : types.length === 1 ? types[0] : undefined;
      const c = candidate(v, baseUrl, track, 'og', type);
      if (c) out.push(c);
    });
  }
  return out;
}

function candidate(
  raw: string | undefined,
  baseUrl: string,
  track: MediaTrack,
  from: MediaOrigin,
  mimeType?: string,
  area?: number,
): MediaCandidate | undefined {
  const value = raw?.trim();
  if (!value || /^(blob|data|javascript):/i.test(value)) return undefined;
  const type = mimeType?.trim().toLowerCase() || undefined;
  if (type && NOT_MEDIA_TYPE.test(type)) return undefined;
  let url: URL;
  try {
    url = new URL(value, baseUrl);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  url.hash = '';
  return { url: url.href, kind: kindOf(url.href, type), track, from, ...(type ? { mimeType: type } : {}), ...(area ? { area } : {}) };
}

// The same URL found several ways counts once, where it was found first.
function unique(list: MediaCandidate[]): MediaCandidate[] {
  const seen = new Set<string>();
  return list.filter((c) => {
    const key = `${c.track} ${c.url}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
