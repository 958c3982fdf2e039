// PDF layout: page furniture, the running headers, footers and page numbers repeated across pages
// (kept out of the markdown flow, reported as header/footer units).
import type { Line, Segment } from './lines.ts';
import { type Unit, bboxOf } from './units.ts';

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
