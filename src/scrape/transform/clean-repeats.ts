// Repeated blocks inside the main content: responsive layouts render the same title, price or
// paragraph twice (a mobile and a desktop copy, one hidden by CSS the page does not say inline).
// The second copy of a block whose text is already there adds nothing; it is dropped. So are the
// later slides of a tile's photo carousel.
import { type Element, isTag, type ParentNode, type Text } from 'domhandler';
import { textContent } from 'domutils';

/** Blocks compared: headings, paragraphs and list items (their text is the unit a reader sees). */
const COMPARED = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'dt', 'dd', 'blockquote', 'figcaption']);
/** Shorter texts repeat on purpose ("Yes", "Reply", a size in every row). */
const MIN_CHARS = 12;

/** The later copies of repeated blocks in the roots (and under them), outermost only. */
export function repeatedBlocks(roots: Element[]): Element[] {
  const seen = new Set<string>();
  const repeats: Element[] = [];
  const stack: Element[] = [];
  for (let r = roots.length - 1; r >= 0; r--) stack.push(roots[r]);
  while (stack.length) {
    const el = stack.pop()!;
    if (el.name === 'pre' || el.name === 'code' || el.name === 'table') continue;
    if (COMPARED.has(el.name)) {
      const key = el.name + ' ' + textContent(el).replace(/\s+/g, ' ').trim().toLowerCase();
      if (key.length >= MIN_CHARS + el.name.length + 1) {
        if (seen.has(key)) {
          repeats.push(el);
          continue;
        }
        seen.add(key);
      }
      if (el.name !== 'li' && el.name !== 'dd' && el.name !== 'blockquote') continue;
    }
    pushChildren(stack, el);
  }
  return repeats;
}

function pushChildren(stack: Element[], el: ParentNode): void {
  const kids = el.children;
  for (let i = kids.length - 1; i >= 0; i--) {
    const k = kids[i];
    if (isTag(k)) stack.push(k);
  }
}

/** Slides in a gallery: at least this many. */
const MIN_SLIDES = 3;

/**
 * The later slides of image carousels in the roots: a list (or any block) whose children are each a
 * picture and nothing else, all linking the same page (a product tile's photo gallery). A reader sees
 * one picture at a time; the first stands for them. An article's gallery (no link, or links to each
 * photo) stays.
 */
export function carouselSlides(roots: Element[]): Element[] {
  const out: Element[] = [];
  const stack: Element[] = [...roots];
  while (stack.length) {
    const el = stack.pop()!;
    if (el.name === 'pre' || el.name === 'code') continue;
    const kids = el.children.filter(isTag);
    if (kids.length >= MIN_SLIDES) {
      const target = slideTarget(kids[0]);
      if (target !== null && kids.every((k) => slideTarget(k) === target)) {
        out.push(...kids.slice(1));
        continue;
      }
    }
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
  }
  return out;
}

/**
 * The page a slide links to: the slide is one picture and nothing else (through up to three wrappers),
 * linked inside or from around the list (`<a href><ul><li><img>…`); null when it is not such a slide.
 */
function slideTarget(el: Element): string | null {
  let href: string | null = null;
  let at: Element = el;
  for (let level = 0; level < 4; level++) {
    if (at.name === 'a') href = at.attribs.href ?? null;
    if (at.name === 'img' || at.name === 'picture') break;
    const kids = at.children.filter((c) => isTag(c) || (c.type === 'text' && /\S/.test((c as Text).data)));
    if (kids.length !== 1 || !isTag(kids[0])) return null;
    at = kids[0];
  }
  if (at.name !== 'img' && at.name !== 'picture') return null;
  if (href === null)
    for (let p = el.parent; p && isTag(p) && href === null; p = p.parent)
      if (p.name === 'a') href = p.attribs.href ?? null;
  return href;
}
