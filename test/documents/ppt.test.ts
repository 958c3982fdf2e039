// Legacy PowerPoint (.ppt): a real file LibreOffice wrote (test/fixtures/legacy/deck.ppt from deck.fodp), and a
// presentation laid out as PowerPoint itself writes one (placeholder text kept in the SlideListWithText, shapes
// pointing at it), built record by record here: both through detection and parseDocument, as PPTX renders them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { CFB } from '@e965/xlsx';
import { detectDocument } from '../../src/documents/detect.ts';
import { parseDocument } from '../../src/documents/index.ts';

/** A record: version/instance, type, then the body (a container's body is its children). */
function rec(type: number, body: Buffer | Buffer[], instance = 0): Buffer {
  const container = Array.isArray(body);
  const data = container ? Buffer.concat(body) : body;
  const head = Buffer.alloc(8);
  head.writeUInt16LE((instance << 4) | (container ? 0xf : 0), 0);
  head.writeUInt16LE(type, 2);
  head.writeUInt32LE(data.length, 4);
  return Buffer.concat([head, data]);
}
const u32 = (...values: number[]) => {
  const b = Buffer.alloc(values.length * 4);
  values.forEach((v, i) => b.writeUInt32LE(v, i * 4));
  return b;
};
const textHeader = (type: number) => rec(0x0f9f, u32(type));
const chars = (text: string) => rec(0x0fa0, Buffer.from(text, 'utf16le'));
const bytes8 = (text: string) => rec(0x0fa8, Buffer.from(text, 'latin1'));
const shape = (...kids: Buffer[]) => rec(0xf004, [rec(0xf00a, u32(0, 0)), ...kids]);
const textbox = (...kids: Buffer[]) => rec(0xf00d, kids);
const drawing = (...shapes: Buffer[]) => rec(0x040c, [rec(0xf002, [rec(0xf003, shapes)])]);
/** SlideAtom: geometry, placeholder types, master id, notes id, flags. */
const slideAtom = (notesId: number) =>
  rec(0x03ef, Buffer.concat([u32(0), Buffer.alloc(8), u32(0x80000000, notesId), Buffer.alloc(4)]));
/** SlidePersistAtom: persist id, flags, text count, slide id, reserved. */
const slidePersist = (persistId: number, slideId: number) => rec(0x03f3, u32(persistId, 0, 0, slideId, 0));

/**
 * StyleTextPropAtom paragraph runs: [chars covered, indent level, bullet]; each also carries a left margin and one tab
 * stop (fields a reader must step over), and the atom ends with one character run, as PowerPoint writes it.
 */
const styleRuns = (...runs: [count: number, level: number, bullet: boolean][]) =>
  rec(
    0x0fa1,
    Buffer.concat([
      ...runs.map(([count, level, bullet]) => {
        const b = Buffer.alloc(10 + 2 + 2 + 6);
        b.writeUInt32LE(count, 0);
        b.writeUInt16LE(level, 4);
        b.writeUInt32LE(0x01 | (1 << 8) | (1 << 20), 6);
        b.writeUInt16LE(bullet ? 0x0f : 0x0e, 10);
        b.writeUInt16LE(0x88, 12); // leftMargin
        b.writeUInt16LE(1, 14); // one tab stop: position, type
        b.writeUInt32LE(0x240, 16);
        return b;
      }),
      u32(
        runs.reduce((n, [count]) => n + count, 0),
        0,
      ),
    ]),
  );

/** Two slides (stored in reverse order: the list's order wins), notes for the first, one edit. */
function powerPointStyle(): Buffer {
  const slides = rec(
    0x0ff0,
    [
      slidePersist(3, 256),
      textHeader(0),
      chars('Quarterly results'),
      textHeader(1),
      bytes8('Revenue up 12%\rCosts flat\rTwo new depots\rAll figures unaudited'),
      styleRuns([15, 0, true], [11, 1, true], [15, 0, true], [22, 0, false]),
      slidePersist(2, 257),
      textHeader(6),
      chars('Thank you — questions?'),
    ],
    0,
  );
  const notesList = rec(0x0ff0, [slidePersist(4, 512), textHeader(2), chars('Mention the Zürich depot first.')], 2);
  const parts: Buffer[] = [];
  let offset = 0;
  const place = (b: Buffer) => {
    const at = offset;
    parts.push(b);
    offset += b.length;
    return at;
  };
  const docAt = place(rec(0x03e8, [rec(0x03e9, Buffer.alloc(40)), slides, notesList]));
  const lastSlideAt = place(rec(0x03ee, [slideAtom(0), drawing(shape(textbox(rec(0x0f9e, u32(0)))))]));
  const firstSlideAt = place(
    rec(0x03ee, [
      slideAtom(512),
      drawing(
        shape(textbox(rec(0x0f9e, u32(0)))),
        shape(textbox(rec(0x0f9e, u32(1)))),
        shape(textbox(textHeader(4), chars('Source: ledger, March'))),
      ),
    ]),
  );
  const notesAt = place(rec(0x03f0, [rec(0x03f1, u32(256, 0)), drawing(shape(textbox(rec(0x0f9e, u32(0)))))]));
  // Persist directory: ids 1..4 → the Document, the last slide, the first slide, the notes.
  const dirAt = place(rec(0x1772, Buffer.concat([u32((4 << 20) | 1), u32(docAt, lastSlideAt, firstSlideAt, notesAt)])));
  const editAt = place(rec(0x0ff5, u32(0, 0x03000000, 0, dirAt, 1, 4, 0)));
  const stream = Buffer.concat(parts);
  const currentUser = rec(0x0ff6, Buffer.concat([u32(0x14, 0xe391c05f, editAt), Buffer.alloc(8)]));
  const cfb = CFB.utils.cfb_new();
  CFB.utils.cfb_add(cfb, 'PowerPoint Document', stream);
  CFB.utils.cfb_add(cfb, 'Current User', currentUser);
  return Buffer.from(CFB.write(cfb, { type: 'buffer' }) as Uint8Array);
}

describe('.ppt presentations', () => {
  test('written by LibreOffice: slides in order, titles, text boxes, speaker notes, title and author', async () => {
    const bytes = readFileSync(new URL('../fixtures/legacy/deck.ppt', import.meta.url));
    assert.deepEqual(detectDocument(bytes, { fileName: 'deck.bin' }), {
      kind: 'ppt',
      type: 'PowerPoint 97-2003 presentation (PPT)',
    });
    const doc = await parseDocument(bytes, 'ppt', { pages: true });
    assert.equal(doc.numPages, 3);
    assert.match(
      doc.markdown,
      /^## Slide 1: Depot Review 2024\n\nNorthern and southern depots\n\n> \*\*Notes:\*\*\n>\n> Welcome everyone/,
    );
    assert.match(
      doc.markdown,
      /## Slide 2: Results\n\n- 1,240 crates shipped from the north\n- On-time rate rose to 96%\n- Deliveries to Zürich and 東京 resumed/,
    );
    assert.match(doc.markdown, /> Stress the on-time figure; it beat the target by four points\./);
    assert.match(doc.markdown, /## Slide 3: Next steps\n\nHire two drivers before the summer peak\.$/);
    assert.equal(doc.pages?.length, 3);
    assert.deepEqual(doc.metadata, { title: 'Depot Review', author: 'Ada Lovelace' });
  });

  test('as PowerPoint writes it: placeholder text from the slide list, in the list order, bodies as lists, notes', async () => {
    const bytes = powerPointStyle();
    assert.equal(detectDocument(bytes).kind, 'ppt');
    const doc = await parseDocument(bytes, 'ppt');
    assert.equal(
      doc.markdown,
      [
        '## Slide 1: Quarterly results',
        // The paragraph runs say which paragraphs are bulleted and how deep: a sub-item, and a closing remark.
        '- Revenue up 12%\n  - Costs flat\n- Two new depots',
        'All figures unaudited',
        'Source: ledger, March',
        '> **Notes:**\n>\n> Mention the Zürich depot first.',
        '## Slide 2: Thank you — questions?',
      ].join('\n\n'),
    );
  });

  test('a compound file without a presentation stream is DOCUMENT_CORRUPT', async () => {
    const cfb = CFB.utils.cfb_new();
    CFB.utils.cfb_add(cfb, 'Something Else', Buffer.from('x'));
    await assert.rejects(parseDocument(Buffer.from(CFB.write(cfb, { type: 'buffer' }) as Uint8Array), 'ppt'), {
      code: 'DOCUMENT_CORRUPT',
    });
  });
});
