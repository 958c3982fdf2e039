// PDF layout: the segments outside tables grouped into paragraph blocks (same font size, regular
// line spacing, overlapping columns; a first-line indent starts a new block).
import { type Segment, listMarker } from './lines.ts';

export interface Block {
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

function sameSize(a: number, b: number): boolean {
  return Math.abs(a - b) <= Math.max(a, b) * 0.08;
}

export function buildBlocks(segs: Segment[]): Block[] {
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
