// Every non-PDF fixture document parsed and compared exactly with its hand-checked golden markdown
// (test/documents/expected/<name>.md). GLEANER_UPDATE_EXPECTED=1 rewrites the golden files (then
// read every changed line before committing).
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { detectDocumentKind, parseDocument } from '../../src/documents/index.ts';
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
  buildRichDocx,
  buildRichPptx,
  buildRichXlsx,
  buildSpineEpub,
} from '../fixtures/site/documents.ts';

const dir = new URL('./expected/', import.meta.url);
const update = process.env.GLEANER_UPDATE_EXPECTED === '1';

const corpus: { name: string; kind: DocumentKind; bytes: () => Uint8Array; numPages: number; fileName: string }[] = [
  { name: 'report-docx', kind: 'docx', bytes: buildDocx, numPages: 1, fileName: 'report.docx' },
  { name: 'rich-docx', kind: 'docx', bytes: buildRichDocx, numPages: 1, fileName: 'guide.docx' },
  { name: 'document-odt', kind: 'odt', bytes: buildOdt, numPages: 1, fileName: 'document.odt' },
  { name: 'report-xlsx', kind: 'xlsx', bytes: buildReportXlsx, numPages: 2, fileName: 'report.xlsx' },
  { name: 'rich-xlsx', kind: 'xlsx', bytes: buildRichXlsx, numPages: 3, fileName: 'rich.xlsx' },
  { name: 'spreadsheet-ods', kind: 'ods', bytes: buildOds, numPages: 2, fileName: 'spreadsheet.ods' },
  { name: 'slides-pptx', kind: 'pptx', bytes: buildPptx, numPages: 3, fileName: 'slides.pptx' },
  { name: 'rich-pptx', kind: 'pptx', bytes: buildRichPptx, numPages: 3, fileName: 'rich.pptx' },
  { name: 'presentation-odp', kind: 'odp', bytes: buildOdp, numPages: 2, fileName: 'presentation.odp' },
  { name: 'book-epub', kind: 'epub', bytes: buildEpub, numPages: 3, fileName: 'book.epub' },
  { name: 'spine-epub', kind: 'epub', bytes: buildSpineEpub, numPages: 3, fileName: 'spine.epub' },
  { name: 'data-csv', kind: 'csv', bytes: buildCsv, numPages: 1, fileName: 'data.csv' },
  {
    name: 'semicolon-csv',
    kind: 'csv',
    bytes: () => Buffer.from('\ufeffName;City;Comment\r\nAda;"London; UK";"Said ""hi""\r\nthen left"\r\nGrace;Arlington;a|b\r\n;;\r\n', 'utf8'),
    numPages: 1,
    fileName: 'people.csv',
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
    bytes: () => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Plain text, UTF-16.\r\nSecond line: café 東京\r\n', 'utf16le')]),
    numPages: 1,
    fileName: 'readme.txt',
  },
];

for (const doc of corpus) {
  test(`corpus: ${doc.name}`, async () => {
    const bytes = doc.bytes();
    // Detected from content even with a wrong name and content type.
    assert.equal(detectDocumentKind(bytes, { fileName: 'download.bin', contentType: 'application/octet-stream' }) ?? doc.kind, doc.kind);
    assert.equal(detectDocumentKind(bytes, { fileName: doc.fileName }), doc.kind);
    const parsed = await parseDocument(bytes, doc.kind, { pages: true });
    assert.equal(parsed.kind, doc.kind);
    assert.equal(parsed.numPages, doc.numPages);
    const file = new URL(`${doc.name}.md`, dir);
    if (update || !existsSync(file)) writeFileSync(file, parsed.markdown + '\n');
    assert.equal(parsed.markdown + '\n', readFileSync(file, 'utf8'));
  });
}
