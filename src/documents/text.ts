// Plain text and markdown: decoded (./charset.ts: UTF-8, BOM dropped; UTF-16 LE/BE by BOM; UTF-16
// without BOM recognised by its NUL pattern), newlines normalised to \n, otherwise passed through unchanged.
import { decodeText } from './charset.ts';
import type { DocumentKind, ParsedDocument } from './types.ts';

export function normaliseNewlines(s: string): string {
  return s.replace(/\r\n?/g, '\n');
}

export function parseText(
  bytes: Uint8Array,
  kind: Extract<DocumentKind, 'text' | 'markdown'> = 'text',
): ParsedDocument {
  const markdown = normaliseNewlines(decodeText(bytes, '', false, 'file').text)
    .replace(/^\uFEFF/, '')
    .replace(/\s+$/, '');
  return { kind, markdown, metadata: {}, numPages: 1, warnings: [] };
}
