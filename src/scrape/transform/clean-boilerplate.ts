// Element removal rules of the content filter: the boilerplate inside the chosen container (nav,
// menus, controls, ads, comment sections, link-dense blocks, skip links ...), or only the page-level
// layout (header/nav/footer/aside) for the fallback to the whole body.
import { type Element, isTag, type ParentNode, type Text } from 'domhandler';
import {
  INLINE_TAGS,
  SKIP_LINK,
  elementNegTokens,
  negTokensAround,
  onlyIgnoredNeg,
  F_AD,
  F_ARTICLE,
  F_BOILER,
  F_COMMENT,
  F_HEADER,
  F_NEG,
  F_POS,
  F_SEMANTIC,
  F_SR_ONLY,
  F_HIDDEN,
} from './clean-classify.ts';
import { type Info, isAncestor, type Measure } from './clean-measure.ts';
import type { PageKind } from './clean-page-kind.ts';
import { siteOf } from './clean-rails.ts';

/** Dropped inside the main content (controls, dialogs). */
const CONTROL_TAGS = new Set([
  'button',
  'input',
  'select',
  'textarea',
  'option',
  'optgroup',
  'datalist',
  'dialog',
  'form-control',
]);
/** Containers a link-dense block is judged on. */
const LINK_BLOCK_TAGS = new Set(['div', 'ul', 'ol', 'section', 'dl', 'table', 'tbody', 'p', 'span', 'header']);
/** "Advertisement" labels, edge punctuation around them, and "skip to content" links. */
const AD_LABEL =
  /^(advertisement|advertisements|advertising|sponsored( content)?|ad|ads|anzeige|publicité|publicidad|pubblicità|reklama|werbung)$/i;
const EDGE_PUNCT = /^[\s\p{P}\p{S}]+|[\s\p{P}\p{S}]+$/gu;

/** Step 5: the boilerplate inside the container (outermost elements only). */
export function boilerplateIn(
  m: Measure,
  root: Element,
  pageLevelOnly: boolean,
  kind: PageKind,
  site: ReadonlySet<string> = NO_SITE,
): Element[] {
  const ri = m.info.get(root)!;
  // A forum thread: the comments are the content (the page says it is a thread, or the container is,
  // or is mostly, comments after an opening post; a full article above a longer comment section is
  // still an article). A product's reviews are never its content.
  let forum = false;
  if (kind !== 'product')
    for (let p: ParentNode | null = root; p && isTag(p) && !forum; p = p.parent)
      forum = !!(m.info.get(p)!.flags & F_COMMENT);
  if (!forum && kind !== 'product') {
    let commentGood = 0;
    for (const c of m.comments) if (c.parent && isAncestor(root, c)) commentGood += m.info.get(c)!.good;
    // A page that says it is a thread may open with a post of any length.
    // A page that says it is an article is one once it has a real opening text, however many comments follow.
    const opener = kind === 'article' ? ARTICLE_OPENER : THREAD_OPENER;
    forum = commentGood > 0.5 * ri.good && (kind === 'thread' || ri.good - commentGood < opener);
  }
  const signup = signupWidgets(m, root);
  let first = walk(m, root, pageLevelOnly, forum, false, kind, site, signup);
  if (pageLevelOnly) return first.remove;
  // A grid the theme classed as a rail ("related-product") that is all the content has: the page's items.
  const grid = railClassedGrid(m, first.remove, ri);
  if (grid) first = walk(m, root, pageLevelOnly, forum, false, kind, site, signup, grid);
  // A listing (index, grid, link list): what is left once the flagged boilerplate is gone is mostly
  // links, so its link-dense blocks are the items, not navigation.
  const text = ri.text - first.flaggedText;
  const link = ri.link - first.flaggedLink;
  if (text > 0 && link > 0.5 * text && first.remove.length > first.flagged)
    return walk(m, root, pageLevelOnly, forum, true, kind, site, signup, grid || undefined).remove;
  return first.remove;
}

interface Walk {
  remove: Element[];
  /** How many of `remove` are boilerplate by their tag, role or class (not by link density), and their text. */
  flagged: number;
  flaggedText: number;
  flaggedLink: number;
}

function walk(
  m: Measure,
  root: Element,
  pageLevelOnly: boolean,
  forum: boolean,
  listing: boolean,
  kind: PageKind,
  site: ReadonlySet<string>,
  signup: ReadonlySet<Element>,
  kept?: Element,
): Walk {
  const ri = m.info.get(root)!;
  const half = 0.5 * ri.good;
  const w: Walk = { remove: [], flagged: 0, flaggedText: 0, flaggedLink: 0 };
  const grids = new Set<Element>();
  const notGrids = new Set<Element>();
  // The container sits inside a "widget" (a page builder's block): its inner widgets are its parts.
  const around = negTokensAround(root, AROUND_LEVELS);
  const stack: Element[] = [];
  pushChildren(stack, root);
  while (stack.length) {
    const el = stack.pop()!;
    const ei = m.info.get(el);
    if (!ei) continue;
    // Most of the content is never boilerplate, but a product's reviews outweighing its description;
    // in a container with hardly any prose (a chapter's table of contents), most of its text.
    const big =
      (ei.good > half && ri.good > 0 && !(kind === 'product' && ei.flags & F_COMMENT)) ||
      (ri.good < SCARCE_PROSE &&
        ei.text > 0.5 * ri.text &&
        !(ei.flags & (F_BOILER | F_HEADER | F_AD | F_COMMENT)) &&
        !CONTROL_TAGS.has(el.name));
    let why =
      big || el === kept
        ? 0
        : // A newsletter or sign-in box built without a <form>: its field, label, pitch and button.
          signup.has(el)
          ? FLAGGED
          : pageLevelOnly
            ? isLayoutBoilerplate(el, ei)
              ? FLAGGED
              : 0
            : boilerplate(m, el, ei, forum, around, site);
    // A grid of item tiles (names, prices) is mostly links too, but it is what a listing lists; so
    // are the tiles' parts.
    // A tile may be link-dense where its grid is not (prices and blurbs beside the links): its parent is the grid.
    if (
      why === LINK_DENSE &&
      (inside(grids, el, root) ||
        (isItemGrid(m, el, ri) && grids.add(el)) ||
        tileOfGrid(m, el, root, ri, kind, grids, notGrids))
    )
      why = 0;
    if (why && !(listing && why === LINK_DENSE)) {
      w.remove.push(el);
      if (why === FLAGGED) {
        w.flagged++;
        w.flaggedText += ei.text;
        w.flaggedLink += ei.link;
      }
    }
    // Nothing inside code is boilerplate (`<span class="hljs-comment">`).
    else if (el.name !== 'pre' && el.name !== 'code') pushChildren(stack, el);
  }
  return w;
}

/** Class tokens of rails (what else to read or buy): a theme may class a category's own grid so. */
const RAIL_TOKENS = new Set([
  'related',
  'recommended',
  'recommendations',
  'promo',
  'promos',
  'promotion',
  'promotions',
  'promoted',
  'popular',
  'trending',
  'widget',
  'widgets',
]);
/** Flags that say boilerplate by more than a class: these are never taken back. */
const NOT_CLASS_ONLY = F_BOILER | F_HEADER | F_AD | F_SR_ONLY | F_HIDDEN | F_COMMENT;
/** The removed grid must hold this many times the text the removal leaves. */
const RAIL_GRID_DWARFS = 2;
/** Wrappers looked through for a rail-classed grid (themes nest row > container > row > listing). */
const RAIL_GRID_WRAPPERS = 6;

/**
 * The largest removed element that is boilerplate only by rail class tokens and is an item grid, when it dwarfs
 * what its removal leaves of the container: then it is the page's content, not a rail beside it.
 */
function railClassedGrid(m: Measure, removed: Element[], ri: Info): Element | null {
  let left = ri.text;
  let top: Element | null = null;
  let topText = 0;
  for (const el of removed) {
    const ei = m.info.get(el)!;
    left -= ei.text;
    if (ei.text <= topText || !(ei.flags & F_NEG) || ei.flags & NOT_CLASS_ONLY || CONTROL_TAGS.has(el.name)) continue;
    const tokens = elementNegTokens(el.attribs);
    if (!tokens.length || !tokens.every((t) => RAIL_TOKENS.has(t))) continue;
    if (!isItemGrid(m, el, ei, RAIL_GRID_WRAPPERS)) continue;
    top = el;
    topText = ei.text;
  }
  return top && topText >= RAIL_GRID_DWARFS * left ? top : null;
}

function pushChildren(stack: Element[], el: ParentNode): void {
  const kids = el.children;
  for (let i = kids.length - 1; i >= 0; i--) {
    const k = kids[i];
    if (k.type === 'tag') stack.push(k as Element);
  }
}

function isLayoutBoilerplate(el: Element, ei: Info): boolean {
  if (ei.flags & F_BOILER) return true;
  if (ei.flags & F_HEADER) return !keepHeader(ei);
  return false;
}

/** A page-level <header> is kept when it holds the title (an h1, or a heading that is not a list of links). */
function keepHeader(ei: Info): boolean {
  return ei.h1 > 0 || (ei.headings > 0 && ei.link * 2 < ei.text);
}

/** The container and its closest ancestors whose boilerplate classes its own parts may share. */
const AROUND_LEVELS = 3;

// The prose outside the comments of a thread is its opening post; past this it is an article.
const THREAD_OPENER = 1500;
/** Prose below which a container's text, not its prose, says what most of its content is. */
const SCARCE_PROSE = 500;
const ARTICLE_OPENER = 500;

const FLAGGED = 1;
const LINK_DENSE = 2;

/** Why an element is boilerplate inside the content: FLAGGED, LINK_DENSE, or 0 when it is not. */
function boilerplate(
  m: Measure,
  el: Element,
  ei: Info,
  forum: boolean,
  around: ReadonlySet<string>,
  site: ReadonlySet<string>,
): number {
  if (isFlagged(m, el, ei, forum, around)) return FLAGGED;
  return isLinkDense(el, ei, forum, site) ? LINK_DENSE : 0;
}

function isFlagged(m: Measure, el: Element, ei: Info, forum: boolean, around: ReadonlySet<string>): boolean {
  const f = ei.flags;
  if (f & F_BOILER || CONTROL_TAGS.has(el.name)) return true;
  // A link styled as a button is a call to action ("Book a demo", "Get a free quote"), unless a sentence holds it.
  if (el.name === 'a' && ei.text < BUTTON_TEXT && isButton(el) && !inSentence(m, el, ei)) return true;
  // A form asking for an email, a phone number or a password: sign-up, lead capture, sign-in.
  if (el.name === 'form' && m.contactInputs.some((input) => isAncestor(el, input))) return true;
  // The label of a radio button: a choice (a colour, a size), not the page's text.
  if (el.name === 'label' && el.attribs.for && m.choices.has(el.attribs.for)) return true;
  // Inside the content a header is kept when it holds any heading (listing cards link theirs).
  if (f & F_HEADER) return ei.headings === 0;
  if (f & F_SR_ONLY || f & F_AD) return true;
  if (f & F_COMMENT && !forum && !(f & F_SEMANTIC)) return true;
  if (
    f & F_NEG &&
    !(f & F_SEMANTIC) &&
    !(f & F_POS && f & F_ARTICLE) &&
    !isProse(ei) &&
    !(around.size && onlyIgnoredNeg(el.attribs, around))
  )
    return true;
  // "Skip to content" links and "Advertisement" labels: short leaves (their text is one text node).
  if (ei.text > 1 && ei.text < 40 && el.children.length === 1 && el.children[0].type === 'text') {
    const t = (el.children[0] as Text).data.trim();
    if (el.name === 'a' ? SKIP_LINK.test(t) : ei.text <= 20 && AD_LABEL.test(t.replace(EDGE_PUNCT, ''))) return true;
  }
  return false;
}

const BUTTON_CLASS = /(^|[\s_-])(btn|button|cta)([\s_-]|$)/i;
const BUTTON_TEXT = 40;

function isButton(a: Element): boolean {
  return a.attribs.role === 'button' || (!!a.attribs.class && BUTTON_CLASS.test(a.attribs.class));
}

/** The link sits in a paragraph (or list item) with words of its own around it. */
function inSentence(m: Measure, el: Element, ei: Info): boolean {
  const p = el.parent;
  if (!p || !isTag(p) || (p.name !== 'p' && p.name !== 'li')) return false;
  const pi = m.info.get(p);
  return !!pi && pi.text > ei.text + 20;
}

/**
 * A long run of prose with few links is content whatever its class says ("toc-para" is a section a
 * table of contents points to; menus, share bars and related rails are short or link-dense).
 */
function isProse(ei: Info): boolean {
  return ei.good >= PROSE_CHARS && ei.link < 0.15 * ei.text;
}
const PROSE_CHARS = 400;

/** Whether an ancestor of el (below root) is in the set. */
function inside(set: Set<Element>, el: Element, root: Element): boolean {
  if (!set.size) return false;
  for (let p = el.parent; p && p !== root; p = p.parent) if (set.has(p as Element)) return true;
  return false;
}

/** Tiles in a grid: at least this many, this much text each on average, this share of the container's text. */
const GRID_ITEMS = 4;
const GRID_ITEM_TEXT = 20;
const GRID_SHARE = 0.25;
/** Wrappers looked through to find the grid, and the share of their text the grid's one child holds. */
const GRID_WRAPPERS = 4;
const GRID_WRAPPER_SHARE = 0.8;

/**
 * A grid or list of item tiles: many children (or, through up to four wrappers, the children of the one that
 * holds nearly all the text) of the same tag,
 * each with text, longer on average than menu entries, together a good share of the container.
 * Menus and link lists have entries of a word or three.
 */
function isItemGrid(m: Measure, el: Element, ri: Info, wrappers = GRID_WRAPPERS): boolean {
  const ei = m.info.get(el)!;
  if (ei.text < GRID_SHARE * ri.text) return false;
  let list: Element = el;
  for (let level = 0; level < wrappers; level++) {
    const kids = list.children.filter((k): k is Element => isTag(k) && !!m.info.get(k)?.text);
    if (kids.length === 1) {
      list = kids[0];
      continue;
    }
    // A wrapper whose one child holds nearly all its text (the grid beside a short header).
    if (kids.length < GRID_ITEMS) {
      const li = m.info.get(list)!;
      const main = kids.find((k) => m.info.get(k)!.text >= GRID_WRAPPER_SHARE * li.text);
      if (main) {
        list = main;
        continue;
      }
    }
    if (kids.length < GRID_ITEMS) return false;
    const tag = kids[0].name;
    let text = 0;
    for (const k of kids) {
      if (k.name !== tag) return false;
      text += m.info.get(k)!.text;
    }
    return text / kids.length >= GRID_ITEM_TEXT;
  }
  return false;
}

/** A tile of a grid: at most this much text, and this share of the grid's. */
const TILE_TEXT = 500;
const TILE_SHARE = 0.4;

/**
 * Whether el's parent (below the container) is a grid of item tiles; memoised both ways. On a product page only
 * a grid holding most of the container: a smaller one is what other customers bought.
 */
function tileOfGrid(
  m: Measure,
  el: Element,
  root: Element,
  ri: Info,
  kind: PageKind,
  grids: Set<Element>,
  notGrids: Set<Element>,
): boolean {
  const p = el.parent;
  if (!p || p === root || !isTag(p) || notGrids.has(p)) return false;
  if (grids.has(p)) return true;
  if (m.info.get(el)!.text > TILE_TEXT) return false;
  const pi = m.info.get(p)!;
  if (
    isItemGrid(m, p, ri) &&
    (kind !== 'product' || pi.text > 0.5 * ri.text) &&
    // Tiles are alike: none holds much of the grid (a page's sections in one wrapper are no grid).
    p.children.every((k) => !isTag(k) || (m.info.get(k)?.text ?? 0) <= TILE_SHARE * pi.text)
  ) {
    grids.add(p);
    return true;
  }
  notGrids.add(p);
  return false;
}

/** Inside a link, or directly in a paragraph: inline text, not a block of its own. */
function inRunningText(el: Element): boolean {
  const p = el.parent;
  if (!p || !isTag(p)) return false;
  if (p.name === 'p') return true;
  for (let a: ParentNode | null = p; a && isTag(a) && INLINE_TAGS.has(a.name); a = a.parent)
    if (a.name === 'a') return true;
  return false;
}

function isLinkDense(el: Element, ei: Info, forum: boolean, site: ReadonlySet<string>): boolean {
  // Link-dense blocks; in a thread, short ones are each post's attribution ("user · 2 hours ago").
  if (
    LINK_BLOCK_TAGS.has(el.name) &&
    ei.text > 0 &&
    ei.link > 0.5 * ei.text &&
    ei.headings === 0 &&
    !(forum && ei.text < 80)
  ) {
    // A span in running text is part of its sentence ("according to <a><span>limelight</span></a>, 85%").
    if (el.name === 'span' && inRunningText(el)) return false;
    // A paragraph that is one sentence-long link is content ("Read the report").
    if (el.name === 'p' || el.name === 'span') return ei.link > 0.8 * ei.text && ei.text < 60;
    // A list whose every link goes to another site is a reading list or the sources, not navigation.
    if ((el.name === 'ul' || el.name === 'ol') && site.size && linksElsewhere(el, site)) return false;
    return true;
  }
  return false;
}

const NO_SITE: ReadonlySet<string> = new Set();

/** At least two links, each absolute and to a host outside the page's site. */
function linksElsewhere(el: Element, site: ReadonlySet<string>): boolean {
  let n = 0;
  const stack: Element[] = [el];
  while (stack.length) {
    const e = stack.pop()!;
    if (e.name === 'a') {
      const host = URL.parse(e.attribs.href ?? '')?.hostname;
      if (!host || site.has(siteOf(host))) return false;
      n++;
      continue;
    }
    for (const k of e.children) if (isTag(k)) stack.push(k);
  }
  return n >= 2;
}

/** A sign-up or lead widget's text at most (its heading, a line of pitch, the field's label, the button). */
const SIGNUP_TEXT = 400;

/**
 * The blocks around the root's email, phone and password inputs, each the largest ancestor of its input with
 * under SIGNUP_TEXT characters: a newsletter box built without a <form> (a script sends it).
 */
function signupWidgets(m: Measure, root: Element): Set<Element> {
  const out = new Set<Element>();
  for (const input of m.contactInputs) {
    if (!input.parent || !isAncestor(root, input)) continue;
    let top: Element | null = null;
    for (let p: ParentNode | null = input.parent; p && p !== root && isTag(p); p = p.parent) {
      const pi = m.info.get(p);
      // An item's "notify me" field belongs to the item (a product card), a hero's "enter your email"
      // to the page's title: both are content.
      if (!pi || pi.text > SIGNUP_TEXT || pi.h1 > 0 || p.name === 'li' || p.name === 'article') break;
      top = p;
    }
    if (top) out.add(top);
  }
  return out;
}
