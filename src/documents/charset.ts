// Bytes to text, for web responses and files alike: the byte order mark, then the Content-Type
// charset, then a <meta> prescan (HTML), then UTF-16 without BOM (recognised by its NUL pattern),
// then UTF-8 if the bytes are valid UTF-8, else (web) windows-1252 as browsers do. A web response's
// U+0000 is dropped, as an HTML parser drops it from content: it means nothing to a reader, and
// Postgres text and jsonb (where documents are stored) cannot hold it.

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
function prescanMeta(body: Uint8Array): string | undefined {
  const head = Buffer.from(body.buffer, body.byteOffset, Math.min(body.byteLength, 4096)).toString('latin1');
  const direct = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(head);
  return direct?.[1];
}

/** UTF-16 without a BOM: many NULs at odd (LE) or even (BE) positions of the first 4 KB, none at the others. */
function utf16ByNuls(b: Uint8Array): string | undefined {
  const n = Math.min(b.length, 4096) & ~1;
  if (n < 4) return undefined;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < n; i += 2) {
    if (b[i] === 0) even++;
    if (b[i + 1] === 0) odd++;
  }
  if (odd > n / 4 && even === 0) return 'utf-16le';
  if (even > n / 4 && odd === 0) return 'utf-16be';
  return undefined;
}

/** The encoding a byte order mark names, and the mark's length. */
export function bomOf(b: Uint8Array): { encoding: string; length: number } | undefined {
  if (b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return { encoding: 'utf-8', length: 3 };
  if (b[0] === 0xfe && b[1] === 0xff) return { encoding: 'utf-16be', length: 2 };
  if (b[0] === 0xff && b[1] === 0xfe) return { encoding: 'utf-16le', length: 2 };
  return undefined;
}

export interface DecodedText {
  text: string;
  encoding: string;
}

/**
 * Decodes `bytes`. `source` 'web' (a response): invalid UTF-8 without a declared charset is
 * windows-1252, and U+0000 is dropped. 'file' (a document's own bytes, its formats UTF-8 by spec):
 * invalid sequences become U+FFFD, and U+0000 is kept (detection reads it as binary content).
 */
export function decodeText(
  bytes: Uint8Array,
  contentType: string,
  isHtml: boolean,
  source: 'web' | 'file' = 'web',
): DecodedText {
  const bom = bomOf(bytes);
  const start = bom?.length ?? 0;
  let encoding = bom?.encoding;
  encoding ??= normaliseLabel(charsetOf(contentType)) ?? (isHtml ? normaliseLabel(prescanMeta(bytes)) : undefined);
  // A page that declares UTF-16 in a meta tag cannot be read as ASCII to find it: that's UTF-8.
  if (encoding?.startsWith('utf-16') && start === 0) encoding = 'utf-8';
  encoding ??= utf16ByNuls(bytes);
  const body = bytes.subarray(start);
  const finish = (text: string): string => (source === 'web' ? withoutNul(text) : text);
  if (!encoding) {
    if (source === 'file') return { text: new TextDecoder('utf-8').decode(body), encoding: 'utf-8' };
    try {
      return { text: finish(new TextDecoder('utf-8', { fatal: true }).decode(body)), encoding: 'utf-8' };
    } catch {
      encoding = 'windows-1252';
    }
  }
  return { text: finish(new TextDecoder(encoding).decode(body)), encoding };
}

function withoutNul(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '') : text;
}
