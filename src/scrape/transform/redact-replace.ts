// Redaction's last step: overlapping spans resolved by priority then length, and the text written
// with each span replaced (`<EMAIL>` tag, `*` mask, or removed).
import type { PiiEntity, Span } from './redact-spans.ts';

export interface RedactResult {
  text: string;
  counts: Partial<Record<PiiEntity, number>>;
}

// Resolution and replacement

/** Non-overlapping spans: higher priority first, then longer, then earlier. Returned by position. */
export function resolve(spans: Span[]): Span[] {
  const order = [...spans].sort((a, b) => b.prio - a.prio || b.end - b.start - (a.end - a.start) || a.start - b.start);
  const taken: Span[] = [];
  for (const s of order) {
    if (s.end <= s.start) continue;
    let lo = 0;
    let hi = taken.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (taken[mid].start < s.start) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0 && taken[lo - 1].end > s.start) continue;
    if (lo < taken.length && taken[lo].start < s.end) continue;
    taken.splice(lo, 0, s);
  }
  return taken;
}

export function apply(text: string, spans: Span[], style: 'tag' | 'mask' | 'remove'): RedactResult {
  const counts: Partial<Record<PiiEntity, number>> = {};
  let out = '';
  let last = 0;
  for (const s of spans) {
    out += text.slice(last, s.start);
    last = s.end;
    counts[s.entity] = (counts[s.entity] ?? 0) + 1;
    // `<jane@example.com>` (an email autolink) becomes `<EMAIL>`, not `<<EMAIL>>`.
    const bare = s.bare || (text[s.start - 1] === '<' && text[s.end] === '>');
    if (style === 'tag') out += bare ? s.entity : `<${s.entity}>`;
    else if (style === 'mask') out += text.slice(s.start, s.end).replace(/[^\r\n]/g, '*');
    else if ((out.endsWith(' ') || out.endsWith('\t')) && text[last] === ' ') last++;
  }
  out += text.slice(last);
  return { text: out, counts };
}
