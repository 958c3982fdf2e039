// Spreadsheet grids → GFM tables, in bounded memory: rows are kept sparse ([column, text] pairs),
// so a cell far to the right (XFD1) costs one entry, not 16,384.
export const DEFAULT_MAX_ROWS = 10_000;
export const DEFAULT_MAX_CELLS = 1_000_000;

/** One row: column indexes (ascending, unique) and cell texts (non-empty). */
export interface SparseRow {
  cols: number[];
  values: string[];
}

/** A cell's text in a table: pipes escaped, line breaks as `<br>`, whitespace runs kept but trimmed. */
export function escapeCell(s: string): string {
  return s.replace(/\r\n?/g, '\n').trim().replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\n/g, '<br>');
}

/**
 * Rows → one GFM table, first row as header. Rows with no value are already left out by callers;
 * columns with no value in any row are dropped here.
 */
export function gridToMarkdown(rows: SparseRow[]): string {
  if (!rows.length) return '';
  const used = new Set<number>();
  for (const r of rows) for (const c of r.cols) used.add(c);
  const cols = [...used].sort((a, b) => a - b);
  const pos = new Map<number, number>();
  cols.forEach((c, i) => pos.set(c, i));
  const lines: string[] = [];
  rows.forEach((r, i) => {
    const cells = new Array<string>(cols.length).fill('');
    r.cols.forEach((c, j) => (cells[pos.get(c)!] = escapeCell(r.values[j])));
    lines.push(cells.length ? `| ${cells.join(' | ')} |`.replace(/ {2}\|/g, ' |') : '|');
    if (i === 0) lines.push(`| ${cols.map(() => '---').join(' | ')} |`);
  });
  return lines.join('\n');
}

/** Rows of cells ('' where a row has none) → one GFM table, as gridToMarkdown (first row as header). */
export function rowsToMarkdown(rows: string[][]): string {
  return gridToMarkdown(rows.map((values) => ({ cols: values.map((_, i) => i), values })));
}

export class RowLimiter {
  readonly maxRows: number;
  private cellsLeft: number;
  warnings: string[] = [];
  constructor(maxRows = DEFAULT_MAX_ROWS, maxCells = DEFAULT_MAX_CELLS) {
    this.maxRows = Math.max(1, maxRows);
    this.cellsLeft = Math.max(1, maxCells);
  }
  /** Whether a row with `cells` values may be kept in a sheet that already has `kept` rows. */
  accept(kept: number, cells: number): boolean {
    if (kept >= this.maxRows || cells > this.cellsLeft) return false;
    this.cellsLeft -= cells;
    return true;
  }
  /** True once the cell budget (over every sheet) is spent. */
  get cellsSpent(): boolean {
    return this.cellsLeft <= 0;
  }
  note(sheet: string | undefined, leftOut: number, kept: number): void {
    if (leftOut <= 0) return;
    const where = sheet === undefined ? 'The table' : `Sheet "${sheet}"`;
    const why = kept >= this.maxRows ? `limit ${this.maxRows} rows per sheet` : 'cell limit reached';
    this.warnings.push(`${where}: ${leftOut} row${leftOut === 1 ? '' : 's'} left out (${why})`);
  }
}
