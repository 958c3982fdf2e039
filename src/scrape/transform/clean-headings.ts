// Headings left with nothing under them once the boilerplate is gone: "Related articles" over a
// removed rail, "Join our newsletter" over a removed form. A heading introduces what follows it
// up to the next heading of its level or above; with nothing there, it is a label of removed chrome.
import { type AnyNode, type Element, isTag, type Text } from 'domhandler';
import { findOne } from 'domutils';

const LEVEL: Record<string, number> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
/** Elements that are content without text of their own. */
const MEDIA = new Set(['img', 'picture', 'video', 'audio', 'iframe', 'svg', 'canvas', 'math', 'hr']);

/** The headings in the roots (document order) whose section holds nothing. */
export function orphanHeadings(roots: Element[]): Element[] {
  // The page as a sequence: headings, and "content" marks between them.
  const seq: ({ el: Element; level: number } | null)[] = [];
  const visit = (n: AnyNode): void => {
    if (n.type === 'text') {
      if (/\S/.test((n as Text).data) && seq[seq.length - 1] !== null) seq.push(null);
      return;
    }
    if (!isTag(n)) return;
    const level = LEVEL[n.name];
    if (level) {
      // A linked heading is an item's title (a card, a tile), whatever follows it.
      seq.push(linked(n) ? null : { el: n, level });
      return;
    }
    if (MEDIA.has(n.name)) {
      if (seq[seq.length - 1] !== null) seq.push(null);
      return;
    }
    for (const k of n.children) visit(k);
  };
  for (const r of roots) visit(r);
  const out: Element[] = [];
  // A page of headings alone is its headings; the page's title (h1) stands alone by nature.
  if (!seq.includes(null)) return out;
  for (let i = 0; i < seq.length; i++) {
    const h = seq[i];
    if (!h || h.level === 1) continue;
    if (i === seq.length - 1) out.push(h.el);
  }
  return out;
}

function linked(h: Element): boolean {
  if (findOne((e) => e.name === 'a', h.children)) return true;
  for (let p = h.parent; p && isTag(p); p = p.parent) if (p.name === 'a') return true;
  return false;
}
