// Legacy Excel workbooks (.xls: BIFF8 of Excel 97–2003, BIFF5 of Excel 5/95, BIFF2–4) → one `## <sheet name>`
// section per sheet, each one GFM table, as XLSX (sheets.ts): the same values (numbers to 15 significant digits,
// TRUE/FALSE, errors as shown, formulas as their cached value, dates as ISO 8601), the same row and cell limits.
//
// Read by SheetJS (the @e965/xlsx republish of its 0.20 line, which has the fixes the npm `xlsx` 0.18 lacks), with
// its code pages for BIFF5 and older text; SheetJS holds the whole workbook in memory, which the upload limit
// (50 MiB) bounds. A workbook with a password (FILEPASS) is DOCUMENT_ENCRYPTED.
import * as cptable from '@e965/xlsx/dist/cpexcel.full.mjs';
import { type CellObject, read, set_cptable, SSF, utils, type WorkBook } from '@e965/xlsx';
import { dateKind, formatNumber, serialToIso } from './sheets.ts';
import { gridToMarkdown, RowLimiter, type SparseRow } from './table.ts';
import type { ParsedDocument, ParseOptions } from './types.ts';
import { throwIfAborted } from './zip.ts';
import { DocumentError } from '../errors.ts';

set_cptable(cptable);

export function parseXls(bytes: Uint8Array, opts: ParseOptions = {}): ParsedDocument {
  let wb: WorkBook;
  try {
    wb = read(bytes, {
      type: 'buffer',
      dense: true,
      cellNF: true,
      cellDates: false,
      cellFormula: false,
      bookVBA: false,
    });
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/password|encrypt/i.test(message))
      throw new DocumentError(
        'DOCUMENT_ENCRYPTED',
        'The workbook is password-protected; it cannot be read without its password',
      );
    throw new DocumentError('DOCUMENT_CORRUPT', `The .xls workbook could not be read: ${message}`);
  }
  // A stream SheetJS cannot make sense of reads as a workbook without sheets.
  if (!wb.SheetNames.length)
    throw new DocumentError('DOCUMENT_CORRUPT', 'The .xls workbook has no sheet that could be read');
  const date1904 = !!wb.Workbook?.WBProps?.date1904;
  const limiter = new RowLimiter(opts.maxRows, opts.maxCells);
  const sections: string[] = [];
  for (const name of wb.SheetNames) {
    throwIfAborted(opts.signal);
    const rows = sheetRows(wb.Sheets[name], name, date1904, limiter);
    const table = gridToMarkdown(rows);
    sections.push(`## ${name.replace(/\s+/g, ' ').trim() || 'Sheet'}` + (table ? `\n\n${table}` : ''));
  }
  const p = wb.Props ?? {};
  const metadata: ParsedDocument['metadata'] = {};
  if (p.Title) metadata.title = p.Title;
  if (p.Author) metadata.author = p.Author;
  if (p.Subject) metadata.subject = p.Subject;
  if (p.Keywords) metadata.keywords = p.Keywords;
  if (p.CreatedDate instanceof Date && !Number.isNaN(p.CreatedDate.getTime()))
    metadata.created = p.CreatedDate.toISOString();
  if (p.ModifiedDate instanceof Date && !Number.isNaN(p.ModifiedDate.getTime()))
    metadata.modified = p.ModifiedDate.toISOString();
  const doc: ParsedDocument = {
    kind: 'xls',
    markdown: sections.join('\n\n'),
    metadata,
    numPages: wb.SheetNames.length,
    warnings: limiter.warnings,
  };
  if (opts.pages) doc.pages = sections.map((markdown, i) => ({ pageNumber: i + 1, markdown }));
  return doc;
}

function sheetRows(
  sheet: WorkBook['Sheets'][string] | undefined,
  name: string,
  date1904: boolean,
  limiter: RowLimiter,
): SparseRow[] {
  const rows: SparseRow[] = [];
  const ref = sheet?.['!ref'];
  if (!sheet || !ref) return rows;
  const data = (sheet['!data'] ?? []) as (CellObject | undefined)[][];
  const range = utils.decode_range(ref);
  let leftOut = 0;
  for (let r = range.s.r; r <= range.e.r; r++) {
    const line = data[r];
    if (!line) continue;
    const row: SparseRow = { cols: [], values: [] };
    for (let c = range.s.c; c <= Math.min(range.e.c, line.length - 1); c++) {
      const v = cellText(line[c], date1904);
      if (v === '') continue;
      row.cols.push(c);
      row.values.push(v);
    }
    if (!row.cols.length) continue;
    if (limiter.accept(rows.length, row.cols.length)) rows.push(row);
    else leftOut++;
  }
  limiter.note(name, leftOut, rows.length);
  return rows;
}

function cellText(cell: CellObject | undefined, date1904: boolean): string {
  if (!cell) return '';
  switch (cell.t) {
    case 's':
      return String(cell.v ?? '');
    case 'b':
      return cell.v ? 'TRUE' : 'FALSE';
    case 'e':
      return cell.w ?? SSF.format('General', cell.v as number);
    case 'n': {
      const n = cell.v as number;
      const format = typeof cell.z === 'string' ? cell.z : undefined;
      const kind = format ? dateKind(format) : null;
      return kind ? serialToIso(n, kind, date1904) : formatNumber(String(n));
    }
    case 'd':
      return cell.v instanceof Date ? cell.v.toISOString().slice(0, 19) : String(cell.v ?? '');
    default:
      return '';
  }
}
