// PDF parser: pdf.js (legacy build, in-thread "fake" worker, no eval, no font or network
// fetching) reads the text layer with positions; src/documents/pdf/layout.ts turns each page into
// ordered units (headings by font size, paragraphs, lists, tables, columns); pages without a text
// layer are OCR'd with tesseract when available (src/documents/ocr.ts).
//
// Conventions:
// - Units: PDF points (1/72 in), origin at the page's top-left corner (after /Rotate).
// - Repeated page headers/footers (same text, digits ignored, in the top/bottom 12% of at least
//   half the pages) and page numbers are kept OUT of `markdown` and `pages`; they appear in
//   `blocks` as type 'header'/'footer' (labels 'page-header'/'page-footer') after the main flow
//   in reading order, with an empty markdownSpan at the end of their page's markdown.
// - Headings: font sizes ≥ 1.15 × body size (the size with most characters), largest first:
//   level 1 ('#', label 'title'), then '##' ('h2')…; bold is not detected (pdf.js's text layer
//   does not expose font names without a full operator-list pass).
import { getDocument, OPS, PDFDateString, VerbosityLevel } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PDFDocumentProxy, PDFPageProxy } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { ocrAvailable, recognise } from './ocr.ts';
import { fontStats } from './pdf/font-stats.ts';
import { findFurniture, furnitureUnits } from './pdf/furniture.ts';
import { layoutPage } from './pdf/layout.ts';
import { type Line, type TextItem, buildLines, normaliseText } from './pdf/lines.ts';
import type { Unit } from './pdf/units.ts';
import type { BlockItem, DocumentBlock, ParsedDocument, ParseOptions } from './types.ts';
import { DocumentError } from '../errors.ts';

export { ocrAvailable } from './ocr.ts';

/** Options of the PDF parser beyond ParseOptions (tests and deployments). */
export interface PdfParseOptions extends ParseOptions {
  /** tesseract binary (default `tesseract` on PATH); a path that does not exist disables OCR. */
  tesseractPath?: string;
  /** OCR language(s), default `eng`. */
  ocrLanguage?: string;
  /** Rendering resolution for OCR, default 300 DPI. */
  ocrDpi?: number;
}

interface PageData {
  pageNumber: number;
  width: number;
  height: number;
  lines: Line[];
  /** No text in the text layer. */
  noText: boolean;
}

function abortError(signal: AbortSignal): DocumentError {
  const reason = signal.reason instanceof Error ? `: ${signal.reason.message}` : '';
  return new DocumentError('DOCUMENT_TIMEOUT', `PDF parsing was aborted${reason}`);
}

/** Races a promise against the signal. */
function guard<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

function mapError(err: unknown): DocumentError {
  if (err instanceof DocumentError) return err;
  const name = (err as { name?: string } | null)?.name ?? '';
  const message = err instanceof Error ? err.message : String(err);
  if (name === 'PasswordException') {
    return new DocumentError('DOCUMENT_ENCRYPTED', 'the PDF is password-protected', { cause: err });
  }
  if (name === 'AbortError') return new DocumentError('DOCUMENT_TIMEOUT', 'PDF parsing was aborted', { cause: err });
  return new DocumentError('DOCUMENT_CORRUPT', `the PDF cannot be read: ${message}`, { cause: err });
}

function latin1Tail(data: Uint8Array, n: number): string {
  const start = Math.max(0, data.length - n);
  let s = '';
  for (let i = start; i < data.length; i++) s += String.fromCharCode(data[i]);
  return s;
}

/** Cheap structural checks before pdf.js (which repairs a lot, even files cut in half). */
function checkStructure(data: Uint8Array): void {
  let head = '';
  for (let i = 0; i < Math.min(data.length, 1024); i++) head += String.fromCharCode(data[i]);
  if (!head.includes('%PDF-')) throw new DocumentError('DOCUMENT_CORRUPT', 'not a PDF: no %PDF- header');
  const tail = latin1Tail(data, 4096);
  if (!tail.includes('%%EOF') && !tail.includes('startxref')) {
    throw new DocumentError('DOCUMENT_CORRUPT', 'the PDF is truncated: no startxref or %%EOF at the end');
  }
}

function isoDate(v: unknown): string | undefined {
  if (typeof v !== 'string' || !v) return undefined;
  try {
    const d = PDFDateString.toDateObject(v);
    return d && !Number.isNaN(d.getTime()) ? d.toISOString() : undefined;
  } catch {
    return undefined;
  }
}

async function readMetadata(
  doc: PDFDocumentProxy,
  signal: AbortSignal | undefined,
): Promise<Record<string, string | number | undefined>> {
  const meta: Record<string, string | number | undefined> = { numPages: doc.numPages };
  try {
    const { info, metadata } = await guard(doc.getMetadata(), signal);
    const i = (info ?? {}) as Record<string, unknown>;
    const str = (k: string): string | undefined => {
      const v = i[k];
      return typeof v === 'string' && v.trim() ? normaliseText(v.trim()) : undefined;
    };
    const xmp = (k: string): string | undefined => {
      try {
        const v = metadata?.get(k);
        return typeof v === 'string' && v.trim() ? v.trim() : undefined;
      } catch {
        return undefined;
      }
    };
    meta.title = str('Title') ?? xmp('dc:title');
    meta.author = str('Author') ?? xmp('dc:creator');
    meta.subject = str('Subject') ?? xmp('dc:description');
    meta.keywords = str('Keywords') ?? xmp('pdf:keywords');
    meta.creator = str('Creator') ?? xmp('xmp:creatortool');
    meta.producer = str('Producer') ?? xmp('pdf:producer');
    meta.creationDate = isoDate(i.CreationDate);
    meta.modDate = isoDate(i.ModDate);
    meta.language = str('Language') ?? xmp('dc:language');
    meta.pdfVersion = str('PDFFormatVersion');
  } catch (err) {
    if (err instanceof DocumentError) throw err;
  }
  for (const k of Object.keys(meta)) if (meta[k] === undefined) delete meta[k];
  return meta;
}

/** The text layer of one page as positioned items (top-left origin). */
async function readPage(page: PDFPageProxy, signal: AbortSignal | undefined): Promise<PageData> {
  const vp = page.getViewport({ scale: 1 });
  const [va, vb, vc, vd, ve, vf] = vp.transform;
  const content = await guard(
    page.getTextContent({ includeMarkedContent: false, disableNormalization: false }),
    signal,
  );
  const items: TextItem[] = [];
  for (const raw of content.items) {
    if (!('str' in raw)) continue;
    const str = raw.str;
    if (!str || !str.trim()) continue;
    const [a, b, c, d, e, f] = raw.transform as number[];
    // viewport.transform × item.transform
    const m2 = va * c + vc * d;
    const m3 = vb * c + vd * d;
    const x = va * e + vc * f + ve;
    const y = vb * e + vd * f + vf;
    const size = Math.hypot(m2, m3) || Math.hypot(a, b);
    if (size < 0.5) continue;
    const horizontal = Math.abs(va * a + vc * b) >= Math.abs(vb * a + vd * b);
    const w = raw.width * (horizontal ? 1 : 0);
    items.push({ str: normaliseText(str), x0: x, x1: x + Math.max(w, 0), y, size });
  }
  return {
    pageNumber: page.pageNumber,
    width: vp.width,
    height: vp.height,
    lines: buildLines(items),
    noText: items.length === 0,
  };
}

async function hasImages(page: PDFPageProxy, signal: AbortSignal | undefined): Promise<boolean> {
  const ops = await guard(page.getOperatorList(), signal);
  const wanted = new Set<number>([
    OPS.paintImageXObject,
    OPS.paintInlineImageXObject,
    OPS.paintImageMaskXObject,
    OPS.paintImageXObjectRepeat,
  ]);
  return ops.fnArray.some((f) => wanted.has(f));
}

/** Renders the page and recognises it; items in page points with word confidences. */
async function ocrPage(
  page: PDFPageProxy,
  doc: PDFDocumentProxy,
  opts: PdfParseOptions,
): Promise<{ items: TextItem[]; words: number }> {
  let dpi = opts.ocrDpi ?? 300;
  const base = page.getViewport({ scale: 1 });
  const maxSide = 6000;
  dpi = Math.min(dpi, (maxSide / Math.max(base.width, base.height)) * 72);
  const scale = dpi / 72;
  const vp = page.getViewport({ scale });
  const factory = doc.canvasFactory as {
    create(w: number, h: number): { canvas: { toBuffer(mime: string): Uint8Array }; context: unknown };
    destroy(c: unknown): void;
  };
  const cc = factory.create(Math.ceil(vp.width), Math.ceil(vp.height));
  let png: Uint8Array;
  try {
    const task = page.render({
      canvasContext: cc.context as never,
      canvas: cc.canvas as never,
      viewport: vp,
      background: 'white',
    });
    try {
      await guard(task.promise, opts.signal);
    } catch (err) {
      task.cancel();
      throw err;
    }
    png = cc.canvas.toBuffer('image/png');
  } finally {
    factory.destroy(cc);
  }
  const words = await recognise(png, {
    tesseractPath: opts.tesseractPath,
    language: opts.ocrLanguage,
    signal: opts.signal,
  });
  const k = 72 / dpi;
  // Line boxes give a steadier baseline and size than single words (ascenders, descenders).
  const lineBox = new Map<string, { top: number; bottom: number }>();
  for (const w of words) {
    const key = `${w.block}.${w.par}.${w.line}`;
    const b = lineBox.get(key);
    if (!b) lineBox.set(key, { top: w.top, bottom: w.top + w.height });
    else {
      b.top = Math.min(b.top, w.top);
      b.bottom = Math.max(b.bottom, w.top + w.height);
    }
  }
  const items: TextItem[] = words.map((w) => {
    const b = lineBox.get(`${w.block}.${w.par}.${w.line}`)!;
    const h = (b.bottom - b.top) * k;
    return {
      str: normaliseText(w.text),
      x0: w.left * k,
      x1: (w.left + w.width) * k,
      y: b.top * k + h * 0.78,
      size: h * 0.85,
      conf: w.conf / 100,
    };
  });
  return { items, words: words.length };
}

function toBlockItems(units: Unit[], pageNumber: number, source: string, spans: [number, number][]): BlockItem[] {
  return units.map((u, i) => ({
    id: `p${pageNumber}-${i + 1}`,
    type: u.type,
    label: u.label,
    bbox: u.bbox.map((v) => Math.round(v * 100) / 100) as [number, number, number, number],
    content: u.content,
    markdownSpan: spans[i],
    readingOrder: i,
    source,
    confidence: { layout: Math.round(u.layout * 100) / 100, ocr: Math.round((u.ocr ?? 1) * 1000) / 1000 },
  }));
}

/** Parses a PDF into markdown, per-page markdown and layout blocks. */
export async function parsePdf(data: Uint8Array, opts: PdfParseOptions = {}): Promise<ParsedDocument> {
  const signal = opts.signal;
  if (signal?.aborted) throw abortError(signal);
  checkStructure(data);
  const mode = opts.mode ?? 'auto';
  const warnings: string[] = [];
  // pdf.js takes ownership of (and may detach) the buffer it is given: pass a copy.
  const task = getDocument({
    data: new Uint8Array(data),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    useWorkerFetch: false,
    isOffscreenCanvasSupported: false,
    stopAtErrors: false,
    verbosity: VerbosityLevel.ERRORS,
  });
  // No onPassword handler: an encrypted file with a user password rejects with PasswordException.
  let doc: PDFDocumentProxy | null = null;
  try {
    try {
      doc = await guard(task.promise, signal);
    } catch (err) {
      if (!(err instanceof DocumentError) && (err as { name?: string })?.name === 'PasswordException')
        throw mapError(err);
      if (signal?.aborted) throw abortError(signal);
      throw mapError(err);
    }
    const numPages = doc.numPages;
    const metadata = await readMetadata(doc, signal);
    const limit = Math.min(numPages, opts.maxPages && opts.maxPages > 0 ? Math.floor(opts.maxPages) : numPages);
    if (limit < numPages) warnings.push(`only the first ${limit} of ${numPages} pages were parsed (maxPages)`);

    // Phase 1: text layers (kept for document-wide statistics and furniture detection).
    const pages: PageData[] = [];
    const proxies: PDFPageProxy[] = [];
    let failed = 0;
    for (let n = 1; n <= limit; n++) {
      try {
        const page = await guard(doc.getPage(n), signal);
        proxies.push(page);
        pages.push(
          mode === 'ocr'
            ? {
                pageNumber: n,
                width: page.view[2] - page.view[0],
                height: page.view[3] - page.view[1],
                lines: [],
                noText: true,
              }
            : await readPage(page, signal),
        );
      } catch (err) {
        if (err instanceof DocumentError) throw err;
        failed++;
        warnings.push(`page ${n} could not be read: ${err instanceof Error ? err.message : String(err)}`);
        pages.push({ pageNumber: n, width: 0, height: 0, lines: [], noText: true });
        proxies.push(null as unknown as PDFPageProxy);
      }
    }
    if (limit > 0 && failed === limit)
      throw new DocumentError('DOCUMENT_CORRUPT', 'the PDF cannot be read: no page could be read');

    // Phase 2: OCR pages without a text layer (auto) or every page (ocr).
    const ocrPages = new Map<number, number>();
    if (mode !== 'fast') {
      const candidates: number[] = [];
      for (let i = 0; i < pages.length; i++) {
        if (!proxies[i]) continue;
        if (mode === 'ocr' || (pages[i].noText && (await hasImages(proxies[i], signal)))) candidates.push(i);
      }
      if (candidates.length > 0) {
        if (await ocrAvailable(opts.tesseractPath)) {
          for (const i of candidates) {
            try {
              const r = await ocrPage(proxies[i], doc, opts);
              const p = pages[i];
              const view = proxies[i].getViewport({ scale: 1 });
              p.width = view.width;
              p.height = view.height;
              p.lines = buildLines(r.items);
              p.noText = r.items.length === 0;
              ocrPages.set(i, r.words);
            } catch (err) {
              if (signal?.aborted) throw abortError(signal);
              warnings.push(
                `page ${pages[i].pageNumber}: OCR failed: ${err instanceof Error ? err.message : String(err)}`,
              );
            }
          }
        } else {
          for (const i of candidates) {
            warnings.push(
              `page ${pages[i].pageNumber} has no text layer; OCR needs tesseract (apt-get install tesseract-ocr)`,
            );
          }
        }
      }
    }

    // Phase 3: layout with document-wide furniture and font statistics.
    const textPages = pages.filter((_p, i) => !ocrPages.has(i));
    const furniture = findFurniture(textPages, fontStats(textPages.map((p) => p.lines)).body);
    const furnitureOf = new Map<number, Set<(typeof pages)[number]['lines'][number]['segs'][number]>>();
    let fi = 0;
    pages.forEach((_p, i) => {
      if (!ocrPages.has(i)) furnitureOf.set(i, furniture[fi++]);
    });
    const flows: Line[][] = pages.map((p, i) => {
      const f = furnitureOf.get(i);
      if (!f || f.size === 0) return p.lines;
      return p.lines.map((l) => ({ y: l.y, segs: l.segs.filter((s) => !f.has(s)) })).filter((l) => l.segs.length > 0);
    });
    const stats = fontStats(flows.filter((_l, i) => !ocrPages.has(i)));

    let markdown = '';
    const outPages: { pageNumber: number; markdown: string }[] = [];
    const blocks: DocumentBlock[] = [];
    for (let i = 0; i < pages.length; i++) {
      const p = pages[i];
      const isOcr = ocrPages.has(i);
      const { units } = layoutPage(flows[i], stats, { headings: !isOcr });
      const extra = furnitureOf.get(i);
      const furnitureList = extra && extra.size > 0 ? furnitureUnits([...extra], p.height) : [];
      if (isOcr) for (const u of units) u.layout *= 0.8;

      // Assemble this page's markdown, recording each unit's span in the document markdown.
      const hasContent = units.length > 0;
      if (opts.pageMarkers || hasContent) {
        if (markdown) markdown += '\n\n';
        if (opts.pageMarkers) markdown += `<!-- Page ${p.pageNumber} -->` + (hasContent ? '\n\n' : '');
      }
      const pageStart = markdown.length;
      const spans: [number, number][] = [];
      units.forEach((u, k) => {
        if (k > 0) {
          const prev = units[k - 1];
          markdown += prev.listId !== undefined && prev.listId === u.listId ? '\n' : '\n\n';
        }
        spans.push([markdown.length, markdown.length + u.markdown.length]);
        markdown += u.markdown;
      });
      const pageEnd = markdown.length;
      for (let k = 0; k < furnitureList.length; k++) spans.push([pageEnd, pageEnd]);
      outPages.push({ pageNumber: p.pageNumber, markdown: markdown.slice(pageStart, pageEnd) });
      const status: DocumentBlock['status'] = !hasContent ? 'empty' : isOcr ? 'ocr' : 'parsed';
      blocks.push({
        pageNumber: p.pageNumber,
        width: Math.round(p.width * 100) / 100,
        height: Math.round(p.height * 100) / 100,
        status,
        items: toBlockItems([...units, ...furnitureList], p.pageNumber, isOcr ? 'ocr' : 'text-layer', spans),
      });
    }

    const result: ParsedDocument = { kind: 'pdf', markdown, metadata, numPages, warnings };
    if (opts.pages) result.pages = outPages;
    if (opts.blocks) result.blocks = blocks;
    return result;
  } catch (err) {
    throw mapError(err);
  } finally {
    try {
      await (doc ? doc.destroy() : task.destroy());
    } catch {
      // already torn down
    }
  }
}
