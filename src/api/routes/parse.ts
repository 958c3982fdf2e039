// POST /v2/parse: a multipart upload (parts `file` and `options`) read and checked here, converted to
// a Scrape document by UploadParser (src/scrape/parse-upload.ts).
import multipart, { type MultipartFile, type Multipart } from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import { authErrors, errorBody } from '../../contract/common.ts';
import { type ParseOptionsInput, parseOptions, parseResponse } from '../../contract/parse.ts';
import type { Upload, UploadParser } from '../../scrape/parse-upload.ts';
import { ApiError, BadRequestError, ParseError, describeErrorCodes } from '../../errors.ts';

/** The spec's 50 MB per request, as MiB. */
export const MAX_FILE_BYTES = 50 * 1024 * 1024;
const MAX_OPTIONS_BYTES = 1024 * 1024;

function badRequest(path: string, message: string): BadRequestError {
  return new BadRequestError(`Invalid request: ${path}: ${message}`, [{ path, message }]);
}

function tooLarge(): ParseError {
  // Connection: close, so the server does not go on reading the rest of an upload to keep the connection.
  return new ParseError(
    'FILE_TOO_LARGE',
    `The file is larger than ${MAX_FILE_BYTES / 1024 / 1024} MB (the upload limit of POST /v2/parse)`,
    {
      headers: { connection: 'close' },
    },
  );
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
        if (part.type !== 'file')
          throw badRequest('file', 'the file part must carry the document bytes (a file part with a filename)');
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

export async function parseRoutes(
  app: FastifyInstance,
  { uploadParser }: { uploadParser: UploadParser },
): Promise<void> {
  // Registered in this plugin only: multipart bodies are accepted by POST /v2/parse alone.
  await app.register(multipart, {
    throwFileSizeLimit: false,
    limits: {
      fileSize: DISCARD_LIMIT + 1,
      files: 2,
      fields: 2,
      parts: 4,
      fieldSize: MAX_OPTIONS_BYTES,
      headerPairs: 100,
    },
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
          "Types: PDF, DOCX, ODT, XLSX, ODS, CSV, PPTX, ODP, EPUB, HTML, Markdown, plain text (detected from the content, then the part's content type and file name). " +
          'Errors: ' +
          describeErrorCodes([
            ['BAD_REQUEST', 'no `file` part, `options` not JSON or invalid'],
            [
              'PARSE_UNSUPPORTED_OPTIONS',
              'screenshot, changeTracking, branding, audio, video formats; actions, waitFor, location, mobile; ' +
                'html/rawHtml for non-HTML files; formats other than markdown/rawBase64 with parsers []',
            ],
            'FILE_TOO_LARGE',
            'DOCUMENT_TOO_LARGE',
            'UNSUPPORTED_FILE_TYPE',
            'DOCUMENT_ENCRYPTED',
            'DOCUMENT_CORRUPT',
            'PARSE_TIMEOUT',
            'PARSE_QUEUE_FULL',
          ]) +
          '. ' +
          'Credits: 1 per PDF page converted, 1 for a PDF with parsers [] or rawBase64 alone, 1 per other document.',
        response: {
          200: parseResponse,
          402: errorBody,
          408: errorBody,
          413: errorBody,
          415: errorBody,
          422: errorBody,
          503: errorBody,
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      if (!request.isMultipart()) {
        throw new BadRequestError(
          'Invalid request: send multipart/form-data with a part "file" (the document) and optionally a part "options" (JSON)',
          [{ path: 'file', message: 'required (multipart/form-data)' }],
        );
      }
      const { upload, options: rawOptions } = await readParts(request.parts()).catch((err: unknown) => {
        // An upload over the bound: once the 413 is written, the connection goes (the rest is never read).
        if (err instanceof ParseError && err.code === 'FILE_TOO_LARGE')
          reply.raw.once('finish', () => request.raw.destroy());
        throw err;
      });
      if (!upload) throw badRequest('file', 'required: a part "file" with the document bytes');
      // Nothing to convert (and nothing to charge for): a clear answer, not an empty document.
      if (!upload.bytes.length) throw badRequest('file', 'the file is empty (0 bytes)');
      const opts = validateOptions(rawOptions);

      const document = await uploadParser.parse(request.caller, upload, opts);
      return { success: true as const, data: document, ...(document.warning ? { warning: document.warning } : {}) };
    },
  );
}
