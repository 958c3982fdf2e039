// A scrape's binary outputs: screenshots and action PDFs from the browser, and the audio/video
// formats' files, stored under the job on our file route (data: URLs under zero data retention).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MediaConfig } from '../config.ts';
import type { ScrapeDocument, ScrapeRequest } from '../contract/scrape.ts';
import { MediaTooLargeError, ScrapeTimeoutError } from '../errors.ts';
import { storeFile } from '../store/files.ts';
import type { Caller } from '../store/teams.ts';
import { mediaMinutes, renderMediaFormats } from './formats/media.ts';
import type { MediaCandidate } from './media/discover.ts';
import { Ffmpeg } from './media/ffmpeg.ts';
import type { Source } from './page-source.ts';
import type { ScrapePlan } from './plan.ts';
import type { ScrapeContext, ScrapeDeps } from './scrape-deps.ts';

/** The media stage's limits and its ffmpeg. */
export interface MediaTools {
  limits: MediaConfig;
  ffmpeg: Ffmpeg;
}

// Screenshots and action PDFs become URLs of our own file route (data: URLs under zero data
// retention, where nothing is stored); action scrapes and script returns go in as they are.
export async function attachBrowserOutputs(
  d: ScrapeDeps,
  doc: ScrapeDocument,
  source: Source,
  req: ScrapeRequest,
  caller: Caller,
  jobId: string,
  ctx: ScrapeContext,
): Promise<void> {
  const r = source.rendered;
  if (!r) return;
  const keep = async (data: Buffer, type: string, ext: string): Promise<string> => {
    if (req.zeroDataRetention || req.lockdown) return `data:${type};base64,${data.toString('base64')}`;
    return storeOutputFile(d, caller, jobId, ctx, data, type, ext);
  };
  const image = (s: { data: Buffer; type: 'png' | 'jpeg' }) =>
    keep(s.data, `image/${s.type}`, s.type === 'jpeg' ? 'jpg' : 'png');
  if (r.screenshot) doc.screenshot = await image(r.screenshot);
  if (req.actions?.length) {
    doc.actions = {
      screenshots: await Promise.all(r.actions.screenshots.map(image)),
      scrapes: r.actions.scrapes,
      javascriptReturns: r.actions.javascriptReturns,
      pdfs: await Promise.all(r.actions.pdfs.map((p) => keep(p, 'application/pdf', 'pdf'))),
    };
  }
}

/**
 * Stores a binary output under the job for FILE_TTL_HOURS, or until the parent's results expire
 * if sooner; resolves to its URL on our file route.
 */
async function storeOutputFile(
  d: ScrapeDeps,
  caller: Caller,
  jobId: string,
  ctx: ScrapeContext,
  data: Buffer | { path: string },
  contentType: string,
  ext: string,
): Promise<string> {
  const id = await storeFile(d.db, {
    teamId: caller.teamId,
    jobId,
    contentType,
    data,
    ttlMs: d.fileTtlMs,
    notAfter: ctx.filesExpireAt,
  });
  return `${ctx.publicUrl}/v2/files/${id}.${ext}`;
}

/**
 * The audio and video formats (src/scrape/formats/media.ts): the media is downloaded through the
 * HTTP engine (SSRF guard, MEDIA_MAX_BYTES, the scrape's deadline) into a directory of this
 * scrape's own, removed afterwards, and each output becomes a URL of our file route — or a
 * data: URL of at most MEDIA_ZDR_MAX_BYTES under zero data retention, where nothing is stored.
 * Resolves to the credits: one per started minute of each output.
 */
export async function attachMedia(
  d: ScrapeDeps,
  tools: MediaTools,
  doc: ScrapeDocument,
  candidates: MediaCandidate[],
  source: Source,
  req: ScrapeRequest,
  plan: ScrapePlan,
  caller: Caller,
  jobId: string,
  ctx: ScrapeContext,
  time: { deadline: AbortSignal; startedAt: number },
): Promise<number> {
  const limits = tools.limits;
  const keep = async (file: {
    path: string;
    size: number;
    mimeType: string;
    ext: string;
    sourceUrl: string;
  }): Promise<string> => {
    if (req.zeroDataRetention) {
      if (file.size > limits.zdrMaxBytes)
        throw new MediaTooLargeError(file.sourceUrl, limits.zdrMaxBytes, 'MEDIA_ZDR_MAX_BYTES');
      return `data:${file.mimeType};base64,${(await readFile(file.path)).toString('base64')}`;
    }
    // Stored from the file a chunk at a time (src/store/files.ts): a 100 MiB video never sits in memory whole.
    return storeOutputFile(d, caller, jobId, ctx, { path: file.path }, file.mimeType, file.ext);
  };
  const dir = await mkdtemp(join(tmpdir(), 'gleaner-media-'));
  try {
    const wantsEnhanced = req.proxy === 'enhanced' || req.proxy === 'stealth';
    const result = await renderMediaFormats({ video: plan.formats.video, audio: plan.formats.audio }, candidates, {
      http: d.http,
      ffmpeg: tools.ffmpeg,
      dir,
      keep,
      signal: time.deadline,
      deadlineAt: time.startedAt + req.timeout,
      maxBytes: limits.maxBytes,
      pageUrl: source.page.finalUrl,
      headers: req.headers,
      proxy: wantsEnhanced ? 'enhanced' : source.proxyUsed,
      skipTlsVerification: req.skipTlsVerification,
      mobile: req.mobile,
      languages: req.location?.languages,
    });
    for (const format of ['video', 'audio'] as const) {
      const m = result[format];
      if (!m) continue;
      doc[format] = m.url;
      doc.metadata[`${format}SourceURL`] = m.sourceUrl;
      doc.metadata[`${format}MimeType`] = m.mimeType;
      doc.metadata[`${format}Size`] = m.size;
      if (m.duration !== undefined) doc.metadata[`${format}Duration`] = Math.round(m.duration * 1000) / 1000;
    }
    if (result.warnings.length) doc.warning = [doc.warning, ...result.warnings].filter(Boolean).join('; ');
    return mediaMinutes(result.video) + mediaMinutes(result.audio);
  } catch (err) {
    if (time.deadline.aborted) throw new ScrapeTimeoutError(req.timeout, req.url);
    throw err;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
