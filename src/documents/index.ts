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
import { parseText } from './text.ts';
import type { DocumentKind, ParsedDocument, ParseOptions } from './types.ts';
import { throwIfAborted } from './zip.ts';
import { DocumentError } from '../errors.ts';

export { detectDocument, detectDocumentKind, requireDocumentKind } from './detect.ts';
export type { DetectHints, Detection } from './detect.ts';

export interface ParseDocumentOptions extends ParseOptions {
  /** Converts an HTML document (the web pipeline); required for kind 'html'. */
  html?: (bytes: Uint8Array, opts: ParseOptions) => Promise<ParsedDocument> | ParsedDocument;
}

export async function parseDocument(bytes: Uint8Array, kind: DocumentKind, opts: ParseDocumentOptions = {}): Promise<ParsedDocument> {
  throwIfAborted(opts.signal);
  try {
    switch (kind) {
      case 'pdf': {
        const { parsePdf } = await import('./pdf.ts');
        return await parsePdf(bytes, opts);
      }
      case 'docx':
        return await parseDocx(bytes, opts);
      case 'odt':
        return await parseOdt(bytes, opts);
      case 'xlsx':
        return await parseXlsx(bytes, opts);
      case 'ods':
        return await parseOds(bytes, opts);
      case 'csv':
        return parseCsv(bytes, opts);
      case 'pptx':
        return await parsePptx(bytes, opts);
      case 'odp':
        return await parseOdp(bytes, opts);
      case 'epub':
        return await parseEpub(bytes, opts);
      case 'text':
      case 'markdown':
        return parseText(bytes, kind);
      case 'html':
        if (!opts.html) throw new DocumentError('DOCUMENT_UNSUPPORTED', 'HTML documents are converted by the web pipeline (no HTML converter was given)');
        return await opts.html(bytes, opts);
      default:
        throw new DocumentError('DOCUMENT_UNSUPPORTED', `Unsupported document type: ${String(kind)}`);
    }
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    if (opts.signal?.aborted) throw new DocumentError('DOCUMENT_TIMEOUT', 'Document parsing was aborted', { cause: err });
    throw new DocumentError('DOCUMENT_CORRUPT', `The ${kind} document could not be parsed: ${(err as Error)?.message ?? String(err)}`, {
      cause: err,
    });
  }
}
