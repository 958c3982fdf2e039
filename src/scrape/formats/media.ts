// The `video` and `audio` formats: the page's primary media (src/scrape/media/discover.ts)
// downloaded through the guarded engine and, for streams, assembled into an MP4
// (src/scrape/media/obtain.ts); `video` is that file, `audio` its first audio track as MP3. The
// files are handed to `keep` (stored, or inlined under zero data retention) for the URLs that
// become data.video and data.audio. A page without media is a warning, not an error.
import { mkdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { HttpEngine } from '../engines/http.ts';
import { type MediaCandidate, type MediaTrack, candidatesFor } from '../media/discover.ts';
import { MediaDownloader, type MediaDownloadOptions } from '../media/download.ts';
import { type Ffmpeg, FfmpegFailed, FfmpegOutputTooLarge, type Probe, mediaType } from '../media/ffmpeg.ts';
import { type LocalMedia, obtainMedia } from '../media/obtain.ts';
import { MediaFetchError, MediaTooLargeError, MediaUnsupportedError } from '../../errors.ts';

/** Candidates tried per format when the first is not media or cannot be downloaded (as a browser tries each <source>). */
const MAX_TRIES = 3;

export interface MediaFormatDeps extends Omit<MediaDownloadOptions, 'http'> {
  http: HttpEngine;
  ffmpeg: Ffmpeg;
  /** A directory of this scrape's own, removed by the caller afterwards (each candidate tried gets a subdirectory). */
  dir: string;
  /** Stores (or inlines) a finished file; resolves to the URL handed out. */
  keep: (file: { path: string; size: number; mimeType: string; ext: string; sourceUrl: string }) => Promise<string>;
}

export interface MediaOutput {
  url: string;
  sourceUrl: string;
  mimeType: string;
  size: number;
  /** Seconds, when the container says. */
  duration?: number;
}

export interface MediaFormatsResult {
  video?: MediaOutput;
  audio?: MediaOutput;
  warnings: string[];
}

export async function renderMediaFormats(
  want: { video: boolean; audio: boolean },
  candidates: MediaCandidate[],
  d: MediaFormatDeps,
): Promise<MediaFormatsResult> {
  const warnings: string[] = [];
  const out: MediaFormatsResult = { warnings };
  let shared: { url: string; local: LocalMedia; probe: Probe } | undefined;

  if (want.video) {
    const list = candidatesFor(candidates, 'video');
    if (!list.length) {
      const audioOnly = candidates.some((c) => c.track === 'audio');
      warnings.push(
        `video: no video was found on the page${audioOnly ? ' (it has audio: the audio format extracts it)' : ''}`,
      );
    } else {
      shared = await firstUsable(list, 'video', true, d, warnings);
      const { local, probe } = shared;
      if (!probe.streams.some((s) => s.type === 'video'))
        warnings.push('video: the media has no video track (audio only)');
      // A file is kept as served; an assembled stream is the MP4 it was remuxed into.
      const type = local.assembled ? { mimeType: 'video/mp4', ext: 'mp4' } : mediaType(probe);
      const size = (await stat(local.path)).size;
      const url = await d.keep({ path: local.path, size, ...type, sourceUrl: local.sourceUrl });
      out.video = {
        url,
        sourceUrl: local.sourceUrl,
        mimeType: type.mimeType,
        size,
        ...(probe.duration ? { duration: probe.duration } : {}),
      };
      warnings.push(...local.notes.map((n) => `video: ${n}`));
    }
  }

  if (want.audio) {
    const list = candidatesFor(candidates, 'audio');
    if (!list.length) {
      warnings.push('audio: no audio or video was found on the page');
    } else {
      // Without an audio candidate of its own, the audio list is the video list: the video's
      // download (after the same fallbacks) serves the audio too.
      const source =
        shared && !list.some((c) => c.track === 'audio')
          ? shared
          : await firstUsable(list, 'audio', false, d, warnings);
      if (!source.probe.streams.some((s) => s.type === 'audio')) {
        warnings.push(`audio: the media has no audio track (${source.local.sourceUrl})`);
      } else {
        const mp3 = join(d.dir, 'audio.mp3');
        try {
          await d.ffmpeg.extractMp3(source.local.path, mp3, d.signal);
        } catch (err) {
          if (err instanceof FfmpegFailed)
            throw new MediaUnsupportedError(source.url, `ffmpeg could not extract its audio (${err.message})`);
          if (err instanceof FfmpegOutputTooLarge)
            throw new MediaTooLargeError(source.url, err.maxBytes, 'MEDIA_MAX_BYTES');
          throw err;
        }
        const probe = await d.ffmpeg.probe(mp3, d.signal);
        const size = (await stat(mp3)).size;
        const url = await d.keep({
          path: mp3,
          size,
          mimeType: 'audio/mpeg',
          ext: 'mp3',
          sourceUrl: source.local.sourceUrl,
        });
        out.audio = {
          url,
          sourceUrl: source.local.sourceUrl,
          mimeType: 'audio/mpeg',
          size,
          ...(probe.duration ? { duration: probe.duration } : {}),
        };
        if (source !== shared) warnings.push(...source.local.notes.map((n) => `audio: ${n}`));
      }
    }
  }
  return out;
}

/** Credits of a media output: one per started minute (an unknown duration counts as one). */
export function mediaMinutes(m: MediaOutput | undefined): number {
  if (!m) return 0;
  return Math.max(1, Math.ceil((m.duration ?? 0) / 60));
}

// The first candidate that downloads and reads as media. A candidate that answers with an error
// status or is not media (a player page) is skipped with a warning; every other failure (size
// cap, SSRF, timeout, ffmpeg missing) ends the scrape. A candidate's files go with it when it
// fails, so the disk holds one item's downloads at a time, not MAX_TRIES of them.
async function firstUsable(
  list: MediaCandidate[],
  format: MediaTrack,
  video: boolean,
  d: MediaFormatDeps,
  warnings: string[],
): Promise<{ url: string; local: LocalMedia; probe: Probe }> {
  let firstError: unknown;
  for (const [i, c] of list.slice(0, MAX_TRIES).entries()) {
    const downloader = new MediaDownloader(c.url, d);
    const dir = join(d.dir, `${format}-${i}`);
    try {
      await mkdir(dir);
      const local = await obtainMedia(c, { video }, { downloader, ffmpeg: d.ffmpeg, dir, signal: d.signal });
      let probe: Probe;
      try {
        probe = await d.ffmpeg.probe(local.path, d.signal);
      } catch (err) {
        if (err instanceof FfmpegFailed)
          throw new MediaUnsupportedError(c.url, `not a media file ffmpeg can read (${err.message})`);
        throw err;
      }
      if (!probe.streams.some((s) => s.type === 'video' || s.type === 'audio'))
        throw new MediaUnsupportedError(c.url, 'it has no audio or video stream');
      if (firstError)
        warnings.push(
          `${format}: ${list[0].url} could not be used (${(firstError as { code: string }).code}); ${c.url} was taken instead`,
        );
      return { url: c.url, local, probe };
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      if (!(err instanceof MediaFetchError || err instanceof MediaUnsupportedError)) throw err;
      firstError ??= err;
    }
  }
  throw firstError;
}
