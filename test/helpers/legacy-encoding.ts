// Text to the bytes of a legacy charset (Shift-JIS, GB18030, windows-1251 ...), without an encoder library:
// TextDecoder knows every WHATWG charset one way, so the table is built backwards by decoding every one- and
// two-byte sequence once. Enough for test fixtures (common characters; not GB18030's four-byte range).
const tables = new Map<string, Map<string, number[]>>();

function tableOf(encoding: string): Map<string, number[]> {
  let table = tables.get(encoding);
  if (table) return table;
  table = new Map();
  const decoder = new TextDecoder(encoding, { fatal: true });
  const add = (bytes: number[]) => {
    let char: string;
    try {
      char = decoder.decode(Uint8Array.from(bytes));
    } catch {
      return;
    }
    // The first (shortest) sequence for a character wins: single bytes before pairs.
    if ([...char].length === 1 && !table!.has(char)) table!.set(char, bytes);
  };
  for (let b = 0; b < 0x100; b++) add([b]);
  for (let lead = 0x81; lead < 0x100; lead++) for (let trail = 0x40; trail < 0x100; trail++) add([lead, trail]);
  tables.set(encoding, table);
  return table;
}

export function encodeLegacy(text: string, encoding: string): Buffer {
  const table = tableOf(encoding);
  const out: number[] = [];
  for (const char of text) {
    const bytes = table.get(char);
    if (!bytes) throw new Error(`${JSON.stringify(char)} has no ${encoding} bytes`);
    out.push(...bytes);
  }
  return Buffer.from(out);
}
