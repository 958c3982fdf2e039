// Page layout analysis for the PDF parser: positioned text items → lines → segments (runs of
// text on one baseline without a wide gap) → tables (grid-aligned rows) and paragraph blocks →
// reading order (recursive XY-cut that prefers column gutters) → classified units (heading,
// paragraph, list item, table) with their markdown. Pure functions; coordinates are PDF points
// from the page's top-left corner, y grows downwards, `y` of an item is its baseline.
import { escapeLineStart, escapeText } from '../../markdown/text.ts';

export interface TextItem {
  str: string;
  x0: number;
  x1: number;
  /** Baseline. */
  y: number;
  size: number;
  /** OCR word confidence 0..1 (text-layer items leave it out). */
  conf?: number;
}

export interface Segment {
  text: string;
  x0: number;
  x1: number;
  y: number;
  size: number;
  chars: number;
  confSum: number;
  confN: number;
}

export type Bbox = [number, number, number, number];

export interface Unit {
  type: 'text' | 'heading' | 'list' | 'table' | 'header' | 'footer';
  label: string;
  bbox: Bbox;
  content: string;
  markdown: string;
  /** List units of one list share an id (joined by a single newline in the page markdown). */
  listId?: number;
  layout: number;
  /** Mean OCR confidence 0..1, when the text came from OCR. */
  ocr?: number;
}

/** Document-wide font statistics: body size and heading sizes (largest first → level 1). */
export interface FontStats {
  body: number;
  headingSizes: number[];
}

const LIGATURES: Record<string, string> = {
  '\ufb00': 'ff',
  '\ufb01': 'fi',
  '\ufb02': 'fl',
  '\ufb03': 'ffi',
  '\ufb04': 'ffl',
  '\ufb05': 'st',
  '\ufb06': 'st',
  '\u00a0': ' ',
  '\u2002': ' ',
  '\u2003': ' ',
  '\u2009': ' ',
  '\u202f': ' ',
  '\u200b': '',
  '\ufeff': '',
  '\u00ad': '\u00ad',
};
const SPECIAL_CHARS = /[\ufb00-\ufb06\u00a0\u2002\u2003\u2009\u202f\u200b\ufeff]/g;

/** Ligatures expanded, odd spaces made plain, zero-width characters dropped. */
export function normaliseText(s: string): string {
  return SPECIAL_CHARS.test(s) ? s.replace(SPECIAL_CHARS, (c) => LIGATURES[c] ?? c) : s;
}

const BULLET = /^([•◦▪▫●○■□‣⁃∙·\-*–—+➢►✓])(?:\s+|$)/;
const ORDERED = /^\(?(\d{1,3}|[a-zA-Z]|[ivxlcIVXLC]{1,6})([.)])(?:\s+|$)/;

/** A list marker at the start of a line: the marker text and whether it is ordered. */
export function listMarker(s: string): { marker: string; ordered: boolean; rest: string } | null {
  let m = BULLET.exec(s);
  if (m) return { marker: m[1], ordered: false, rest: s.slice(m[0].length) };
  m = ORDERED.exec(s);
  if (m && m[0].length < s.length) return { marker: m[0].trim(), ordered: true, rest: s.slice(m[0].length) };
  return null;
}

// ---------------------------------------------------------------------------------------------
// Items → lines of segments
// ---------------------------------------------------------------------------------------------

export interface Line {
  y: number;
  segs: Segment[];
}

function newSegment(it: TextItem): Segment {
  return {
    text: it.str,
    x0: it.x0,
    x1: it.x1,
    y: it.y,
    size: it.size,
    chars: it.str.length,
    confSum: it.conf ?? 0,
    confN: it.conf === undefined ? 0 : 1,
  };
}

/** Groups items into baseline lines (sorted top to bottom), each split into segments at wide gaps. */
export function buildLines(items: TextItem[]): Line[] {
  const sorted = items.slice().sort((a, b) => a.y - b.y);
  const lines: Line[] = [];
  let group: TextItem[] = [];
  let gy = 0;
  let gsize = 0;
  const flush = (): void => {
    if (group.length === 0) return;
    group.sort((a, b) => a.x0 - b.x0);
    const segs: Segment[] = [];
    let cur: Segment | null = null;
    for (const it of group) {
      if (cur) {
        const gap = it.x0 - cur.x1;
        const size = Math.max(cur.size, it.size);
        const markerOnly = cur.chars <= 4 && listMarker(cur.text + ' x') !== null;
        if (gap <= size * 1.1 || (markerOnly && gap < size * 4)) {
          if ((gap > size * 0.12 || it.conf !== undefined) && !/\s$/.test(cur.text) && !/^\s/.test(it.str)) cur.text += ' ';
          cur.text += it.str;
          cur.x1 = Math.max(cur.x1, it.x1);
          if (it.str.length > cur.chars) cur.size = it.size;
          cur.chars += it.str.length;
          if (it.conf !== undefined) {
            cur.confSum += it.conf;
            cur.confN++;
          }
          continue;
        }
      }
      cur = newSegment(it);
      segs.push(cur);
    }
    for (const s of segs) s.text = s.text.replace(/\s+/g, ' ').trim();
    lines.push({ y: gy, segs: segs.filter((s) => s.text.length > 0) });
    group = [];
  };
  for (const it of sorted) {
    if (group.length > 0 && it.y - gy > 0.4 * Math.min(gsize, it.size)) flush();
    if (group.length === 0) {
      gy = it.y;
      gsize = it.size;
    }
    group.push(it);
  }
  flush();
  return lines.filter((l) => l.segs.length > 0);
}

// ---------------------------------------------------------------------------------------------
// Tables
// ---------------------------------------------------------------------------------------------

interface TableFound {
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

// ---------------------------------------------------------------------------------------------
// Paragraph blocks
// ---------------------------------------------------------------------------------------------

interface Block {
  kind: 'block';
  lines: Segment[];
  x0: number;
  x1: number;
  top: number;
  bottom: number;
  size: number;
  spacing: number;
  listy: boolean;
}

interface TableUnit {
  kind: 'table';
  table: TableFound;
  x0: number;
  x1: number;
  top: number;
  bottom: number;
}

type Region = Block | TableUnit;

function sameSize(a: number, b: number): boolean {
  return Math.abs(a - b) <= Math.max(a, b) * 0.08;
}

function buildBlocks(segs: Segment[]): Block[] {
  segs.sort((a, b) => a.y - b.y || a.x0 - b.x0);
  const blocks: Block[] = [];
  let open: Block[] = [];
  for (const s of segs) {
    open = open.filter((b) => s.y - (b.bottom - b.size * 0.25) <= b.size * 3);
    const marker = listMarker(s.text);
    let best: Block | null = null;
    let bestDy = Infinity;
    for (const b of open) {
      if (!sameSize(b.size, s.size)) continue;
      const lastY = b.lines[b.lines.length - 1].y;
      const dy = s.y - lastY;
      if (dy < s.size * 0.5) continue;
      const maxDy = b.lines.length >= 2 ? b.spacing * 1.25 + 1 : s.size * 1.75;
      if (dy > maxDy) continue;
      if (s.x0 >= b.x1 || s.x1 <= b.x0) continue;
      if (!b.listy && !marker && b.lines.length >= 2) {
        const prev = b.lines[b.lines.length - 1];
        if (Math.abs(prev.x0 - b.x0) < 2 && s.x0 > b.x0 + s.size * 0.8) continue; // first-line indent
      }
      if (dy < bestDy) {
        best = b;
        bestDy = dy;
      }
    }
    if (best) {
      const lastY = best.lines[best.lines.length - 1].y;
      if (best.lines.length === 1) best.spacing = s.y - lastY;
      best.lines.push(s);
      best.x0 = Math.min(best.x0, s.x0);
      best.x1 = Math.max(best.x1, s.x1);
      best.bottom = s.y + s.size * 0.25;
      if (marker) best.listy = true;
    } else {
      const b: Block = {
        kind: 'block',
        lines: [s],
        x0: s.x0,
        x1: s.x1,
        top: s.y - s.size * 0.8,
        bottom: s.y + s.size * 0.25,
        size: s.size,
        spacing: s.size * 1.2,
        listy: marker !== null,
      };
      blocks.push(b);
      open.push(b);
    }
  }
  return blocks;
}

// ---------------------------------------------------------------------------------------------
// Reading order: recursive XY-cut, columns first
// ---------------------------------------------------------------------------------------------

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

function orderRegions(rs: Region[], stats: { columns: boolean }): Region[] {
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

// ---------------------------------------------------------------------------------------------
// Classification and markdown
// ---------------------------------------------------------------------------------------------

/** Joins the lines of a paragraph: a trailing hyphen before a lowercase continuation is removed. */
export function joinLines(lines: string[]): string {
  let out = '';
  for (const raw of lines) {
    const l = raw.replace(/\u00ad/g, (_m, off: number, s: string) => (off === s.length - 1 ? '-' : ''));
    if (!out) {
      out = l;
      continue;
    }
    const m = /(\p{L})[-\u2010]$/u.exec(out);
    if (m && /^\p{Ll}/u.test(l)) out = out.slice(0, -1) + l;
    else if (m) out += l; // "Euro-" + "Asian": a real hyphen, kept, no space
    else out += ' ' + l;
  }
  return out;
}

function escapeInline(s: string): string {
  return escapeText(s, false);
}

function tableMarkdown(rows: string[][]): string {
  const cell = (c: string): string => escapeInline(c).replace(/\|/g, '\\|');
  const line = (r: string[]): string => `| ${r.map(cell).join(' | ')} |`;
  const out = [line(rows[0]), `| ${rows[0].map(() => '---').join(' | ')} |`];
  for (const r of rows.slice(1)) out.push(line(r));
  return out.join('\n');
}

function headingLevel(size: number, stats: FontStats): number {
  for (let i = 0; i < stats.headingSizes.length; i++) {
    if (Math.abs(stats.headingSizes[i] - size) <= 0.6) return Math.min(i + 1, 6);
  }
  return 0;
}

function segConf(segs: Segment[]): number | undefined {
  let sum = 0;
  let n = 0;
  for (const s of segs) {
    sum += s.confSum;
    n += s.confN;
  }
  return n > 0 ? sum / n : undefined;
}

function bboxOf(segs: Segment[]): Bbox {
  let x0 = Infinity;
  let x1 = -Infinity;
  for (const s of segs) {
    x0 = Math.min(x0, s.x0);
    x1 = Math.max(x1, s.x1);
  }
  const a = segs[0];
  const b = segs[segs.length - 1];
  return [x0, a.y - a.size * 0.8, x1, b.y + b.size * 0.25];
}

let listCounter = 0;

function blockUnits(b: Block, stats: FontStats, columns: boolean, headings: boolean): Unit[] {
  const units: Unit[] = [];
  const base = columns ? 0.85 : 1;
  const text = joinLines(b.lines.map((l) => l.text));
  const level = headings ? headingLevel(b.size, stats) : 0;
  if (level > 0 && b.lines.length <= 3 && text.length <= 200 && !b.listy) {
    const content = text;
    units.push({
      type: 'heading',
      label: level === 1 ? 'title' : `h${level}`,
      bbox: bboxOf(b.lines),
      content,
      markdown: `${'#'.repeat(level)} ${escapeInline(content)}`,
      layout: base * 0.9,
      ocr: segConf(b.lines),
    });
    return units;
  }
  // Walk lines: paragraphs, and list items (marker lines plus their indented continuations).
  let para: Segment[] = [];
  const flushPara = (): void => {
    if (para.length === 0) return;
    const content = joinLines(para.map((l) => l.text));
    units.push({
      type: 'text',
      label: 'paragraph',
      bbox: bboxOf(para),
      content,
      markdown: escapeLineStart(escapeInline(content)),
      layout: base,
      ocr: segConf(para),
    });
    para = [];
  };
  interface Item {
    segs: Segment[];
    marker: string;
    ordered: boolean;
    first: string;
    x: number;
  }
  let items: Item[] = [];
  const flushList = (): void => {
    if (items.length === 0) return;
    const listId = ++listCounter;
    // Nesting by marker indentation: distinct x positions (3pt tolerance), left to right.
    const xs: number[] = [];
    for (const it of items.map((i) => i.x).sort((a, b) => a - b)) {
      if (xs.length === 0 || it - xs[xs.length - 1] > 3) xs.push(it);
    }
    const indentOf: string[] = [''];
    const counters: number[] = [];
    let prevLevel = 0;
    for (const it of items) {
      let level = 0;
      while (level < xs.length - 1 && it.x > xs[level] + 3) level++;
      level = Math.min(level, prevLevel + 1);
      counters.length = level + 1;
      counters[level] = (counters[level] ?? 0) + 1;
      let marker = '-';
      if (it.ordered) {
        const n = /^\(?(\d+)/.exec(it.marker);
        marker = `${n ? Number(n[1]) : counters[level]}.`;
      }
      const indent = indentOf[level] ?? '';
      indentOf[level + 1] = indent + ' '.repeat(marker.length + 1);
      indentOf.length = level + 2;
      prevLevel = level;
      const lines = [it.first, ...it.segs.slice(1).map((s) => s.text)];
      const content = joinLines(lines);
      units.push({
        type: 'list',
        label: 'list-item',
        bbox: bboxOf(it.segs),
        content,
        markdown: `${indent}${marker} ${escapeLineStart(escapeInline(content))}`,
        listId,
        layout: base * 0.9,
        ocr: segConf(it.segs),
      });
    }
    items = [];
  };
  for (const l of b.lines) {
    const m = listMarker(l.text);
    if (m && m.rest) {
      flushPara();
      items.push({ segs: [l], marker: m.marker, ordered: m.ordered, first: m.rest, x: l.x0 });
      continue;
    }
    const last = items[items.length - 1];
    if (last && l.x0 > last.x + 1) {
      last.segs.push(l);
      continue;
    }
    flushList();
    para.push(l);
  }
  flushPara();
  flushList();
  return units;
}

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

// ---------------------------------------------------------------------------------------------
// Document-wide: font statistics, repeated headers and footers
// ---------------------------------------------------------------------------------------------

/** Body size = the size with most characters; heading sizes = distinct larger sizes, largest first. */
export function fontStats(pages: Line[][]): FontStats {
  const chars = new Map<number, number>();
  for (const lines of pages) {
    for (const l of lines) {
      for (const s of l.segs) {
        const k = Math.round(s.size * 2) / 2;
        chars.set(k, (chars.get(k) ?? 0) + s.chars);
      }
    }
  }
  let body = 0;
  let best = -1;
  for (const [k, n] of chars) {
    if (n > best || (n === best && k < body)) {
      best = n;
      body = k;
    }
  }
  const headingSizes = [...chars.keys()].filter((k) => k >= body * 1.15).sort((a, b) => b - a);
  return { body, headingSizes };
}

const PAGE_NUMBER = /^(?:page\s*)?\d{1,5}(?:\s*(?:of|\/)\s*\d{1,5})?$|^[-–]\s*\d{1,5}\s*[-–]$/i;

/**
 * Marks page furniture: segments no larger than body text in the top or bottom 12% of the page
 * whose text (digits ignored) recurs in that zone on at least half the pages (and two), or that
 * read as a page number ("3", "Page 3 of 9", "- 3 -"). Returns per page the furniture segments.
 */
export function findFurniture(pages: { lines: Line[]; height: number }[], bodySize: number): Set<Segment>[] {
  // Running heads are set small; a large line in the zone ("Section 3") is a heading.
  const maxSize = bodySize > 0 ? bodySize * 1.1 : Infinity;
  const key = (zone: string, s: Segment): string => `${zone}|${s.text.toLowerCase().replace(/\d+/g, '#')}`;
  const zoneOf = (s: Segment, h: number): string | null => (s.y < h * 0.12 ? 'top' : s.y > h * 0.88 ? 'bottom' : null);
  const counts = new Map<string, number>();
  for (const p of pages) {
    const seen = new Set<string>();
    for (const l of p.lines) {
      for (const s of l.segs) {
        const z = s.size <= maxSize ? zoneOf(s, p.height) : null;
        if (z) seen.add(key(z, s));
      }
    }
    for (const k of seen) counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  const need = Math.max(2, Math.ceil(pages.length / 2));
  return pages.map((p) => {
    const out = new Set<Segment>();
    for (const l of p.lines) {
      for (const s of l.segs) {
        const z = s.size <= maxSize ? zoneOf(s, p.height) : null;
        if (!z) continue;
        if ((counts.get(key(z, s)) ?? 0) >= need || PAGE_NUMBER.test(s.text)) out.add(s);
      }
    }
    return out;
  });
}

/** Furniture segments as header/footer units (not part of the markdown flow). */
export function furnitureUnits(segs: Segment[], height: number): Unit[] {
  return segs
    .slice()
    .sort((a, b) => a.y - b.y || a.x0 - b.x0)
    .map((s) => {
      const top = s.y < height / 2;
      return {
        type: top ? 'header' : 'footer',
        label: top ? 'page-header' : 'page-footer',
        bbox: bboxOf([s]),
        content: s.text,
        markdown: '',
        layout: 0.8,
      } satisfies Unit;
    });
}
