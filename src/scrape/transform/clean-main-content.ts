// Main-content detection: descend from <body> into the child holding most of the weighted prose,
// narrow to a semantic container, climb back for the title, or find the page title outside it.
import { type AnyNode, type Element, isTag, type ParentNode } from 'domhandler';
import { textContent } from 'domutils';
import { F_BOILER, F_COMMENT, F_LOGO, F_NEG, F_POS } from './clean-classify.ts';
import { isAncestor, type Measure } from './clean-measure.ts';

/** Paragraph-level blocks: main-content detection does not descend into them. */
const LEAF_BLOCKS = new Set([
  'p',
  'pre',
  'blockquote',
  'ul',
  'ol',
  'dl',
  'li',
  'dd',
  'dt',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'figure',
  'figcaption',
  'address',
  'code',
  'details',
  'summary',
  'caption',
  'th',
]);

const LISTING_BLURB = 1000;
const LISTING_SHARE = 0.35;

function elementChildren(el: ParentNode): Element[] {
  return el.children.filter(isTag);
}

export function bodyNodes(m: Measure): AnyNode[] {
  return [...m.body.children];
}

/** Similar items (forum posts, answers, cards): same tag and a class in common. */
function similar(a: Element, b: Element): boolean {
  if (a.name !== b.name) return false;
  const ca = a.attribs.class?.trim();
  const cb = b.attribs.class?.trim();
  if (!ca || !cb)
    return !ca && !cb && (a.name === 'article' || a.name === 'li' || a.name === 'section' || a.name === 'tr');
  const set = new Set(ca.split(/\s+/));
  return cb.split(/\s+/).some((c) => set.has(c));
}

function descend(m: Measure, from: Element): Element {
  let c = from;
  for (;;) {
    const ci = m.info.get(c)!;
    if (ci.mass <= 0) return c;
    let best: Element | null = null;
    let bestMass = 0;
    const kids = elementChildren(c);
    for (const k of kids) {
      const ki = m.info.get(k);
      if (ki && ki.mass > bestMass) {
        best = k;
        bestMass = ki.mass;
      }
    }
    // Paragraph-level blocks are never the container: their parent is (it also holds the code,
    // tables and figures next to them).
    if (!best || bestMass < 0.8 * ci.mass || LEAF_BLOCKS.has(best.name)) return c;
    const bi = m.info.get(best)!;
    // A listing: the prose is a short blurb while most of the unflagged text (the items, mostly
    // links) lies beside it. The list is the content.
    if (bi.good < LISTING_BLURB && bi.tmass < LISTING_SHARE * ci.tmass) return c;
    let stop = false;
    for (const k of kids) {
      if (k === best) continue;
      const ki = m.info.get(k)!;
      // One of several similar items: the list is the content.
      if (ki.good >= 150 && similar(k, best)) stop = true;
      // A sibling with substantial prose that nothing marks as boilerplate.
      else if (ki.good >= 300 && ki.good >= 0.15 * bi.good && ki.mult >= ci.mult && ki.link < 0.3 * ki.text)
        stop = true;
      if (stop) break;
    }
    if (stop) return c;
    c = best;
  }
}

/** The main-content container, and a page title to put before it when it sits outside. */
export function findMain(m: Measure, docTitle: string): { container: Element; title: Element | null } {
  const body = m.body as Element;
  let c = descend(m, body);
  // A semantic container (main, role=main, articleBody, the single article) inside the choice.
  const ci0 = m.info.get(c)!;
  const articles = m.articles.filter((a) => a.parent && m.info.get(a)!.good >= 100);
  const semantic = articles.length === 1 ? [...m.semantic, articles[0]] : m.semantic;
  let narrowed: Element | null = null;
  for (const s of semantic) {
    if (!s.parent || s === c || !isAncestor(c, s)) continue;
    const si = m.info.get(s)!;
    // On a listing the semantic container may be the blurb above the items: it must hold their text too.
    if (si.mass >= 0.6 * ci0.mass && si.tmass >= 0.5 * ci0.tmass && (!narrowed || m.info.get(narrowed)!.text > si.text))
      narrowed = s;
  }
  if (narrowed) c = descend(m, narrowed);
  // Climb back to an ancestor bringing the title or the semantic container, if it adds little.
  const base = m.info.get(c)!;
  let up: Element = c;
  for (let p = c.parent, level = 0; p && isTag(p) && p !== body && level < 3; p = p.parent, level++) {
    const pi = m.info.get(p)!;
    if (pi.good - base.good > 0.3 * base.good + 50) break;
    if ((pi.h1 > base.h1 && base.h1 === 0) || semantic.includes(p)) up = p;
  }
  c = up;
  const cInfo = m.info.get(c)!;
  let title: Element | null = null;
  if (cInfo.h1 === 0 && c !== body) title = pageTitle(m, c) ?? titleLike(m, c, docTitle);
  return { container: c, title };
}

/** The last page <h1> before the container, close to it and not a logo or in nav/footer/aside. */
function pageTitle(m: Measure, c: Element): Element | null {
  const ci = m.info.get(c)!;
  let found: Element | null = null;
  for (const h of m.h1s) {
    const hi = m.info.get(h);
    if (!hi || !h.parent || hi.idx > ci.idx) continue;
    if (hi.text === 0 || hi.link > 0.8 * hi.text || hi.flags & F_LOGO) continue;
    let ok = true;
    for (let p: ParentNode | null = h.parent; p && isTag(p); p = p.parent) {
      const pi = m.info.get(p);
      if (!pi || pi.flags & (F_BOILER | F_LOGO | F_COMMENT) || (pi.flags & F_NEG && !(pi.flags & F_POS))) {
        ok = false;
        break;
      }
    }
    if (ok) found = h;
  }
  if (!found) return null;
  // "Just outside": the common ancestor is at most four levels above the container.
  let anc: ParentNode | null = c;
  for (let level = 0; anc && level <= 4; anc = anc.parent, level++) if (isAncestor(anc, found)) return found;
  return null;
}

const TITLE_SEPARATORS = /\s+[|\-–—·:»/]\s+/;

function normalize(s: string): string {
  return s.replace(/\s+/g, ' ').trim().toLowerCase();
}

/**
 * Pages without an <h1> ("div soup"): a short block just before the container whose text is the
 * document <title> or one of its " | "-separated parts.
 */
function titleLike(m: Measure, c: Element, docTitle: string): Element | null {
  const t = normalize(docTitle);
  if (t.length < 8) return null;
  const wanted = new Set([t, ...t.split(TITLE_SEPARATORS).filter((x) => x.length >= 8)]);
  const own = normalize(textContent(c));
  for (const w of wanted) if (own.includes(w)) return null;
  let child: Element = c;
  for (let level = 0; level < 4 && child.parent && isTag(child.parent) && child.parent !== m.body; level++) {
    const parent: Element = child.parent;
    // Preceding siblings, nearest first, and their descendants.
    for (let sib = child.prev; sib; sib = sib.prev) {
      if (!isTag(sib)) continue;
      const stack: Element[] = [sib];
      while (stack.length) {
        const el = stack.pop()!;
        const ei = m.info.get(el);
        if (!ei || ei.text === 0 || ei.text > 300 || ei.flags & (F_BOILER | F_LOGO)) continue;
        if (wanted.has(normalize(textContent(el)))) return el;
        for (const k of elementChildren(el)) stack.push(k);
      }
    }
    child = parent;
  }
  return null;
}

/** A class or id naming a product's description ("product__description", "tab-description", "desc"). */
const DESCRIPTION = /(^|[^a-z])(description|desc)([^a-z]|$)/;
const CAMEL_CASE = /([a-z0-9])([A-Z])/g;
/** The description must hold this much prose, and this share of the container's. */
const DESCRIPTION_PROSE = 1500;
const DESCRIPTION_SHARE = 0.3;

/**
 * On a product page, the block the page names as the product's description, when it holds much of the
 * container's prose: the content, without the buy box, delivery terms, reviews and rails around it. The largest
 * such block outside boilerplate, or null.
 */
export function productDescription(m: Measure, container: Element): Element | null {
  const ci = m.info.get(container)!;
  let best: Element | null = null;
  let bestGood = Math.max(DESCRIPTION_PROSE, DESCRIPTION_SHARE * ci.good);
  const stack: Element[] = [container];
  while (stack.length) {
    const el = stack.pop()!;
    const ei = m.info.get(el);
    // Only blocks with more prose than the best so far can win: smaller subtrees are not walked.
    if (!ei || ei.good < bestGood) continue;
    const a = el.attribs;
    if (
      el !== container &&
      (a.class || a.id) &&
      DESCRIPTION.test(`${a.class ?? ''} ${a.id ?? ''}`.replace(CAMEL_CASE, '$1 $2').toLowerCase()) &&
      ei.neg >= 0.5 &&
      !(ei.flags & (F_BOILER | F_COMMENT))
    ) {
      best = el;
      bestGood = ei.good;
    }
    for (const k of el.children) if (isTag(k)) stack.push(k);
  }
  return best;
}

/** The page's first <h1> with text that is no logo: a product's name, for a description that has none. */
export function firstTitle(m: Measure, outside: Element): Element | null {
  for (const h of m.h1s) {
    const hi = m.info.get(h);
    if (h.parent && hi && hi.text > 0 && !(hi.flags & F_LOGO) && hi.neg >= 0.5 && !isAncestor(outside, h)) return h;
  }
  return null;
}
