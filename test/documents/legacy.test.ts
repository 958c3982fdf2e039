// Legacy word-processing formats: .doc (Word 97-2003) and .rtf, read from real files LibreOffice wrote
// (test/fixtures/legacy: report.fodt is the source, make.sh regenerates them), plus RTF as Word writes it by hand.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CFB } from '@e965/xlsx';
import WordExtractor from 'word-extractor';
import { detectDocument } from '../../src/documents/detect.ts';
import { hyperlinkTarget } from '../../src/documents/doc-body.ts';
import { parseDocument } from '../../src/documents/index.ts';
import { DocumentError } from '../../src/errors.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/legacy/${name}`, import.meta.url));

/** report.fodt's list (bulleted, one item nested), as the .doc and the .rtf both give it. */
const NEXT_STEPS =
  '- Hire two drivers for the coastal route.\n- Replace the forklift battery.\n   - Order from the usual supplier.';

describe('.doc (Word 97-2003)', () => {
  test('detected from its content; every paragraph in order, headings from the styles, links, tables, text boxes, footnotes', async () => {
    const bytes = fixture('report.doc');
    assert.deepEqual(detectDocument(bytes, { fileName: 'report.bin' }), {
      kind: 'doc',
      type: 'Word 97-2003 document (DOC)',
    });
    const { markdown, metadata } = await parseDocument(bytes, 'doc');
    assert.equal(metadata.title, 'Quarterly Field Report');
    assert.equal(metadata.author, 'Ada Lovelace');
    assert.equal(metadata.subject, 'Field operations');
    // Headings come from the paragraphs' styles (Heading 1, Heading 2), which word-extractor's text does not carry.
    assert.match(markdown, /^# Quarterly Field Report\n\nThe northern depot shipped 1,240 crates/);
    assert.match(markdown, /\n## Shipments by region\n\n\| Region \|/);
    // The list from the paragraphs' list properties and the list tables (bulleted levels), nested by level.
    assert.ok(markdown.includes(`\n## Next steps\n\n${NEXT_STEPS}\n\nSigned off by`), markdown);
    // HYPERLINK fields: a URL, and a bookmark in the document (\l "steps").
    assert.match(
      markdown,
      /\nSigned off by the \[depot manager\]\(https:\/\/example\.com\/depots\/north\) on 2 April \(see \[next steps\]\(#steps\)\)\.\n/,
    );
    assert.match(markdown, /Deliveries to Zürich and 東京 resumed after the strike\./);
    assert.match(
      markdown,
      /\| Region \| Crates \| On time \|\n\| --- \| --- \| --- \|\n\| North \| 1240 \| 96% \|\n\| South \| 860 \| 91% \|/,
    );
    assert.match(markdown, /Sidebar: crates are counted in pallets of twelve\./);
    assert.match(markdown, /## Notes\n\n1\. Counted at the loading dock, not at dispatch\./);
    // Comments are the reviewers', not the document's.
    assert.doesNotMatch(markdown, /Check the March figure/);
  });

  test('a table stream it cannot read falls back to the plain text: every word, tables, no outline', async () => {
    // The piece table's first character position moved off 0: word-extractor still reads the text, the outline
    // reader refuses the pieces.
    const bytes = withTableStream(fixture('report.doc'), (table, wd) => {
      const clx = wd.readUInt32LE(0x1a2);
      assert.equal(table[clx], 2); // a Pcdt, no Prc before it
      table.writeUInt32LE(1, clx + 5);
    });
    const { markdown } = await parseDocument(bytes, 'doc');
    assert.match(markdown, /^Quarterly Field Report\n\nThe northern depot shipped 1,240 crates/);
    assert.match(markdown, /\| North \| 1240 \| 96% \|/);
    assert.match(markdown, /\nNext steps\n/);
    assert.match(markdown, /Signed off by the depot manager on 2 April \(see next steps\)\./);
    assert.match(markdown, /## Notes\n\n1\. Counted at the loading dock/);
  });

  test('list levels: numbered when the level has a number format; a list table it cannot read leaves paragraphs', async () => {
    // The fixture's list (lsid 2) has bullet levels (nfc 23, text one bullet character); its first level made decimal
    // (nfc 0, its text the level's number placeholder), the outer items are numbered and the nested one stays a
    // bullet.
    const numbered = withTableStream(fixture('report.doc'), (table, wd) => {
      const [fcLst, lcbLst] = [wd.readUInt32LE(0x2e2), wd.readUInt32LE(0x2e6)];
      assert.equal(table.readInt16LE(fcLst), 2); // two LSTFs, each with nine LVLs
      let lvl = fcLst + lcbLst;
      for (let k = 0; k < 9; k++) lvl = nextLvl(table, lvl); // past the first list's levels
      assert.equal(table.readInt32LE(fcLst + 2 + 28), 2);
      const xst = lvl + 28 + table[lvl + 24] + table[lvl + 25];
      assert.deepEqual([table[lvl + 4], table.readUInt16LE(xst)], [23, 1]);
      table[lvl + 4] = 0;
      table.writeUInt16LE(0, xst + 2);
    });
    const ordered = (await parseDocument(numbered, 'doc')).markdown;
    assert.ok(
      ordered.includes(
        '\n\n1. Hire two drivers for the coastal route.\n1. Replace the forklift battery.\n   - Order from the usual supplier.\n\n',
      ),
      ordered,
    );
    // A list count past the list table: no lists, the items are paragraphs, the rest of the outline stays.
    const unreadable = withTableStream(fixture('report.doc'), (table, wd) => {
      table.writeInt16LE(0x7fff, wd.readUInt32LE(0x2e2));
    });
    const { markdown } = await parseDocument(unreadable, 'doc');
    assert.match(
      markdown,
      /\n## Next steps\n\nHire two drivers for the coastal route\.\n\nReplace the forklift battery\.\n\nOrder from the usual supplier\.\n\n/,
    );
  });

  test('a truncated or garbled table stream never fails where word-extractor reads the file', async () => {
    let seed = 1;
    const random = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32) * n;
    let read = 0;
    for (let k = 0; k < 80; k++) {
      const bytes = withTableStream(fixture('report.doc'), (table) => {
        if (k % 4 === 0) return table.subarray(0, Math.floor(random(table.length)));
        for (let j = 0; j <= k % 6; j++) table[Math.floor(random(table.length))] = Math.floor(random(256));
      });
      const plain = await new WordExtractor().extract(bytes).catch(() => null);
      if (!plain) continue;
      read++;
      const { markdown } = await parseDocument(bytes, 'doc');
      if (plain.getBody().includes('northern depot')) assert.match(markdown, /northern depot/);
    }
    assert.ok(read > 20, `word-extractor read ${read} of the variants`);
  });

  test('HYPERLINK field instructions: a URL, a bookmark, both, switches; other fields are not links', () => {
    assert.equal(hyperlinkTarget(' HYPERLINK "https://example.com/a b" \\o "A tip" '), 'https://example.com/a%20b');
    assert.equal(hyperlinkTarget('HYPERLINK  \\l "_Toc12"'), '#_Toc12');
    assert.equal(hyperlinkTarget('HYPERLINK "report.doc" \\l "sec(2)" \\h'), 'report.doc#sec%282%29');
    assert.equal(hyperlinkTarget('hyperlink http://example.com'), 'http://example.com');
    assert.equal(hyperlinkTarget('HYPERLINK "C:\\\\docs\\\\a.doc"'), 'C:\\docs\\a.doc');
    assert.equal(hyperlinkTarget(' PAGEREF _Toc12 \\h '), null);
    assert.equal(hyperlinkTarget('HYPERLINK'), null);
  });

  test('a file that is not a Word binary is DOCUMENT_CORRUPT', async () => {
    await assert.rejects(parseDocument(Buffer.from('not a word file at all'), 'doc'), (err: unknown) => {
      assert.ok(err instanceof DocumentError);
      assert.equal(err.code, 'DOCUMENT_CORRUPT');
      return true;
    });
  });
});

/** The .doc with its table stream (0Table or 1Table, as the FIB names it) changed or replaced by `edit`. */
function withTableStream(doc: Buffer, edit: (table: Buffer, wordDocument: Buffer) => Buffer | void): Buffer {
  const cfb = CFB.read(doc, { type: 'buffer' });
  const wd = Buffer.from(CFB.find(cfb, '/WordDocument')!.content as Uint8Array);
  const entry = CFB.find(cfb, wd.readUInt16LE(0x0a) & 0x0200 ? '/1Table' : '/0Table')!;
  const table = Buffer.from(entry.content as Uint8Array);
  const changed = edit(table, wd) ?? table;
  entry.content = changed;
  entry.size = changed.length;
  return CFB.write(cfb, { type: 'buffer' }) as Buffer;
}

/** Where the LVL at `o` ends: its 28-byte LVLF, grpprlPapx and grpprlChpx (sized in the LVLF), its counted text. */
function nextLvl(table: Buffer, o: number): number {
  const xst = o + 28 + table[o + 24] + table[o + 25];
  return xst + 2 + 2 * table.readUInt16LE(xst);
}

describe('.rtf', () => {
  test('LibreOffice RTF: headings, tables, nested lists, footnotes, text boxes, \\info metadata', async () => {
    const bytes = fixture('report.rtf');
    assert.equal(detectDocument(bytes).kind, 'rtf');
    const doc = await parseDocument(bytes, 'rtf');
    assert.equal(
      doc.markdown,
      [
        '# Quarterly Field Report',
        'The northern depot shipped 1,240 crates in March, a record for the season.[^1] Deliveries to Zürich and 東京 resumed after the strike.',
        '## Shipments by region',
        '| Region | Crates | On time |\n| --- | --- | --- |\n| North | 1240 | 96% |\n| South | 860 | 91% |',
        '## Next steps',
        NEXT_STEPS,
        'Signed off by the [depot manager](https://example.com/depots/north) on 2 April (see [next steps](#steps)).',
        'Sidebar: crates are counted in pallets of twelve.',
        'End of report.',
        '[^1]: Counted at the loading dock, not at dispatch.',
      ].join('\n\n'),
    );
    assert.deepEqual(doc.metadata, {
      title: 'Quarterly Field Report',
      subject: 'Field operations',
      author: 'Ada Lovelace',
    });
  });

  test('as Word writes it: a code page, \\u with fallbacks, numbered lists, symbols, hyperlink fields as links; comments and pictures left out', async () => {
    const rtf = Buffer.concat([
      Buffer.from(
        '{\\rtf1\\ansi\\ansicpg932\\deff0{\\fonttbl{\\f0 MS Mincho;}}{\\colortbl;\\red0\\green0\\blue0;}' +
          '{\\info{\\title Minutes}{\\author Taro}}\\uc1\\pard\\outlinelevel0 Minutes\\par\\pard ',
        'latin1',
      ),
      Buffer.from([0x93, 0x8c, 0x8b, 0x9e]), // 東京 in Shift-JIS
      Buffer.from(
        ' office \\u8212?\\u8212? caf\\u233?\\ldblquote ok\\rdblquote \\par' +
          '{\\listtext 1.\\tab}\\pard\\ls1\\ilvl0 First point\\par{\\listtext 2.\\tab}\\pard\\ls1\\ilvl0 Second point\\par\\pard ' +
          'See {\\field{\\*\\fldinst HYPERLINK "https://example.com"}{\\fldrslt the site}} now.' +
          '{\\*\\annotation a reviewer note}\\par{\\pict\\pngblip 89504e47}\\pard Last line\\line second half\\par}',
        'latin1',
      ),
    ]);
    const doc = await parseDocument(rtf, 'rtf');
    assert.equal(
      doc.markdown,
      '# Minutes\n\n東京 office —— café“ok”\n\n1. First point\n1. Second point\n\nSee [the site](https://example.com) now.\n\nLast line  \nsecond half',
    );
    assert.deepEqual(doc.metadata, { title: 'Minutes', author: 'Taro' });
  });

  test('deep nesting, a stray binary run and bad input answer, never hang or crash', async () => {
    const deep = Buffer.from('{\\rtf1 ' + '{'.repeat(20_000) + 'x' + '}'.repeat(20_000) + '}');
    await assert.rejects(parseDocument(deep, 'rtf'), { code: 'DOCUMENT_CORRUPT' });
    const bin = Buffer.concat([
      Buffer.from('{\\rtf1 before \\bin4 '),
      Buffer.from([0x7b, 0x7d, 0x5c, 0x00]),
      Buffer.from(' after\\par}'),
    ]);
    assert.equal((await parseDocument(bin, 'rtf')).markdown, 'before after');
    await assert.rejects(parseDocument(Buffer.from('plain text'), 'rtf'), { code: 'DOCUMENT_CORRUPT' });
  });
});
