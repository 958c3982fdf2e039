// CSV (and TSV, ;- or |-separated) → one GFM table, first row as header.
// Delimiter sniffed from the first lines (the candidate giving the same field count > 1 on most
// lines, outside quotes); RFC 4180 quoting (embedded delimiters, newlines and "" quotes); BOMs and
// UTF-16 handled by the text decoder. Rows capped like sheets (ParseOptions.maxRows / maxCells).
import { gridToMarkdown, RowLimiter, type SparseRow } from './table.ts';
import { decodeText } from './charset.ts';
import type { ParsedDocument, ParseOptions } from './types.ts';
import { throwIfAborted } from './zip.ts';

const CANDIDATES = [',', ';', '\t', '|'];

/** Counts fields per record over the first ~20 records for a delimiter (quotes respected). */
export function fieldCounts(text: string, delim: string): number[] {
  const counts: number[] = [];
  let fields = 1;
  let quoted = false;
  let empty = true;
  for (let i = 0; i < text.length && counts.length < 20; i++) {
    const c = text[i];
    if (c !== '\n' && c !== '\r') empty = false;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') i++;
        else quoted = false;
      }
    } else if (c === '"') quoted = true;
    else if (c === delim) fields++;
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      if (!empty) counts.push(fields); // blank lines are not records
      fields = 1;
      empty = true;
    }
  }
  if (counts.length < 20 && fields > 1) counts.push(fields);
  return counts;
}

export function sniffDelimiter(text: string): string {
  const sample = text.slice(0, 64 * 1024);
  let best = ',';
  let bestScore = 0;
  for (const d of CANDIDATES) {
    const counts = fieldCounts(sample, d);
    if (!counts.length) continue;
    const first = counts[0];
    if (first < 2) continue;
    const same = counts.filter((n) => n === first).length;
    const score = (same / counts.length) * 1000 + first;
    if (score > bestScore) {
      best = d;
      bestScore = score;
    }
  }
  return best;
}

export function parseCsv(bytes: Uint8Array, opts: ParseOptions = {}): ParsedDocument {
  const text = decodeText(bytes, '', false, 'file').text.replace(/^\uFEFF/, '');
  const delim = sniffDelimiter(text);
  const limiter = new RowLimiter(opts.maxRows, opts.maxCells);
  const rows: SparseRow[] = [];
  let leftOut = 0;
  let row: SparseRow = { cols: [], values: [] };
  let col = 0;
  let field = '';
  let quoted = false;
  const endField = (): void => {
    if (field.trim() !== '') {
      row.cols.push(col);
      row.values.push(field);
    }
    col++;
    field = '';
  };
  const endRow = (): void => {
    endField();
    if (row.cols.length) {
      if (leftOut === 0 && limiter.accept(rows.length, row.cols.length)) rows.push(row);
      else leftOut++;
    }
    row = { cols: [], values: [] };
    col = 0;
  };
  let i = 0;
  const n = text.length;
  while (i < n) {
    if ((i & 0xffff) === 0) throwIfAborted(opts.signal);
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
        } else {
          quoted = false;
          i++;
        }
      } else {
        // copy a run of ordinary characters at once
        const q = text.indexOf('"', i);
        const end = q < 0 ? n : q;
        field += text.slice(i, end);
        i = end;
      }
      continue;
    }
    if (c === '"' && field.trim() === '') {
      field = '';
      quoted = true;
    } else if (c === delim) endField();
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRow();
    } else field += c;
    i++;
  }
  if (field !== '' || col > 0) endRow();
  limiter.note(undefined, leftOut, rows.length);
  const markdown = gridToMarkdown(rows);
  return { kind: 'csv', markdown, metadata: {}, numPages: 1, warnings: limiter.warnings };
}
