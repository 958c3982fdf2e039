// PDF layout, step 1: positioned text items → baseline lines of segments (runs of text without a
// wide gap). Coordinates are PDF points from the page's top-left corner, y grows downwards, `y` of
// an item is its baseline. Also the text helpers every later step uses (list markers, ligatures).

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
          if ((gap > size * 0.12 || it.conf !== undefined) && !/\s$/.test(cur.text) && !/^\s/.test(it.str))
            cur.text += ' ';
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
