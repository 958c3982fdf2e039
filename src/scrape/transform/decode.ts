// Bytes to text: what kind of content a response is, and which character encoding its text uses
// (byte order mark, then the Content-Type charset, then a <meta> prescan, then UTF-8 if the bytes
// are valid UTF-8, else windows-1252 as browsers do). U+0000 is dropped from the text, as an HTML
// parser drops it from content: it means nothing to a reader, and Postgres text and jsonb (where
// documents are stored) cannot hold it.

export type ContentKind = 'html' | 'xml' | 'text' | 'json' | 'pdf' | 'document' | 'image' | 'media' | 'binary';

const documentTypes = /(officedocument|msword|ms-excel|ms-powerpoint|opendocument|epub|rtf|text\/csv)/i;

/** Classifies by content first (magic bytes), then the declared type, then the URL's extension. */
export function detectContentKind(contentType: string, url: string, body: Buffer): ContentKind {
  if (body.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  const type = contentType.split(';', 1)[0].trim().toLowerCase();
  const ext = /\.([a-z0-9]{1,5})(?:[?#]|$)/i.exec(new URL(url).pathname)?.[1]?.toLowerCase() ?? '';
  if (body[0] === 0x50 && body[1] === 0x4b && body[2] === 0x03 && body[3] === 0x04) return 'document'; // zip: office, epub
  if (type === 'application/pdf' || ext === 'pdf') return 'pdf';
  if (documentTypes.test(type) || ['docx', 'doc', 'xlsx', 'xls', 'pptx', 'odt', 'ods', 'odp', 'epub', 'rtf', 'csv'].includes(ext)) return 'document';
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type.startsWith('image/')) return 'image';
  if (type.startsWith('video/') || type.startsWith('audio/')) return 'media';
  if (type === 'application/json' || type.endsWith('+json')) return 'json';
  if (type.endsWith('/xml') || type.endsWith('+xml')) return 'xml';
  if (type.startsWith('text/')) return 'text';
  // No usable type: sniff the start of the body.
  const head = body.subarray(0, 512).toString('latin1').trimStart().toLowerCase();
  if (head.startsWith('<!doctype html') || head.startsWith('<html') || /<(head|body|title|div|p)[\s>]/.test(head)) return 'html';
  if (head.startsWith('<?xml')) return 'xml';
  if (head.startsWith('{') || head.startsWith('[')) return 'json';
  return isProbablyText(body) ? 'text' : 'binary';
}

function isProbablyText(body: Buffer): boolean {
  const n = Math.min(body.length, 1024);
  for (let i = 0; i < n; i++) if (body[i] === 0) return false;
  return true;
}

/** The encoding label TextDecoder will use, or undefined for an unknown label. */
function normaliseLabel(label: string | undefined): string | undefined {
  if (!label) return undefined;
  try {
    return new TextDecoder(label.trim().replace(/^["']|["']$/g, '')).encoding;
  } catch {
    return undefined;
  }
}

function charsetOf(contentType: string): string | undefined {
  return /charset\s*=\s*["']?([^;"'\s]+)/i.exec(contentType)?.[1];
}

// The HTML prescan, simplified: <meta charset> or <meta http-equiv content="...charset=">
// within the first 4 KB.
function prescanMeta(body: Buffer): string | undefined {
  const head = body.subarray(0, 4096).toString('latin1');
  const direct = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head);
  return direct?.[1];
}

export interface DecodedText {
  text: string;
  encoding: string;
}

export function decodeText(body: Buffer, contentType: string, isHtml: boolean): DecodedText {
  let start = 0;
  let encoding: string | undefined;
  if (body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) {
    encoding = 'utf-8';
    start = 3;
  } else if (body[0] === 0xfe && body[1] === 0xff) {
    encoding = 'utf-16be';
    start = 2;
  } else if (body[0] === 0xff && body[1] === 0xfe) {
    encoding = 'utf-16le';
    start = 2;
  }
  encoding ??= normaliseLabel(charsetOf(contentType)) ?? (isHtml ? normaliseLabel(prescanMeta(body)) : undefined);
  // A page that declares UTF-16 in a meta tag cannot be read as ASCII to find it: that's UTF-8.
  if (encoding?.startsWith('utf-16') && start === 0) encoding = 'utf-8';
  const bytes = body.subarray(start);
  if (!encoding) {
    try {
      return { text: withoutNul(new TextDecoder('utf-8', { fatal: true }).decode(bytes)), encoding: 'utf-8' };
    } catch {
      encoding = 'windows-1252';
    }
  }
  return { text: withoutNul(new TextDecoder(encoding).decode(bytes)), encoding };
}

function withoutNul(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '') : text;
}
