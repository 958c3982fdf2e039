// XLSX and ODS → one `## <sheet name>` section per sheet, each one GFM table (first row as header).
//
// Sheets are streamed (SAX over the inflating zip entry), never held as one XML string or DOM.
// Values: shared and inline strings, numbers (15 significant digits, no float noise), booleans as
// TRUE/FALSE, errors as written (#DIV/0!), formulas as their cached value, dates (cells whose number
// format is a date/time format, built-in or custom) as ISO 8601: `2024-03-15`, `2024-03-15T10:30:00`
// or `10:30:00` (1900 and 1904 date systems). Empty rows and columns are dropped. At most
// ParseOptions.maxRows rows per sheet (default 10,000) and maxCells cells in all; a warning names
// the sheet and how many rows were left out. numPages = number of sheets.
import { compact, coreProperties, mainPart, odfMetadata, open, readRels, readXml, resolvePart } from './package.ts';
import { gridToMarkdown, RowLimiter, type SparseRow } from './table.ts';
import type { ParsedDocument, ParseOptions } from './types.ts';
import { attr, kid, kids, local, relAttr, saxParser } from './xml.ts';
import { throwIfAborted, type ZipArchive } from './zip.ts';
import { DocumentError } from '../errors.ts';

interface Sheet {
  name: string;
  rows: SparseRow[];
}

function render(
  kind: 'xlsx' | 'ods',
  sheets: Sheet[],
  warnings: string[],
  metadata: ParsedDocument['metadata'],
  opts: ParseOptions,
): ParsedDocument {
  const sections = sheets.map((s) => {
    const table = gridToMarkdown(s.rows);
    return `## ${s.name.replace(/\s+/g, ' ').trim() || 'Sheet'}` + (table ? `\n\n${table}` : '');
  });
  const doc: ParsedDocument = { kind, markdown: sections.join('\n\n'), metadata, numPages: sheets.length, warnings };
  if (opts.pages) doc.pages = sections.map((markdown, i) => ({ pageNumber: i + 1, markdown }));
  return doc;
}

/** Number text → at most 15 significant digits (what Excel shows), no exponent for ordinary sizes. */
export function formatNumber(v: string): string {
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n)) return v.trim();
  return String(Number(n.toPrecision(15)));
}

const BUILTIN_DATE = new Set([14, 15, 16, 17, 22, 27, 28, 29, 30, 31, 34, 35, 36, 50, 51, 52, 53, 54, 57, 58]);
const BUILTIN_TIME = new Set([18, 19, 20, 21, 32, 33, 45, 46, 47, 55, 56]);

/** 'date' | 'time' | 'datetime' | null for a number format code. */
export function dateKind(code: string): 'date' | 'time' | 'datetime' | null {
  const c = code
    .split(';')[0]
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '')
    .replace(/\[(?:h+|m+|s+)\]/gi, 'h')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/_.|\*./g, '');
  const hasDate = /[dy]/i.test(c) || (/m/i.test(c) && !/[hs]/i.test(c));
  const hasTime = /[hs]/i.test(c);
  if (hasDate && hasTime) return 'datetime';
  if (hasDate) return 'date';
  if (hasTime) return 'time';
  return null;
}

export function serialToIso(serial: number, kind: 'date' | 'time' | 'datetime', date1904: boolean): string {
  const base = date1904 ? Date.UTC(1904, 0, 1) : Date.UTC(1899, 11, 30);
  const ms = Math.round(serial * 86400) * 1000;
  const d = new Date(base + ms);
  if (Number.isNaN(d.getTime())) return String(serial);
  const iso = d.toISOString();
  if (kind === 'date') return iso.slice(0, 10);
  if (kind === 'time') return iso.slice(11, 19);
  return iso.slice(0, 19);
}

// ---------------------------------------------------------------------------------------------
// XLSX
// ---------------------------------------------------------------------------------------------

function colIndex(ref: string): number {
  let n = 0;
  for (let i = 0; i < ref.length; i++) {
    const c = ref.charCodeAt(i);
    if (c >= 65 && c <= 90) n = n * 26 + (c - 64);
    else if (c >= 97 && c <= 122) n = n * 26 + (c - 96);
    else break;
  }
  return n - 1;
}

export async function parseXlsx(bytes: Uint8Array, opts: ParseOptions = {}): Promise<ParsedDocument> {
  const zip = open(bytes, 'XLSX', opts);
  const wbPart = await mainPart(zip, 'xl/workbook.xml');
  const wb = await readXml(zip, wbPart);
  const rels = await readRels(zip, wbPart);
  const date1904 = ['1', 'true'].includes(attr(kid(wb, 'workbookPr') ?? wb, 'date1904') ?? '');
  const sheetList = kids(kid(wb, 'sheets') ?? wb, 'sheet').map((s) => {
    const rel = rels.get(relAttr(s) ?? '');
    return { name: attr(s, 'name') ?? 'Sheet', part: rel ? resolvePart(wbPart, rel.target) : undefined };
  });
  const relPart = (type: string): string | undefined => {
    for (const r of rels.values()) if (r.type.endsWith(`/${type}`)) return resolvePart(wbPart, r.target);
    return undefined;
  };

  // Shared strings (streamed; rich text runs concatenated, phonetic runs left out).
  const strings: string[] = [];
  const sstPart = relPart('sharedStrings');
  if (sstPart && zip.has(sstPart)) {
    let cur = '';
    let inT = false;
    let inPh = 0;
    const sax = saxParser({
      open(name) {
        const n = local(name);
        if (n === 'si') cur = '';
        else if (n === 't') inT = true;
        else if (n === 'rPh') inPh++;
      },
      text(t) {
        if (inT && !inPh) cur += t;
      },
      close(name) {
        const n = local(name);
        if (n === 't') inT = false;
        else if (n === 'rPh') inPh--;
        else if (n === 'si') strings.push(cur);
      },
    });
    await zip.streamText(sstPart, (s) => sax.write(s));
    sax.end();
  }

  // Styles: cellXfs index → date kind.
  const xfDate: ('date' | 'time' | 'datetime' | null)[] = [];
  const stylesPart = relPart('styles');
  if (stylesPart && zip.has(stylesPart)) {
    const st = await readXml(zip, stylesPart);
    const custom = new Map<number, string>();
    for (const f of kids(kid(st, 'numFmts') ?? st, 'numFmt'))
      custom.set(Number(attr(f, 'numFmtId')), attr(f, 'formatCode') ?? '');
    for (const xf of kids(kid(st, 'cellXfs') ?? st, 'xf')) {
      const id = Number(attr(xf, 'numFmtId') ?? 0);
      const code = custom.get(id);
      xfDate.push(
        code !== undefined ? dateKind(code) : BUILTIN_DATE.has(id) ? 'date' : BUILTIN_TIME.has(id) ? 'time' : null,
      );
    }
  }

  const limiter = new RowLimiter(opts.maxRows, opts.maxCells);
  const sheets: Sheet[] = [];
  for (const s of sheetList) {
    throwIfAborted(opts.signal);
    if (!s.part || !zip.has(s.part)) {
      sheets.push({ name: s.name, rows: [] });
      continue;
    }
    sheets.push({ name: s.name, rows: await xlsxSheet(zip, s.part, s.name, strings, xfDate, date1904, limiter) });
  }
  const metadata = compact(await coreProperties(zip));
  return render('xlsx', sheets, limiter.warnings, metadata, opts);
}

async function xlsxSheet(
  zip: ZipArchive,
  part: string,
  name: string,
  strings: string[],
  xfDate: ('date' | 'time' | 'datetime' | null)[],
  date1904: boolean,
  limiter: RowLimiter,
): Promise<SparseRow[]> {
  const rows: SparseRow[] = [];
  let leftOut = 0;
  let row: SparseRow = { cols: [], values: [] };
  let col = 0;
  let t = '';
  let style = 0;
  let value = '';
  let inline = '';
  let capture: 'v' | 't' | null = null;
  let inCell = false;
  let inData = false;
  const sax = saxParser({
    open(tag, a) {
      const n = local(tag);
      if (n === 'sheetData') inData = true;
      if (!inData) return;
      if (n === 'row') {
        row = { cols: [], values: [] };
        col = 0;
      } else if (n === 'c') {
        inCell = true;
        if (a.r) col = colIndex(a.r);
        t = a.t ?? 'n';
        style = Number(a.s ?? 0) || 0;
        value = '';
        inline = '';
      } else if (inCell && n === 'v') capture = 'v';
      else if (inCell && n === 't') capture = 't';
    },
    text(s) {
      if (capture === 'v') value += s;
      else if (capture === 't') inline += s;
    },
    close(tag) {
      const n = local(tag);
      if (n === 'v' || n === 't') capture = null;
      else if (n === 'c' && inCell) {
        inCell = false;
        let out: string;
        if (t === 's') out = strings[Number(value)] ?? '';
        else if (t === 'inlineStr') out = inline;
        else if (t === 'b') out = value.trim() === '1' ? 'TRUE' : value.trim() === '0' ? 'FALSE' : value;
        else if (t === 'str' || t === 'e') out = value;
        else if (t === 'd') out = value.trim();
        else {
          const kind = xfDate[style];
          const num = Number(value);
          out =
            kind && value.trim() !== '' && Number.isFinite(num)
              ? serialToIso(num, kind, date1904)
              : formatNumber(value);
        }
        if (
          out.trim() !== '' &&
          col >= 0 &&
          col < 16384 &&
          (row.cols.length === 0 || row.cols[row.cols.length - 1] < col)
        ) {
          row.cols.push(col);
          row.values.push(out);
        }
        col++;
      } else if (n === 'row') {
        if (!row.cols.length) return;
        if (leftOut === 0 && limiter.accept(rows.length, row.cols.length)) rows.push(row);
        else leftOut++;
      } else if (n === 'sheetData') inData = false;
    },
  });
  try {
    await zip.streamText(part, (s) => sax.write(s));
    sax.end();
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    throw new DocumentError('DOCUMENT_CORRUPT', `Sheet "${name}" could not be read`, { cause: err });
  }
  limiter.note(name, leftOut, rows.length);
  return rows;
}

// ---------------------------------------------------------------------------------------------
// ODS
// ---------------------------------------------------------------------------------------------

function odsTime(v: string): string {
  const m = /^-?P(?:\d+D)?T(\d+)H(\d+)M(\d+)(?:\.\d+)?S$/.exec(v.trim());
  if (!m) return v.trim();
  return `${m[1].padStart(2, '0')}:${m[2].padStart(2, '0')}:${m[3].padStart(2, '0')}`;
}

export async function parseOds(bytes: Uint8Array, opts: ParseOptions = {}): Promise<ParsedDocument> {
  const zip = open(bytes, 'ODS', opts);
  if (!zip.has('content.xml')) throw new DocumentError('DOCUMENT_CORRUPT', 'ODS has no content.xml');
  const limiter = new RowLimiter(opts.maxRows, opts.maxCells);
  const sheets: Sheet[] = [];
  let sheet: Sheet | null = null;
  let leftOut = 0;
  let tableDepth = 0;
  let row: SparseRow = { cols: [], values: [] };
  let rowRepeat = 1;
  let col = 0;
  let cell: { repeat: number; typed?: string; text: string; paras: number; covered: boolean } | null = null;
  let skip = 0; // inside office:annotation
  const sax = saxParser({
    open(tag, a) {
      if (skip) {
        skip++;
        return;
      }
      switch (tag) {
        case 'table:table':
          tableDepth++;
          if (tableDepth === 1) {
            sheet = { name: a['table:name'] ?? `Sheet${sheets.length + 1}`, rows: [] };
            leftOut = 0;
          }
          return;
        case 'table:table-row':
          if (tableDepth !== 1) return;
          row = { cols: [], values: [] };
          col = 0;
          rowRepeat = Math.max(1, Number(a['table:number-rows-repeated'] ?? 1) || 1);
          return;
        case 'table:table-cell':
        case 'table:covered-table-cell': {
          if (tableDepth !== 1) return;
          const type = a['office:value-type'];
          let typed: string | undefined;
          if (type === 'float' || type === 'percentage' || type === 'currency')
            typed = formatNumber(a['office:value'] ?? '');
          else if (type === 'date') typed = a['office:date-value']?.trim();
          else if (type === 'time')
            typed = a['office:time-value'] !== undefined ? odsTime(a['office:time-value']) : undefined;
          else if (type === 'boolean') typed = a['office:boolean-value'] === 'true' ? 'TRUE' : 'FALSE';
          cell = {
            repeat: Math.max(1, Number(a['table:number-columns-repeated'] ?? 1) || 1),
            typed,
            text: '',
            paras: 0,
            covered: tag === 'table:covered-table-cell',
          };
          return;
        }
        case 'office:annotation':
          skip = 1;
          return;
      }
      if (!cell) return;
      if (tag === 'text:p' || tag === 'text:h') {
        if (cell.paras++) cell.text += '\n';
      } else if (tag === 'text:s') cell.text += ' '.repeat(Math.max(1, Math.min(100, Number(a['text:c'] ?? 1) || 1)));
      else if (tag === 'text:tab') cell.text += '\t';
      else if (tag === 'text:line-break') cell.text += '\n';
    },
    text(s) {
      if (!skip && cell) cell.text += s;
    },
    close(tag) {
      if (skip) {
        skip--;
        return;
      }
      if (tag === 'table:table') {
        tableDepth--;
        if (tableDepth === 0 && sheet) {
          limiter.note(sheet.name, leftOut, sheet.rows.length);
          sheets.push(sheet);
          sheet = null;
        }
      } else if ((tag === 'table:table-cell' || tag === 'table:covered-table-cell') && cell && tableDepth === 1) {
        const value = cell.covered ? '' : (cell.typed ?? cell.text);
        if (value.trim() !== '') {
          const n = Math.min(cell.repeat, 16384 - col);
          for (let i = 0; i < n; i++) {
            row.cols.push(col + i);
            row.values.push(value);
          }
        }
        col += cell.repeat;
        cell = null;
      } else if (tag === 'table:table-row' && tableDepth === 1 && sheet) {
        if (!row.cols.length) return;
        for (let i = 0; i < rowRepeat; i++) {
          if (leftOut === 0 && limiter.accept(sheet.rows.length, row.cols.length)) sheet.rows.push(row);
          else {
            leftOut += rowRepeat - i;
            break;
          }
        }
      }
    },
  });
  try {
    await zip.streamText('content.xml', (s) => sax.write(s));
    sax.end();
  } catch (err) {
    if (err instanceof DocumentError) throw err;
    throw new DocumentError('DOCUMENT_CORRUPT', 'ODS content could not be read', { cause: err });
  }
  throwIfAborted(opts.signal);
  const metadata = compact(await odfMetadata(zip));
  return render('ods', sheets, limiter.warnings, metadata, opts);
}
