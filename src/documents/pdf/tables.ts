// PDF layout: tables, as runs of consecutive lines whose segments align into shared columns.
import type { Line, Segment } from './lines.ts';
import type { Bbox } from './units.ts';

export interface TableFound {
  rows: string[][];
  bbox: Bbox;
  lineIdx: Set<number>;
  confSum: number;
  confN: number;
}

function isTableRow(l: Line): boolean {
  if (l.segs.length < 2) return false;
  let w = 0;
  for (const s of l.segs) w += s.x1 - s.x0;
  const span = l.segs[l.segs.length - 1].x1 - l.segs[0].x0;
  return span > 0 && w / span < 0.75;
}

/** Finds runs of ≥2 consecutive lines whose segments align into ≥2 shared columns. */
export function findTables(lines: Line[]): TableFound[] {
  const tables: TableFound[] = [];
  let i = 0;
  while (i < lines.length) {
    if (!isTableRow(lines[i])) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < lines.length && isTableRow(lines[j])) {
      const size = lines[j - 1].segs[0].size;
      if (lines[j].y - lines[j - 1].y > size * 3) break;
      j++;
    }
    if (j - i >= 2) {
      const t = buildTable(lines, i, j);
      if (t) {
        tables.push(t);
        i = j;
        continue;
      }
    }
    i = j;
  }
  return tables;
}

function buildTable(lines: Line[], from: number, to: number): TableFound | null {
  const segs: Segment[] = [];
  for (let k = from; k < to; k++) segs.push(...lines[k].segs);
  const byX = segs.slice().sort((a, b) => a.x0 - b.x0);
  const cols: [number, number][] = [];
  for (const s of byX) {
    const last = cols[cols.length - 1];
    if (last && s.x0 < last[1] + 2) last[1] = Math.max(last[1], s.x1);
    else cols.push([s.x0, s.x1]);
  }
  if (cols.length < 2) return null;
  const rows: string[][] = [];
  let x0 = Infinity;
  let x1 = -Infinity;
  let confSum = 0;
  let confN = 0;
  const lineIdx = new Set<number>();
  for (let k = from; k < to; k++) {
    const row = cols.map(() => '');
    for (const s of lines[k].segs) {
      let c = 0;
      while (c < cols.length - 1 && s.x0 >= cols[c + 1][0]) c++;
      row[c] = row[c] ? `${row[c]} ${s.text}` : s.text;
      x0 = Math.min(x0, s.x0);
      x1 = Math.max(x1, s.x1);
      confSum += s.confSum;
      confN += s.confN;
    }
    rows.push(row);
    lineIdx.add(k);
  }
  if (rows.filter((r) => r.filter(Boolean).length >= 2).length < 2) return null;
  const first = lines[from];
  const last = lines[to - 1];
  const bbox: Bbox = [x0, first.y - first.segs[0].size * 0.8, x1, last.y + last.segs[0].size * 0.25];
  return { rows, bbox, lineIdx, confSum, confN };
}
