// The content filter's one measuring walk: drops never-content nodes and measures every element
// (text, link text, prose, boilerplate-weighted prose mass), noting hidden elements, ads and comment
// sections; and detaching elements with the measures of their ancestors kept right.
import {
  type AnyNode,
  type ChildNode,
  type Document,
  type Element,
  isTag,
  type ParentNode,
  type Text,
} from 'domhandler';
import {
  boostFactor,
  boosts,
  classify,
  DROP_TAGS,
  F_AD,
  F_ARTICLE,
  F_COMMENT,
  F_HIDDEN,
  F_NEG,
  F_SEMANTIC,
  INLINE_TAGS,
  SKIP_LINK,
  elementNegTokens,
  penalty,
} from './clean-classify.ts';
import { textContent } from 'domutils';
import { type PageStyles, emptyPageStyles, readStylesheet } from './clean-stylesheet.ts';

export interface Info {
  idx: number;
  /** Non-whitespace characters of text in the subtree. */
  text: number;
  /** Of which inside <a>. */
  link: number;
  /** Prose characters: non-link text of blocks that are not mostly links (short blocks discounted). */
  good: number;
  /** `good` weighted by the boilerplate/content multipliers of the block's ancestors. */
  mass: number;
  /** All text (links too) weighted the same way: where the unflagged text of a listing lies. */
  tmass: number;
  /** Inline text directly in this block (not in nested blocks). */
  ownText: number;
  ownLink: number;
  /** Product of the boilerplate penalties of the element and its ancestors. */
  neg: number;
  /** Content boosts (B_*) of the element and its ancestors. */
  boost: number;
  mult: number;
  flags: number;
  h1: number;
  headings: number; // h1..h6
}

export interface Measure {
  info: Map<Element, Info>;
  body: ParentNode;
  h1s: Element[];
  semantic: Element[];
  articles: Element[];
  /** Hidden elements and, with blockAds, ads/banners (outermost only). */
  removable: Element[];
  /** Comment-section elements (outermost only). */
  comments: Element[];
  /** Dropped <noscript> elements, each with its parent and the index it had among the kept children. */
  noscripts: { el: Element; parent: ParentNode; at: number }[];
  /** What the page says it is: schema.org types (JSON-LD @type, microdata itemtype) and og:type, lowercased, with how often. */
  declared: Map<string, number>;
  /** The URLs the page gives as its own (link rel=canonical, og:url). */
  selfUrls: string[];
  /** Elements flagged F_NEG by their class or id, in document order. */
  negative: Element[];
  /** Ids a disclosure control opens (aria-controls, data-target, data-bs-target): collapsed sections. */
  controlled: Set<string>;
  /** Ids of radio buttons: a <label> for one names a choice (a colour, a size), not content. */
  choices: Set<string>;
  /** Inputs asking for an email address, a phone number or a password (sign-up, lead and sign-in boxes). */
  contactInputs: Element[];
  /** What the page's <style> elements hide (read as the walk meets them; kept for a second walk). */
  styles: PageStyles;
}

function countChars(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    // Branch-free for the common case (1 when c > 32): text alternates letters and spaces, and
    // a branch on each mispredicts often (~1.6x slower on a 200 KB page). No-break spaces are rare.
    n += (32 - c) >>> 31;
    if (c === 160) n--;
  }
  return n;
}

interface Frame {
  el: ParentNode;
  info: Info | null;
  /** Nearest block ancestor-or-self (where inline text is credited). */
  block: Info | null;
  inLink: boolean;
  i: number;
  kept: ChildNode[] | null;
  /** Inside an element already noted as removable (hidden/ad). */
  marked: boolean;
  /** Inside a comment-section element. */
  inComment: boolean;
  /** Inside an element with boilerplate classes (F_NEG). */
  inNeg: boolean;
  /** Inside a form control whose text is not shown as text (a select's options). */
  muted: boolean;
}

function newInfo(idx: number, neg: number, boost: number, flags: number): Info {
  return {
    idx,
    text: 0,
    link: 0,
    good: 0,
    mass: 0,
    tmass: 0,
    ownText: 0,
    ownLink: 0,
    neg,
    boost,
    mult: neg * boostFactor(boost),
    flags,
    h1: 0,
    headings: 0,
  };
}

/** Step 2: drop never-content nodes and measure every element, in one iterative walk. */
export function measure(
  doc: Document,
  excluded: Set<Element>,
  blockAds: boolean,
  ignored?: ReadonlySet<string>,
  styles: PageStyles = emptyPageStyles(),
): Measure {
  const info = new Map<Element, Info>();
  const m: Measure = {
    info,
    body: doc,
    h1s: [],
    semantic: [],
    articles: [],
    removable: [],
    comments: [],
    noscripts: [],
    declared: new Map(),
    selfUrls: [],
    negative: [],
    controlled: new Set(),
    choices: new Set(),
    contactInputs: [],
    styles,
  };
  const checkExcluded = excluded.size > 0;
  let skipTargets: Set<string> | undefined;
  let idx = 0;
  let foundBody = false;
  // Frames are reused by depth: the walk allocates nothing per element but its Info.
  const frames: Frame[] = [
    {
      el: doc,
      info: null,
      block: null,
      inLink: false,
      i: 0,
      kept: null,
      marked: false,
      inComment: false,
      inNeg: false,
      muted: false,
    },
  ];
  let depth = 0;
  while (depth >= 0) {
    const f = frames[depth];
    const children = f.el.children;
    if (f.i < children.length) {
      const child = children[f.i++];
      let drop = false;
      if (child.type === 'text') {
        const n = f.muted ? 0 : countChars((child as Text).data);
        if (n) {
          if (f.info) {
            f.info.text += n;
            f.info.tmass += n * f.info.mult;
            if (f.inLink) f.info.link += n;
          }
          if (f.block) {
            f.block.ownText += n;
            if (f.inLink) f.block.ownLink += n;
          }
        }
      } else if (isTag(child)) {
        const name = child.name;
        if (DROP_TAGS.has(name) || (checkExcluded && excluded.has(child))) {
          drop = true;
          if (name === 'noscript') m.noscripts.push({ el: child, parent: f.el, at: f.kept ? f.kept.length : f.i - 1 });
          else if (name === 'script' && child.attribs.type?.includes('ld+json')) declaredInJsonLd(child, m.declared);
          else if (name === 'head') readHead(child, m);
          else if (name === 'style') readStyleElement(child, m.styles);
        } else {
          let flags = classify(child, name, blockAds, ignored, m.styles);
          const a = child.attribs;
          // The target of a "skip to content" link is the content ("chakra-skip-nav" is no navigation).
          if (flags & F_NEG && a.id && skipTargets?.has(a.id)) flags &= ~F_NEG;
          if (flags & F_NEG) m.negative.push(child);
          if (name === 'a' && a.href && a.href.length > 1 && a.href[0] === '#') {
            const t = textContent(child).trim();
            if (t.length < 40 && SKIP_LINK.test(t)) (skipTargets ??= new Set()).add(a.href.slice(1));
          }
          if (a.itemtype) declaredInItemtype(a.itemtype, m.declared);
          const opens = a['aria-controls'] ?? a['data-bs-target'] ?? a['data-target'];
          if (opens) for (const id of opens.split(WS)) if (id) m.controlled.add(id.startsWith('#') ? id.slice(1) : id);
          if (name === 'input') {
            const type = a.type?.toLowerCase();
            if (type === 'radio') {
              if (a.id) m.choices.add(a.id);
            } else if (type && CONTACT_INPUTS.has(type)) m.contactInputs.push(child);
          }
          const neg = (f.info ? f.info.neg : 1) * penalty(flags, f.inComment, f.inNeg);
          const boost = (f.info ? f.info.boost : 0) | boosts(flags);
          const ci = newInfo(idx++, neg, boost, flags);
          info.set(child, ci);
          if (name === 'body' && !foundBody) {
            foundBody = true;
            m.body = child;
          } else if (name === 'h1') m.h1s.push(child);
          if (flags & F_SEMANTIC) m.semantic.push(child);
          if (flags & F_ARTICLE) m.articles.push(child);
          const marked = f.marked || !!(flags & (F_HIDDEN | F_AD));
          if (marked && !f.marked) m.removable.push(child);
          const comment = !!(flags & F_COMMENT);
          if (comment && !f.inComment) m.comments.push(child);
          const block = INLINE_TAGS.has(name) ? f.block : ci;
          depth++;
          let g = frames[depth];
          if (!g)
            frames.push(
              (g = {
                el: child,
                info: ci,
                block,
                inLink: false,
                i: 0,
                kept: null,
                marked,
                inComment: false,
                inNeg: false,
                muted: false,
              }),
            );
          g.el = child;
          g.info = ci;
          g.block = block;
          g.inLink = f.inLink || name === 'a';
          g.i = 0;
          g.kept = null;
          g.marked = marked;
          g.inComment = f.inComment || comment;
          g.inNeg = f.inNeg || !!(flags & F_NEG);
          g.muted = f.muted || MUTED_TAGS.has(name);
        }
      } else if (child.type === 'comment' || child.type === 'directive') drop = true;
      if (drop) {
        if (!f.kept) f.kept = children.slice(0, f.i - 1);
      } else if (f.kept) f.kept.push(child);
      continue;
    }
    // Leaving f.el: finish its figures and credit its parent.
    depth--;
    if (f.kept) relink(f.el, f.kept);
    const ci = f.info;
    if (!ci) continue;
    const el = f.el as Element;
    const name = el.name;
    if (f.block === ci && ci.ownText) {
      let g: number;
      if (name === 'pre') g = ci.ownText;
      else {
        g = ci.ownLink * 2 > ci.ownText ? 0 : ci.ownText - ci.ownLink;
        if (ci.ownText < 25) g *= 0.3;
      }
      ci.good += g;
      ci.mass += g * ci.mult;
    }
    if (
      name.length === 2 &&
      name.charCodeAt(0) === 104 /* h */ &&
      name.charCodeAt(1) >= 49 &&
      name.charCodeAt(1) <= 54
    ) {
      ci.headings++;
      if (name === 'h1') ci.h1++;
    }
    const parent = depth >= 0 ? frames[depth].info : null;
    if (parent) {
      parent.text += ci.text;
      parent.link += ci.link;
      parent.good += ci.good;
      parent.mass += ci.mass;
      parent.tmass += ci.tmass;
      parent.h1 += ci.h1;
      parent.headings += ci.headings;
    }
  }
  return m;
}

/** Share of the body's text past which a boilerplate token marks the page's blocks, not its boilerplate. */
const UBIQUITOUS = 0.5;
const UBIQUITOUS_BLOCKS = 4;
const UBIQUITOUS_WRAPPER = 0.3;

/**
 * The boilerplate tokens whose elements hold most of the body's text: a page builder's naming
 * ("elementor-widget" on every block, "cmp-promo" on every card), not sidebars and promos.
 */
export function ubiquitousNegTokens(m: Measure): Set<string> {
  const out = new Set<string>();
  const body = isTag(m.body) ? m.info.get(m.body) : undefined;
  if (!body || !body.text || !m.negative.length) return out;
  const byToken = new Map<string, Element[]>();
  for (const el of m.negative) {
    for (const t of elementNegTokens(el.attribs)) {
      let list = byToken.get(t);
      if (!list) byToken.set(t, (list = []));
      list.push(el);
    }
  }
  for (const [t, els] of byToken) {
    // Outermost only: document order puts an ancestor before its descendants. Many blocks, none a
    // wrapper of the page ("layout-with-sidebar" around everything says nothing of its parts).
    let text = 0;
    let blocks = 0;
    let biggest = 0;
    let last: Element | null = null;
    for (const el of els) {
      if (last && isAncestor(last, el)) continue;
      last = el;
      const n = m.info.get(el)!.text;
      text += n;
      blocks++;
      if (n > biggest) biggest = n;
    }
    if (blocks >= UBIQUITOUS_BLOCKS && text > UBIQUITOUS * body.text && biggest < UBIQUITOUS_WRAPPER * body.text)
      out.add(t);
  }
  return out;
}

/** Whether a is an ancestor of b. */
export function isAncestor(a: ParentNode, b: AnyNode): boolean {
  for (let p = b.parent; p; p = p.parent) if (p === a) return true;
  return false;
}

/** What the <head> says about the page: og:type, og:url, the canonical link, JSON-LD types. */
function readHead(head: Element, m: Measure): void {
  const stack: Element[] = [head];
  while (stack.length) {
    const el = stack.pop()!;
    for (const k of el.children) {
      if (!isTag(k)) continue;
      const a = k.attribs;
      if (k.name === 'meta' && a.content) {
        if (a.property === 'og:type') declare(m.declared, 'og:' + a.content.trim().toLowerCase());
        else if (a.property === 'og:url') m.selfUrls.push(a.content);
      } else if (k.name === 'link' && a.href && a.rel?.toLowerCase() === 'canonical') m.selfUrls.push(a.href);
      else if (k.name === 'script' && a.type?.includes('ld+json')) declaredInJsonLd(k, m.declared);
      else if (k.name === 'style') readStyleElement(k, m.styles);
      else if (k.children.length && k.name !== 'script') stack.push(k);
    }
  }
}

const WS = /\s+/;
/** Controls whose text a reader does not see as text (a select's every option; a text area's default): not measured. */
const MUTED_TAGS = new Set(['select', 'datalist', 'textarea']);
const CONTACT_INPUTS = new Set(['email', 'tel', 'password']);
const LD_TYPE = /"@type"\s*:\s*(\[[^\]]*\]|"[^"]*")/g;
const QUOTED = /"([^"]+)"/g;

function readStyleElement(style: Element, into: PageStyles): void {
  const media = style.attribs.media;
  // A sheet for print or some screens only hides conditionally.
  if (media && media.trim().toLowerCase() !== 'all' && media.trim().toLowerCase() !== 'screen') return;
  for (const k of style.children) if (k.type === 'text') readStylesheet((k as Text).data, into);
}

/** The @type values of a JSON-LD script (a regex over its text: a page's type needs no JSON parse). */
function declaredInJsonLd(script: Element, out: Map<string, number>): void {
  for (const k of script.children) {
    if (k.type !== 'text') continue;
    for (const t of (k as Text).data.matchAll(LD_TYPE))
      for (const q of t[1].matchAll(QUOTED)) declare(out, q[1].toLowerCase().replace(/^.*[/:]/, ''));
  }
}

function declare(out: Map<string, number>, type: string): void {
  out.set(type, (out.get(type) ?? 0) + 1);
}

/** "https://schema.org/Product" (space-separated, any host) → "product". */
function declaredInItemtype(value: string, out: Map<string, number>): void {
  for (const v of value.split(/\s+/)) if (v) declare(out, v.toLowerCase().replace(/^.*\//, ''));
}

/**
 * Put the dropped <noscript> elements' content back in their place (the noscript unwrapped), for a
 * re-measure: pages that render their body with scripts and serve the text only there (forum threads).
 */
export function unwrapNoscripts(m: Measure): void {
  for (let i = m.noscripts.length - 1; i >= 0; i--) {
    const { el, parent, at } = m.noscripts[i];
    const kids = [...parent.children];
    kids.splice(at, 0, ...el.children);
    relink(parent, kids);
  }
  m.noscripts = [];
}

/** Replace a parent's children, keeping domhandler's sibling links right. */
export function relink(parent: ParentNode, kept: ChildNode[]): void {
  for (let i = 0; i < kept.length; i++) {
    const c = kept[i];
    c.prev = i > 0 ? kept[i - 1] : null;
    c.next = i + 1 < kept.length ? kept[i + 1] : null;
    c.parent = parent;
  }
  parent.children = kept;
}

/** Detach elements (each once; none inside another) and take their figures off their ancestors. */
export function detach(m: Measure, els: Element[]): void {
  const byParent = new Map<ParentNode, Set<ChildNode>>();
  for (const el of els) {
    const p = el.parent;
    if (!p) continue;
    let set = byParent.get(p);
    if (!set) byParent.set(p, (set = new Set()));
    set.add(el);
    const ci = m.info.get(el);
    if (!ci) continue;
    for (let a: ParentNode | null = p; a; a = a.parent) {
      const ai = isTag(a) ? m.info.get(a) : undefined;
      if (!ai) continue;
      ai.text -= ci.text;
      ai.link -= ci.link;
      ai.good -= ci.good;
      ai.mass -= ci.mass;
      ai.tmass -= ci.tmass;
      ai.h1 -= ci.h1;
      ai.headings -= ci.headings;
    }
  }
  for (const [p, set] of byParent) {
    relink(
      p,
      p.children.filter((c) => !set.has(c)),
    );
    for (const c of set) c.parent = c.prev = c.next = null;
  }
}
