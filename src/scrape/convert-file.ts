// A document page (PDF, office, EPUB, CSV…) of a scrape, converted by the parsers in the worker pool.
import type { ScrapeDocument, ScrapeRequest } from '../contract/scrape.ts';
import { convertDocument, documentApiError, markdownTargets, type PdfParserOptions } from '../documents/convert.ts';
import { detectDocument } from '../documents/detect.ts';
import { ApiError, DocumentError, UnsupportedFileError } from '../errors.ts';
import type { CachedPage } from '../store/pages.ts';
import type { ScrapePlan } from './plan.ts';
import type { ScrapeDeps } from './scrape-deps.ts';

/**
 * A document (PDF, office, EPUB, CSV…) through the parsers, in the worker pool: markdown (and
 * pages/blocks when `parsers` asks), its metadata, links/images from the markdown. `parsers: []`
 * leaves a PDF unconverted: the bytes come back in rawBase64 for the page's flat cost. Resolves
 * to the credits beyond the page's own: a PDF costs one per page converted.
 */
export async function convertFile(
  d: ScrapeDeps,
  doc: ScrapeDocument,
  req: ScrapeRequest,
  plan: ScrapePlan,
  page: CachedPage,
  warnings: string[],
  time: { deadline: AbortSignal; startedAt: number },
): Promise<number> {
  const f = plan.formats;
  const detection = detectDocument(page.body, {
    contentType: page.contentType,
    fileName: new URL(page.finalUrl).pathname,
  });
  if (detection.encrypted)
    throw new ApiError('DOCUMENT_ENCRYPTED', `The file is a ${detection.type}; it cannot be read without its password`);
  const kind = detection.kind;
  if (!kind || kind === 'html')
    throw new UnsupportedFileError(`${detection.type}; request format "rawBase64" to receive the bytes`);
  const pdfEntry = req.parsers?.find((p) => p === 'pdf' || (typeof p !== 'string' && p.type === 'pdf'));
  if (kind === 'pdf' && req.parsers !== undefined && !pdfEntry) {
    // parsers: [] — the PDF itself, base64-encoded, unconverted.
    doc.rawBase64 = page.body.toString('base64');
    if (f.markdown || f.summary || f.links || f.images)
      warnings.push('parsers: [] returns the PDF base64-encoded in rawBase64, unconverted');
    return 0;
  }
  if (!d.parsePool)
    throw new UnsupportedFileError(`${detection.type}: document parsing is not available in this process`);
  const parser: PdfParserOptions = pdfEntry && typeof pdfEntry !== 'string' ? pdfEntry : {};
  const remaining = Math.max(1, req.timeout - (Date.now() - time.startedAt));
  let converted;
  try {
    // A copy: the bytes are transferred to the worker, and the page may be the cached one.
    converted = await convertDocument(d.parsePool, new Uint8Array(page.body), kind, parser, remaining, time.deadline, {
      embedImages: req.removeBase64Images === false,
    });
  } catch (err) {
    if (err instanceof DocumentError)
      throw documentApiError(err, { unsupported: 'SCRAPE_UNSUPPORTED_FILE_ERROR', timeout: 'SCRAPE_TIMEOUT' });
    throw err;
  }
  Object.assign(doc.metadata, converted.metadata);
  warnings.push(...converted.warnings);
  doc.markdown = converted.markdown;
  if (converted.pages && parser.pages) doc.pages = converted.pages;
  if (converted.blocks) doc.blocks = converted.blocks;
  const targets = markdownTargets(converted.markdown);
  if (f.links) doc.links = targets.links;
  if (f.images) doc.images = targets.images;
  const htmlOnly = [f.html && 'html', f.rawHtml && 'rawHtml', f.attributes && 'attributes'].filter(Boolean);
  if (htmlOnly.length)
    warnings.push(`${htmlOnly.join(', ')}: not available for a ${kind} document (its markdown is returned)`);
  return converted.credits - 1;
}
