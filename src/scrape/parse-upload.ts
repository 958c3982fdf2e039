// An uploaded file (POST /v2/parse) to a Scrape document, billed and stored as a scrape is.
// Non-HTML documents are parsed in the worker-thread pool (src/documents/parse-pool.ts), never on the
// event loop; HTML goes through the web pipeline's transformHtml, as a scraped page does.
import { createBillableJob } from '../billing/credits.ts';
import type { ParseDocumentOutput, ParseOptionsInput } from '../contract/parse.ts';
import {
  CONTENT_TYPES,
  type PdfParserOptions,
  convertDocument,
  documentApiError,
  markdownTargets,
} from '../documents/convert.ts';
import { detectDocument } from '../documents/detect.ts';
import { type ParsePool } from '../documents/parse-pool.ts';
import type { DocumentKind } from '../documents/types.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { Db } from '../store/db-types.ts';
import { updateJob } from '../store/jobs.ts';
import { finishScrape } from '../store/pages.ts';
import type { Caller } from '../store/teams.ts';
import { type AiPage, assignAiOutput, renderAiFormats, wantsAi } from './formats/ai.ts';
import { type FormatPlan, type Issue, checkSelectors, planFormats } from './plan.ts';
import { decodeText } from '../documents/charset.ts';
import { transformHtml } from './transform/index.ts';
import { redactDocumentText } from './transform/redact.ts';
import { ApiError, BadRequestError, DocumentError, ParseError, ParsePoolBusyError } from '../errors.ts';

/** The file part of an upload. */
export interface Upload {
  bytes: Buffer;
  fileName: string;
  mimetype: string;
}

export interface UploadParserDeps {
  db: Db;
  pool: ParsePool;
  llm?: LlmProvider;
  llmMaxOutputTokens?: number;
}

/** Formats an upload cannot have (wire-names: parse accepts every format but these). */
const UPLOAD_FORMATS = new Set(['screenshot', 'changeTracking', 'branding', 'audio', 'video']);
/** Browser-only options. */
const BROWSER_OPTIONS = ['actions', 'waitFor', 'location', 'mobile'] as const;

/** Parses uploads for POST /v2/parse: detect, check the options, bill, convert, store. */
export class UploadParser {
  readonly #d: UploadParserDeps;

  constructor(deps: UploadParserDeps) {
    this.#d = deps;
  }

  /**
   * The upload as a Scrape document. Throws before a job exists when the type is not parsed (415),
   * encrypted (422) or the options cannot be honoured (400); after, the job is marked failed.
   */
  async parse(caller: Caller, upload: Upload, opts: ParseOptionsInput): Promise<ParseDocumentOutput> {
    const { db } = this.#d;
    const declared = upload.mimetype && upload.mimetype !== 'application/octet-stream' ? upload.mimetype : undefined;
    const detection = detectDocument(upload.bytes, { contentType: declared, fileName: upload.fileName });
    if (detection.encrypted)
      throw new ParseError(
        'DOCUMENT_ENCRYPTED',
        `The file is a ${detection.type}; it cannot be read without its password`,
      );
    const kind = detection.kind;
    if (!kind) throw new ParseError('UNSUPPORTED_FILE_TYPE', `Unsupported file type: ${detection.type}`);
    const plan = planParse(opts, kind);

    const quiet = opts.zeroDataRetention;
    const job = await createBillableJob(
      db,
      {
        teamId: caller.teamId,
        apiKeyId: caller.keyId,
        endpoint: 'parse',
        status: 'active',
        target: quiet ? null : upload.fileName,
      },
      1,
    );
    try {
      const document = await this.#produce(upload, kind, opts, plan, {
        teamId: caller.teamId,
        apiKeyId: caller.keyId,
        jobId: job.id,
      });
      const credits = document.metadata.creditsUsed ?? 1;
      // Stored in the scrape shape (GET /v2/scrape/{id} reads it): without the parse-only provider.
      const { provider: _provider, ...storedMetadata } = document.metadata;
      const json = quiet ? undefined : JSON.stringify({ ...document, metadata: storedMetadata });
      await finishScrape(db, { jobId: job.id, teamId: caller.teamId, apiKeyId: caller.keyId, credits, json });
      return document;
    } catch (err) {
      const mapped =
        err instanceof DocumentError
          ? documentApiError(err, { unsupported: 'UNSUPPORTED_FILE_TYPE', timeout: 'PARSE_TIMEOUT' })
          : err instanceof ParsePoolBusyError
            ? busy(err)
            : err;
      const code = (mapped as { code?: string }).code ?? 'UNKNOWN_ERROR';
      await updateJob(db, job.id, { status: 'failed', error: code }).catch(() => undefined);
      throw mapped;
    }
  }

  async #produce(
    upload: Upload,
    kind: DocumentKind,
    opts: ParseOptionsInput,
    plan: UploadPlan,
    usage: { teamId: string; apiKeyId: string | null; jobId: string },
  ): Promise<ParseDocumentOutput> {
    const { pool } = this.#d;
    const scrapeId = usage.jobId;
    const deadline = AbortSignal.timeout(opts.timeout);
    let structured: AiPage['structured'];
    const f = plan.formats;
    const contentType =
      upload.mimetype && upload.mimetype !== 'application/octet-stream' ? upload.mimetype : CONTENT_TYPES[kind];
    const doc: ParseDocumentOutput = { metadata: { sourceURL: upload.fileName, contentType } };
    const warnings: string[] = [];
    // Before the bytes move to a worker (transfer detaches them).
    if (plan.rawBase64) doc.rawBase64 = upload.bytes.toString('base64');
    let credits = 1;
    let steps: { provider: string; status: string; creditsCost: number }[] = [
      { provider: 'base64', status: 'matched', creditsCost: 1 },
    ];

    if (plan.convert) {
      let markdown: string;
      if (kind === 'html') {
        const { text } = decodeText(upload.bytes, declaredHtmlType(upload.mimetype), true);
        const url = `file:///${encodeURIComponent(upload.fileName)}`;
        const out = transformHtml({
          html: text,
          url,
          sourceURL: upload.fileName,
          statusCode: 200,
          contentType,
          onlyMainContent: opts.onlyMainContent,
          includeTags: opts.includeTags,
          excludeTags: opts.excludeTags,
          blockAds: opts.blockAds,
          removeBase64Images: opts.removeBase64Images,
          formats: { ...f, markdown: true },
        });
        const { url: _u, statusCode: _s, ...meta } = out.metadata;
        doc.metadata = { ...meta, sourceURL: upload.fileName, contentType };
        markdown = out.markdown ?? '';
        if (out.html !== undefined) doc.html = out.html;
        if (f.rawHtml) doc.rawHtml = text;
        if (out.links) doc.links = out.links;
        if (out.images) doc.images = out.images;
        if (out.attributes) doc.attributes = out.attributes;
        structured = out.structured;
        if (plan.parser.pages || plan.parser.blocks || plan.parser.pageMarkers)
          warnings.push('parsers pages/blocks/pageMarkers: an HTML file has no pages');
        steps = [{ provider: 'html', status: 'matched', creditsCost: 1 }];
      } else {
        const bytes = new Uint8Array(upload.bytes.buffer, upload.bytes.byteOffset, upload.bytes.byteLength);
        const converted = await convertDocument(pool, bytes, kind, plan.parser, opts.timeout, undefined, {
          embedImages: opts.removeBase64Images === false,
        });
        markdown = converted.markdown;
        Object.assign(doc.metadata, converted.metadata);
        warnings.push(...converted.warnings);
        if (converted.pages) doc.pages = converted.pages;
        if (converted.blocks) doc.blocks = converted.blocks;
        credits = converted.credits;
        steps = converted.steps;
        const targets = markdownTargets(markdown);
        if (f.links) doc.links = targets.links;
        if (f.images) doc.images = targets.images;
      }

      if (opts.redactPII) {
        const r = redactDocumentText(markdown, doc.pages, opts.redactPII);
        markdown = r.markdown;
        if (r.pages) doc.pages = r.pages;
        if (r.warning) warnings.push(r.warning);
      }
      if (wantsAi(f)) {
        let ai;
        try {
          ai = await renderAiFormats(
            f,
            { markdown, url: `file:///${encodeURIComponent(upload.fileName)}`, structured, metadata: doc.metadata },
            { llm: this.#d.llm, usage, signal: deadline, maxOutputTokens: this.#d.llmMaxOutputTokens },
          );
        } catch (err) {
          if (deadline.aborted) throw new ParseError('PARSE_TIMEOUT', `Parsing took longer than ${opts.timeout} ms`);
          throw err;
        }
        markdown = ai.markdown;
        assignAiOutput(doc, ai);
        warnings.push(...ai.warnings);
      }
      if (f.markdown) doc.markdown = markdown;
    }

    doc.metadata.scrapeId = scrapeId;
    doc.metadata.creditsUsed = credits;
    doc.metadata.provider = { id: `gleaner-${kind}`, creditsCost: credits, steps };
    if (warnings.length) doc.warning = warnings.join('; ');
    return doc;
  }
}

/** Kinds whose parse answers carry `pages` by default: one entry per page, slide or sheet. */
const PAGINATED = new Set<string>(['pdf', 'pptx', 'ppt', 'odp', 'xlsx', 'xls', 'ods']);

interface UploadPlan {
  formats: FormatPlan;
  /** Formats other than rawBase64 were asked: the document is converted. */
  convert: boolean;
  rawBase64: boolean;
  parser: PdfParserOptions;
}

function unsupported(issues: Issue[]): ParseError {
  return new ParseError(
    'PARSE_UNSUPPORTED_OPTIONS',
    `Unsupported options for an upload: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
    {
      details: issues,
    },
  );
}

/** Checks the options against the detected kind; a 400 names every option that cannot be honoured. */
function planParse(opts: ParseOptionsInput, kind: DocumentKind): UploadPlan {
  const uploadIssues: Issue[] = [];
  const issues: Issue[] = [];
  for (const name of BROWSER_OPTIONS) {
    const v = opts[name];
    if (v !== undefined && v !== false && v !== 0 && !(Array.isArray(v) && v.length === 0)) {
      uploadIssues.push({ path: `options.${name}`, message: 'needs a browser page; an upload has none' });
    }
  }
  const list = opts.formats ?? ['markdown'];
  // Formats an upload cannot have are refused by name first; the rest are planned as for a scrape.
  list.forEach((f, i) => {
    const type = typeof f === 'string' ? f : f.type;
    if (UPLOAD_FORMATS.has(type))
      uploadIssues.push({ path: `options.formats.${i}`, message: `format "${type}" is not available for an upload` });
  });
  const formats = planFormats(
    list.filter((f) => !UPLOAD_FORMATS.has(typeof f === 'string' ? f : f.type)),
    'options.formats',
    issues,
  );

  const parsers = opts.parsers;
  if (parsers?.some((p) => typeof p !== 'string' && p.type === 'image')) {
    uploadIssues.push({
      path: 'options.parsers',
      message: 'the "image" parser (OCR of an image) is not available for uploads',
    });
  }
  const pdfEntry = parsers?.find((p) => p === 'pdf' || (typeof p !== 'string' && p.type === 'pdf'));
  const parser: PdfParserOptions = pdfEntry && typeof pdfEntry !== 'string' ? { ...pdfEntry } : {};
  // A paginated document answers with its pages (PDF pages, slides, sheets) unless asked not to, and a PDF with
  // its layout blocks too, except beside redactPII (blocks index the unredacted text).
  if (PAGINATED.has(kind)) parser.pages ??= true;
  if (kind === 'pdf') parser.blocks ??= !opts.redactPII;
  // parsers: [] (no pdf parser): a PDF comes back base64-encoded, unconverted.
  const pdfRaw = kind === 'pdf' && parsers !== undefined && !pdfEntry;
  const others = list.filter((f) => (typeof f === 'string' ? f : f.type) !== 'rawBase64');
  if (pdfRaw) {
    list.forEach((f, i) => {
      const type = typeof f === 'string' ? f : f.type;
      if (type !== 'markdown' && type !== 'rawBase64' && !UPLOAD_FORMATS.has(type)) {
        uploadIssues.push({
          path: `options.formats.${i}`,
          message: `format "${type}" needs the pdf parser; with parsers: [] the PDF is returned base64-encoded`,
        });
      }
    });
  }
  if (kind !== 'html') {
    if (formats.html)
      uploadIssues.push({
        path: 'options.formats.html',
        message: `html is only available for HTML files (this file is ${kind})`,
      });
    if (formats.rawHtml)
      uploadIssues.push({
        path: 'options.formats.rawHtml',
        message: `rawHtml is only available for HTML files (this file is ${kind})`,
      });
    if (formats.attributes)
      uploadIssues.push({
        path: 'options.formats.attributes',
        message: `attributes are only available for HTML files (this file is ${kind})`,
      });
    if (opts.includeTags?.length)
      uploadIssues.push({
        path: 'options.includeTags',
        message: `CSS selectors apply to HTML files only (this file is ${kind})`,
      });
    if (opts.excludeTags?.length)
      uploadIssues.push({
        path: 'options.excludeTags',
        message: `CSS selectors apply to HTML files only (this file is ${kind})`,
      });
  } else {
    checkSelectors('options', opts, formats, issues);
  }
  if (opts.redactPII && parser.blocks) {
    issues.push({
      path: 'options.redactPII',
      message: 'cannot be combined with parsers blocks (block contents and spans index the unredacted text)',
    });
  }
  if (uploadIssues.length) throw unsupported(uploadIssues);
  if (issues.length)
    throw new BadRequestError(`Invalid request: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  const rawBase64 = formats.rawBase64 || pdfRaw;
  const convert = !pdfRaw && others.length > 0;
  if (pdfRaw) formats.markdown = false;
  return { formats, convert, rawBase64, parser };
}

function busy(err: ParsePoolBusyError): ApiError {
  return new ParseError(err.code, err.message, { headers: { 'retry-after': '5' } });
}

function declaredHtmlType(mimetype: string): string {
  return /html/i.test(mimetype) ? mimetype : 'text/html';
}
