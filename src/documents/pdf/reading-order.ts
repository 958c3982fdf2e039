// PDF layout: reading order of a page's blocks and tables by recursive XY-cut, column gutters first.
import type { Block } from './blocks.ts';
import type { TableFound } from './tables.ts';

interface TableUnit {
  kind: 'table';
  table: TableFound;
  x0: number;
  x1: number;
  top: number;
  bottom: number;
}

export type Region = Block | TableUnit;

/** Splits regions into column groups at vertical gutters (no region crosses them); null if none. */
function verticalCut(rs: Region[]): Region[][] | null {
  const byX = rs.slice().sort((a, b) => a.x0 - b.x0);
  const groups: Region[][] = [[byX[0]]];
  let maxX1 = byX[0].x1;
  for (let i = 1; i < byX.length; i++) {
    const r = byX[i];
    if (r.x0 - maxX1 >= 3) groups.push([r]);
    else groups[groups.length - 1].push(r);
    maxX1 = Math.max(maxX1, r.x1);
  }
  return groups.length > 1 ? groups : null;
}

function horizontalBands(rs: Region[]): Region[][] {
  const byY = rs.slice().sort((a, b) => a.top - b.top);
  const bands: Region[][] = [[byY[0]]];
  let maxB = byY[0].bottom;
  for (let i = 1; i < byY.length; i++) {
    const r = byY[i];
    if (r.top >= maxB - 0.5) bands.push([r]);
    else bands[bands.length - 1].push(r);
    maxB = Math.max(maxB, r.bottom);
  }
  return bands;
}

export function orderRegions(rs: Region[], stats: { columns: boolean }): Region[] {
  if (rs.length <= 1) return rs;
  if (rs.length > 400) return rs.slice().sort((a, b) => a.top - b.top || a.x0 - b.x0);
  const cols = verticalCut(rs);
  if (cols) {
    stats.columns = true;
    return cols.flatMap((g) => orderRegions(g, stats));
  }
  const bands = horizontalBands(rs);
  if (bands.length === 1) return rs.slice().sort((a, b) => a.top - b.top || a.x0 - b.x0);
  // Consecutive bands that together still have a gutter are one multi-column stretch.
  const groups: Region[][] = [];
  let cur: Region[] = bands[0];
  for (let i = 1; i < bands.length; i++) {
    const merged = cur.concat(bands[i]);
    if (verticalCut(merged)) cur = merged;
    else {
      groups.push(cur);
      cur = bands[i];
    }
  }
  groups.push(cur);
  return groups.flatMap((g) => orderRegions(g, stats));
}
