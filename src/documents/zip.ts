// A defensive ZIP reader for office and EPUB containers (zip-bomb safe, never trusts declared sizes).
//
// - Reads the central directory (ZIP64 end records and extra fields are understood; archives split
//   over several disks are refused). Corrupt or truncated structures → DOCUMENT_CORRUPT.
// - At most `maxEntries` entries (default 20,000) → DOCUMENT_TOO_LARGE.
// - Entries are inflated with fflate's streaming Inflate, fed small compressed slices (4 KiB, so one
//   push can produce at most ~4 MiB), while counting output bytes: past the archive's budget
//   (ParseOptions.maxUnpackedBytes, default 200 MB, shared by every entry read) the read stops with
//   DOCUMENT_TOO_LARGE. The CRC-32 is checked at the end (mismatch → DOCUMENT_CORRUPT).
// - Encrypted entries (general-purpose flag bit 0) → DOCUMENT_ENCRYPTED; Office files protected by a
//   password are not zips but OLE compound files (D0 CF 11 E0 …) holding an EncryptedPackage stream:
//   openZip() reports those as DOCUMENT_ENCRYPTED too.
import { Inflate } from 'fflate';
import { crc32 } from 'node:zlib';
import { bomOf, decodeText } from './charset.ts';
import { DocumentError } from '../errors.ts';

export const DEFAULT_MAX_UNPACKED_BYTES = 200 * 1024 * 1024;
export const DEFAULT_MAX_ENTRIES = 20_000;
const SLICE = 4096;
/** Yield to the event loop after this many output bytes (lets timers, aborts and other work run). */
const YIELD_EVERY = 4 * 1024 * 1024;

export interface ZipEntryInfo {
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  /** As declared: only informative, never trusted. */
  declaredSize: number;
  localOffset: number;
}

export interface ZipOptions {
  maxUnpackedBytes?: number;
  maxEntries?: number;
  signal?: AbortSignal;
}

const CFB_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1];

export function isCfb(b: Uint8Array): boolean {
  return b.length >= 8 && CFB_MAGIC.every((v, i) => b[i] === v);
}

/** True when `b` contains `name` as UTF-16LE (CFB directory entry names are stored so). */
export function cfbHasStream(b: Uint8Array, name: string): boolean {
  const needle = Buffer.from(name, 'utf16le');
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength).indexOf(needle) >= 0;
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted)
    throw new DocumentError('DOCUMENT_TIMEOUT', 'Document parsing was aborted', { cause: signal.reason });
}

const corrupt = (msg: string): DocumentError => new DocumentError('DOCUMENT_CORRUPT', `Corrupt archive: ${msg}`);

export class ZipArchive {
  readonly entries = new Map<string, ZipEntryInfo>();
  /** Decompressed bytes read so far, over every entry. */
  unpacked = 0;
  readonly maxUnpackedBytes: number;
  private readonly bytes: Uint8Array;
  private readonly view: DataView;
  private readonly signal: AbortSignal | undefined;

  constructor(bytes: Uint8Array, opts: ZipOptions = {}) {
    this.bytes = bytes;
    this.view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.maxUnpackedBytes = opts.maxUnpackedBytes ?? DEFAULT_MAX_UNPACKED_BYTES;
    this.signal = opts.signal;
    this.readDirectory(opts.maxEntries ?? DEFAULT_MAX_ENTRIES);
  }

  private u16(at: number): number {
    if (at + 2 > this.bytes.length) throw corrupt('truncated');
    return this.view.getUint16(at, true);
  }
  private u32(at: number): number {
    if (at + 4 > this.bytes.length) throw corrupt('truncated');
    return this.view.getUint32(at, true);
  }
  private u64(at: number): number {
    const lo = this.u32(at);
    const hi = this.u32(at + 4);
    if (hi > 0x1fffff) throw corrupt('64-bit value out of range');
    return hi * 0x100000000 + lo;
  }

  private readDirectory(maxEntries: number): void {
    const b = this.bytes;
    let end = -1;
    for (let i = b.length - 22; i >= Math.max(0, b.length - 22 - 0xffff); i--) {
      if (b[i] === 0x50 && b[i + 1] === 0x4b && b[i + 2] === 0x05 && b[i + 3] === 0x06) {
        end = i;
        break;
      }
    }
    if (end < 0) throw corrupt('end of central directory not found (truncated or not a zip file)');
    if (this.u16(end + 4) !== 0 || this.u16(end + 6) !== 0) {
      throw new DocumentError('DOCUMENT_UNSUPPORTED', 'Multi-disk (split) zip archives are not supported');
    }
    let count = this.u16(end + 10);
    let cdSize = this.u32(end + 12);
    let cdOffset = this.u32(end + 16);
    if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
      // ZIP64: locator 20 bytes before the end record points at the ZIP64 end record.
      const loc = end - 20;
      if (loc < 0 || this.u32(loc) !== 0x07064b50) throw corrupt('ZIP64 locator missing');
      const rec = this.u64(loc + 8);
      if (this.u32(rec) !== 0x06064b50) throw corrupt('ZIP64 end record missing');
      count = this.u64(rec + 32);
      cdSize = this.u64(rec + 40);
      cdOffset = this.u64(rec + 48);
    }
    if (count > maxEntries) {
      throw new DocumentError('DOCUMENT_TOO_LARGE', `Archive has ${count} entries (limit ${maxEntries})`);
    }
    if (cdOffset + cdSize > b.length) throw corrupt('central directory out of bounds (truncated)');
    const decoder = new TextDecoder('utf-8');
    let p = cdOffset;
    for (let i = 0; i < count; i++) {
      if (this.u32(p) !== 0x02014b50) throw corrupt(`bad central directory header #${i}`);
      const flags = this.u16(p + 8);
      const method = this.u16(p + 10);
      const crc = this.u32(p + 16);
      let compressedSize = this.u32(p + 20);
      let declaredSize = this.u32(p + 24);
      const nameLen = this.u16(p + 28);
      const extraLen = this.u16(p + 30);
      const commentLen = this.u16(p + 32);
      let localOffset = this.u32(p + 42);
      if (p + 46 + nameLen + extraLen > b.length) throw corrupt('truncated central directory');
      const name = decoder.decode(b.subarray(p + 46, p + 46 + nameLen));
      // ZIP64 extended information: only the fields whose 32-bit value is 0xFFFFFFFF, in order.
      if (declaredSize === 0xffffffff || compressedSize === 0xffffffff || localOffset === 0xffffffff) {
        let x = p + 46 + nameLen;
        const xEnd = x + extraLen;
        while (x + 4 <= xEnd) {
          const id = this.u16(x);
          const size = this.u16(x + 2);
          if (id === 0x0001) {
            let f = x + 4;
            if (declaredSize === 0xffffffff) {
              declaredSize = this.u64(f);
              f += 8;
            }
            if (compressedSize === 0xffffffff) {
              compressedSize = this.u64(f);
              f += 8;
            }
            if (localOffset === 0xffffffff) localOffset = this.u64(f);
            break;
          }
          x += 4 + size;
        }
      }
      this.entries.set(name, { name, method, flags, crc, compressedSize, declaredSize, localOffset });
      p += 46 + nameLen + extraLen + commentLen;
    }
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  /** Entry names in central-directory order. */
  names(): string[] {
    return [...this.entries.keys()];
  }

  private entry(name: string): ZipEntryInfo {
    const e = this.entries.get(name);
    if (!e) throw corrupt(`missing part ${name}`);
    if (e.flags & 1) throw new DocumentError('DOCUMENT_ENCRYPTED', `The archive entry ${name} is encrypted`);
    if (e.method !== 0 && e.method !== 8) {
      throw new DocumentError(
        'DOCUMENT_UNSUPPORTED',
        `Zip compression method ${e.method} (entry ${name}) is not supported`,
      );
    }
    return e;
  }

  private compressed(e: ZipEntryInfo): Uint8Array {
    const at = e.localOffset;
    if (this.u32(at) !== 0x04034b50) throw corrupt(`bad local header for ${e.name}`);
    const start = at + 30 + this.u16(at + 26) + this.u16(at + 28);
    const endAt = start + e.compressedSize;
    if (endAt > this.bytes.length) throw corrupt(`entry ${e.name} is truncated`);
    return this.bytes.subarray(start, endAt);
  }

  /** Output chunks of an entry, in order; counts against the budget and checks the CRC at the end. */
  private *chunks(name: string): Generator<Uint8Array> {
    const e = this.entry(name);
    const data = this.compressed(e);
    let crc = 0;
    const take = (chunk: Uint8Array): Uint8Array => {
      this.unpacked += chunk.length;
      if (this.unpacked > this.maxUnpackedBytes) {
        throw new DocumentError(
          'DOCUMENT_TOO_LARGE',
          `Decompressed content is over the limit of ${this.maxUnpackedBytes} bytes (at entry ${name})`,
        );
      }
      crc = crc32(chunk, crc);
      return chunk;
    };
    if (e.method === 0) {
      for (let i = 0; i < data.length; i += 1 << 20) yield take(data.subarray(i, Math.min(data.length, i + (1 << 20))));
    } else {
      let ended = false;
      let pending: Uint8Array[] = [];
      const inflate = new Inflate((chunk, final) => {
        if (chunk.length) pending.push(take(chunk));
        if (final) ended = true;
      });
      if (data.length === 0) throw corrupt(`entry ${name} is empty`);
      for (let i = 0; i < data.length && !ended; i += SLICE) {
        const last = i + SLICE >= data.length;
        try {
          inflate.push(data.subarray(i, Math.min(data.length, i + SLICE)), last);
        } catch (err) {
          if (err instanceof DocumentError) throw err;
          throw corrupt(`entry ${name} does not inflate (${(err as Error).message})`);
        }
        const out = pending;
        pending = [];
        yield* out;
      }
      if (!ended) throw corrupt(`entry ${name} is truncated`);
    }
    if (crc >>> 0 !== e.crc >>> 0) throw corrupt(`CRC mismatch in entry ${name}`);
  }

  /**
   * Decompresses an entry chunk by chunk, calling `onChunk` with each piece of output; stops with
   * DOCUMENT_TOO_LARGE past the budget. Yields to the event loop every few MB (aborts are seen).
   */
  async stream(name: string, onChunk: (chunk: Uint8Array) => void): Promise<void> {
    let since = 0;
    for (const c of this.chunks(name)) {
      onChunk(c);
      since += c.length;
      if (since >= YIELD_EVERY) {
        since = 0;
        await yieldNow(this.signal);
      }
    }
  }

  /** Whole entry, synchronously (small parts only: detection). */
  readBytesSync(name: string): Uint8Array {
    const parts: Uint8Array[] = [];
    for (const c of this.chunks(name)) parts.push(c.slice());
    return concatAll(parts);
  }

  async readBytes(name: string): Promise<Uint8Array> {
    const parts: Uint8Array[] = [];
    await this.stream(name, (c) => parts.push(c.slice()));
    return concatAll(parts);
  }

  async readText(name: string): Promise<string> {
    return decodeText(await this.readBytes(name), '', false, 'file').text;
  }

  /** Streams an entry as text (UTF-8, or UTF-16 with a BOM) to `onText`. */
  async streamText(name: string, onText: (s: string) => void): Promise<void> {
    let decoder: InstanceType<typeof TextDecoder> | null = null;
    let head: Uint8Array | null = new Uint8Array(0);
    await this.stream(name, (c) => {
      if (!decoder) {
        const h: Uint8Array = concat(head!, c);
        if (h.length < 2) return void (head = h);
        decoder = new TextDecoder(bomOf(h)?.encoding ?? 'utf-8');
        head = null;
        onText(decoder.decode(h, { stream: true }));
        return;
      }
      onText(decoder.decode(c, { stream: true }));
    });
    if (decoder) onText((decoder as InstanceType<typeof TextDecoder>).decode());
    else if (head && head.length) onText(new TextDecoder().decode(head));
  }
}

function concatAll(parts: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.length;
  const out = new Uint8Array(size);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (!a.length) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

async function yieldNow(signal: AbortSignal | undefined): Promise<void> {
  await new Promise((r) => setImmediate(r));
  throwIfAborted(signal);
}

/**
 * Opens a zip container; an OLE compound file with an EncryptedPackage stream (a password-protected
 * OOXML document) is reported as DOCUMENT_ENCRYPTED, any other non-zip as DOCUMENT_CORRUPT.
 */
export function openZip(bytes: Uint8Array, what: string, opts: ZipOptions = {}): ZipArchive {
  if (isCfb(bytes)) {
    if (cfbHasStream(bytes, 'EncryptedPackage')) {
      throw new DocumentError(
        'DOCUMENT_ENCRYPTED',
        `The ${what} file is password-protected (encrypted Office package)`,
      );
    }
    throw new DocumentError('DOCUMENT_UNSUPPORTED', `The file is a legacy OLE compound document, not a ${what} file`);
  }
  if (bytes.length < 4 || bytes[0] !== 0x50 || bytes[1] !== 0x4b) {
    throw new DocumentError('DOCUMENT_CORRUPT', `Not a valid ${what} file (not a zip container)`);
  }
  return new ZipArchive(bytes, opts);
}
