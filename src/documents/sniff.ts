// What bytes are by their first bytes, in one place for every classifier (src/documents/detect.ts,
// the media formats): the PDF header, a zip container, an HTML start, a streaming manifest (#EXTM3U,
// an <MPD> root) or a media file (MP4/QuickTime `ftyp`, WebM/Matroska EBML header, MPEG-TS sync
// bytes, MP3 ID3 tag or MPEG audio frame sync, Ogg, FLAC, WAVE/AVI).

/** A PDF: `%PDF` first, or the `%PDF-` header within the first 1024 bytes (readers allow junk before it). */
export function hasPdfHeader(b: Uint8Array): boolean {
  if (b.length >= 4 && b[0] === 0x25 && b[1] === 0x50 && b[2] === 0x44 && b[3] === 0x46) return true;
  return b.length > 5 && Buffer.from(b.subarray(0, 1024)).toString('latin1').includes('%PDF-');
}

/** A zip container (a local file header, or the end record of an empty archive): OOXML, ODF, EPUB. */
export function isZip(b: Uint8Array): boolean {
  return (
    b.length >= 4 &&
    b[0] === 0x50 &&
    b[1] === 0x4b &&
    ((b[2] === 0x03 && b[3] === 0x04) || (b[2] === 0x05 && b[3] === 0x06))
  );
}

/**
 * HTML by the start of a text (trimmed, lower-cased): `document` when it begins as an HTML document
 * (doctype, <html>, or a typical first element) or has an <html> tag; `fragment` when only HTML
 * elements appear (markdown may carry these: document detection wants `document`).
 */
export function sniffHtml(head: string): 'document' | 'fragment' | undefined {
  if (
    /^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<!doctype html|^<html[\s>]|^<(head|body|meta|title|div|p|h1|table)[\s>]/.test(
      head,
    ) ||
    /<html[\s>]/.test(head)
  ) {
    return 'document';
  }
  if (head.startsWith('<html') || /<(head|body|title|div|p)[\s>]/.test(head)) return 'fragment';
  return undefined;
}

export type Sniffed = { kind: 'hls' | 'dash' } | { kind: 'file'; track: 'video' | 'audio' };

/** The bytes to read before deciding: two MPEG-TS packets, an MPD's XML prolog and comments. */
export const SNIFF_BYTES = 1024;

/**
 * A streaming manifest or a media file, and its track: for what a media URL answered, and for a
 * scrape URL served under a type that says nothing (application/octet-stream).
 */
export function sniffMedia(head: Buffer): Sniffed | undefined {
  const b = head.subarray(0, SNIFF_BYTES);
  const text = b
    .toString('latin1')
    .replace(/^\xEF\xBB\xBF/, '')
    .trimStart();
  if (text.startsWith('#EXTM3U')) return { kind: 'hls' };
  if (/^(<\?xml[^>]*>\s*)?(<!--[\s\S]*?-->\s*)*<([\w-]+:)?MPD[\s>]/.test(text)) return { kind: 'dash' };
  const at = (offset: number, ascii: string) =>
    b.length >= offset + ascii.length && b.toString('latin1', offset, offset + ascii.length) === ascii;
  if (at(4, 'ftyp'))
    return { kind: 'file', track: /^(M4[ABP] |F4[AB] )$/.test(b.toString('latin1', 8, 12)) ? 'audio' : 'video' };
  // A QuickTime file without ftyp starts with one of its top-level atoms.
  if (at(4, 'moov') || at(4, 'mdat') || at(4, 'wide')) return { kind: 'file', track: 'video' };
  if (b.length >= 4 && b.readUInt32BE(0) === 0x1a45dfa3) return { kind: 'file', track: 'video' }; // EBML: WebM, Matroska
  // MPEG-TS: 188-byte packets, each starting with the sync byte 0x47.
  if (b.length >= 189 && b[0] === 0x47 && b[188] === 0x47 && (b.length < 377 || b[376] === 0x47))
    return { kind: 'file', track: 'video' };
  if (at(0, 'ID3') || mpegAudioFrame(b)) return { kind: 'file', track: 'audio' };
  if (at(0, 'OggS')) return { kind: 'file', track: text.includes('\x80theora') ? 'video' : 'audio' };
  if (at(0, 'fLaC') || (at(0, 'RIFF') && at(8, 'WAVE'))) return { kind: 'file', track: 'audio' };
  if (at(0, 'RIFF') && at(8, 'AVI ')) return { kind: 'file', track: 'video' };
  return undefined;
}

// An MPEG audio layer III frame header (MP3): 11 sync bits, a version that is not reserved, layer
// III, and a bitrate and sample rate index that are not reserved.
function mpegAudioFrame(b: Buffer): boolean {
  if (b.length < 4 || b[0] !== 0xff || (b[1] & 0xe0) !== 0xe0) return false;
  return ((b[1] >> 3) & 3) !== 1 && ((b[1] >> 1) & 3) === 1 && b[2] >> 4 !== 0xf && ((b[2] >> 2) & 3) !== 3;
}
