// Page layout analysis for the PDF parser: positioned text items → lines → segments (runs of
// text on one baseline without a wide gap; lines.ts) → tables (grid-aligned rows; tables.ts) and
// paragraph blocks (blocks.ts) → reading order (recursive XY-cut that prefers column gutters;
// reading-order.ts) → classified units with their markdown (units.ts). Pure functions.
import { buildBlocks } from './blocks.ts';
import type { FontStats } from './font-stats.ts';
import type { Line, Segment } from './lines.ts';
import { type Region, orderRegions } from './reading-order.ts';
import { findTables } from './tables.ts';
import { type Unit, blockUnits, tableMarkdown } from './units.ts';

export interface PageLayout {
  units: Unit[];
  columns: boolean;
}

/** Lays out one page's (non-furniture) segments into ordered, classified units. */
export function layoutPage(lines: Line[], stats: FontStats, opts: { headings: boolean }): PageLayout {
  const tables = findTables(lines);
  const inTable = new Set<number>();
  for (const t of tables) for (const k of t.lineIdx) inTable.add(k);
  const segs: Segment[] = [];
  lines.forEach((l, k) => {
    if (!inTable.has(k)) segs.push(...l.segs);
  });
  const regions: Region[] = buildBlocks(segs);
  for (const t of tables) {
    regions.push({ kind: 'table', table: t, x0: t.bbox[0], x1: t.bbox[2], top: t.bbox[1], bottom: t.bbox[3] });
  }
  const st = { columns: false };
  const ordered = orderRegions(regions, st);
  const units: Unit[] = [];
  for (const r of ordered) {
    if (r.kind === 'table') {
      const rows = r.table.rows;
      units.push({
        type: 'table',
        label: 'table',
        bbox: r.table.bbox,
        content: rows.map((row) => row.join('\t')).join('\n'),
        markdown: tableMarkdown(rows),
        layout: 0.75,
        ocr: r.table.confN > 0 ? r.table.confSum / r.table.confN : undefined,
      });
    } else units.push(...blockUnits(r, stats, st.columns, opts.headings));
  }
  return { units, columns: st.columns };
}
