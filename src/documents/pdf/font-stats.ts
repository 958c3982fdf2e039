// PDF layout: document-wide font statistics (the body size, and the larger sizes read as headings).
import type { Line } from './lines.ts';

export interface FontStats {
  body: number;
  headingSizes: number[];
}

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
