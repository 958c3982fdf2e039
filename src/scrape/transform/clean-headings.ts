// Headings left with nothing under them once the boilerplate is gone: "Related articles" over a
// removed rail, "Join our newsletter" over a removed form, at the end of the content. And the
// permalink anchors inside headings ("¶", "#", "🔗" linking the heading itself).
import { type AnyNode, type Element, isTag, type Text } from 'domhandler';
import { findAll, findOne, textContent } from 'domutils';

const LEVEL: Record<string, number> = { h1: 1, h2: 2, h3: 3, h4: 4, h5: 5, h6: 6 };
/** Elements that are content without text of their own. */
const MEDIA = new Set(['img', 'picture', 'video', 'audio', 'iframe', 'svg', 'canvas', 'math', 'hr']);

/**
 * The headings at the end of the roots with nothing after them (their sections were removed chrome):
 * read backwards from the end until the first content (text, a picture, a linked heading: a tile's title).
 * None when the roots hold headings only (a page of headings is its headings); never an h1 (the title).
 */
export function orphanHeadings(roots: Element[]): Element[] {
  const out: Element[] = [];
  // Reverse document order: the last child is visited first. Iterative (pages nest deeply).
  const stack: AnyNode[] = [...roots];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === 'text') {
      if (/\S/.test((n as Text).data)) return out;
      continue;
    }
    if (!isTag(n)) continue;
    const level = LEVEL[n.name];
    if (level) {
      if (linked(n)) return out;
      if (level > 1) out.push(n);
      continue;
    }
    if (MEDIA.has(n.name)) return out;
    for (const k of n.children) stack.push(k);
  }
  return [];
}

function linked(h: Element): boolean {
  if (findOne((e) => e.name === 'a', h.children)) return true;
  for (let p = h.parent; p && isTag(p); p = p.parent) if (p.name === 'a') return true;
  return false;
}

/**
 * Permalink anchors in headings and definition terms (Sphinx's "¶", Docusaurus's zero-width "#"): a
 * link to a fragment of this page whose text has no letter or digit, or is the fragment itself
 * ("#section2"). They are the page's chrome; in markdown they read "## Middleware[¶](…#middleware)".
 */
export function permalinkAnchors(roots: Element[], pageUrl: string | undefined): Element[] {
  const out: Element[] = [];
  const page = pageUrl ? withoutFragment(pageUrl) : null;
  const stack: Element[] = [...roots];
  while (stack.length) {
    const el = stack.pop()!;
    if (LEVEL[el.name] || el.name === 'dt') {
      for (const a of findAll((e) => e.name === 'a', el.children)) if (isPermalink(a, page)) out.push(a);
      continue;
    }
    if (el.name === 'pre' || el.name === 'code') continue;
    for (const k of el.children) if (isTag(k)) stack.push(k);
  }
  return out;
}

function isPermalink(a: Element, page: string | null): boolean {
  const href = a.attribs.href?.trim();
  if (!href) return false;
  const hash = href.indexOf('#');
  if (hash < 0 || hash === href.length - 1) return false;
  if (hash > 0) {
    if (!page) return false;
    try {
      if (withoutFragment(new URL(href, page).href) !== page) return false;
    } catch {
      return false;
    }
  }
  const text = textContent(a).replace(/[\s\u200b]+/g, '');
  return !/[\p{L}\p{N}]/u.test(text) || text === href.slice(hash);
}

function withoutFragment(url: string): string {
  const i = url.indexOf('#');
  return i < 0 ? url : url.slice(0, i);
}
