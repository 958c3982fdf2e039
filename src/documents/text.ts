// Plain text and markdown: decoded (UTF-8, BOM dropped; UTF-16 LE/BE by BOM; UTF-16 without BOM
// recognised by its NUL pattern), newlines normalised to \n, otherwise passed through unchanged.
import type { DocumentKind, ParsedDocument } from './types.ts';
import { decodeText } from './zip.ts';

/** Decodes text bytes: BOMs first, then UTF-16 without BOM (many NULs at odd/even positions), else UTF-8. */
export function decodeTextBytes(b: Uint8Array): string {
  if ((b[0] === 0xff && b[1] === 0xfe) || (b[0] === 0xfe && b[1] === 0xff)) return decodeText(b);
  const n = Math.min(b.length, 4096) & ~1;
  if (n >= 4) {
    let even = 0;
    let odd = 0;
    for (let i = 0; i < n; i += 2) {
      if (b[i] === 0) even++;
      if (b[i + 1] === 0) odd++;
    }
    if (odd > n / 4 && even === 0) return new TextDecoder('utf-16le').decode(b);
    if (even > n / 4 && odd === 0) return new TextDecoder('utf-16be').decode(b);
  }
  return decodeText(b);
}

export function normaliseNewlines(s: string): string {
  return s.replace(/\r\n?/g, '\n');
}

export function parseText(bytes: Uint8Array, kind: Extract<DocumentKind, 'text' | 'markdown'> = 'text'): ParsedDocument {
  const markdown = normaliseNewlines(decodeTextBytes(bytes)).replace(/^\uFEFF/, '').replace(/\s+$/, '');
  return { kind, markdown, metadata: {}, numPages: 1, warnings: [] };
}
