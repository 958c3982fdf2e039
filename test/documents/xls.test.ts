// Legacy Excel (.xls): BIFF8 and BIFF5 workbooks written by SheetJS (a real BIFF writer) in the test, read back
// through detection and parseDocument: sheets, strings in and out of ASCII, numbers, dates, booleans, formulas'
// cached values, errors, document properties; a password-protected workbook is DOCUMENT_ENCRYPTED.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CFB, utils, write, type WorkBook } from '@e965/xlsx';
import { detectDocument } from '../../src/documents/detect.ts';
import { parseDocument } from '../../src/documents/index.ts';
import { DocumentError } from '../../src/errors.ts';

function workbook(): WorkBook {
  const wb = utils.book_new();
  const sales = utils.aoa_to_sheet([
    ['Region', 'City', 'Units', 'Revenue', 'Shipped', 'Paid'],
    ['North', 'Zürich', 120, 2400.5, 45366, true],
    ['East', '東京', 85, 0.1 + 0.2, 45367.5, false],
  ]);
  // Dates are numbers with a date format, as Excel stores them.
  sales['E2'].z = 'yyyy-mm-dd';
  sales['E3'].z = 'yyyy-mm-dd hh:mm';
  sales['A4'] = { t: 's', v: 'Total' };
  sales['C4'] = { t: 'n', v: 205, f: 'SUM(C2:C3)' };
  sales['D4'] = { t: 'e', v: 0x07, w: '#DIV/0!' };
  sales['!ref'] = 'A1:F4';
  utils.book_append_sheet(wb, sales, 'Sales');
  utils.book_append_sheet(wb, utils.aoa_to_sheet([['Notes'], ['Figures are provisional.']]), 'Notes & more');
  wb.Props = { Title: 'Quarterly figures', Author: 'Ada Lovelace' };
  return wb;
}

const xls = (bookType: 'biff8' | 'biff5') => Buffer.from(write(workbook(), { type: 'buffer', bookType }));

describe('.xls workbooks', () => {
  test('BIFF8 (Excel 97-2003): every sheet a table, values as XLSX renders them, properties as metadata', async () => {
    const bytes = xls('biff8');
    assert.deepEqual(detectDocument(bytes), { kind: 'xls', type: 'Excel 97-2003 workbook (XLS)' });
    const doc = await parseDocument(bytes, 'xls', { pages: true });
    assert.equal(doc.numPages, 2);
    assert.match(doc.markdown, /^## Sales\n\n\| Region \| City \| Units \| Revenue \| Shipped \| Paid \|/);
    assert.match(doc.markdown, /\| North \| Zürich \| 120 \| 2400\.5 \| 2024-03-15 \| TRUE \|/);
    assert.match(doc.markdown, /\| East \| 東京 \| 85 \| 0\.3 \| 2024-03-16T12:00:00 \| FALSE \|/);
    assert.match(doc.markdown, /\| Total \| \| 205 \| #DIV\/0! \| \| \|/);
    assert.match(doc.markdown, /## Notes & more\n\n\| Notes \|\n\| --- \|\n\| Figures are provisional\. \|/);
    assert.equal(doc.pages?.length, 2);
    assert.equal(doc.metadata.title, 'Quarterly figures');
    assert.equal(doc.metadata.author, 'Ada Lovelace');
  });

  test('BIFF5 (Excel 5/95): the same table', async () => {
    const doc = await parseDocument(xls('biff5'), 'xls');
    // (SheetJS writes BIFF5 text as ASCII, so the city is whatever it wrote for "Zürich".)
    assert.match(doc.markdown, /\| North \| Z.rich \| 120 \| 2400\.5 \| 2024-03-15 \| TRUE \|/);
    assert.match(doc.markdown, /\| Total \| \| 205 \| #DIV\/0! \| \| \|/);
  });

  test('row limits hold as for XLSX, with a warning naming the sheet', async () => {
    const doc = await parseDocument(xls('biff8'), 'xls', { maxRows: 2 });
    assert.doesNotMatch(doc.markdown, /Total/);
    assert.deepEqual(doc.warnings, ['Sheet "Sales": 2 rows left out (limit 2 rows per sheet)']);
  });

  test('a password-protected workbook (FILEPASS) is DOCUMENT_ENCRYPTED; garbage in the stream DOCUMENT_CORRUPT', async () => {
    const cfb = CFB.read(xls('biff8'), { type: 'buffer' });
    const entry = CFB.find(cfb, 'Workbook')!;
    const stream = Buffer.from(entry.content as Uint8Array);
    const bofLength = stream.readUInt16LE(2);
    // FILEPASS (0x002F) right after the workbook's BOF: XOR obfuscation, a key and a verifier.
    const filePass = Buffer.from([0x2f, 0x00, 0x06, 0x00, 0x00, 0x00, 0x34, 0x12, 0x78, 0x56]);
    const locked = Buffer.concat([stream.subarray(0, 4 + bofLength), filePass, stream.subarray(4 + bofLength)]);
    CFB.utils.cfb_add(cfb, 'Workbook', locked);
    const bytes = Buffer.from(CFB.write(cfb, { type: 'buffer' }) as Uint8Array);
    await assert.rejects(parseDocument(bytes, 'xls'), (err: unknown) => {
      assert.ok(err instanceof DocumentError);
      assert.equal(err.code, 'DOCUMENT_ENCRYPTED');
      return true;
    });
    const broken = Buffer.from(xls('biff8'));
    const corrupt = CFB.read(broken, { type: 'buffer' });
    CFB.utils.cfb_add(corrupt, 'Workbook', Buffer.alloc(64, 0xff));
    await assert.rejects(parseDocument(Buffer.from(CFB.write(corrupt, { type: 'buffer' }) as Uint8Array), 'xls'), {
      code: 'DOCUMENT_CORRUPT',
    });
  });
});
