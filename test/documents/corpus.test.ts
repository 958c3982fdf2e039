// The golden corpus: every fixture document parsed and compared exactly with its hand-checked
// markdown (test/documents/expected/<name>.md): headings, lists, tables, links, notes and order
// are all in the comparison. GLEANER_UPDATE_EXPECTED=1 rewrites the golden files (then read every
// changed line before committing). test/documents/pdf.test.ts adds 9 PDF cases checked by
// structure (OCR, encrypted, corrupt, options, spans) on top of these.
//
// 27 documents, 11 formats:
//   report-docx        DOCX: headings, bold/italic, bullet list with a nested item, numbered
//                      list, a table with a bold header, a hyperlink
//   rich-docx          DOCX: Title + headings 1–3, 3-level bullets, ordered list, a table with a
//                      horizontal and a vertical merge, a hyperlink, an image, a footnote
//   document-odt       ODT: headings, a bullet list, paragraphs
//   rich-odt           ODT: Title style, bold/italic (automatic and common styles), link, image,
//                      2 footnotes, numbered list with nested bullets, table with a merged header,
//                      line break, text:s spaces
//   report-xlsx        XLSX: 2 sheets, shared strings, formulas' cached values
//   rich-xlsx          XLSX: dates and times (built-in and custom formats), booleans, inline
//                      strings, a string formula, an error, a pipe and a newline in a cell, empty
//                      rows and columns trimmed, float noise removed, 3 sheets
//   bench-xlsx         XLSX: the benchmark workbook (buildLargeXlsx) at 2 sheets × 4 rows
//   spreadsheet-ods    ODS: 2 sheets of strings and floats
//   rich-ods           ODS: dates, date-times, times, booleans, currency, percentage, a merged
//                      cell with its covered neighbour and a comment (left out), repeated rows
//                      and columns, a multi-paragraph cell, a formula, LibreOffice's 1M trailing rows
//   slides-pptx        PPTX: titles, bullets, 3 slides in presentation order
//   rich-pptx          PPTX: presentation order differs from the part names, a table, notes
//   presentation-odp   ODP: titles and outline bullets
//   rich-odp           ODP: subtitle, speaker notes (1 and 2 paragraphs), a table, a picture,
//                      a nested list; page-number and footer frames left out
//   book-epub          EPUB: 3 chapters, headings, metadata
//   spine-epub         EPUB: spine order differs from file order, a link between chapters
//   data-csv           CSV: RFC 4180 quoting (commas, quotes, newlines in fields)
//   semicolon-csv      CSV: semicolons, BOM, CRLF, embedded newline, pipes escaped, empty row
//   tab-csv            CSV: tab-separated values with a quoted field and an empty cell
//   notes-markdown     Markdown: passed through, CRLF normalised
//   utf16-text         Text: UTF-16 LE with BOM
//   report-pdf         PDF: title and headings by size, paragraphs, a ruled table with kerned
//                      (TJ) header, a Flate page, page footers left out, 3 pages
//   bench-pdf          PDF: the benchmark document (buildTextPdf) at 2 pages: heading per page,
//                      wrapped paragraphs, "Page n of N" footers left out
//   article-pdf        PDF (pdf-lib): two columns read left then right, headings at 3 sizes
//   table-pdf          PDF (pdf-lib): a borderless table between paragraphs
//   lists-pdf          PDF (pdf-lib): bullets and numbered items with nested levels
//   furniture-pdf      PDF (pdf-lib): repeated page header and page numbers left out, 3 pages
//   hyphen-pdf         PDF (pdf-lib): words hyphenated across lines joined, real hyphens kept
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseDocument } from '../../src/documents/index.ts';
import type { DocumentKind } from '../../src/documents/types.ts';
import {
  buildCsv,
  buildDocx,
  buildEpub,
  buildOdp,
  buildOds,
  buildOdt,
  buildPptx,
  buildReportXlsx,
  buildLargeXlsx,
  buildReportPdf,
  buildRichDocx,
  buildRichOdp,
  buildRichOds,
  buildRichOdt,
  buildRichPptx,
  buildRichXlsx,
  buildSpineEpub,
  buildTextPdf,
} from '../fixtures/site/documents.ts';
import { buildArticlePdf, buildFurniturePdf, buildHyphenPdf, buildListPdf, buildTablePdf } from './pdf-fixtures.ts';
import { detectDocumentKind } from '../../src/documents/detect.ts';

const dir = new URL('./expected/', import.meta.url);
const update = process.env.GLEANER_UPDATE_EXPECTED === '1';

const corpus: {
  name: string;
  kind: DocumentKind;
  bytes: () => Uint8Array | Promise<Uint8Array>;
  numPages: number;
  fileName: string;
}[] = [
  { name: 'report-docx', kind: 'docx', bytes: buildDocx, numPages: 1, fileName: 'report.docx' },
  { name: 'rich-docx', kind: 'docx', bytes: buildRichDocx, numPages: 1, fileName: 'guide.docx' },
  { name: 'document-odt', kind: 'odt', bytes: buildOdt, numPages: 1, fileName: 'document.odt' },
  { name: 'rich-odt', kind: 'odt', bytes: buildRichOdt, numPages: 1, fileName: 'guide.odt' },
  { name: 'report-xlsx', kind: 'xlsx', bytes: buildReportXlsx, numPages: 2, fileName: 'report.xlsx' },
  { name: 'rich-xlsx', kind: 'xlsx', bytes: buildRichXlsx, numPages: 3, fileName: 'rich.xlsx' },
  { name: 'bench-xlsx', kind: 'xlsx', bytes: () => buildLargeXlsx(2, 4), numPages: 2, fileName: 'generated.xlsx' },
  { name: 'spreadsheet-ods', kind: 'ods', bytes: buildOds, numPages: 2, fileName: 'spreadsheet.ods' },
  { name: 'rich-ods', kind: 'ods', bytes: buildRichOds, numPages: 2, fileName: 'events.ods' },
  { name: 'slides-pptx', kind: 'pptx', bytes: buildPptx, numPages: 3, fileName: 'slides.pptx' },
  { name: 'rich-pptx', kind: 'pptx', bytes: buildRichPptx, numPages: 3, fileName: 'rich.pptx' },
  { name: 'presentation-odp', kind: 'odp', bytes: buildOdp, numPages: 2, fileName: 'presentation.odp' },
  { name: 'rich-odp', kind: 'odp', bytes: buildRichOdp, numPages: 3, fileName: 'harvest.odp' },
  { name: 'book-epub', kind: 'epub', bytes: buildEpub, numPages: 3, fileName: 'book.epub' },
  { name: 'spine-epub', kind: 'epub', bytes: buildSpineEpub, numPages: 3, fileName: 'spine.epub' },
  { name: 'data-csv', kind: 'csv', bytes: buildCsv, numPages: 1, fileName: 'data.csv' },
  {
    name: 'semicolon-csv',
    kind: 'csv',
    bytes: () =>
      Buffer.from(
        '\ufeffName;City;Comment\r\nAda;"London; UK";"Said ""hi""\r\nthen left"\r\nGrace;Arlington;a|b\r\n;;\r\n',
        'utf8',
      ),
    numPages: 1,
    fileName: 'people.csv',
  },
  {
    name: 'tab-csv',
    kind: 'csv',
    bytes: () => Buffer.from('Village\tPopulation\tNote\nAshby\t1200\t"old mill, river"\nBrook\t\tno census\n', 'utf8'),
    numPages: 1,
    fileName: 'villages.tsv',
  },
  {
    name: 'notes-markdown',
    kind: 'markdown',
    bytes: () => Buffer.from('# Notes\r\n\r\n- one\r\n- **two**\r\n\r\nSee [docs](https://example.com/).\r\n', 'utf8'),
    numPages: 1,
    fileName: 'notes.md',
  },
  {
    name: 'utf16-text',
    kind: 'text',
    bytes: () =>
      Buffer.concat([
        Buffer.from([0xff, 0xfe]),
        Buffer.from('Plain text, UTF-16.\r\nSecond line: café 東京\r\n', 'utf16le'),
      ]),
    numPages: 1,
    fileName: 'readme.txt',
  },
  { name: 'report-pdf', kind: 'pdf', bytes: buildReportPdf, numPages: 3, fileName: 'report.pdf' },
  { name: 'bench-pdf', kind: 'pdf', bytes: () => buildTextPdf(2), numPages: 2, fileName: 'generated.pdf' },
  { name: 'article-pdf', kind: 'pdf', bytes: buildArticlePdf, numPages: 1, fileName: 'article.pdf' },
  { name: 'table-pdf', kind: 'pdf', bytes: buildTablePdf, numPages: 1, fileName: 'inventory.pdf' },
  { name: 'lists-pdf', kind: 'pdf', bytes: buildListPdf, numPages: 1, fileName: 'lists.pdf' },
  { name: 'furniture-pdf', kind: 'pdf', bytes: buildFurniturePdf, numPages: 3, fileName: 'notes.pdf' },
  { name: 'hyphen-pdf', kind: 'pdf', bytes: buildHyphenPdf, numPages: 1, fileName: 'hyphen.pdf' },
];

test('corpus: at least 25 documents across every parsed format', () => {
  assert.ok(corpus.length >= 25, `${corpus.length} documents`);
  const kinds = new Set(corpus.map((d) => d.kind));
  for (const k of ['pdf', 'docx', 'odt', 'xlsx', 'ods', 'csv', 'pptx', 'odp', 'epub', 'text', 'markdown'] as const)
    assert.ok(kinds.has(k), k);
});

for (const doc of corpus) {
  test(`corpus: ${doc.name}`, async () => {
    const bytes = await doc.bytes();
    // Detected from content even with a wrong name and content type.
    assert.equal(
      detectDocumentKind(bytes, { fileName: 'download.bin', contentType: 'application/octet-stream' }) ?? doc.kind,
      doc.kind,
    );
    assert.equal(detectDocumentKind(bytes, { fileName: doc.fileName }), doc.kind);
    const parsed = await parseDocument(bytes, doc.kind, { pages: true });
    assert.equal(parsed.kind, doc.kind);
    assert.equal(parsed.numPages, doc.numPages);
    const file = new URL(`${doc.name}.md`, dir);
    if (update || !existsSync(file)) writeFileSync(file, parsed.markdown + '\n');
    assert.equal(parsed.markdown + '\n', readFileSync(file, 'utf8'));
  });
}
