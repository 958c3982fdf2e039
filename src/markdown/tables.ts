// Tables in the HTML→Markdown converter: telling a data table from a layout table, laying its
// cells out on a grid (colspan, rowspan), column alignment, and the GFM pipe-table lines.
import type { ChildNode, Element } from 'domhandler';
import { isHidden } from './elements.ts';

/** Content that makes a table a layout table rather than data. */
const BLOCKY_IN_CELL = new Set(
  'table ul ol dl dt dd menu dir li h1 h2 h3 h4 h5 h6 pre listing xmp blockquote hr'.split(' '),
);

export interface DataTable {
  /** The visible cells of each visible row: head rows, then body, then foot. */
  rows: Element[][];
  caption: Element | null;
}

/** Renders one cell's content on one line. */
export interface CellRenderer {
  renderCell(cell: Element): string;
}

export interface TableGrid {
  /** Rendered cells, every row padded to its own length (spans filled with ''). */
  cells: string[][];
  width: number;
  /** The delimiter row's cell per column (`---`, `:---`, `:---:`, `---:`), from the first row. */
  aligns: string[];
  /** Whether any cell has content. */
  any: boolean;
}

/** A table's rows of cells, or null when it is a layout table, to be rendered as its content:
 *  role presentation/none, fewer than two cells, or a cell holding block content. */
export function dataTable(el: Element): DataTable | null {
  const role = el.attribs.role;
  if (role === 'presentation' || role === 'none') return null;
  const head: Element[] = [];
  const body: Element[] = [];
  const foot: Element[] = [];
  let caption: Element | null = null;
  for (const c of el.children) {
    if ((c.type as string) !== 'tag') continue;
    const e = c as Element;
    switch (e.name) {
      case 'tr':
        body.push(e);
        break;
      case 'thead':
        rowsOf(e, head);
        break;
      case 'tbody':
        rowsOf(e, body);
        break;
      case 'tfoot':
        rowsOf(e, foot);
        break;
      case 'caption':
        caption ??= e;
        break;
    }
  }
  const rows: Element[][] = [];
  let count = 0;
  for (const r of head.length > 0 ? head.concat(body, foot) : body.concat(foot)) {
    if (isHidden(r.attribs)) continue;
    const cells: Element[] = [];
    for (const c of r.children) {
      if ((c.type as string) !== 'tag') continue;
      const e = c as Element;
      if ((e.name === 'td' || e.name === 'th') && !isHidden(e.attribs)) cells.push(e);
    }
    rows.push(cells);
    count += cells.length;
  }
  if (count < 2) return null;
  for (const r of rows) for (const c of r) if (hasBlockContent(c)) return null;
  return { rows, caption };
}

/** Lay the cells out on a grid: colspan pads the row, rowspan reserves cells in later rows. */
export function layoutGrid(rows: Element[][], renderer: CellRenderer): TableGrid {
  const grid: string[][] = [];
  const pending: number[] = [];
  let width = 0;
  let any = false;
  const aligns: string[] = [];
  for (let r = 0; r < rows.length; r++) {
    const row: string[] = [];
    let col = 0;
    for (const cell of rows[r]) {
      while ((pending[col] ?? 0) > 0) {
        pending[col]--;
        row[col++] = '';
      }
      const text = renderer.renderCell(cell);
      if (text !== '') any = true;
      const cs = span(cell.attribs.colspan, 1000);
      let rs = span(cell.attribs.rowspan, 65534);
      if (cell.attribs.rowspan === '0') rs = rows.length;
      if (r === 0) aligns[col] = cellAlign(cell.attribs);
      row[col] = text;
      for (let j = 0; j < cs; j++) {
        if (j > 0) row[col + j] = '';
        if (rs > 1) pending[col + j] = rs - 1;
      }
      col += cs;
    }
    for (let j = col; j < pending.length; j++) {
      if ((pending[j] ?? 0) > 0) {
        pending[j]--;
        row[j] = '';
      }
    }
    for (let j = 0; j < row.length; j++) row[j] ??= '';
    if (row.length > width) width = row.length;
    grid.push(row);
  }
  return { cells: grid, width, aligns, any };
}

/** The pipe-table lines of a grid: the first row, the delimiter row, then the rest. */
export function tableLines(grid: TableGrid): string[] {
  const width = grid.width;
  const aligns = Array.from({ length: width }, (_, i) => grid.aligns[i] ?? '---');
  const lines: string[] = [];
  for (let r = 0; r < grid.cells.length; r++) {
    const row = grid.cells[r];
    let line = '|';
    for (let j = 0; j < width; j++) {
      const c = row[j] ?? '';
      line += c === '' ? ' |' : ' ' + c + ' |';
    }
    lines.push(line);
    if (r === 0) lines.push('| ' + aligns.join(' | ') + ' |');
  }
  return lines;
}

/** A cell's rendered text made safe inside a pipe table. */
export function escapePipes(s: string): string {
  return s.indexOf('|') >= 0 ? s.replace(/\|/g, '\\|') : s;
}

function rowsOf(section: Element, into: Element[]): void {
  for (const c of section.children)
    if ((c.type as string) === 'tag' && (c as Element).name === 'tr') into.push(c as Element);
}

function span(v: string | undefined, max: number): number {
  if (v === undefined) return 1;
  const n = parseInt(v, 10);
  return n >= 1 ? Math.min(n, max) : 1;
}

function cellAlign(a: Record<string, string>): string {
  let v: string | undefined = a.align;
  if (v === undefined && a.style !== undefined) v = /text-align\s*:\s*(left|right|center)/i.exec(a.style)?.[1];
  switch (v?.toLowerCase()) {
    case 'left':
      return ':---';
    case 'center':
      return ':---:';
    case 'right':
      return '---:';
    default:
      return '---';
  }
}

/** A cell holding lists, headings, code blocks, quotes or tables makes a layout table. */
function hasBlockContent(cell: Element): boolean {
  const stack: ChildNode[] = cell.children.slice();
  while (stack.length > 0) {
    const n = stack.pop()!;
    if ((n.type as string) !== 'tag') continue;
    const e = n as Element;
    if (BLOCKY_IN_CELL.has(e.name)) return true;
    for (const c of e.children) stack.push(c);
  }
  return false;
}
