// PDF layout: blocks and tables classified into units (heading, paragraph, list item, table) with
// their markdown, their bounding box and the confidence of the layout and of OCR.
import { escapeLineStart, escapeText } from '../../markdown/text.ts';
import type { Block } from './blocks.ts';
import type { FontStats } from './font-stats.ts';
import { type Segment, listMarker } from './lines.ts';

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
    else if (m)
      out += l; // "Euro-" + "Asian": a real hyphen, kept, no space
    else out += ' ' + l;
  }
  return out;
}

function escapeInline(s: string): string {
  return escapeText(s, false);
}

export function tableMarkdown(rows: string[][]): string {
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

export function bboxOf(segs: Segment[]): Bbox {
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

export function blockUnits(b: Block, stats: FontStats, columns: boolean, headings: boolean): Unit[] {
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
