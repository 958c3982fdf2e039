// Bytes to text, for web responses and files alike: the byte order mark, then the Content-Type
// charset, then a <meta> prescan (HTML), then UTF-16 without BOM (recognised by its NUL pattern),
// then UTF-8 if the bytes are valid UTF-8, else the charset the bytes themselves suggest
// (detectCharset: Shift-JIS, EUC-JP, GB18030, Big5, EUC-KR, windows-1251 ...), else windows-1252 as
// browsers do. A web response's U+0000 is dropped, as an HTML parser drops it from content: it means
// nothing to a reader, and Postgres text and jsonb (where documents are stored) cannot hold it.
import jschardet from 'jschardet';

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
    const text = isIso2022Jp(Buffer.from(body.buffer, body.byteOffset, body.byteLength))
      ? null
      : validUtf8(body, source === 'web');
    if (text !== null) return { text: finish(text), encoding: 'utf-8' };
    // UTF-8 with a stray bad byte (a file cut short, one pasted character) is still UTF-8.
    const lossy = new TextDecoder('utf-8').decode(body);
    if (mostlyUtf8(lossy)) return { text: finish(source === 'web' ? repairMojibake(lossy) : lossy), encoding: 'utf-8' };
    encoding = detectCharset(body) ?? (source === 'file' ? 'utf-8' : 'windows-1252');
  } else if (source === 'web' && SINGLE_BYTE_WESTERN.has(encoding) && hasMultibyte(body)) {
    // A Western single-byte label on bytes that are valid UTF-8 with multi-byte characters is a
    // server's default charset over a UTF-8 page (Apache's AddDefaultCharset ISO-8859-1): windows-1252
    // text is practically never valid UTF-8 once it has any byte above 0x7F.
    const text = validUtf8(body);
    if (text !== null) return { text: finish(text), encoding: 'utf-8' };
  }
  const text = new TextDecoder(encoding).decode(body);
  const repair = encoding === 'utf-8' && source === 'web' && hasUtf8C1(body);
  return { text: finish(repair ? repairMojibake(text) : text), encoding };
}

/** The bytes as UTF-8 (double-encoded runs repaired on the web), or null when they are not valid UTF-8. */
function validUtf8(body: Uint8Array, repair = true): string | null {
  try {
    const text = new TextDecoder('utf-8', { fatal: true }).decode(body);
    return repair && hasUtf8C1(body) ? repairMojibake(text) : text;
  } catch {
    return null;
  }
}

/** Bytes read to detect a charset: enough for the statistics, bounded for a large file. */
const DETECT_SAMPLE = 64 * 1024;
/** The detector's names that are not WHATWG labels TextDecoder knows. */
const DETECTED_AS: Record<string, string> = { cp932: 'shift_jis', cp949: 'euc-kr', 'x-iso-10646-ucs-2-be': 'utf-16be' };

/**
 * The charset bytes that are not UTF-8 are most likely in, or undefined when nothing fits: the candidates of a
 * statistical detector (Mozilla's, as jschardet), each decoded strictly (an encoding the bytes break is out), a
 * Japanese reading that yields kana ahead of the rest (Japanese in EUC-JP reads as valid GB18030 or EUC-KR too,
 * but Chinese and Korean text has no kana). Short text of ideographs alone (a list of names) stays ambiguous.
 */
export function detectCharset(bytes: Uint8Array): string | undefined {
  let sample = bytes.subarray(0, DETECT_SAMPLE);
  if (bytes.length > DETECT_SAMPLE) {
    // Cut at a line end: a multi-byte character split at the edge would make every strict decode fail.
    const nl = sample.lastIndexOf(0x0a);
    if (nl > 0) sample = sample.subarray(0, nl + 1);
  }
  const buf = Buffer.from(sample.buffer, sample.byteOffset, sample.byteLength);
  if (!hasHighByte(buf)) return isIso2022Jp(buf) ? 'iso-2022-jp' : undefined;
  let best: { encoding: string; score: number } | undefined;
  let western = 0;
  let candidates: { encoding: string | null; confidence: number }[];
  try {
    candidates = jschardet.detectAll(buf, { minimumThreshold: 0 });
  } catch {
    return undefined; // a detector's failure on odd bytes is no reason to fail the page
  }
  for (const c of candidates) {
    if (!c.encoding) continue; // binary content: no charset named
    const encoding = normaliseLabel(DETECTED_AS[c.encoding.toLowerCase()] ?? c.encoding);
    if (!encoding || encoding === 'utf-8' || encoding === 'replacement') continue;
    let text: string;
    try {
      text = new TextDecoder(encoding, { fatal: true }).decode(sample);
    } catch {
      continue;
    }
    const score = c.confidence + (JAPANESE.has(encoding) && KANA.test(text) ? 1 : 0);
    if (encoding === 'windows-1252') western = Math.max(western, score);
    if (!best || score > best.score) best = { encoding, score };
  }
  // Latin text in a few accented letters fits many single-byte charsets about as well: the commonest wins a near tie.
  if (best && !MULTI_BYTE.has(best.encoding) && western >= WESTERN_TIE * best.score) return 'windows-1252';
  return best?.encoding;
}

/** Decoded as UTF-8, the text's replacement characters are few beside the characters it did decode beyond ASCII. */
function mostlyUtf8(text: string): boolean {
  let bad = 0;
  let good = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0xfffd) bad++;
    else if (c >= 0x80) good++;
  }
  return good > 0 && good >= 8 * bad;
}

/** ISO-2022-JP is 7-bit (valid UTF-8 too): ESC $ B (or ESC $ @) switches to JIS X 0208. */
export function isIso2022Jp(b: Buffer): boolean {
  return b.includes(ISO_2022_JP_ESC) || b.includes(ISO_2022_JP_OLD_ESC);
}
const ISO_2022_JP_ESC = Buffer.from([0x1b, 0x24, 0x42]);
const ISO_2022_JP_OLD_ESC = Buffer.from([0x1b, 0x24, 0x40]);
const MULTI_BYTE = new Set([
  'shift_jis',
  'euc-jp',
  'iso-2022-jp',
  'gb18030',
  'gbk',
  'big5',
  'euc-kr',
  'utf-16le',
  'utf-16be',
]);
/** windows-1252 wins when it fits this nearly as well as the best single-byte charset. */
const WESTERN_TIE = 0.8;
const JAPANESE = new Set(['shift_jis', 'euc-jp', 'iso-2022-jp']);
const KANA = /[\u3041-\u30ff]/;

function hasHighByte(b: Buffer): boolean {
  for (let i = 0; i < b.length; i++) if (b[i] >= 0x80) return true;
  return false;
}

const SINGLE_BYTE_WESTERN = new Set(['windows-1252', 'iso-8859-15']);

/** Whether the UTF-8 bytes encode a C1 control (C2 80..C2 9F), the mark of double-encoded text: memchr-fast. */
function hasUtf8C1(b: Uint8Array): boolean {
  const buf = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  for (let i = buf.indexOf(0xc2); i >= 0 && i + 1 < buf.length; i = buf.indexOf(0xc2, i + 1)) {
    const n = buf[i + 1];
    if (n >= 0x80 && n <= 0x9f) return true;
  }
  return false;
}

function hasMultibyte(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) if (b[i] >= 0xc2) return true;
  return false;
}

/**
 * UTF-8 text that went through a Latin-1 decode before it was stored ("Logitech\u00e2\u0080\u0099s"
 * for "Logitech\u2019s"): a run of a lead character (U+00C2..U+00F4) and continuation characters
 * (U+0080..U+00BF) holding at least one C1 control (U+0080..U+009F), which no text means to show,
 * whose Latin-1 bytes are valid UTF-8. Runs without a C1 control are left as they are: "\u00c3\u00a4"
 * may be quoted on purpose (a page about mojibake).
 */
export function repairMojibake(text: string): string {
  if (!C1.test(text)) return text;
  return text.replace(DOUBLE_ENCODED, (run) => {
    if (!C1.test(run)) return run;
    const bytes = Uint8Array.from(run, (c) => c.charCodeAt(0));
    try {
      return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch {
      return run;
    }
  });
}
const C1 = /[\u0080-\u009f]/;
const DOUBLE_ENCODED =
  /[\u00c2-\u00df][\u0080-\u00bf]|[\u00e0-\u00ef][\u0080-\u00bf]{2}|[\u00f0-\u00f4][\u0080-\u00bf]{3}/g;

function withoutNul(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '') : text;
}

/** Windows code page numbers whose WHATWG label is not `windows-<n>`. */
const CODE_PAGES: Record<number, string> = {
  866: 'ibm866',
  874: 'windows-874',
  932: 'shift_jis',
  936: 'gbk',
  949: 'euc-kr',
  950: 'big5',
  1200: 'utf-16le',
  1201: 'utf-16be',
  10000: 'macintosh',
  20866: 'koi8-r',
  21866: 'koi8-u',
  54936: 'gb18030',
  65001: 'utf-8',
};

/**
 * A Windows code page number (an RTF's \ansicpg, an OLE property set's codepage) → the label TextDecoder reads, or
 * undefined for one it cannot (OEM pages such as 437).
 */
export function codePageLabel(cp: number): string | undefined {
  if (CODE_PAGES[cp]) return CODE_PAGES[cp];
  if (cp >= 1250 && cp <= 1258) return `windows-${cp}`;
  if (cp >= 28591 && cp <= 28606) return normaliseLabel(`iso-8859-${cp - 28590}`);
  return undefined;
}
