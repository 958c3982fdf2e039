// Legacy PowerPoint (.ppt): a real file LibreOffice wrote (test/fixtures/legacy/deck.ppt from deck.fodp), and a
// presentation laid out as PowerPoint itself writes one (placeholder text kept in the SlideListWithText, shapes
// pointing at it), built record by record here: both through detection and parseDocument, as PPTX renders them.
// Pictures: the LibreOffice file's PNG (LibreOffice's PPT filter writes no name or description for a picture, so the
// alt text is read from the built file's shapes, along with BLIPs in the store, in the Pictures stream, JPEG, EMF).
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

/** OfficeArtFOPT (or, by `type`, the tertiary one): numbers as simple properties, strings as complex (UTF-16, NUL). */
function fopt(props: [id: number, value: number | string][], type = 0xf00b): Buffer {
  const entries: Buffer[] = [];
  const complex: Buffer[] = [];
  for (const [id, value] of props) {
    const e = Buffer.alloc(6);
    if (typeof value === 'string') {
      const data = Buffer.from(`${value}\0`, 'utf16le');
      e.writeUInt16LE(id | 0x8000, 0);
      e.writeUInt32LE(data.length, 2);
      complex.push(data);
    } else {
      e.writeUInt16LE(id, 0);
      e.writeUInt32LE(value, 2);
    }
    entries.push(e);
  }
  return rec(type, Buffer.concat([...entries, ...complex]), props.length);
}
const PIB = 0x4104; // pib, a BLIP id (fBid)
const NAME = 0x0380;
const DESCRIPTION = 0x0381;
/** A BLIP record: one UID (two for an odd instance), a tag byte (bitmaps) or a 34-byte metafile header, the image. */
const blip = (type: number, instance: number, image: Buffer, metafile = false) =>
  rec(
    type,
    Buffer.concat([Buffer.alloc(instance & 1 ? 32 : 16, 7), Buffer.alloc(metafile ? 34 : 1, 0xff), image]),
    instance,
  );
/** An OfficeArtFBSE: the BLIP's type, its size and offset in the Pictures stream, a name, the BLIP itself if embedded. */
function fbse(btWin32: number, size: number, foDelay: number, name = '', embedded?: Buffer): Buffer {
  const nameData = name ? Buffer.from(`${name}\0`, 'utf16le') : Buffer.alloc(0);
  const head = Buffer.alloc(36);
  head[0] = head[1] = btWin32;
  head.writeUInt32LE(size, 20);
  head.writeUInt32LE(1, 24); // cRef
  head.writeUInt32LE(foDelay, 28);
  head[33] = nameData.length;
  return rec(0xf007, Buffer.concat([head, nameData, embedded ?? Buffer.alloc(0)]), btWin32);
}
/** The Document's PPDrawingGroup: an OfficeArtDggContainer holding the BLIP store. */
const drawingGroup = (...entries: Buffer[]) =>
  rec(0x040b, [rec(0xf000, [rec(0xf006, Buffer.alloc(16)), rec(0xf001, entries, entries.length)])]);
/** A 1×1 PNG, and bytes that open as a JPEG file does. */
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==',
  'base64',
);
const JPEG = Buffer.concat([
  Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  Buffer.from('JFIF picture bytes'),
  Buffer.from([0xff, 0xd9]),
]);

/** Extra parts for the presentation: a BLIP store in the Document, shapes after the first slide's, a Pictures stream. */
interface Extras {
  drawingGroup?: Buffer;
  shapes?: Buffer[];
  pictures?: Buffer;
}

/** Two slides (stored in reverse order: the list's order wins), notes for the first, one edit. */
function powerPointStyle(extras: Extras = {}): Buffer {
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
  const docAt = place(
    rec(0x03e8, [
      rec(0x03e9, Buffer.alloc(40)),
      slides,
      notesList,
      ...(extras.drawingGroup ? [extras.drawingGroup] : []),
    ]),
  );
  const lastSlideAt = place(rec(0x03ee, [slideAtom(0), drawing(shape(textbox(rec(0x0f9e, u32(0)))))]));
  const firstSlideAt = place(
    rec(0x03ee, [
      slideAtom(512),
      drawing(
        shape(textbox(rec(0x0f9e, u32(0)))),
        shape(textbox(rec(0x0f9e, u32(1)))),
        shape(textbox(textHeader(4), chars('Source: ledger, March'))),
        ...(extras.shapes ?? []),
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
  if (extras.pictures) CFB.utils.cfb_add(cfb, 'Pictures', extras.pictures);
  return Buffer.from(CFB.write(cfb, { type: 'buffer' }) as Uint8Array);
}

describe('.ppt presentations', () => {
  test('written by LibreOffice: slides in order, titles, text boxes, pictures, speaker notes, title and author', async () => {
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
    // The picture after the text box, by its place in the BLIP store (LibreOffice writes no name or description for
    // it: no alt text).
    assert.match(
      doc.markdown,
      /## Slide 3: Next steps\n\nHire two drivers before the summer peak\.\n\n!\[\]\(image1\.png\)$/,
    );
    assert.equal(doc.pages?.length, 3);
    assert.deepEqual(doc.metadata, { title: 'Depot Review', author: 'Ada Lovelace' });
    // Asked for pictures' bytes: the PNG of deck.fodp, as a data: URI.
    const png = /<office:binary-data>([^<]+)</.exec(
      readFileSync(new URL('../fixtures/legacy/deck.fodp', import.meta.url), 'utf8'),
    )![1];
    const embedded = await parseDocument(bytes, 'ppt', { embedImages: true });
    assert.ok(
      embedded.markdown.endsWith(
        `Hire two drivers before the summer peak.\n\n![](data:image/png;base64,${png.trim()})`,
      ),
      embedded.markdown,
    );
    assert.deepEqual(embedded.warnings, []);
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

  test('pictures: in shape order, alt text from the description or the name; PNG and JPEG embedded when asked, others by name', async () => {
    const emf = blip(0xf01a, 0x3d4, Buffer.from('EMF records'), true);
    const png = blip(0xf01e, 0x6e0, PNG);
    const bytes = powerPointStyle({
      drawingGroup: drawingGroup(
        fbse(6, png.length, 0), // in the Pictures stream
        fbse(5, 0, 0, 'photo.jpg', blip(0xf01d, 0x46b, JPEG)), // in the store, after the entry's name (two UIDs)
        fbse(2, emf.length, png.length),
        fbse(6, 200, 0x10000), // past the end of the Pictures stream: its type alone
      ),
      shapes: [
        shape(
          fopt([
            [PIB, 1],
            [NAME, 'Picture 3'],
            [DESCRIPTION, 'Depot map'],
          ]),
        ),
        shape(
          fopt([
            [PIB, 2],
            [NAME, 'Forklift photo'],
          ]),
        ),
        shape(fopt([[PIB, 3]]), fopt([[DESCRIPTION, 'Route diagram']], 0xf122)),
        shape(
          fopt([
            [PIB, 9],
            [NAME, 'Not in the store'],
          ]),
        ),
        shape(fopt([[PIB, 4]])),
      ],
      pictures: Buffer.concat([png, emf]),
    });
    const slide1 = (markdown: string) => markdown.split('## Slide 2')[0].split('Source: ledger, March\n\n')[1];
    const plain = await parseDocument(bytes, 'ppt');
    assert.equal(
      slide1(plain.markdown),
      '![Depot map](image1.png)\n\n![Forklift photo](image2.jpg)\n\n![Route diagram](image3.emf)\n\n![](image4.png)\n\n' +
        '> **Notes:**\n>\n> Mention the Zürich depot first.\n\n',
    );
    const embedded = await parseDocument(bytes, 'ppt', { embedImages: true });
    assert.equal(
      slide1(embedded.markdown),
      `![Depot map](data:image/png;base64,${PNG.toString('base64')})\n\n` +
        `![Forklift photo](data:image/jpeg;base64,${JPEG.toString('base64')})\n\n` +
        '![Route diagram](image3.emf)\n\n![](image4.png)\n\n> **Notes:**\n>\n> Mention the Zürich depot first.\n\n',
    );
  });

  test('a picture over the embedding bound keeps its name, with a warning; a broken store leaves pictures out', async () => {
    const big = Buffer.concat([PNG.subarray(0, 8), Buffer.alloc(5 * 1024 * 1024)]);
    const png = blip(0xf01e, 0x6e0, big);
    const bytes = powerPointStyle({
      drawingGroup: drawingGroup(fbse(6, png.length, 0)),
      shapes: [
        shape(
          fopt([
            [PIB, 1],
            [DESCRIPTION, 'Satellite view'],
          ]),
        ),
      ],
      pictures: png,
    });
    const doc = await parseDocument(bytes, 'ppt', { embedImages: true });
    assert.match(doc.markdown, /Source: ledger, March\n\n!\[Satellite view\]\(image1\.png\)\n\n/);
    assert.deepEqual(doc.warnings, ['Picture image1.png (5120 KB) left as its path: over the embedding bound']);
    // A store whose entry runs past its container: no entry, the picture is left out, the text is all there.
    const broken = powerPointStyle({
      drawingGroup: rec(0x040b, [rec(0xf000, [rec(0xf001, [fbse(6, 10, 0).subarray(0, 20)])])]),
      shapes: [
        shape(
          fopt([
            [PIB, 1],
            [DESCRIPTION, 'Satellite view'],
          ]),
        ),
      ],
    });
    const text = await parseDocument(broken, 'ppt', { embedImages: true });
    assert.doesNotMatch(text.markdown, /Satellite|!\[/);
    assert.match(text.markdown, /Source: ledger, March\n\n> \*\*Notes/);
  });

  test('a compound file without a presentation stream is DOCUMENT_CORRUPT', async () => {
    const cfb = CFB.utils.cfb_new();
    CFB.utils.cfb_add(cfb, 'Something Else', Buffer.from('x'));
    await assert.rejects(parseDocument(Buffer.from(CFB.write(cfb, { type: 'buffer' }) as Uint8Array), 'ppt'), {
      code: 'DOCUMENT_CORRUPT',
    });
  });
});
