// parseDocument(): one entry point over every parser. Every failure is a DocumentError with a code:
// anything else a parser throws on bad input (a RangeError deep in a decoder…) is reported as
// DOCUMENT_CORRUPT, an abort as DOCUMENT_TIMEOUT.
//
// HTML goes through the web pipeline, which lives outside src/documents: the caller passes it as
// `options.html` (bytes → ParsedDocument); without it, HTML is DOCUMENT_UNSUPPORTED.
import { parseCsv } from './csv.ts';
import { parseDocx } from './docx.ts';
import { parseEpub } from './epub.ts';
import { parseOdt } from './odt.ts';
import { parseOds, parseXlsx } from './sheets.ts';
import { parseOdp, parsePptx } from './slides.ts';
import { parseRtf } from './rtf.ts';
import { parseText } from './text.ts';
import type { DocumentKind, ParsedDocument, ParseOptions } from './types.ts';
import { throwIfAborted } from './zip.ts';
import { DocumentError } from '../errors.ts';

export interface ParseDocumentOptions extends ParseOptions {
  /** Converts an HTML document (the web pipeline); required for kind 'html'. */
  html?: (bytes: Uint8Array, opts: ParseOptions) => Promise<ParsedDocument> | ParsedDocument;
}

type Parser = (bytes: Uint8Array, opts: ParseDocumentOptions) => Promise<ParsedDocument> | ParsedDocument;

/** The parser of each kind; pdf.js is loaded on the first PDF, SheetJS on the first .xls. */
const PARSERS: Record<DocumentKind, Parser> = {
  pdf: async (bytes, opts) => (await import('./pdf.ts')).parsePdf(bytes, opts),
  docx: parseDocx,
  doc: async (bytes) => (await import('./doc.ts')).parseDoc(bytes),
  odt: parseOdt,
  xlsx: parseXlsx,
  // SheetJS and its code pages (~2 MB of code) load on the first .xls, as pdf.js on the first PDF.
  xls: async (bytes, opts) => (await import('./xls.ts')).parseXls(bytes, opts),
  ods: parseOds,
  csv: parseCsv,
  pptx: parsePptx,
  ppt: async (bytes, opts) => (await import('./ppt.ts')).parsePpt(bytes, opts),
  odp: parseOdp,
  epub: parseEpub,
  rtf: parseRtf,
  text: (bytes) => parseText(bytes, 'text'),
  markdown: (bytes) => parseText(bytes, 'markdown'),
  html: (bytes, opts) => {
    if (!opts.html)
      throw new DocumentError(
        'DOCUMENT_UNSUPPORTED',
        'HTML documents are converted by the web pipeline (no HTML converter was given)',
      );
    return opts.html(bytes, opts);
  },
};

export async function parseDocument(
  bytes: Uint8Array,
  kind: DocumentKind,
  opts: ParseDocumentOptions = {},
): Promise<ParsedDocument> {
  throwIfAborted(opts.signal);
  try {
    if (!Object.hasOwn(PARSERS, kind))
      throw new DocumentError('DOCUMENT_UNSUPPORTED', `Unsupported document type: ${String(kind)}`);
    return await PARSERS[kind](bytes, opts);
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    if (opts.signal?.aborted)
      throw new DocumentError('DOCUMENT_TIMEOUT', 'Document parsing was aborted', { cause: err });
    throw new DocumentError(
      'DOCUMENT_CORRUPT',
      `The ${kind} document could not be parsed: ${(err as Error)?.message ?? String(err)}`,
      {
        cause: err,
      },
    );
  }
}
