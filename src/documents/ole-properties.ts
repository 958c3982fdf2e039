// The document properties of a legacy Office file ([MS-OLEPS]): the "\x05SummaryInformation" stream of a compound
// file holds a property set whose title, subject, author and keywords are strings (8-bit in the set's code page,
// or UTF-16) and whose creation and save times are FILETIMEs. Malformed sets give what could be read.

import { codePageLabel } from './charset.ts';

const PROPERTIES: Record<number, string> = { 2: 'title', 3: 'subject', 4: 'author', 5: 'keywords' };
const TIMES: Record<number, string> = { 12: 'created', 13: 'modified' };
const VT_I2 = 0x02;
const VT_LPSTR = 0x1e;
const VT_LPWSTR = 0x1f;
const VT_FILETIME = 0x40;
const CODEPAGE = 1;
/** FILETIME counts 100 ns ticks from 1601-01-01; the Unix epoch is this many ms later. */
const FILETIME_EPOCH_MS = 11_644_473_600_000;

export function readSummaryInformation(stream: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  try {
    if (stream.length < 48 || stream.readUInt16LE(0) !== 0xfffe) return out;
    const set = stream.readUInt32LE(44);
    const count = stream.readUInt32LE(set + 4);
    const props: [number, number][] = [];
    for (let k = 0; k < Math.min(count, 256); k++)
      props.push([stream.readUInt32LE(set + 8 + k * 8), set + stream.readUInt32LE(set + 12 + k * 8)]);
    let decoder = new TextDecoder('windows-1252');
    const codepage = props.find(([id]) => id === CODEPAGE);
    if (codepage && stream.readUInt16LE(codepage[1]) === VT_I2) {
      const label = codePageLabel(stream.readUInt16LE(codepage[1] + 4));
      if (label) decoder = new TextDecoder(label);
    }
    for (const [id, at] of props) {
      const type = stream.readUInt16LE(at);
      const key = PROPERTIES[id];
      if (key && type === VT_LPSTR) {
        const n = stream.readUInt32LE(at + 4);
        const text = decoder
          .decode(stream.subarray(at + 8, at + 8 + n))
          .replace(/\0[\s\S]*$/, '')
          .trim();
        if (text) out[key] = text;
      } else if (key && type === VT_LPWSTR) {
        const n = stream.readUInt32LE(at + 4);
        const text = stream
          .subarray(at + 8, at + 8 + n * 2)
          .toString('utf16le')
          .replace(/\0[\s\S]*$/, '')
          .trim();
        if (text) out[key] = text;
      } else if (TIMES[id] && type === VT_FILETIME) {
        const ticks = stream.readUInt32LE(at + 8) * 2 ** 32 + stream.readUInt32LE(at + 4);
        const ms = ticks / 10_000 - FILETIME_EPOCH_MS;
        if (ticks && ms > 0 && ms < 4_102_444_800_000) out[TIMES[id]] = new Date(ms).toISOString();
      }
    }
  } catch {
    // a truncated set: what was read so far
  }
  return out;
}
