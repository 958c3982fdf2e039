// A document's bytes to the parts of a Scrape document, through the worker-thread pool: what
// POST /v2/parse and a scrape of a document URL share. Credits: a PDF costs 1 per page converted
// (bounded by maxPages), any other document 1; the provider steps say which path ran.
import type { ParsePool } from './parse-pool.ts';
import type { DocumentBlock, DocumentKind } from './types.ts';
import { ApiError, DocumentError, type ErrorCodeWithStatus } from '../errors.ts';

export const CONTENT_TYPES: Record<DocumentKind, string> = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  doc: 'application/msword',
  odt: 'application/vnd.oasis.opendocument.text',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  xls: 'application/vnd.ms-excel',
  ods: 'application/vnd.oasis.opendocument.spreadsheet',
  csv: 'text/csv',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  ppt: 'application/vnd.ms-powerpoint',
  odp: 'application/vnd.oasis.opendocument.presentation',
  epub: 'application/epub+zip',
  rtf: 'application/rtf',
  html: 'text/html',
  text: 'text/plain',
  markdown: 'text/markdown',
};

/** The object form of `parsers: [{type: "pdf", …}]` (wire-names.md). */
export interface PdfParserOptions {
  mode?: 'fast' | 'auto' | 'ocr';
  maxPages?: number;
  pages?: boolean;
  blocks?: boolean;
  pageMarkers?: boolean;
}

export interface ProviderStep {
  provider: string;
  status: string;
  creditsCost: number;
}

export interface ConvertedDocument {
  markdown: string;
  pages?: { pageNumber: number; markdown: string }[];
  blocks?: DocumentBlock[];
  /** What the file says of itself (title, author, …) plus numPages. */
  metadata: Record<string, string | number>;
  warnings: string[];
  credits: number;
  steps: ProviderStep[];
}

/** Parses a non-HTML document in the pool (the bytes are transferred: the caller's view is detached). */
export async function convertDocument(
  pool: ParsePool,
  bytes: Uint8Array,
  kind: Exclude<DocumentKind, 'html'>,
  parser: PdfParserOptions,
  timeoutMs: number,
  signal?: AbortSignal,
  { embedImages }: { embedImages?: boolean } = {},
): Promise<ConvertedDocument> {
  const { mode, maxPages, pages, blocks, pageMarkers } = parser;
  const result = await pool.parse(
    bytes,
    kind,
    { mode, maxPages, pages, blocks, pageMarkers, embedImages },
    timeoutMs,
    signal,
  );
  const parsed = result.document;
  const metadata: Record<string, string | number> = {};
  for (const [k, v] of Object.entries(parsed.metadata))
    if (v !== undefined && k !== 'contentType' && k !== 'sourceURL') metadata[k] = v;
  metadata.numPages = parsed.numPages;
  const warnings = [...parsed.warnings];
  if (pages && !parsed.pages) warnings.push(`parsers pages: a ${kind} document has no pages`);
  if (blocks && !parsed.blocks) warnings.push('parsers blocks: layout blocks are available for PDF files only');
  let credits = 1;
  let steps: ProviderStep[] = [{ provider: kind, status: 'matched', creditsCost: 1 }];
  if (kind === 'pdf') {
    credits = Math.max(1, Math.min(parsed.numPages, maxPages ?? parsed.numPages));
    const ocr = Math.min(result.ocrPages, credits);
    steps = [
      { provider: 'text-layer', status: 'matched', creditsCost: credits - ocr },
      { provider: 'ocr', status: 'matched', creditsCost: ocr },
    ].filter((s) => s.creditsCost > 0);
  }
  return {
    markdown: parsed.markdown,
    ...(parsed.pages ? { pages: parsed.pages } : {}),
    ...(parsed.blocks && blocks ? { blocks: parsed.blocks } : {}),
    metadata,
    warnings,
    credits,
    steps,
  };
}

const SPACE = /\s/;
/** Characters of a link destination: [^\s)>]. */
const isUrlChar = (c: string) => c !== ')' && c !== '>' && !SPACE.test(c);

/**
 * Links and images of a markdown document: every [text](url) and ![alt](url), each once (what
 * /(!?)\[(?:[^\]\\]|\\.)*\]\(\s*<?([^\s)>]+)>?(?:\s+"[^"]*")?\s*\)/g finds). One pass, linear in the
 * length: that regex takes time quadratic in a run of unclosed brackets, and runs on the API's
 * event loop (an uploaded text file of 40,000 "[" blocked it for 20 s).
 */
export function markdownTargets(markdown: string): { links: string[]; images: string[] } {
  const links = new Set<string>();
  const images = new Set<string>();
  const s = markdown;
  const n = s.length;
  // The run of destination characters last measured, [runStart, runEnd): a later destination
  // starting inside it ends where it ends (so no run is measured twice).
  let runStart = 0;
  let runEnd = 0;
  /** The destination of a link whose `(` is at `i`: its URL and the index after its `)`. */
  const destination = (i: number): { url: string; end: number } | undefined => {
    let j = i + 1;
    while (j < n && SPACE.test(s[j])) j++;
    // "<url>"; "<" is a destination character itself when nothing follows it ("(<>)" is "<").
    const start = s[j] === '<' && j + 1 < n && isUrlChar(s[j + 1]) ? j + 1 : j;
    if (start >= runStart && start < runEnd) j = runEnd;
    else {
      j = start;
      while (j < n && isUrlChar(s[j])) j++;
      runStart = start;
      runEnd = j;
    }
    if (j === start) return undefined;
    const url = s.slice(start, j);
    if (s[j] === '>') j++;
    let k = j;
    while (k < n && SPACE.test(s[k])) k++;
    if (k > j && s[k] === '"') {
      const close = s.indexOf('"', k + 1);
      if (close >= 0) {
        let m = close + 1;
        while (m < n && SPACE.test(s[m])) m++;
        if (s[m] === ')') return { url, end: m + 1 };
      }
    }
    return s[k] === ')' ? { url, end: k + 1 } : undefined;
  };
  // `open`: the first "[" of the text being read (-1: none); the text ends at an unescaped "]".
  let open = -1;
  let i = 0;
  while (i < n) {
    const c = s[i];
    if (open >= 0 && c === '\\') {
      // An escaped character is text; a backslash before a line break ends the text (no link).
      if (i + 1 < n && s[i + 1] !== '\n' && s[i + 1] !== '\r' && s[i + 1] !== '\u2028' && s[i + 1] !== '\u2029') i += 2;
      else {
        open = -1;
        i++;
      }
    } else if (c === '[') {
      if (open < 0) open = i;
      i++;
    } else if (c === ']' && open >= 0) {
      const dest = s[i + 1] === '(' ? destination(i + 1) : undefined;
      if (dest) {
        (s[open - 1] === '!' ? images : links).add(dest.url);
        i = dest.end;
      } else i++;
      open = -1;
    } else i++;
  }
  return { links: [...links], images: [...images] };
}

/**
 * DocumentError → an API error. The codes of the route: parse answers UNSUPPORTED_FILE_TYPE and
 * PARSE_TIMEOUT, scrape SCRAPE_UNSUPPORTED_FILE_ERROR and SCRAPE_TIMEOUT.
 */
export function documentApiError(
  err: DocumentError,
  codes: { unsupported: ErrorCodeWithStatus<415>; timeout: ErrorCodeWithStatus<408> },
): ApiError {
  switch (err.code) {
    case 'DOCUMENT_ENCRYPTED':
      return new ApiError('DOCUMENT_ENCRYPTED', err.message);
    case 'DOCUMENT_CORRUPT':
      return new ApiError('DOCUMENT_CORRUPT', err.message);
    case 'DOCUMENT_TOO_LARGE':
      return new ApiError('DOCUMENT_TOO_LARGE', err.message);
    case 'DOCUMENT_TIMEOUT':
      return new ApiError(codes.timeout, err.message);
    case 'DOCUMENT_UNSUPPORTED':
      return new ApiError(codes.unsupported, err.message);
  }
}
