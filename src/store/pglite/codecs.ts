// PGlite's own parameter and bytea codecs are written for small values: bytea goes through one
// JS string per byte each way (a 200 KB page cost ~35 ms to write and ~20 ms to read) and every
// text parameter is measured and encoded by a JS loop over its characters. Instead bytes go in as
// binary parameters (PGlite sends an ArrayBuffer view in binary format), large text and JSON are
// encoded natively and sent the same way (binary jsonb is a version byte, 1, then the text), and
// bytea comes back as bytes decoded natively from its hex text. Values are unchanged: small
// strings still go as text.
const BYTEA = 17;
const TEXT = 25;
const VARCHAR = 1043;
const JSON_OID = 114;
const JSONB = 3802;
const LARGE = 4096;
const JSONB_VERSION = Buffer.from([1]);

/**
 * A large string parameter that reached the database thread already UTF-8 encoded
 * (src/store/pglite/client.ts): sent to Postgres as those bytes, or read back as the string.
 */
export class Utf8Text {
  readonly bytes: Uint8Array;
  constructor(bytes: Uint8Array) {
    this.bytes = bytes;
  }
  toString(): string {
    return Buffer.from(this.bytes.buffer, this.bytes.byteOffset, this.bytes.byteLength).toString('utf8');
  }
}

const textParam = (v: unknown): string => {
  if (v instanceof Utf8Text) return v.bytes as unknown as string;
  const s = v instanceof Date ? v.toISOString() : String(v);
  return (s.length > LARGE ? Buffer.from(s) : s) as string;
};
const jsonParam =
  (prefix?: Buffer) =>
  (v: unknown): string => {
    if (v instanceof Utf8Text) return (prefix ? Buffer.concat([prefix, v.bytes]) : v.bytes) as unknown as string;
    const s =
      typeof v === 'string' ? v : JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? x.toString() : x));
    if (s.length <= LARGE) return s;
    if (!prefix) return Buffer.from(s) as unknown as string;
    const out = Buffer.allocUnsafe(prefix.length + Buffer.byteLength(s));
    prefix.copy(out);
    out.write(s, prefix.length);
    return out as unknown as string;
  };
export const pgliteCodecs = {
  serializers: {
    // Text (e.g. '\\x0102') still goes as text, parsed by Postgres as node-postgres would send it.
    [BYTEA]: (v: unknown) =>
      (v instanceof Utf8Text
        ? v.toString()
        : v instanceof ArrayBuffer || ArrayBuffer.isView(v)
          ? v
          : String(v)) as string,
    [TEXT]: textParam,
    [VARCHAR]: textParam,
    [JSON_OID]: jsonParam(),
    [JSONB]: jsonParam(JSONB_VERSION),
  },
  parsers: { [BYTEA]: (hex: string) => Buffer.from(hex.slice(2), 'hex') },
};
