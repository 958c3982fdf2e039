// What a file or a response is. Document type from content first: magic bytes (%PDF, zip containers
// told apart by their `mimetype` entry or [Content_Types].xml, OLE compound files), then the declared
// content type, then the file extension, then text sniffing (HTML, CSV, markdown, plain text;
// UTF-8/UTF-16). detectDocument() also names what it found when Gleaner cannot parse it (legacy
// .doc/.xls/.ppt, RTF, images, other zips…) and flags password-protected Office files;
// detectContentKind() classifies a web response for the scrape pipeline. Signatures: ./sniff.ts.
import { decodeText } from './charset.ts';
import { fieldCounts } from './csv.ts';
import { hasPdfHeader, isZip, sniffHtml } from './sniff.ts';
import type { DocumentKind } from './types.ts';
import { cfbHasStream, isCfb, ZipArchive } from './zip.ts';
import { DocumentError } from '../errors.ts';

export interface DetectHints {
  contentType?: string;
  fileName?: string;
}

export interface Detection {
  kind?: DocumentKind;
  /** What the bytes are, in words ("Microsoft Word 97-2003 document (.doc)"), always set. */
  type: string;
  /** Password-protected (an encrypted Office package). */
  encrypted?: boolean;
}

const MIME_KINDS: Record<string, DocumentKind> = {
  'application/pdf': 'pdf',
  'application/x-pdf': 'pdf',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'docx',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet': 'xlsx',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation': 'pptx',
  'application/vnd.ms-word.document.macroenabled.12': 'docx',
  'application/vnd.ms-excel.sheet.macroenabled.12': 'xlsx',
  'application/vnd.ms-excel': 'xls',
  'application/msword': 'doc',
  'application/vnd.ms-powerpoint': 'ppt',
  'application/vnd.ms-powerpoint.presentation.macroenabled.12': 'pptx',
  'application/epub+zip': 'epub',
  'application/rtf': 'rtf',
  'text/rtf': 'rtf',
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/vnd.oasis.opendocument.presentation': 'odp',
  'text/csv': 'csv',
  'application/csv': 'csv',
  'text/tab-separated-values': 'csv',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/plain': 'text',
};

const EXT_KINDS: Record<string, DocumentKind> = {
  pdf: 'pdf',
  docx: 'docx',
  docm: 'docx',
  doc: 'doc',
  xlsx: 'xlsx',
  xlsm: 'xlsx',
  xls: 'xls',
  pptx: 'pptx',
  pptm: 'pptx',
  ppt: 'ppt',
  epub: 'epub',
  rtf: 'rtf',
  odt: 'odt',
  ods: 'ods',
  odp: 'odp',
  csv: 'csv',
  tsv: 'csv',
  html: 'html',
  htm: 'html',
  xhtml: 'html',
  md: 'markdown',
  markdown: 'markdown',
  txt: 'text',
  text: 'text',
};

const NAMES: Record<DocumentKind, string> = {
  pdf: 'PDF document',
  docx: 'Word document (DOCX)',
  doc: 'Word 97-2003 document (DOC)',
  odt: 'OpenDocument text (ODT)',
  xlsx: 'Excel workbook (XLSX)',
  xls: 'Excel 97-2003 workbook (XLS)',
  ods: 'OpenDocument spreadsheet (ODS)',
  csv: 'CSV file',
  pptx: 'PowerPoint presentation (PPTX)',
  ppt: 'PowerPoint 97-2003 presentation (PPT)',
  odp: 'OpenDocument presentation (ODP)',
  epub: 'EPUB book',
  rtf: 'Rich Text Format document (RTF)',
  html: 'HTML page',
  text: 'plain text',
  markdown: 'markdown text',
};

const ODF_KINDS: Record<string, DocumentKind> = {
  'application/vnd.oasis.opendocument.text': 'odt',
  'application/vnd.oasis.opendocument.spreadsheet': 'ods',
  'application/vnd.oasis.opendocument.presentation': 'odp',
  'application/epub+zip': 'epub',
};

function startsWith(b: Uint8Array, sig: number[], at = 0): boolean {
  if (b.length < at + sig.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[at + i] !== sig[i]) return false;
  return true;
}

function fromMime(contentType: string | undefined): DocumentKind | undefined {
  if (!contentType) return undefined;
  return MIME_KINDS[contentType.split(';')[0].trim().toLowerCase()];
}

function fromExt(fileName: string | undefined): DocumentKind | undefined {
  if (!fileName) return undefined;
  const clean = fileName.split(/[?#]/)[0];
  const dot = clean.lastIndexOf('.');
  return dot < 0 ? undefined : EXT_KINDS[clean.slice(dot + 1).toLowerCase()];
}

/** Which zip-based format: ODF/EPUB by `mimetype`, OOXML by [Content_Types].xml, else by part names. */
function zipKind(bytes: Uint8Array): Detection {
  let zip: ZipArchive;
  try {
    zip = new ZipArchive(bytes, { maxUnpackedBytes: 4 * 1024 * 1024 });
  } catch {
    return { type: 'corrupt or truncated zip archive' };
  }
  const read = (name: string): string | undefined => {
    try {
      return decodeText(zip.readBytesSync(name), '', false, 'file').text;
    } catch {
      return undefined;
    }
  };
  // ODF and EPUB: the `mimetype` entry (stored first, uncompressed).
  if (zip.has('mimetype')) {
    const mime = read('mimetype')?.trim();
    if (mime && ODF_KINDS[mime]) return { kind: ODF_KINDS[mime], type: NAMES[ODF_KINDS[mime]] };
    if (mime) return { type: `zip package of type ${mime}` };
  }
  if (zip.has('[Content_Types].xml')) {
    const ct = read('[Content_Types].xml') ?? '';
    if (
      /wordprocessingml\.document\.main|ms-word\.document\.macroEnabled\.main|wordprocessingml\.template\.main/i.test(
        ct,
      )
    )
      return { kind: 'docx', type: NAMES.docx };
    if (/spreadsheetml\.sheet\.main|ms-excel\.sheet\.macroEnabled\.main|spreadsheetml\.template\.main/i.test(ct))
      return { kind: 'xlsx', type: NAMES.xlsx };
    if (
      /presentationml\.presentation\.main|ms-powerpoint\.presentation\.macroEnabled\.main|presentationml\.slideshow\.main/i.test(
        ct,
      )
    )
      return { kind: 'pptx', type: NAMES.pptx };
  }
  if (zip.has('word/document.xml')) return { kind: 'docx', type: NAMES.docx };
  if (zip.has('xl/workbook.xml')) return { kind: 'xlsx', type: NAMES.xlsx };
  if (zip.has('ppt/presentation.xml')) return { kind: 'pptx', type: NAMES.pptx };
  if (zip.has('META-INF/container.xml')) return { kind: 'epub', type: NAMES.epub };
  return { type: 'zip archive' };
}

function cfbKind(bytes: Uint8Array): Detection {
  if (cfbHasStream(bytes, 'EncryptedPackage')) return { type: 'password-protected Office document', encrypted: true };
  if (cfbHasStream(bytes, 'WordDocument')) return { kind: 'doc', type: NAMES.doc };
  if (cfbHasStream(bytes, 'Workbook') || cfbHasStream(bytes, 'Book')) return { kind: 'xls', type: NAMES.xls };
  if (cfbHasStream(bytes, 'PowerPoint Document')) return { kind: 'ppt', type: NAMES.ppt };
  if (cfbHasStream(bytes, '__substg1.0_')) return { type: 'Outlook message (.msg)' };
  return { type: 'OLE compound document (legacy Microsoft Office format)' };
}

const BINARY_MAGIC: [number[], string, number?][] = [
  [[0x89, 0x50, 0x4e, 0x47], 'PNG image'],
  [[0xff, 0xd8, 0xff], 'JPEG image'],
  [[0x47, 0x49, 0x46, 0x38], 'GIF image'],
  [[0x52, 0x49, 0x46, 0x46], 'RIFF media file (WebP/WAV/AVI)'],
  [[0x1f, 0x8b], 'gzip archive'],
  [[0x42, 0x5a, 0x68], 'bzip2 archive'],
  [[0x37, 0x7a, 0xbc, 0xaf], '7-Zip archive'],
  [[0x52, 0x61, 0x72, 0x21], 'RAR archive'],
  [[0x7f, 0x45, 0x4c, 0x46], 'ELF executable'],
  [[0x4d, 0x5a], 'Windows executable'],
  [[0x00, 0x00, 0x00], 'binary file'],
];

/** Sniffs text: HTML, CSV (a consistent delimiter on every sampled line), markdown, plain text. */
function textKind(bytes: Uint8Array): Detection | undefined {
  const sample = bytes.subarray(0, 16 * 1024);
  const text = decodeText(sample, '', false, 'file').text.replace(/^\uFEFF/, '');
  // Binary: NULs or many control characters (after UTF-16 decoding).
  let control = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0) return undefined;
    if (c < 9 || (c > 13 && c < 32) || c === 0xfffd) control++;
  }
  if (control > text.length / 20) return undefined;
  const head = text.trimStart().slice(0, 1024).toLowerCase();
  if (head.startsWith('{\\rtf')) return { kind: 'rtf', type: NAMES.rtf };
  if (sniffHtml(head) === 'document') return { kind: 'html', type: NAMES.html };
  // CSV: the same field count (>= 2, quotes respected) on every sampled record, over 2+ records.
  const complete = bytes.length <= sample.length ? text : text.slice(0, Math.max(0, text.lastIndexOf('\n')));
  for (const d of [',', ';', '\t', '|']) {
    const counts = fieldCounts(complete + '\n', d);
    if (counts.length < 2 || counts[0] < 2 || !counts.every((n) => n === counts[0])) continue;
    if (d === '|' && /^\s*\|?\s*:?-{3,}/m.test(text)) continue; // a markdown table
    if (d === ',' && complete.split('\n').every((l) => l.trim() === '' || /[.!?]$/.test(l.trim()))) continue; // prose
    return { kind: 'csv', type: NAMES.csv };
  }
  const md =
    /^(#{1,6} \S|[-*+] \S|\d+\. \S|> |```|\|.*\|\s*$)/m.test(text) ||
    /\[[^[\]\n]+\]\([^)\s]+\)|\*\*[^*\n]+\*\*/.test(text);
  if (md) return { kind: 'markdown', type: NAMES.markdown };
  return { kind: 'text', type: NAMES.text };
}

export function detectDocument(bytes: Uint8Array, hints: DetectHints = {}): Detection {
  if (hasPdfHeader(bytes)) return { kind: 'pdf', type: NAMES.pdf };
  if (isZip(bytes)) return zipKind(bytes);
  if (isCfb(bytes)) return cfbKind(bytes);
  for (const [sig, type] of BINARY_MAGIC) if (startsWith(bytes, sig)) return { type };
  const declared = fromMime(hints.contentType) ?? fromExt(hints.fileName);
  const sniffed = textKind(bytes);
  if (!sniffed)
    return { type: hints.contentType ? `binary content (${hints.contentType.split(';')[0]})` : 'binary content' };
  if (sniffed.kind === undefined) return sniffed;
  // Text: trust a declared text kind (a .md file that looks like plain text is markdown).
  if (declared === 'csv' || declared === 'markdown' || declared === 'text' || declared === 'html') {
    if (sniffed.kind === 'html') return sniffed; // a full HTML document is HTML whatever it is called
    return { kind: declared, type: NAMES[declared] };
  }
  return sniffed;
}

/** The document kind, or undefined when the content is not a type Gleaner parses. */
export function detectDocumentKind(bytes: Uint8Array, hints: DetectHints = {}): DocumentKind | undefined {
  return detectDocument(bytes, hints).kind;
}

/** The kind, or DOCUMENT_ENCRYPTED / DOCUMENT_UNSUPPORTED naming what the bytes are. */
export function requireDocumentKind(bytes: Uint8Array, hints: DetectHints = {}): DocumentKind {
  const d = detectDocument(bytes, hints);
  if (d.encrypted)
    throw new DocumentError('DOCUMENT_ENCRYPTED', `The file is a ${d.type}; it cannot be read without its password`);
  if (!d.kind) throw new DocumentError('DOCUMENT_UNSUPPORTED', `Unsupported document type: ${d.type}`);
  return d.kind;
}

/** What a web response is, for the scrape pipeline: which path converts it. */
export type ContentKind = 'html' | 'xml' | 'text' | 'json' | 'pdf' | 'document' | 'image' | 'media' | 'binary';

const documentTypes = /(officedocument|msword|ms-excel|ms-powerpoint|opendocument|epub|rtf|text\/csv)/i;

/** Classifies a response by content first (magic bytes), then the declared type, then the URL's extension. */
export function detectContentKind(contentType: string, url: string, body: Buffer): ContentKind {
  if (hasPdfHeader(body)) return 'pdf';
  const type = contentType.split(';', 1)[0].trim().toLowerCase();
  const ext = /\.([a-z0-9]{1,5})(?:[?#]|$)/i.exec(new URL(url).pathname)?.[1]?.toLowerCase() ?? '';
  if (isZip(body)) return 'document'; // zip: office, epub
  if (type === 'application/pdf' || ext === 'pdf') return 'pdf';
  if (
    documentTypes.test(type) ||
    ['docx', 'doc', 'xlsx', 'xls', 'pptx', 'odt', 'ods', 'odp', 'epub', 'rtf', 'csv'].includes(ext)
  )
    return 'document';
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type.startsWith('image/')) return 'image';
  if (type.startsWith('video/') || type.startsWith('audio/')) return 'media';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (type.endsWith('/xml') || type.endsWith('+xml')) return 'xml';
  if (type.startsWith('text/')) return 'text';
  // No usable type: sniff the start of the body.
  const head = body.subarray(0, 512).toString('latin1').trimStart().toLowerCase();
  if (sniffHtml(head)) return 'html';
  if (head.startsWith('<?xml')) return 'xml';
  if (head.startsWith('{') || head.startsWith('[')) return 'json';
  return isProbablyText(body) ? 'text' : 'binary';
}

function isProbablyText(body: Buffer): boolean {
  const n = Math.min(body.length, 1024);
  for (let i = 0; i < n; i++) if (body[i] === 0) return false;
  return true;
}
