// Repeated blocks inside the main content: responsive layouts render the same title, price or
// paragraph twice (a mobile and a desktop copy, one hidden by CSS the page does not say inline).
// The second copy of a block whose text is already there adds nothing; it is dropped, unless the two
// sit in different items of one list of alike items (each coupon states its terms). So are the later
// slides of a tile's photo carousel.
import { type ChildNode, type Element, isTag, type ParentNode, type Text } from 'domhandler';
import { findOne, textContent } from 'domutils';
import { isAncestor, type Measure } from './clean-measure.ts';

/** Blocks compared: headings, paragraphs and list items (their text is the unit a reader sees). */
const COMPARED = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'dt', 'dd', 'blockquote', 'figcaption']);
/** Shorter texts repeat on purpose ("Yes", "Reply", a size in every row). */
const MIN_CHARS = 12;

/**
 * Container blocks compared by their whole text, whitespace aside (a responsive copy whose inner markup differs:
 * one breaks a line the other does not, one wraps its paragraphs in divs), when they hold at least BLOCK_CHARS
 * characters: a shorter container repeats on purpose (a price, a button row). Not list items: an offer's terms or
 * a plan's features repeat in each card on purpose.
 */
const BLOCKS = new Set(['div', 'section', 'article', 'aside', 'header', 'footer']);
const BLOCK_CHARS = 60;

/** The later copies of repeated blocks in the roots (and under them), outermost only. */
export function repeatedBlocks(roots: Element[], m: Measure): Element[] {
  const repeats: Element[] = [];
  const stack: Element[] = [];
  // Container blocks by their text's length (cheap), then by their text once two share a length.
  const byLength = new Map<number, Element[]>();
  const keys = new Map<Element, string>();
  const keyOf = (e: Element) => {
    let k = keys.get(e);
    if (k === undefined) keys.set(e, (k = textContent(e).replace(/\s+/g, '')));
    return k;
  };
  const byTagAndLength = new Map<string, Element[]>();
  const blockKeys = new Map<Element, string>();
  const blockKey = (e: Element) => {
    let k = blockKeys.get(e);
    if (k === undefined)
      blockKeys.set(e, (k = e.name + ' ' + textContent(e).replace(/\s+/g, ' ').trim().toLowerCase()));
    return k;
  };
  for (let r = roots.length - 1; r >= 0; r--) stack.push(roots[r]);
  while (stack.length) {
    const el = stack.pop()!;
    if (el.name === 'pre' || el.name === 'code' || el.name === 'table') continue;
    const n = BLOCKS.has(el.name) ? (m.info.get(el)?.text ?? 0) : 0;
    if (n >= BLOCK_CHARS) {
      const same = byLength.get(n);
      if (same) {
        // A wrapper and its one child have the same text: only blocks side by side are copies.
        const apart = same.filter((e) => !isAncestor(e, el));
        if (apart.length) {
          const k = keyOf(el);
          const first = apart.find((e) => keyOf(e) === k);
          if (first && !hasCode(el) && !inItems(first, el)) {
            repeats.push(el);
            continue;
          }
        }
        same.push(el);
      } else byLength.set(n, [el]);
    }
    if (COMPARED.has(el.name)) {
      // Blocks by tag, measured length and first letter first: only blocks that share all three have their text
      // read and compared (reading every paragraph's text was a fifth of a long article's transform).
      const bucket = `${el.name} ${m.info.get(el)?.text ?? -1} ${firstChar(el)}`;
      const same = byTagAndLength.get(bucket);
      if (same === undefined) byTagAndLength.set(bucket, [el]);
      else {
        const k = blockKey(el);
        const first = k.length >= MIN_CHARS + el.name.length + 1 ? same.find((e) => blockKey(e) === k) : undefined;
        if (first && !inItems(first, el)) {
          repeats.push(el);
          continue;
        }
        same.push(el);
      }
      if (el.name !== 'li' && el.name !== 'dd' && el.name !== 'blockquote') continue;
    }
    pushChildren(stack, el);
  }
  return repeats;
}

/** The first character of the element's text that is not whitespace, lower-cased ('' when none). */
function firstChar(el: Element): string {
  const stack: ChildNode[] = [...el.children].reverse();
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === 'text') {
      const m = /\S/.exec((n as Text).data);
      if (m) return m[0].toLowerCase();
    } else if (isTag(n)) {
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
    }
  }
  return '';
}

/** Items of a list alike in tag and class: at least this many. */
const MIN_ITEMS = 3;

/**
 * Whether two blocks sit in different items of one list of alike items (coupons, offers, plans): each item
 * repeats its terms on purpose. Responsive copies are two unlike siblings (a mobile and a desktop block).
 */
function inItems(a: Element, b: Element): boolean {
  // The children of the lowest common ancestor that hold each.
  let ia: Element = a;
  for (let p = a.parent; p && isTag(p); ia = p, p = p.parent) {
    if (!isAncestor(p, b)) continue;
    let ib: Element = b;
    // A quotation of an earlier post is a copy, whatever list holds it.
    for (; ib.parent !== p; ib = ib.parent as Element) if (ib.name === 'blockquote') return false;
    if (ib.name === 'blockquote') return false;
    if (ia.name !== ib.name || (ia.attribs.class ?? '') !== (ib.attribs.class ?? '')) return false;
    let alike = 0;
    for (const k of p.children)
      if (isTag(k) && k.name === ia.name && (k.attribs.class ?? '') === (ia.attribs.class ?? '')) alike++;
    return alike >= MIN_ITEMS;
  }
  return false;
}

/** Code is repeated on purpose (an API's request and response may show the same JSON). */
function hasCode(el: Element): boolean {
  return !!findOne((e) => e.name === 'pre' || e.name === 'code', el.children, true);
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
