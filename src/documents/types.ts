// What every document parser takes and gives (src/documents/*). A parser turns the bytes of one
// file into markdown (plus per-page markdown and layout blocks where the format has pages), never
// touching the network or the database; the scrape and parse routes wrap it.
//
// Errors are DocumentError with a code (src/documents/errors.ts); a parser never throws anything
// else for bad input (corrupt, truncated, encrypted, too large when decompressed).

/** Document kinds Gleaner parses (detected from content first: src/documents/detect.ts). */
export type DocumentKind =
  | 'pdf'
  | 'docx'
  | 'doc'
  | 'odt'
  | 'xlsx'
  | 'xls'
  | 'ods'
  | 'csv'
  | 'pptx'
  | 'ppt'
  | 'odp'
  | 'epub'
  | 'rtf'
  | 'html'
  | 'text'
  | 'markdown';

export interface ParseOptions {
  /** PDF: parse at most this many pages (the rest are left out; a warning says so). */
  maxPages?: number;
  /** PDF: fast = text layer only; auto = text layer, OCR for pages without one; ocr = OCR every page. */
  mode?: 'fast' | 'auto' | 'ocr';
  /** Fill `pages` (per-page markdown). */
  pages?: boolean;
  /** Fill `blocks` (layout items per page). */
  blocks?: boolean;
  /** Put a `<!-- Page N -->` marker line before each page's markdown in `markdown`. */
  pageMarkers?: boolean;
  /** Bound on decompressed bytes of office/epub containers (zip-bomb guard). */
  maxUnpackedBytes?: number;
  /**
   * DOCX/PPTX/PPT: pictures as data: URIs (the caller keeps base64 images), else `![alt](their path in the package)`
   * (PPT: `image<N>.<ext>`, N the picture's place in the BLIP store).
   */
  embedImages?: boolean;
  /** XLSX/ODS/CSV: at most this many rows per sheet (default 10,000); a warning names what was left out. */
  maxRows?: number;
  /** XLSX/ODS/CSV: at most this many non-empty cells over all sheets (default 1,000,000). */
  maxCells?: number;
  signal?: AbortSignal;
}

/** Spec "Block": one per page. Units: PDF points (1/72 inch), origin top-left. */
export interface DocumentBlock {
  pageNumber: number;
  width: number;
  height: number;
  /** 'parsed' (text layer), 'ocr' (recognised from an image), 'empty' (nothing found). */
  status: 'parsed' | 'ocr' | 'empty';
  items: BlockItem[];
}

export interface BlockItem {
  /** `p<page>-<n>` */
  id: string;
  /** 'text' | 'heading' | 'list' | 'table' | 'image' | 'header' | 'footer' */
  type: string;
  /** Finer label: 'title', 'h2'…'h6', 'paragraph', 'list-item', 'table', 'caption', 'page-header', 'page-footer', 'figure'. */
  label: string;
  /** [x0, y0, x1, y1] in points from the top-left corner of the page. */
  bbox: [number, number, number, number];
  content: string;
  /** [start, end) character offsets of this item in the document's `markdown`. */
  markdownSpan: [number, number];
  /** 0-based position in the page's reading order. */
  readingOrder: number;
  /** 'text-layer' | 'ocr' */
  source: string;
  /** 0..1 each. */
  confidence: { layout: number; ocr: number };
}

export interface ParsedDocument {
  kind: DocumentKind;
  markdown: string;
  /** Per-page markdown (PDF pages, slides), when the format has pages. */
  pages?: { pageNumber: number; markdown: string }[];
  blocks?: DocumentBlock[];
  /** title, author, subject, keywords, language, created, modified… as found in the file. */
  metadata: Record<string, string | number | undefined>;
  /** Pages (PDF), slides (PPTX/ODP), sheets (XLSX/XLS/ODS), chapters (EPUB); 1 otherwise. */
  numPages: number;
  /** Non-fatal notes (pages left out, OCR unavailable, truncated sheet…). */
  warnings: string[];
}
