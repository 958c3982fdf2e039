// The scrape document from a page: its content by kind (HTML, text/JSON/XML, documents, media),
// then redaction, the AI formats, change tracking, branding and the metadata.
import { STATUS_CODES } from 'node:http';
import type { ScrapeDocument, ScrapeRequest } from '../contract/scrape.ts';
import { ScrapeTimeoutError, UnsupportedFileError } from '../errors.ts';
import type { CachedPage } from '../store/pages.ts';
import { convertFile } from './convert-file.ts';
import { type AiPage, assignAiOutput, renderAiFormats, wantsAi } from './formats/ai.ts';
import { trackChanges } from './formats/change-tracking.ts';
import { directMedia, isMediaFile, type MediaCandidate } from './media/discover.ts';
import type { Source } from './page-source.ts';
import { noFormats, type ScrapePlan, wantsMedia } from './plan.ts';
import type { ScrapeDeps } from './scrape-deps.ts';
import { decodeText } from '../documents/charset.ts';
import { detectContentKind } from '../documents/detect.ts';
import { transformHtml } from './transform/index.ts';
import { redactDocumentText } from './transform/redact.ts';

export async function assembleDocument(
  d: ScrapeDeps,
  req: ScrapeRequest,
  plan: ScrapePlan,
  source: Source,
  jobId: string,
  baseCredits: number,
  time: { deadline: AbortSignal; startedAt: number },
  usage: { teamId: string; apiKeyId: string | null; jobId: string },
): Promise<{ document: ScrapeDocument; credits: number; media?: MediaCandidate[] }> {
  const { page } = source;
  let structured: AiPage['structured'];
  let media: MediaCandidate[] | undefined;
  let credits = baseCredits;
  const f = plan.formats;
  // A media file (by type, or by its bytes under application/octet-stream) is the media
  // formats' own; its body may be only its first bytes (left unread by the engine).
  const kind =
    wantsMedia(f) && isMediaFile(page.contentType, page.body)
      ? 'media'
      : detectContentKind(page.contentType, page.finalUrl, page.body);
  const base = {
    sourceURL: req.url,
    url: page.finalUrl,
    statusCode: page.statusCode,
    contentType: page.contentType,
  };
  const doc: ScrapeDocument = { metadata: { ...base } };
  const warnings: string[] = [...plan.notes, ...source.warnings];
  if (f.rawBase64) {
    doc.rawBase64 = page.body.toString('base64');
  } else if (kind === 'html' || kind === 'xml' || kind === 'text' || kind === 'json') {
    // A rendered DOM is UTF-8 whatever charset the target declared.
    const text =
      kind === 'html' && source.html !== undefined
        ? source.html
        : decodeText(
            page.body,
            page.engine === 'browser' ? 'text/html; charset=utf-8' : page.contentType,
            kind === 'html',
          ).text;
    if (f.rawHtml) doc.rawHtml = text;
    if (kind === 'html') {
      const out = transformHtml({
        html: text,
        ...base,
        onlyMainContent: req.onlyMainContent,
        includeTags: req.includeTags,
        excludeTags: req.excludeTags,
        blockAds: req.blockAds,
        removeBase64Images: req.removeBase64Images,
        formats: f,
      });
      doc.metadata = { ...out.metadata, ...base };
      if (out.markdown !== undefined) doc.markdown = out.markdown;
      if (out.html !== undefined) doc.html = out.html;
      if (out.links) doc.links = out.links;
      if (out.images) doc.images = out.images;
      if (out.attributes) doc.attributes = out.attributes;
      structured = out.structured;
      media = out.media;
    } else {
      // Plain text, JSON and XML are their own markdown (JSON and XML fenced).
      doc.markdown = kind === 'text' ? text.trim() : `\`\`\`${kind}\n${text.trim()}\n\`\`\``;
      if (f.html) doc.html = `<pre>${escapeHtml(text)}</pre>`;
      if (f.links) doc.links = [];
      if (f.images) doc.images = [];
      if (f.attributes) doc.attributes = f.attributes.map((a) => ({ ...a, values: [] }));
    }
  } else if (kind === 'pdf' || kind === 'document' || kind === 'binary') {
    credits += await convertFile(d, doc, req, plan, page, warnings, time);
  } else if (kind === 'media' && wantsMedia(f)) {
    // The URL is the media itself: only the media formats exist for it.
    const others = [
      f.markdown && 'markdown',
      f.html && 'html',
      f.rawHtml && 'rawHtml',
      f.links && 'links',
      f.images && 'images',
      f.attributes && 'attributes',
      wantsAi(f) && 'the AI formats',
      f.changeTracking && 'changeTracking',
      f.branding && 'branding',
    ].filter(Boolean);
    if (others.length) warnings.push(`${others.join(', ')}: not available for a media file (${page.contentType})`);
  } else {
    throw new UnsupportedFileError(
      `${page.contentType || 'unknown'} (${kind}); request format "rawBase64" to receive the bytes`,
    );
  }

  if (doc.markdown !== undefined && req.redactPII) {
    const r = redactDocumentText(doc.markdown, doc.pages, req.redactPII);
    doc.markdown = r.markdown;
    if (r.pages) doc.pages = r.pages;
    if (r.warning) warnings.push(r.warning);
  }
  if (wantsMedia(f) && kind !== 'html') {
    const direct = directMedia(page.finalUrl, page.contentType, page.body);
    media = direct ? [direct] : [];
  }
  if (wantsAi(f) && kind !== 'media') {
    let ai;
    try {
      ai = await renderAiFormats(
        f,
        { markdown: doc.markdown ?? '', url: page.finalUrl, structured, metadata: doc.metadata },
        { llm: d.llm, usage, signal: time.deadline, maxOutputTokens: d.llmMaxOutputTokens },
      );
    } catch (err) {
      if (time.deadline.aborted) throw new ScrapeTimeoutError(req.timeout, req.url);
      throw err;
    }
    if (doc.markdown !== undefined) doc.markdown = ai.markdown;
    assignAiOutput(doc, ai);
    warnings.push(...ai.warnings);
  }
  if (f.changeTracking && kind !== 'media')
    doc.changeTracking = await changeTrackingFormat(
      d,
      f.changeTracking,
      doc,
      req,
      page,
      structured,
      usage,
      time.deadline,
      warnings,
    );
  if (f.branding) {
    if (source.rendered?.branding) doc.branding = source.rendered.branding;
    else
      warnings.push(
        'branding: the page could not be read in the browser (not an HTML page?), so no branding was extracted',
      );
  }
  if (!f.markdown) delete doc.markdown;

  if (page.statusCode >= 400) doc.metadata.error = `${page.statusCode} ${STATUS_CODES[page.statusCode] ?? 'error'}`;
  doc.metadata.scrapeId = jobId;
  doc.metadata.proxyUsed = source.proxyUsed;
  doc.metadata.cacheState = source.cacheState;
  if (source.cacheState === 'hit') doc.metadata.cachedAt = page.fetchedAt.toISOString();
  doc.metadata.creditsUsed = credits;
  doc.metadata.engine = source.engine;
  if (warnings.length) doc.warning = warnings.join('; ');
  return { document: doc, credits, ...(media ? { media } : {}) };
}

/**
 * changeTracking: this page against the team's previous scrape of the URL (per tag); json mode
 * extracts the current values with the format's schema/prompt (LLM, or deterministically) and
 * compares them with the stored ones. `diff` is the git-style text diff (spec: a string).
 */
async function changeTrackingFormat(
  d: ScrapeDeps,
  ct: NonNullable<ScrapePlan['formats']['changeTracking']>,
  doc: ScrapeDocument,
  req: ScrapeRequest,
  page: CachedPage,
  structured: AiPage['structured'],
  usage: { teamId: string; apiKeyId: string | null; jobId: string },
  deadline: AbortSignal,
  warnings: string[],
): Promise<NonNullable<ScrapeDocument['changeTracking']>> {
  let json: unknown;
  if (ct.modes.includes('json')) {
    const ai = await renderAiFormats(
      {
        ...noFormats(),
        json: { ...(ct.schema ? { schema: ct.schema } : {}), ...(ct.prompt ? { prompt: ct.prompt } : {}) },
      },
      { markdown: doc.markdown ?? '', url: page.finalUrl, structured, metadata: doc.metadata },
      { llm: d.llm, usage, signal: deadline, maxOutputTokens: d.llmMaxOutputTokens },
    );
    json = ai.json;
    warnings.push(...ai.warnings.map((w) => `changeTracking ${w}`));
  }
  const t = await trackChanges({
    db: d.db,
    teamId: usage.teamId,
    url: req.url,
    tag: ct.tag,
    markdown: doc.markdown ?? '',
    statusCode: page.statusCode,
    modes: ct.modes,
    json,
    scrapedAt: page.fetchedAt,
  });
  return {
    previousScrapeAt: t.previousScrapeAt,
    changeStatus: t.changeStatus,
    visibility: t.visibility,
    ...(t.diff ? { diff: t.diff.text } : {}),
    ...(t.json ? { json: t.json } : {}),
  };
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}
