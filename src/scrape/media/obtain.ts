// One media candidate to one local file ffmpeg can read: a file is downloaded as it is; an HLS or
// DASH stream has its manifest read, its best rendition chosen (highest bandwidth; alternative
// audio with it), every segment downloaded in order (the size cap counts them all) and
// concatenated, and the result remuxed without re-encoding into an MP4. What a URL is, is decided
// by its bytes (#EXTM3U, <MPD>: src/documents/sniff.ts), not by what the page said.
import { open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DashUnsupported, parseMpd } from './dash.ts';
import type { MediaCandidate } from './discover.ts';
import type { MediaDownloader } from './download.ts';
import { type Ffmpeg, FfmpegFailed, FfmpegOutputTooLarge } from './ffmpeg.ts';
import { HlsUnsupported, type HlsMedia, audioRendition, bestVariant, parsePlaylist } from './hls.ts';
import { SNIFF_BYTES, sniffMedia } from '../../documents/sniff.ts';
import { MediaTooLargeError, MediaUnsupportedError } from '../../errors.ts';

/** Which tracks are needed: the video format needs everything; audio alone may skip video renditions. */
export interface Tracks {
  video: boolean;
}

export interface LocalMedia {
  /** The file to read: the original file, or the MP4 assembled from a stream. */
  path: string;
  /** Assembled from an HLS or DASH stream (always an MP4), or the file as served. */
  assembled: boolean;
  /** The file's final URL, or the manifest's. */
  sourceUrl: string;
  /** Notes for the warning (a live stream taken as it stood). */
  notes: string[];
}

export interface ObtainDeps {
  downloader: MediaDownloader;
  ffmpeg: Ffmpeg;
  /** A directory of this candidate's own (its files have fixed names), removed afterwards. */
  dir: string;
  signal: AbortSignal;
}

/** Segments downloaded ahead of the one being written. */
const SEGMENTS_IN_FLIGHT = 4;

export async function obtainMedia(c: MediaCandidate, tracks: Tracks, d: ObtainDeps): Promise<LocalMedia> {
  const path = join(d.dir, 'source');
  try {
    const first = await d.downloader.toFile(c.url, path);
    const head = await readHead(path);
    const sniffed = sniffMedia(head);
    if (sniffed?.kind === 'hls') return await fromHls(await readFile(path, 'utf8'), first.url, tracks, d);
    if (sniffed?.kind === 'dash') return await fromDash(await readFile(path, 'utf8'), first.url, tracks, d);
    const text = head.toString('latin1').trimStart();
    if (
      /^text\/html|^application\/xhtml/i.test(first.contentType) ||
      /^<(!doctype html|html|head|body)[\s>]/i.test(text)
    ) {
      throw new MediaUnsupportedError(c.url, 'it is a web page (a player?), not a media file');
    }
    return { path, assembled: false, sourceUrl: first.url, notes: [] };
  } catch (err) {
    if (err instanceof HlsUnsupported || err instanceof DashUnsupported)
      throw new MediaUnsupportedError(c.url, err.message);
    if (err instanceof FfmpegFailed)
      throw new MediaUnsupportedError(c.url, `ffmpeg could not assemble the stream (${err.message})`);
    if (err instanceof FfmpegOutputTooLarge) throw new MediaTooLargeError(c.url, err.maxBytes, 'MEDIA_MAX_BYTES');
    throw err;
  } finally {
    d.downloader.stop();
  }
}

async function fromHls(text: string, url: string, tracks: Tracks, d: ObtainDeps): Promise<LocalMedia> {
  const playlist = parsePlaylist(text, url);
  const notes: string[] = [];
  const media = async (u: string): Promise<HlsMedia> => {
    const res = await d.downloader.toBuffer(u);
    const p = parsePlaylist(res.body.toString('utf8'), res.url);
    if (p.kind !== 'media') throw new HlsUnsupported('a variant playlist is itself a master playlist');
    return p;
  };
  const parts: { path: string; streams: 'all' | 'video' | 'audio' }[] = [];
  const take = async (p: HlsMedia, part: string, streams: 'all' | 'video' | 'audio') => {
    if (!p.ended)
      notes.push(`the stream is live: the ${p.segments.length} segments listed when it was read were assembled`);
    const out = join(d.dir, part);
    await concatenate(p.init ? [p.init, ...p.segments] : p.segments, out, d.downloader);
    parts.push({ path: out, streams });
  };
  if (playlist.kind === 'media') {
    await take(playlist, 'main', 'all');
  } else {
    const variant = bestVariant(playlist);
    const audio = audioRendition(playlist, variant);
    // The variant carries the video; an alternative audio rendition replaces its own audio.
    if (tracks.video || !audio) await take(await media(variant.url), 'main', audio ? 'video' : 'all');
    if (audio?.url) await take(await media(audio.url), 'audio', 'audio');
  }
  return { path: await remux(parts, d), assembled: true, sourceUrl: url, notes };
}

async function fromDash(text: string, url: string, tracks: Tracks, d: ObtainDeps): Promise<LocalMedia> {
  const mpd = parseMpd(text, url);
  const parts: { path: string; streams: 'all' | 'video' | 'audio' }[] = [];
  const chosen = [
    // Audio alone skips the video representation unless the video is all there is.
    ...(mpd.video && (tracks.video || !mpd.audio) ? [mpd.video] : []),
    ...(mpd.audio ? [mpd.audio] : []),
  ];
  for (const t of chosen) {
    const out = join(d.dir, t.contentType);
    await concatenate(t.init ? [t.init, ...t.segments] : t.segments, out, d.downloader);
    parts.push({ path: out, streams: t.contentType === 'audio' ? 'audio' : 'all' });
  }
  return { path: await remux(parts, d), assembled: true, sourceUrl: url, notes: [] };
}

async function remux(parts: { path: string; streams: 'all' | 'video' | 'audio' }[], d: ObtainDeps): Promise<string> {
  const out = join(d.dir, 'assembled.mp4');
  await d.ffmpeg.remuxToMp4(parts, out, d.signal);
  return out;
}

// Downloads the URLs a few at a time and writes them in order: MPEG-TS segments, or an fMP4
// initialisation section followed by its fragments, concatenate into one playable file.
async function concatenate(urls: string[], out: string, downloader: MediaDownloader): Promise<void> {
  const file = await open(out, 'w');
  try {
    const pending: Promise<Buffer>[] = [];
    let next = 0;
    const start = () => {
      const p = downloader.toBuffer(urls[next++]).then((r) => r.body);
      p.catch(() => undefined); // awaited in order below; a later failure must not go unhandled
      pending.push(p);
    };
    while (next < urls.length && pending.length < SEGMENTS_IN_FLIGHT) start();
    while (pending.length) {
      const body = await pending.shift()!;
      await file.write(body);
      if (next < urls.length) start();
    }
  } finally {
    await file.close();
  }
}

async function readHead(path: string): Promise<Buffer> {
  const file = await open(path, 'r');
  try {
    const buf = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await file.read(buf, 0, SNIFF_BYTES, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await file.close();
  }
}
