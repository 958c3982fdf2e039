// PDFs for the PDF parser tests, generated with pdf-lib (standard fonts, text at known
// positions) plus a few hand-made byte strings (encrypted, corrupt). Each builder also exports
// the text it draws so tests assert on structure (headings, cells, list items, order).
import { createCanvas } from '@napi-rs/canvas';
import { PDFDocument, type PDFFont, type PDFPage, StandardFonts } from 'pdf-lib';

const LETTER: [number, number] = [612, 792];

/** Fixed dates and producer so output is deterministic. */
async function newDoc(title: string): Promise<PDFDocument> {
  const doc = await PDFDocument.create();
  doc.setTitle(title);
  doc.setAuthor('Gleaner tests');
  doc.setProducer('pdf-lib');
  doc.setCreator('Gleaner test fixtures');
  doc.setCreationDate(new Date('2024-03-01T10:00:00Z'));
  doc.setModificationDate(new Date('2024-03-02T10:00:00Z'));
  return doc;
}

async function save(doc: PDFDocument): Promise<Uint8Array> {
  return doc.save({ useObjectStreams: false });
}

/** Draws lines top-down from baseline `y` (points from the top of the page). */
function drawLines(
  page: PDFPage,
  font: PDFFont,
  size: number,
  x: number,
  yTop: number,
  lines: string[],
  leading = size * 1.3,
): number {
  let y = yTop;
  for (const l of lines) {
    page.drawText(l, { x, y: page.getHeight() - y, size, font });
    y += leading;
  }
  return y;
}

// (a) Two-column article ---------------------------------------------------------------------

type Part = { h2: string } | { h3: string } | { p: string[] };

export const article: { title: string; left: Part[]; right: Part[] } = {
  title: 'Harvesting Signals from Noisy Archives',
  left: [
    { h2: 'Introduction' },
    {
      p: [
        'Archives of public records grow every year and',
        'few teams can read them by hand. This study',
        'looks at automatic extraction at scale.',
      ],
    },
    { h3: 'Background' },
    {
      p: [
        'Earlier systems relied on templates written for',
        'each source, which broke whenever a layout',
        'changed in even a small way.',
      ],
    },
  ],
  right: [
    { h2: 'Methods' },
    {
      p: [
        'We sampled four thousand documents from ten',
        'collections and measured how often the',
        'reading order matched a careful human reading',
        'of the same pages.',
      ],
    },
    { h3: 'Results' },
    { p: ['Column detection fixed most ordering errors', 'in the two column sample.'] },
  ],
};

export async function buildArticlePdf(): Promise<Uint8Array> {
  const doc = await newDoc(article.title);
  const page = doc.addPage(LETTER);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const tw = bold.widthOfTextAtSize(article.title, 22);
  page.drawText(article.title, { x: (612 - tw) / 2, y: 792 - 80, size: 22, font: bold });
  const column = (x: number, parts: Part[]): void => {
    let y = 130;
    for (const part of parts) {
      if ('h2' in part) {
        drawLines(page, bold, 15, x, y, [part.h2]);
        y += 24;
      } else if ('h3' in part) {
        drawLines(page, bold, 12.5, x, y, [part.h3]);
        y += 20;
      } else {
        for (const l of part.p) if (regular.widthOfTextAtSize(l, 10) > 235) throw new Error(`line too wide: ${l}`);
        y = drawLines(page, regular, 10, x, y, part.p) + 12;
      }
    }
  };
  column(56, article.left);
  column(320, article.right);
  return save(doc);
}

// (b) Table -----------------------------------------------------------------------------------

export const table = {
  heading: 'Inventory by Warehouse',
  rows: [
    ['Warehouse', 'Items', 'Value'],
    ['Rotterdam', '1,250', '$48,200'],
    ['Lyon', '980', '$31,900'],
    ['Krakow', '2,040', '$77,450'],
    ['Porto', '615', '$19,300'],
  ],
  after: 'Values are at cost and exclude pending shipments.',
};

export async function buildTablePdf(): Promise<Uint8Array> {
  const doc = await newDoc('Table');
  const page = doc.addPage(LETTER);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  drawLines(page, bold, 16, 72, 90, [table.heading]);
  drawLines(page, regular, 11, 72, 120, ['The table below lists stock held at each site.']);
  const cols = [72, 230, 360];
  table.rows.forEach((row, r) => {
    row.forEach((cell, c) => {
      const font = r === 0 ? bold : regular;
      // Numbers right-aligned at the column's right edge (x + 80), text left-aligned.
      const x = c === 0 ? cols[c] : cols[c] + 80 - font.widthOfTextAtSize(cell, 11);
      page.drawText(cell, { x, y: 792 - (160 + r * 20), size: 11, font });
    });
  });
  drawLines(page, regular, 11, 72, 280, [table.after]);
  return save(doc);
}

// (c) Lists -----------------------------------------------------------------------------------

export const lists = {
  intro: 'Before the release, check the following:',
  bullets: [
    { text: 'The build passes on every platform', level: 0 },
    { text: 'Linux with glibc', level: 1 },
    { text: 'macOS on arm64', level: 1 },
    { text: 'The changelog names every breaking change', level: 0 },
  ],
  between: 'Then follow the upgrade steps in order:',
  numbered: [
    { marker: '1.', text: 'Stop the running service', level: 0 },
    { marker: '2.', text: 'Replace the binary', level: 0 },
    { marker: 'a)', text: 'keep the old one as a backup', level: 1 },
    { marker: 'b)', text: 'check its checksum', level: 1 },
    { marker: '3.', text: 'Start the service again', level: 0 },
  ],
};

export async function buildListPdf(): Promise<Uint8Array> {
  const doc = await newDoc('Lists');
  const page = doc.addPage(LETTER);
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const size = 11;
  let y = 100;
  const put = (s: string, x: number): void => page.drawText(s, { x, y: 792 - y, size, font: regular });
  put(lists.intro, 72);
  y += 15;
  for (const b of lists.bullets) {
    const x = 80 + b.level * 18;
    put(b.level === 0 ? '\u2022' : '-', x);
    put(b.text, x + 12);
    y += 15;
  }
  y += 12;
  put(lists.between, 72);
  y += 15;
  for (const n of lists.numbered) {
    const x = 80 + n.level * 20;
    put(n.marker, x);
    put(n.text, x + 16);
    y += 15;
  }
  return save(doc);
}

// (d) Repeated header and footer; (e) hyphenation ------------------------------------------

export const furniture = {
  header: 'Gleaner Field Notes',
  pages: [
    ['Notes from the first week of the survey.', 'Weather was mild and the teams worked long days.'],
    ['Notes from the second week of the survey.', 'Two sites were closed because of flooding.'],
    ['Notes from the third week of the survey.', 'All samples reached the lab in good condition.'],
  ],
};

export async function buildFurniturePdf(): Promise<Uint8Array> {
  const doc = await newDoc('Field Notes');
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const n = furniture.pages.length;
  furniture.pages.forEach((lines, i) => {
    const page = doc.addPage(LETTER);
    drawLines(page, regular, 9, 72, 40, [furniture.header]);
    drawLines(page, regular, 11, 72, 120, lines);
    const f = `Page ${i + 1} of ${n}`;
    page.drawText(f, { x: 306 - regular.widthOfTextAtSize(f, 9) / 2, y: 36, size: 9, font: regular });
  });
  return save(doc);
}

export const hyphen = {
  lines: [
    'The parser keeps the opera-',
    'tions of every stage in one place, and the',
    'results of the Euro-',
    'Asian study are kept apart.',
  ],
  expected:
    'The parser keeps the operations of every stage in one place, and the results of the Euro-Asian study are kept apart.',
};

export async function buildHyphenPdf(): Promise<Uint8Array> {
  const doc = await newDoc('Hyphen');
  const page = doc.addPage(LETTER);
  const times = await doc.embedFont(StandardFonts.TimesRoman);
  drawLines(page, times, 12, 72, 100, hyphen.lines);
  return save(doc);
}

// (f) Scanned page: text rendered to a PNG, embedded as an image ------------------------------

export const scanned = {
  lines: ['Invoice number 4471', 'Total amount due', 'Payment within thirty days'],
};

export async function buildScannedPdf(): Promise<Uint8Array> {
  const w = 1700;
  const h = 2200; // letter at 200 DPI
  const canvas = createCanvas(w, h);
  const ctx = canvas.getContext('2d');
  ctx.fillStyle = '#ffffff';
  ctx.fillRect(0, 0, w, h);
  ctx.fillStyle = '#000000';
  ctx.font = '64px sans-serif';
  scanned.lines.forEach((l, i) => ctx.fillText(l, 200, 300 + i * 120));
  const png = canvas.toBuffer('image/png');
  const doc = await newDoc('Scanned');
  const page = doc.addPage(LETTER);
  const img = await doc.embedPng(png);
  page.drawImage(img, { x: 0, y: 0, width: 612, height: 792 });
  return save(doc);
}

/** A text page followed by a scanned page. */
export async function buildMixedPdf(): Promise<Uint8Array> {
  const doc = await PDFDocument.load(await buildScannedPdf());
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.insertPage(0, LETTER);
  drawLines(page, regular, 11, 72, 100, ['This first page has a text layer.']);
  return save(doc);
}

// (g) Encrypted; (h) corrupt -----------------------------------------------------------------

/**
 * A minimal PDF with a Standard security handler (RC4 40-bit, R2) whose /U entry does not match
 * the empty user password: readers must ask for a password.
 */
export function buildEncryptedPdf(): Uint8Array {
  const hex32 = (seed: number): string => {
    let s = '';
    for (let i = 0; i < 32; i++) s += ((seed * (i + 7) * 31 + i * 17) & 0xff).toString(16).padStart(2, '0');
    return s;
  };
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>',
    '<< /Length 8 >>\nstream\n\x01\x02\x03\x04\x05\x06\x07\x08\nendstream',
    `<< /Filter /Standard /V 1 /R 2 /Length 40 /O <${hex32(3)}> /U <${hex32(5)}> /P -44 >>`,
  ];
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  objects.forEach((o, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${o}\nendobj\n`;
  });
  const xrefAt = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const off of offsets) out += `${String(off).padStart(10, '0')} 00000 n \n`;
  const id = '0123456789abcdef0123456789abcdef';
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R /Encrypt 5 0 R /ID [<${id}> <${id}>] >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** Deterministic pseudo-random bytes behind a PDF header (and an %%EOF, so pdf.js sees them). */
export function buildGarbagePdf(withEof: boolean): Uint8Array {
  const bytes = new Uint8Array(4096);
  let x = 12345;
  for (let i = 0; i < bytes.length; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    bytes[i] = x >> 16;
  }
  const head = Buffer.from('%PDF-1.7\n', 'latin1');
  const tail = Buffer.from(withEof ? '\n%%EOF\n' : '', 'latin1');
  return Buffer.concat([head, bytes, tail]);
}

// 100-page text document (benchmark) ---------------------------------------------------------

export async function buildLongTextPdf(pages: number): Promise<Uint8Array> {
  const doc = await newDoc('Long');
  const regular = await doc.embedFont(StandardFonts.Helvetica);
  const bold = await doc.embedFont(StandardFonts.HelveticaBold);
  const words = 'the quick brown fox jumps over a lazy dog while seven wizards quietly box jugs of liquid'.split(' ');
  for (let p = 0; p < pages; p++) {
    const page = doc.addPage(LETTER);
    drawLines(page, bold, 16, 72, 72, [`Chapter ${p + 1}`]);
    let y = 100;
    for (let l = 0; l < 48; l++) {
      const line: string[] = [];
      for (let k = 0; k < 13; k++) line.push(words[(p * 7 + l * 13 + k) % words.length]);
      drawLines(page, regular, 10, 72, y, [line.join(' ')]);
      y += l % 8 === 7 ? 26 : 13;
    }
  }
  return save(doc);
}
