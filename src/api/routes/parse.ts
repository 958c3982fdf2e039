// POST /v2/parse: a multipart upload (parts `file` and `options`) converted to a Scrape document.
// Non-HTML documents are parsed in the worker-thread pool (src/documents/parse-pool.ts), never on the
// event loop; HTML goes through the web pipeline's transformHtml, as a scraped page does.
import multipart, { type MultipartFile, type Multipart } from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { createBillableJob } from '../../billing/credits.ts';
import { authErrors, errorBody } from '../../contract/common.ts';
import { type ParseDocumentOutput, type ParseOptionsInput, parseOptions, parseResponse } from '../../contract/parse.ts';
import { detectDocument } from '../../documents/detect.ts';
import { CONTENT_TYPES, type PdfParserOptions, convertDocument, documentApiError, markdownTargets } from '../../documents/convert.ts';
import { ParsePoolBusyError, type ParsePool } from '../../documents/parse-pool.ts';
import type { DocumentKind } from '../../documents/types.ts';
import type { LlmProvider } from '../../llm/provider.ts';
import { type AiPage, assignAiOutput, renderAiFormats, wantsAi } from '../../scrape/formats/ai.ts';
import { type FormatPlan, planFormats } from '../../scrape/plan.ts';
import { selectorProblem } from '../../scrape/transform/clean.ts';
import { decodeText } from '../../scrape/transform/decode.ts';
import { transformHtml } from '../../scrape/transform/index.ts';
import { redactDocumentText } from '../../scrape/transform/redact.ts';
import type { Db } from '../../store/db-types.ts';
import { updateJob } from '../../store/jobs.ts';
import { finishScrape } from '../../store/pages.ts';
import { ApiError, BadRequestError, DocumentError } from '../../errors.ts';

/** The spec's 50 MB per request, as MiB. */
export const MAX_FILE_BYTES = 50 * 1024 * 1024;
const MAX_OPTIONS_BYTES = 1024 * 1024;

/** Formats an upload cannot have (wire-names: parse accepts every format but these). */
const UPLOAD_FORMATS = new Set(['screenshot', 'changeTracking', 'branding', 'audio', 'video']);
/** Browser-only options. */
const BROWSER_OPTIONS = ['actions', 'waitFor', 'location', 'mobile'] as const;

class ParseError extends ApiError {}

function unsupported(issues: { path: string; message: string }[]): ParseError {
  return new ParseError(400, 'PARSE_UNSUPPORTED_OPTIONS', `Unsupported options for an upload: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, {
    details: issues,
  });
}

function badRequest(path: string, message: string): BadRequestError {
  return new BadRequestError(`Invalid request: ${path}: ${message}`, [{ path, message }]);
}

function tooLarge(): ParseError {
  // Connection: close, so the server does not go on reading the rest of an upload to keep the connection.
  return new ParseError(413, 'FILE_TOO_LARGE', `The file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB (the upload limit of POST /v2/parse)`, {
    headers: { connection: 'close' },
  });
}

interface Upload {
  bytes: Buffer;
  fileName: string;
  mimetype: string;
}

/** Reads the parts: `file` (at most MAX_FILE_BYTES, streamed) and `options` (JSON text). */
async function readParts(parts: AsyncIterableIterator<Multipart>): Promise<{ upload?: Upload; options?: unknown }> {
  let upload: Upload | undefined;
  let options: unknown;
  let sawOptions = false;
  try {
    for await (const part of parts) {
      if (part.fieldname === 'file') {
        if (upload) throw badRequest('file', 'only one file part is accepted');
        if (part.type !== 'file') throw badRequest('file', 'the file part must carry the document bytes (a file part with a filename)');
        const bytes = await readFile(part, MAX_FILE_BYTES);
        if (!bytes) throw tooLarge();
        upload = { bytes, fileName: part.filename || 'upload', mimetype: part.mimetype };
      } else if (part.fieldname === 'options') {
        if (sawOptions) throw badRequest('options', 'only one options part is accepted');
        sawOptions = true;
        if (part.type === 'file') {
          const bytes = await readFile(part, MAX_OPTIONS_BYTES);
          if (!bytes) throw badRequest('options', `larger than ${MAX_OPTIONS_BYTES} bytes`);
          options = parseJson(bytes.toString('utf8'));
        } else if (part.valueTruncated) {
          throw badRequest('options', `larger than ${MAX_OPTIONS_BYTES} bytes`);
        } else {
          // A field sent as application/json was parsed by the multipart plugin already.
          options = typeof part.value === 'string' ? parseJson(part.value) : part.value;
        }
      } else {
        throw badRequest(part.fieldname || '(unnamed part)', 'unknown part; the parts are "file" and "options"');
      }
    }
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const code = (err as { code?: string }).code;
    if (code === 'FST_INVALID_JSON_FIELD_ERROR') throw badRequest('options', 'not valid JSON');
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
    throw new BadRequestError(`Invalid multipart/form-data request: ${(err as Error).message}`);
  }
  return { upload, options };
}

/** Bytes of an oversized upload read and thrown away (so clients that send the whole body before reading see the 413) before the connection is cut. */
const DISCARD_LIMIT = 4 * MAX_FILE_BYTES;

/**
 * The part's bytes, or undefined when it is longer than `limit`. Past the limit nothing is kept;
 * the rest is read and dropped up to DISCARD_LIMIT (most clients only read the answer once their
 * upload is sent), then reading stops and the answer closes the connection.
 */
async function readFile(part: MultipartFile, limit: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of part.file as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= limit) chunks.push(chunk);
    else if (size >= DISCARD_LIMIT) return undefined;
    else chunks.length = 0;
  }
  if (size > limit || part.file.truncated) return undefined;
  return Buffer.concat(chunks, size);
}

function parseJson(text: string): unknown {
  if (!text.trim()) return {};
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('options', 'not valid JSON');
  }
}

function validateOptions(raw: unknown): ParseOptionsInput {
  const parsed = parseOptions.safeParse(raw ?? {});
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((i) => {
    const keys = (i as { keys?: string[] }).keys;
    const path = ['options', ...i.path.map(String), ...(keys?.length ? [keys.join(',')] : [])].join('.');
    return { path, message: i.message };
  });
  throw new BadRequestError(`Invalid request: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, details);
}

interface Plan {
  formats: FormatPlan;
  /** Formats other than rawBase64 were asked: the document is converted. */
  convert: boolean;
  rawBase64: boolean;
  parser: PdfParserOptions;
}

/** Checks the options against the detected kind; a 400 names every option that cannot be honoured. */
function planParse(opts: ParseOptionsInput, kind: DocumentKind): Plan {
  const uploadIssues: { path: string; message: string }[] = [];
  const issues: { path: string; message: string }[] = [];
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
    if (UPLOAD_FORMATS.has(type)) uploadIssues.push({ path: `options.formats.${i}`, message: `format "${type}" is not available for an upload` });
  });
  const formats = planFormats(
    list.filter((f) => !UPLOAD_FORMATS.has(typeof f === 'string' ? f : f.type)),
    'options.formats',
    issues,
  );

  const parsers = opts.parsers;
  if (parsers?.some((p) => typeof p !== 'string' && p.type === 'image')) {
    uploadIssues.push({ path: 'options.parsers', message: 'the "image" parser (OCR of an image) is not available for uploads' });
  }
  const pdfEntry = parsers?.find((p) => p === 'pdf' || (typeof p !== 'string' && p.type === 'pdf'));
  const parser: PdfParserOptions = pdfEntry && typeof pdfEntry !== 'string' ? { ...pdfEntry } : {};
  // parsers: [] (no pdf parser): a PDF comes back base64-encoded, unconverted.
  const pdfRaw = kind === 'pdf' && parsers !== undefined && !pdfEntry;
  const others = list.filter((f) => (typeof f === 'string' ? f : f.type) !== 'rawBase64');
  if (pdfRaw) {
    list.forEach((f, i) => {
      const type = typeof f === 'string' ? f : f.type;
      if (type !== 'markdown' && type !== 'rawBase64' && !UPLOAD_FORMATS.has(type)) {
        uploadIssues.push({ path: `options.formats.${i}`, message: `format "${type}" needs the pdf parser; with parsers: [] the PDF is returned base64-encoded` });
      }
    });
  }
  if (kind !== 'html') {
    if (formats.html) uploadIssues.push({ path: 'options.formats.html', message: `html is only available for HTML files (this file is ${kind})` });
    if (formats.rawHtml) uploadIssues.push({ path: 'options.formats.rawHtml', message: `rawHtml is only available for HTML files (this file is ${kind})` });
    if (formats.attributes) uploadIssues.push({ path: 'options.formats.attributes', message: `attributes are only available for HTML files (this file is ${kind})` });
    if (opts.includeTags?.length) uploadIssues.push({ path: 'options.includeTags', message: `CSS selectors apply to HTML files only (this file is ${kind})` });
    if (opts.excludeTags?.length) uploadIssues.push({ path: 'options.excludeTags', message: `CSS selectors apply to HTML files only (this file is ${kind})` });
  } else {
    const selectors: [string, string[] | undefined][] = [
      ['options.includeTags', opts.includeTags],
      ['options.excludeTags', opts.excludeTags],
      ['options.formats.attributes.selectors', formats.attributes?.map((a) => a.selector)],
    ];
    for (const [path, sels] of selectors) {
      sels?.forEach((sel, i) => {
        const problem = selectorProblem(sel);
        if (problem) issues.push({ path: `${path}.${i}`, message: `"${sel}" is not a valid CSS selector (${problem})` });
      });
    }
  }
  if (opts.redactPII && parser.blocks) {
    issues.push({ path: 'options.redactPII', message: 'cannot be combined with parsers blocks (block contents and spans index the unredacted text)' });
  }
  if (uploadIssues.length) throw unsupported(uploadIssues);
  if (issues.length) throw new BadRequestError(`Invalid request: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  const rawBase64 = formats.rawBase64 || pdfRaw;
  const convert = !pdfRaw && others.length > 0;
  if (pdfRaw) formats.markdown = false;
  return { formats, convert, rawBase64, parser };
}

export async function parseRoutes(
  app: FastifyInstance,
  { db, pool, llm, llmMaxOutputTokens }: { db: Db; pool: ParsePool; llm?: LlmProvider; llmMaxOutputTokens?: number },
): Promise<void> {
  // Registered in this plugin only: multipart bodies are accepted by POST /v2/parse alone.
  await app.register(multipart, {
    throwFileSizeLimit: false,
    limits: { fileSize: DISCARD_LIMIT + 1, files: 2, fields: 2, parts: 4, fieldSize: MAX_OPTIONS_BYTES, headerPairs: 100 },
  });

  app.post(
    '/v2/parse',
    {
      config: { rateLimit: 'scrape' },
      schema: {
        tags: ['parse'],
        summary: 'Upload a file and convert it',
        consumes: ['multipart/form-data'],
        description:
          'Request: multipart/form-data with a part `file` (the document bytes; at most 50 MiB) and an optional part `options` ' +
          '(JSON text, as a plain field or with content type application/json or text/plain; missing: defaults). ' +
          'options: formats (default ["markdown"]; markdown, summary, links, images, rawBase64; html, rawHtml and attributes for HTML files), ' +
          'onlyMainContent, includeTags, excludeTags (HTML files), headers, skipTlsVerification (accepted; nothing is fetched), ' +
          'timeout (ms, parse deadline, default 60000), parsers (["pdf"] default; [] returns a PDF base64-encoded; ' +
          '{type: "pdf", mode: fast|auto|ocr, maxPages, pages, blocks, pageMarkers}), removeBase64Images, blockAds, redactPII, ' +
          'zeroDataRetention, origin, integration. Unknown keys: 400 naming them. ' +
          'Types: PDF, DOCX, ODT, XLSX, ODS, CSV, PPTX, ODP, EPUB, HTML, Markdown, plain text (detected from the content, then the part\'s content type and file name). ' +
          'Errors: 400 BAD_REQUEST (no `file` part, `options` not JSON or invalid), 400 PARSE_UNSUPPORTED_OPTIONS (screenshot, changeTracking, branding, audio, video formats; ' +
          'actions, waitFor, location, mobile; html/rawHtml for non-HTML files; formats other than markdown/rawBase64 with parsers []), ' +
          '413 FILE_TOO_LARGE (upload over 50 MiB), 413 DOCUMENT_TOO_LARGE (decompressed content over the bound), 415 UNSUPPORTED_FILE_TYPE (naming the type), ' +
          '422 DOCUMENT_ENCRYPTED, 422 DOCUMENT_CORRUPT, 408 PARSE_TIMEOUT, 503 PARSE_QUEUE_FULL (every parser thread busy and the queue full). ' +
          'Credits: 1 per PDF page converted, 1 for a PDF with parsers [] or rawBase64 alone, 1 per other document.',
        response: { 200: parseResponse, 402: errorBody, 408: errorBody, 413: errorBody, 415: errorBody, 422: errorBody, 503: errorBody, ...authErrors },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) {
        throw new BadRequestError('Invalid request: send multipart/form-data with a part "file" (the document) and optionally a part "options" (JSON)', [
          { path: 'file', message: 'required (multipart/form-data)' },
        ]);
      }
      const { upload, options: rawOptions } = await readParts(request.parts()).catch((err: unknown) => {
        // An upload over the bound: once the 413 is written, the connection goes (the rest is never read).
        if (err instanceof ParseError && err.code === 'FILE_TOO_LARGE') reply.raw.once('finish', () => request.raw.destroy());
        throw err;
      });
      if (!upload) throw badRequest('file', 'required: a part "file" with the document bytes');
      const opts = validateOptions(rawOptions);

      const declared = upload.mimetype && upload.mimetype !== 'application/octet-stream' ? upload.mimetype : undefined;
      const detection = detectDocument(upload.bytes, { contentType: declared, fileName: upload.fileName });
      if (detection.encrypted) throw new ParseError(422, 'DOCUMENT_ENCRYPTED', `The file is a ${detection.type}; it cannot be read without its password`);
      const kind = detection.kind;
      if (!kind) throw new ParseError(415, 'UNSUPPORTED_FILE_TYPE', `Unsupported file type: ${detection.type}`);
      const plan = planParse(opts, kind);

      const { caller } = request;
      const quiet = opts.zeroDataRetention;
      const job = await createBillableJob(
        db,
        { teamId: caller.teamId, apiKeyId: caller.keyId, endpoint: 'parse', status: 'active', target: quiet ? null : upload.fileName },
        1,
      );
      try {
        const document = await produce(upload, kind, opts, plan, {
          pool,
          llm,
          llmMaxOutputTokens,
          usage: { teamId: caller.teamId, apiKeyId: caller.keyId, jobId: job.id },
        });
        const credits = document.metadata.creditsUsed ?? 1;
        // Stored in the scrape shape (GET /v2/scrape/{id} reads it): without the parse-only provider.
        const { provider: _provider, ...storedMetadata } = document.metadata;
        const json = quiet ? undefined : JSON.stringify({ ...document, metadata: storedMetadata });
        await finishScrape(db, { jobId: job.id, teamId: caller.teamId, apiKeyId: caller.keyId, credits, json });
        return { success: true as const, data: document, ...(document.warning ? { warning: document.warning } : {}) };
      } catch (err) {
        const mapped = err instanceof DocumentError ? documentApiError(err, { unsupported: 'UNSUPPORTED_FILE_TYPE', timeout: 'PARSE_TIMEOUT' }) : err instanceof ParsePoolBusyError ? busy(err) : err;
        const code = (mapped as { code?: string }).code ?? 'UNKNOWN_ERROR';
        await updateJob(db, job.id, { status: 'failed', error: code }).catch(() => undefined);
        throw mapped;
      }
    },
  );
}

function busy(err: ParsePoolBusyError): ApiError {
  return new ParseError(503, err.code, err.message, { headers: { 'retry-after': '5' } });
}

interface ProduceContext {
  pool: ParsePool;
  llm?: LlmProvider;
  llmMaxOutputTokens?: number;
  usage: { teamId: string; apiKeyId: string | null; jobId: string };
}

async function produce(upload: Upload, kind: DocumentKind, opts: ParseOptionsInput, plan: Plan, ctx: ProduceContext): Promise<ParseDocumentOutput> {
  const { pool } = ctx;
  const scrapeId = ctx.usage.jobId;
  const deadline = AbortSignal.timeout(opts.timeout);
  let structured: AiPage['structured'];
  const f = plan.formats;
  const contentType = upload.mimetype && upload.mimetype !== 'application/octet-stream' ? upload.mimetype : CONTENT_TYPES[kind];
  const doc: ParseDocumentOutput = { metadata: { sourceURL: upload.fileName, contentType } };
  const warnings: string[] = [];
  // Before the bytes move to a worker (transfer detaches them).
  if (plan.rawBase64) doc.rawBase64 = upload.bytes.toString('base64');
  let credits = 1;
  let steps: { provider: string; status: string; creditsCost: number }[] = [{ provider: 'base64', status: 'matched', creditsCost: 1 }];

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
      if (plan.parser.pages || plan.parser.blocks || plan.parser.pageMarkers) warnings.push('parsers pages/blocks/pageMarkers: an HTML file has no pages');
      steps = [{ provider: 'html', status: 'matched', creditsCost: 1 }];
    } else {
      const bytes = new Uint8Array(upload.bytes.buffer, upload.bytes.byteOffset, upload.bytes.byteLength);
      const converted = await convertDocument(pool, bytes, kind, plan.parser, opts.timeout);
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
          { llm: ctx.llm, usage: ctx.usage, signal: deadline, maxOutputTokens: ctx.llmMaxOutputTokens },
        );
      } catch (err) {
        if (deadline.aborted) throw new ParseError(408, 'PARSE_TIMEOUT', `Parsing took longer than ${opts.timeout} ms`);
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

function declaredHtmlType(mimetype: string): string {
  return /html/i.test(mimetype) ? mimetype : 'text/html';
}
