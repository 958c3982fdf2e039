// Where a page's media is: <video>/<audio> elements and their <source>s, og:video/og:audio, and
// schema.org VideoObject/AudioObject contentUrl (JSON-LD, microdata, RDFa), or the scrape URL
// itself when it answers with media or a streaming manifest. Pure: it reads the parsed page (the
// rendered DOM when the browser ran) and never fetches. blob: and data: URLs (players feeding
// Media Source Extensions, inline media) cannot be downloaded and are skipped. Whether a candidate
// is a file or a manifest is decided by what it answers (src/scrape/media/obtain.ts).
import { selectAll } from 'css-select';
import type { AnyNode, Document, Element } from 'domhandler';
import { type StructuredData, asList, findByType, isObj } from '../../extractors/structured-data.ts';
import { sniffMedia } from '../../documents/sniff.ts';

/** What the page says the media is. */
export type MediaTrack = 'video' | 'audio';
export type MediaOrigin =
  'video-element' | 'audio-element' | 'source' | 'og' | 'json-ld' | 'microdata' | 'rdfa' | 'direct';

export interface MediaCandidate {
  /** Absolute http(s) URL. */
  url: string;
  track: MediaTrack;
  from: MediaOrigin;
  /** The type the page declares (<source type>, og:video:type, encodingFormat). */
  mimeType?: string;
  /** Declared width × height of the element, when both are given (larger ranks first). */
  area?: number;
}

const HLS_TYPE = /mpegurl/i;
const DASH_TYPE = /dash\+xml/i;
// Types that say nothing of what the body is: its first bytes decide.
const UNINFORMATIVE_TYPE =
  /^(|application\/octet-stream|binary\/octet-stream|application\/unknown|application\/x-download|application\/force-download)$/;
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
        const raw =
          typeof value === 'string' ? value : isObj(value) && typeof value.url === 'string' ? value.url : undefined;
        const c = candidate(raw, baseUrl, track, source, format);
        if (c) out.push(c);
      }
    }
  }
  return unique(out);
}

/**
 * The scrape URL's own answer as media: a video/audio file (by its type, or by its first bytes
 * when the type says nothing useful), or an HLS/DASH manifest (by type, or by its first bytes).
 */
export function directMedia(url: string, contentType: string, head: Buffer): MediaCandidate | undefined {
  const type = baseType(contentType);
  const mimeType = type ? { mimeType: type } : {};
  const sniffed = sniffMedia(head);
  if (HLS_TYPE.test(type) || DASH_TYPE.test(type) || sniffed?.kind === 'hls' || sniffed?.kind === 'dash') {
    return { url, track: 'video', from: 'direct', ...mimeType };
  }
  const track = fileTrack(type, head);
  return track && { url, track, from: 'direct', ...mimeType };
}

/**
 * A media file (not a manifest): a video/audio Content-Type, or an uninformative one
 * (application/octet-stream, none) over bytes that sniff as media. Such a body is left to the
 * media stage, which downloads it under its own cap.
 */
export function isMediaFile(contentType: string, head: Buffer): boolean {
  return fileTrack(baseType(contentType), head) !== undefined;
}

function fileTrack(type: string, head: Buffer): MediaTrack | undefined {
  if (HLS_TYPE.test(type)) return undefined;
  if (type.startsWith('video/')) return 'video';
  if (type.startsWith('audio/')) return 'audio';
  if (!UNINFORMATIVE_TYPE.test(type)) return undefined;
  const sniffed = sniffMedia(head);
  return sniffed?.kind === 'file' ? sniffed.track : undefined;
}

function baseType(contentType: string): string {
  return contentType.split(';', 1)[0].trim().toLowerCase();
}

/** `ref` resolved against `base` when it is an absolute http(s) URL then, else undefined. */
export function httpUrl(ref: string, base: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(ref, base);
  } catch {
    return undefined;
  }
  return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
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

// <video> and <audio> in page order, each by its src or else its first usable <source>; larger
// declared sizes first (a page's main player over a decorative loop), page order otherwise.
function elementCandidates(doc: Document, baseUrl: string): MediaCandidate[] {
  const found: MediaCandidate[] = [];
  for (const el of selectAll<AnyNode, Element>('video, audio', doc.children)) {
    const track: MediaTrack = el.name === 'audio' ? 'audio' : 'video';
    const area = declaredArea(el);
    let c = candidate(
      el.attribs.src,
      baseUrl,
      track,
      track === 'video' ? 'video-element' : 'audio-element',
      el.attribs.type,
      area,
    );
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
  return found
    .map((c, i) => ({ c, i }))
    .sort((x, y) => (y.c.area ?? 0) - (x.c.area ?? 0) || x.i - y.i)
    .map((x) => x.c);
}

function declaredArea(el: Element): number | undefined {
  const w = Number.parseInt(el.attribs.width ?? '', 10);
  const h = Number.parseInt(el.attribs.height ?? '', 10);
  return w > 0 && h > 0 ? w * h : undefined;
}

// og:video:secure_url, og:video:url, og:video (likewise og:audio); og:video:type applies to the
// value at the same position when there are as many types as values, else the single one.
function openGraphCandidates(
  og: Record<string, string | string[]>,
  baseUrl: string,
  track: MediaTrack,
): MediaCandidate[] {
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
  const url = httpUrl(value, baseUrl);
  if (!url) return undefined;
  url.hash = '';
  return { url: url.href, track, from, ...(type ? { mimeType: type } : {}), ...(area ? { area } : {}) };
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
