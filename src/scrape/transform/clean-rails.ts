// Teaser rails inside the main content: "related posts", "more stories", "customers also viewed".
// Structurally, a rail is a group of sibling cards, each a short block with a heading that links to
// another page of the same site. The page's own sections have headings that are not links; a
// listing's items are cards too, which is why a rail is only dropped after, and beside, content that
// is not cards (most of the container's prose lies outside it). On a product page any group of
// cards linking elsewhere on the site is a recommendation carousel, wherever it sits and however
// the card is linked (a heading link, or a link laid over the card); so is a group of headless tiles
// each with a price and a link ("Complete your order"), while it holds under half the text.
import { type Element, isTag } from 'domhandler';
import { textContent } from 'domutils';
import type { Measure } from './clean-measure.ts';

/** A card: a block this short (characters of text) with one or two headings. */
const CARD_TEXT = 700;
/** Cards in a group. */
const MIN_CARDS = 2;
/** A rail goes when at least this much prose stays outside every rail (and, on an article, comes before it). */
const KEEP_PROSE = 500;
/** On a product page, what must stay outside the rails (characters of text: a name, a price, a few specs). */
const PRODUCT_KEEP = 200;
/** ... and the rails hold less than this share of the container's text. */
const RAIL_SHARE = 0.5;
/** A heading just before a rail, this short, is its title ("Related articles"). */
const RAIL_TITLE = 80;

const HEADING = /^h[2-6]$/;

interface RailContext {
  m: Measure;
  /** The page's site (hosts without "www."). */
  site: Set<string>;
  product: boolean;
  article: boolean;
  /** The page's URL (relative links resolve against it), and its path as a folder ("/a/b/"), unless it is "/". */
  base: string;
  under: string | null;
}

/** The rails in the container (outermost only), each with the title heading before it. */
export function railsIn(
  m: Measure,
  root: Element,
  site: Set<string>,
  product: boolean,
  article: boolean,
  url: string | undefined,
): Element[] {
  const ri = m.info.get(root);
  if (!ri || (product ? ri.text < PRODUCT_KEEP : ri.good < KEEP_PROSE)) return [];
  // Without a URL, relative links are this site's and nothing is "below" the page.
  const page = url ? URL.parse(url) : null;
  const folder = page ? (page.pathname.endsWith('/') ? page.pathname : page.pathname + '/') : '/';
  const cx: RailContext = {
    m,
    site,
    product,
    article,
    base: page?.href ?? 'http://x/',
    under: folder === '/' ? null : folder,
  };
  const rails: Element[] = [];
  let railGood = 0;
  let railText = 0;
  let tileText = 0;
  const stack: Element[] = [root];
  while (stack.length) {
    const el = stack.pop()!;
    if (el !== root && isCardGroup(cx, el) && (product || proseBefore(m, root, el) >= KEEP_PROSE)) {
      const ei = m.info.get(el)!;
      rails.push(el);
      railGood += ei.good;
      railText += ei.text;
      continue;
    }
    if (product && el !== root && isPriceTileGroup(cx, el)) {
      const ei = m.info.get(el)!;
      rails.push(el);
      railText += ei.text;
      tileText += ei.text;
      continue;
    }
    for (const k of el.children) if (isTag(k) && !HEADING.test(k.name) && k.name !== 'pre') stack.push(k);
  }
  if (
    !rails.length ||
    (product
      ? ri.text - railText < PRODUCT_KEEP || tileText > RAIL_SHARE * ri.text
      : ri.good - railGood < KEEP_PROSE || railText > RAIL_SHARE * ri.text)
  )
    return [];
  const out: Element[] = [];
  for (const r of rails) {
    out.push(r);
    const title = titleBefore(m, r);
    if (title) out.push(title);
  }
  return out;
}

/** At least MIN_CARDS children are cards, and cards hold most of the group's text. */
function isCardGroup(cx: RailContext, el: Element): boolean {
  const ei = cx.m.info.get(el)!;
  if (ei.headings < MIN_CARDS || ei.text === 0) return false;
  let cards = 0;
  let cardText = 0;
  for (const k of el.children) {
    if (!isTag(k)) continue;
    const ki = cx.m.info.get(k);
    if (!ki || ki.text === 0) continue;
    if (isCard(cx, k)) {
      cards++;
      cardText += ki.text;
    }
  }
  return cards >= MIN_CARDS && cardText >= 0.7 * ei.text;
}

/** Price tiles in a group: at least this many; a tile has at most PRICE_TILE_TEXT characters. */
const MIN_PRICE_TILES = 3;
const PRICE_TILE_TEXT = 300;
/** A price: a currency sign or code next to a number. */
const PRICE =
  /[$€£¥₹]\s?\d|\d\s?[$€£¥₹]|\b(USD|EUR|GBP|AUD|CAD|CHF|JPY|INR|SEK|NOK|DKK|PLN)\s?\d|\d\s?(USD|EUR|GBP|AUD|CAD|CHF|JPY|INR|SEK|NOK|DKK|PLN|kr|zł)\b/;

/**
 * On a product page, a group of headless product tiles ("Complete your order", "Frequently bought together"):
 * at least MIN_PRICE_TILES children, each a short block with a price and a link to another page of the site,
 * together most of the group's text.
 */
function isPriceTileGroup(cx: RailContext, el: Element): boolean {
  const ei = cx.m.info.get(el)!;
  if (!ei.link || ei.text > el.children.length * PRICE_TILE_TEXT) return false;
  let tiles = 0;
  let tileText = 0;
  for (const k of el.children) {
    if (!isTag(k)) continue;
    const ki = cx.m.info.get(k);
    if (!ki || ki.text === 0) continue;
    if (ki.text <= PRICE_TILE_TEXT && ki.link > 0 && isPriceTile(cx, k)) {
      tiles++;
      tileText += ki.text;
    }
  }
  return tiles >= MIN_PRICE_TILES && tileText >= 0.7 * ei.text;
}

function isPriceTile(cx: RailContext, el: Element): boolean {
  if (!PRICE.test(textContent(el))) return false;
  return first(el, (e) => e.name === 'a' && !!e.attribs.href && isOtherPageOfSite(e.attribs.href, cx)) !== null;
}

/**
 * A short block with a heading or two, linked to another page of the same site: by a heading (mostly
 * link text), or on a product page by a link without text (around the tile's picture, or over it). A link to a part of this page is an
 * accordion; one to another site, a curated reading list.
 */
function isCard(cx: RailContext, el: Element): boolean {
  const ei = cx.m.info.get(el)!;
  if (ei.text > CARD_TEXT || ei.headings === 0 || ei.headings > 2) return false;
  // The title heading: the first that is mostly a link (a card may also head itself with its category).
  const h = first(el, (e) => HEADING.test(e.name) && isLinkText(cx.m, e));
  if (h) {
    // The heading links, or (beside an article) sits in the link: a card linked whole, picture and title.
    const href = firstHref(h) ?? (cx.article ? enclosingHref(h, el) : null);
    return href !== null && isOtherPageOfSite(href, cx);
  }
  if (!cx.product) return false;
  // A product tile: a link around its picture or laid over the whole tile (no text of its own).
  const a = first(el, (e) => e.name === 'a' && !!e.attribs.href && !cx.m.info.get(e)?.text);
  return a !== null && isOtherPageOfSite(a.attribs.href, cx);
}

function isLinkText(m: Measure, e: Element): boolean {
  const i = m.info.get(e);
  return !!i && i.text > 0 && i.link >= 0.6 * i.text;
}

function firstHref(el: Element): string | null {
  return first(el, (e) => e.name === 'a' && !!e.attribs.href)?.attribs.href ?? null;
}

/** The href of a link around the element, below the card. */
function enclosingHref(e: Element, card: Element): string | null {
  for (let p = e.parent; p && p !== card && isTag(p); p = p.parent)
    if (p.name === 'a' && p.attribs.href) return p.attribs.href;
  return null;
}

/** The first element (document order) in the subtree that passes the test. */
function first(el: Element, test: (e: Element) => boolean): Element | null {
  const stack: Element[] = [el];
  while (stack.length) {
    const e = stack.pop()!;
    if (test(e)) return e;
    for (let i = e.children.length - 1; i >= 0; i--) {
      const k = e.children[i];
      if (isTag(k)) stack.push(k);
    }
  }
  return null;
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/**
 * Another page of this site, not one below this page: a hub's cards link its own parts
 * (/services/hr/ lists /services/hr/payroll/), a rail links pages beside it.
 */
function isOtherPageOfSite(href: string, cx: RailContext): boolean {
  if (href.includes('#')) return false;
  const url = URL.parse(href, cx.base);
  if (!url) return false;
  // Relative links are this site's ("//host/..." is not relative; "mailto:" and "javascript:" are no page).
  if ((href.startsWith('//') || SCHEME.test(href)) && !cx.site.has(siteOf(url.hostname))) return false;
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
  return !(cx.under && url.pathname.startsWith(cx.under) && url.pathname.length > cx.under.length);
}

/** A host without its "www." (the rail of www.example.com links example.com, and back). */
export function siteOf(host: string): string {
  return host.startsWith('www.') ? host.slice(4) : host;
}

/** Prose of the container before the element (in document order). */
function proseBefore(m: Measure, root: Element, el: Element): number {
  let sum = 0;
  for (let at: Element = el; at !== root && at.parent && isTag(at.parent); at = at.parent) {
    for (let sib = at.prev; sib; sib = sib.prev) if (isTag(sib)) sum += m.info.get(sib)?.good ?? 0;
  }
  return sum;
}

/**
 * The short, unlinked heading just before the rail: the nearest block with text before it, at its
 * level or, while the rail is all the text of its wrappers, theirs.
 */
function titleBefore(m: Measure, rail: Element): Element | null {
  const railText = m.info.get(rail)!.text;
  let at: Element = rail;
  for (let level = 0; level < 5; level++) {
    let prev = at.prev;
    while (prev && !(isTag(prev) && m.info.get(prev)?.text)) prev = prev.prev;
    if (prev && isTag(prev)) {
      const pi = m.info.get(prev)!;
      if (pi.text > RAIL_TITLE || pi.headings !== 1 || pi.link > 0.5 * pi.text) return null;
      return prev;
    }
    const parent = at.parent;
    if (!parent || !isTag(parent) || m.info.get(parent)!.text > railText) return null;
    at = parent;
  }
  return null;
}
