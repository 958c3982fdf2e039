// The deterministic content filter behind the scrape options onlyMainContent, includeTags,
// excludeTags and blockAds. Input: the parsed page. Callers parse once, read what needs the whole
// page first (metadata, links, images: extractMetadata must see the original tree), then hand the
// tree here; this module mutates it. Output: nodes of that tree to render as markdown/html.
//
// Order of operations (each step sees the result of the previous one):
//   1. excludeTags: every element matching one of the CSS selectors is dropped. A selector
//      css-select cannot parse is a 400 (validateSelectors lets a route check before fetching).
//   2. One iterative walk drops what is never content (script, style, noscript, template, title,
//      iframe, object, embed, svg, canvas, link, meta, head, HTML comments) and, in the same walk,
//      measures every element (text, link text, prose text, a boilerplate-weighted prose mass)
//      and notes elements that are hidden (hidden, aria-hidden="true", inline display:none or
//      visibility:hidden, a closed <dialog>) or, with blockAds, ads and cookie/consent banners.
//   3. includeTags: when given, the result is the matching elements in document order, a match
//      inside another match not repeated (possibly nothing). Main-content detection is skipped:
//      an explicit selection wins over heuristics. Matches (and their ancestors) are never
//      removed as ads/hidden; ads/hidden elements inside them are.
//   4. Hidden elements and (blockAds) ads/banners are removed, except one holding most of the
//      page's text (pages that hide their body until a script runs, a recipe card classed
//      "cookie-…-banner").
//   5. onlyMainContent=false: the rest of <body>. Otherwise main-content detection:
//      - descend from <body> into the child holding ≥ 80% of the weighted prose mass, unless that
//        child is a paragraph-level block (p, pre, ul, table cells stay with their siblings), one
//        of several similar items (forum posts, answers, listing cards), or has a sibling with
//        substantial unpenalised prose. A block's prose is its own non-link text (blocks that are
//        mostly links count nothing; short fragments little), weighted down inside nav/aside/
//        footer/header, role=navigation|banner|contentinfo|complementary and class/id tokens
//        such as nav, sidebar, footer, share, related, comment, widget, promo, ad, cookie;
//        weighted up (once per kind, not per nesting level) inside article, main/[role=main]/
//        [itemprop=articleBody] and tokens such as article, content, entry, post, body, text;
//      - a semantic container (<main>, [role=main], itemprop=articleBody, the page's single
//        <article>) holding ≥ 60% of the chosen container's mass narrows the choice to it;
//      - climb back up (≤ 3 levels) to an ancestor that adds little prose when it brings the
//        page's <h1> or is the semantic container (titles and standfirsts usually sit in a header
//        just above the body); otherwise the page's <h1> just before the container is prepended,
//        or, on pages without an <h1>, a short block before it whose text is the <title>;
//      - inside the container, strip boilerplate: nav, aside, footer, menus, form controls,
//        headers without any heading, navigation roles, boilerplate class/id tokens, ads,
//        comment sections (unless comments are most of the container: a forum thread's posts are
//        its content), link-dense blocks, "skip to content" links, "Advertisement" labels,
//        visually hidden text. Nothing holding more than half the container's prose is stripped,
//        and nothing inside <pre>/<code> is.
//      - never empty: when that leaves no text but the body has some, fall back to the body
//        without its page-level header/nav/footer/aside, then to the whole body.
// With blockAds=false, onlyMainContent still strips ads as boilerplate; only both off keep them.
// Pages without a <body> tag get one (htmlparser2 does not invent it) so the above applies.
// Class/id matching is on tokens (split on -, _, spaces, camelCase), never substrings: "ad"
// matches `ad-slot` and `AdUnit`, not `header`, `download`, `shadow`, `readme` or `masthead`.
// Cost: one walk to measure, then walks over the chosen container only; no re-parsing.
import { selectAll } from 'css-select';
import type { AnyNode, ChildNode, Document, Element, ParentNode, Text } from 'domhandler';
import { Element as ElementNode, isTag } from 'domhandler';
import { findOne, textContent } from 'domutils';
import { BadRequestError } from '../../errors.ts';

export interface CleanOptions {
  /** Default true. */
  onlyMainContent: boolean;
  includeTags?: string[];
  excludeTags?: string[];
  /** Default true. */
  blockAds?: boolean;
}

/** Throws a 400 naming the first selector css-select cannot parse. */
export function validateSelectors(selectors: readonly string[] | undefined, option = 'selector'): void {
  for (const s of selectors ?? []) {
    const problem = selectorProblem(s);
    if (problem) throw new BadRequestError(`Invalid CSS selector in ${option}: ${JSON.stringify(s)} (${problem})`);
  }
}

/** Why css-select cannot use this selector, or undefined when it can. */
export function selectorProblem(selector: string): string | undefined {
  try {
    selectAll(selector, []);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

// ---------------------------------------------------------------------------------------------
// Vocabulary

const DROP_TAGS = new Set(['script', 'style', 'noscript', 'template', 'title', 'iframe', 'object', 'embed', 'svg', 'canvas', 'link', 'meta', 'head', 'base', 'frame', 'frameset', 'applet']);

/** Elements whose text flows inside the nearest block ancestor. */
const INLINE_TAGS = new Set([
  'a', 'abbr', 'b', 'bdi', 'bdo', 'br', 'cite', 'code', 'data', 'dfn', 'em', 'i', 'kbd', 'mark', 'q', 's', 'samp', 'small',
  'span', 'strong', 'sub', 'sup', 'time', 'u', 'var', 'wbr', 'img', 'label', 'font', 'strike', 'tt', 'big', 'del', 'ins',
  'nobr', 'picture', 'source', 'abbr', 'acronym', 'ruby', 'rt', 'rp', 'output', 'meter', 'progress',
]);

/** Layout boilerplate by tag. */
const BOILER_TAGS = new Set(['nav', 'aside', 'footer', 'menu']);
/** Dropped inside the main content (controls, dialogs). */
const CONTROL_TAGS = new Set(['button', 'input', 'select', 'textarea', 'option', 'optgroup', 'datalist', 'dialog', 'form-control']);
const BOILER_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary', 'search', 'menu', 'menubar', 'toolbar', 'dialog', 'alertdialog', 'tablist', 'tooltip']);
/** Paragraph-level blocks: main-content detection does not descend into them. */
const LEAF_BLOCKS = new Set(['p', 'pre', 'blockquote', 'ul', 'ol', 'dl', 'li', 'dd', 'dt', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'figure', 'figcaption', 'address', 'code', 'details', 'summary', 'caption', 'th']);
/** Containers a link-dense block is judged on. */
const LINK_BLOCK_TAGS = new Set(['div', 'ul', 'ol', 'section', 'dl', 'table', 'tbody', 'p', 'span', 'header']);

/** Advertising tokens (blockAds, and boilerplate for onlyMainContent). */
const AD_TOKENS = new Set([
  'ad', 'ads', 'adv', 'advert', 'adverts', 'advertisement', 'advertisements', 'advertising', 'advertorial', 'adsbygoogle',
  'adslot', 'adunit', 'adbox', 'adbanner', 'adcontainer', 'adwrapper', 'adsense', 'adzone', 'adspace', 'adplaceholder',
  'dfp', 'doubleclick', 'googleads', 'sponsor', 'sponsored', 'sponsorship', 'taboola', 'outbrain', 'revcontent', 'mgid',
  'zergnet', 'adspot', 'adthrive', 'mediavine', 'ezoic', 'teads', 'billboard', 'leaderboard', 'skyscraper', 'dianomi',
]);
/** Consent tokens that are banners on their own. */
const CONSENT_TOKENS = new Set([
  'consent', 'gdpr', 'ccpa', 'cookiebanner', 'cookieconsent', 'cookienotice', 'cookiebar', 'cookielaw', 'cookiebot',
  'onetrust', 'didomi', 'usercentrics', 'truste', 'trustarc', 'quantcast', 'cmp', 'cmpbox', 'termly', 'iubenda', 'osano',
]);
/** "cookie" is only a banner next to one of these (a recipe card may be classed "cookie-…"). */
const COOKIE_COMPANIONS = new Set([
  'banner', 'bar', 'notice', 'notification', 'consent', 'popup', 'modal', 'policy', 'law', 'dialog', 'message', 'alert',
  'overlay', 'container', 'wrapper', 'box', 'warning', 'info', 'accept', 'settings', 'preferences', 'prompt', 'window',
]);
/** Newsletter and paywall interstitials: "newsletter"/"subscribe" next to one of these. */
const POPUP_TOKENS = new Set(['popup', 'modal', 'overlay', 'lightbox', 'interstitial', 'flyout', 'slidein', 'toast']);

/** Boilerplate tokens: weighted down when scoring, stripped inside the main content. */
const NEG_TOKENS = new Set([
  'nav', 'navbar', 'navigation', 'navlinks', 'navmenu', 'menu', 'menubar', 'submenu', 'megamenu', 'topbar', 'topnav',
  'breadcrumb', 'breadcrumbs', 'crumbs', 'sidebar', 'sidenav', 'sidebars', 'footer', 'masthead', 'share', 'shares', 'sharing',
  'sharebar', 'sharedaddy', 'addtoany', 'social', 'socials', 'related', 'recommended', 'recommendations', 'promo', 'promos',
  'promotion', 'promotions', 'promoted', 'widget', 'widgets', 'newsletter', 'subscribe', 'subscription', 'signup', 'popup',
  'modal', 'overlay', 'pagination', 'pager', 'skip', 'skiplink', 'toolbar', 'trending', 'popular', 'mostread', 'mostpopular',
  'tagcloud', 'toc', 'login', 'signin', 'cookie', 'cookies', 'paywall', 'jumplinks', 'postnav', 'byline', 'dateline',
  'signature', 'postprofile', 'userinfo', 'backtotop', 'back2top',
  ...AD_TOKENS, ...CONSENT_TOKENS,
]);
/** "author" next to one of these is an author box (bio, avatar, "more by"). */
const AUTHOR_BOX = new Set(['bio', 'box', 'info', 'card', 'about', 'profile', 'details']);
/** Comment sections: stripped unless they are most of the content (forum threads). */
const COMMENT_TOKENS = new Set(['comment', 'comments', 'commentlist', 'disqus', 'respond', 'replies', 'discussion', 'commentary']);
/** Content tokens (Readability's positive list, trimmed). */
const POS_TOKENS = new Set([
  'article', 'articlebody', 'body', 'content', 'entry', 'hentry', 'main', 'maincontent', 'post', 'postbody', 'text', 'blog',
  'story', 'storybody', 'prose', 'markdown', 'typeset', 'parser', 'answer', 'question', 'recipe', 'instructions', 'ingredients',
  'description', 'product', 'documentation', 'docs',
]);
/** Class names that hide text visually (screen-reader only). */
const SR_ONLY = /^(sr-only|visually-hidden|visuallyhidden|screen-reader-text|screen-reader-only|a11y-hidden|assistive-text|u-hidden-visually|hidden-visually|element-invisible|offscreen)$/i;
/** Taxonomy classes WordPress & co. put on the article itself ("tag-social-media", "category-sponsored"). */
const TAXONOMY_CLASS = /^(tag|tags|category|cat|categories|format|post-format|status|type|postid|page-id|topic)[-_]/i;
const AD_LABEL = /^(advertisement|advertisements|advertising|sponsored( content)?|ad|ads|anzeige|publicité|publicidad|pubblicità|reklama|werbung)$/i;
const EDGE_PUNCT = /^[\s\p{P}\p{S}]+|[\s\p{P}\p{S}]+$/gu;
const SKIP_LINK = /^(skip|jump) to (the )?(main )?(content|article|navigation|main)/i;

// ---------------------------------------------------------------------------------------------
// Measurement

const F_BOILER = 1; // nav/aside/footer/menu or boilerplate role
const F_HEADER = 2;
const F_NEG = 4;
const F_COMMENT = 8;
const F_POS = 16;
const F_SEMANTIC = 32; // main, [role=main], [itemprop=articleBody]
const F_ARTICLE = 64;
const F_AD = 128; // ad / consent / popup by tokens or attributes
const F_SR_ONLY = 256;
const F_HIDDEN = 512;
const F_LOGO = 1024; // logo/brand/site-title tokens

interface Info {
  idx: number;
  /** Non-whitespace characters of text in the subtree. */
  text: number;
  /** Of which inside <a>. */
  link: number;
  /** Prose characters: non-link text of blocks that are not mostly links (short blocks discounted). */
  good: number;
  /** `good` weighted by the boilerplate/content multipliers of the block's ancestors. */
  mass: number;
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

interface Measure {
  info: Map<Element, Info>;
  body: ParentNode;
  h1s: Element[];
  semantic: Element[];
  articles: Element[];
  /** Hidden elements and, with blockAds, ads/banners (outermost only). */
  removable: Element[];
  /** Comment-section elements (outermost only). */
  comments: Element[];
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

const CAMEL = /([a-z0-9])([A-Z])/g;
const SPLIT = /[^a-z0-9]+/;
const WS = /\s+/;

// Token features of one class or id value (cached: class strings repeat across a page and pages).
const T_SR = 1;
const T_COMMENT = 2;
const T_NEG = 4;
const T_POS = 8;
const T_AD = 16;
const T_COOKIE = 32;
const T_COOKIE_COMPANION = 64;
const T_LETTER = 128;
const T_POPUP = 256;
const T_AUTHOR = 512;
const T_AUTHOR_BOX = 1024;
const T_LOGO = 2048;

const featureCache = new Map<string, number>();

function tokenFeatures(name: string): number {
  let f = 0;
  const tokens = name.replace(CAMEL, '$1 $2').toLowerCase().split(SPLIT);
  for (const t of tokens) {
    if (!t) continue;
    if (COMMENT_TOKENS.has(t)) f |= T_COMMENT;
    else if (NEG_TOKENS.has(t)) f |= T_NEG;
    else if (POS_TOKENS.has(t)) f |= T_POS;
    if (AD_TOKENS.has(t) || CONSENT_TOKENS.has(t)) f |= T_AD;
    if (t === 'cookie' || t === 'cookies') f |= T_COOKIE;
    if (COOKIE_COMPANIONS.has(t)) f |= T_COOKIE_COMPANION;
    if (t === 'newsletter' || t === 'subscribe' || t === 'signup' || t === 'paywall') f |= T_LETTER;
    if (POPUP_TOKENS.has(t)) f |= T_POPUP;
    if (t === 'author' || t === 'authors') f |= T_AUTHOR;
    if (AUTHOR_BOX.has(t)) f |= T_AUTHOR_BOX;
    if (t === 'logo' || t === 'brand' || t === 'branding' || t === 'sitename') f |= T_LOGO;
  }
  const first = tokens[0] === '' ? 1 : 0;
  if (tokens[first] === 'site' && (tokens[first + 1] === 'title' || tokens[first + 1] === 'name')) f |= T_LOGO;
  return f;
}

/** Features of a class attribute (each class name on its own; taxonomy classes skipped) or an id. */
function features(value: string | undefined, isClass: boolean): number {
  if (!value) return 0;
  const key = isClass ? value : '#' + value;
  let f = featureCache.get(key);
  if (f !== undefined) return f;
  f = 0;
  if (isClass) {
    for (const c of value.split(WS)) {
      if (!c || TAXONOMY_CLASS.test(c)) continue;
      if (SR_ONLY.test(c)) f |= T_SR;
      f |= tokenFeatures(c);
    }
  } else f = tokenFeatures(value);
  if (featureCache.size > 20_000) featureCache.clear();
  featureCache.set(key, f);
  return f;
}

const HIDDEN_STYLE = /(display\s*:\s*none|visibility\s*:\s*hidden)/i;

function classify(el: Element, name: string, blockAds: boolean): number {
  let flags = 0;
  if (BOILER_TAGS.has(name)) flags |= F_BOILER;
  else if (name === 'header') flags |= F_HEADER;
  else if (name === 'main') flags |= F_SEMANTIC;
  else if (name === 'article') flags |= F_ARTICLE;
  const a = el.attribs;
  const role = a.role;
  if (role) {
    if (role === 'main') flags |= F_SEMANTIC;
    else if (BOILER_ROLES.has(role)) flags |= F_BOILER;
  }
  if (a.itemprop === 'articleBody' || a.itemprop === 'text') flags |= F_SEMANTIC;
  if (a.hidden !== undefined || a['aria-hidden'] === 'true' || (name === 'dialog' && a.open === undefined)) flags |= F_HIDDEN;
  else if (a.style && HIDDEN_STYLE.test(a.style)) flags |= F_HIDDEN;
  if (name === 'ins' || name.startsWith('amp-')) {
    if ((a.class ?? '').includes('adsbygoogle') || name === 'amp-ad' || name === 'amp-sticky-ad' || (name === 'amp-embed' && a.type)) flags |= F_AD;
  }
  if (a['data-ad-slot'] !== undefined || a['data-ad-client'] !== undefined || a['data-ad-unit'] !== undefined || a['data-google-query-id'] !== undefined) flags |= F_AD;
  // <html>/<body> classes describe the page ("has-sidebar", "toc-pinned"), not a region.
  if ((a.class || a.id) && name !== 'html' && name !== 'body') {
    const t = features(a.class, true) | features(a.id, false);
    if (t & T_SR) flags |= F_SR_ONLY;
    if (t & T_COMMENT) flags |= F_COMMENT;
    if (t & T_AD || (t & T_COOKIE && t & T_COOKIE_COMPANION) || (t & T_LETTER && t & T_POPUP)) flags |= F_AD;
    if (t & T_LOGO) flags |= F_LOGO;
    // Headings are never boilerplate by their classes ("anchorWithStickyNavbar", "comments-title").
    const heading = name.length === 2 && name[0] === 'h' && name[1] >= '1' && name[1] <= '6';
    if (heading) flags &= ~F_COMMENT;
    else if (t & T_NEG || (t & T_AUTHOR && t & T_AUTHOR_BOX)) flags |= F_NEG;
    if (t & T_POS) flags |= F_POS;
  }
  if (!blockAds) flags &= ~F_AD;
  return flags;
}

/** Boilerplate evidence multiplies down the tree (nav in a footer is doubly so). */
function penalty(flags: number): number {
  let f = 1;
  if (flags & F_BOILER) f *= 0.1;
  if (flags & F_HEADER) f *= 0.3;
  if (flags & F_COMMENT) f *= 0.1;
  else if (flags & (F_NEG | F_AD) && !(flags & F_SEMANTIC) && !(flags & F_POS && flags & F_ARTICLE)) f *= 0.15;
  return f;
}

/** Content evidence counts once per kind however deeply it nests (recipe-card > recipe-instructions > ...). */
const B_POS = 1;
const B_SEMANTIC = 2;
const B_ARTICLE = 4;
function boosts(flags: number): number {
  return (flags & F_POS && !(flags & (F_NEG | F_COMMENT | F_AD)) ? B_POS : 0) | (flags & F_SEMANTIC ? B_SEMANTIC : 0) | (flags & F_ARTICLE ? B_ARTICLE : 0);
}
function boostFactor(b: number): number {
  return (b & B_POS ? 1.5 : 1) * (b & B_SEMANTIC ? 1.5 : 1) * (b & B_ARTICLE ? 1.3 : 1);
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
}

function newInfo(idx: number, neg: number, boost: number, flags: number): Info {
  return { idx, text: 0, link: 0, good: 0, mass: 0, ownText: 0, ownLink: 0, neg, boost, mult: neg * boostFactor(boost), flags, h1: 0, headings: 0 };
}

/** Step 2: drop never-content nodes and measure every element, in one iterative walk. */
function measure(doc: Document, excluded: Set<Element>, blockAds: boolean): Measure {
  const info = new Map<Element, Info>();
  const m: Measure = { info, body: doc, h1s: [], semantic: [], articles: [], removable: [], comments: [] };
  const checkExcluded = excluded.size > 0;
  let idx = 0;
  let foundBody = false;
  // Frames are reused by depth: the walk allocates nothing per element but its Info.
  const frames: Frame[] = [{ el: doc, info: null, block: null, inLink: false, i: 0, kept: null, marked: false, inComment: false }];
  let depth = 0;
  while (depth >= 0) {
    const f = frames[depth];
    const children = f.el.children;
    if (f.i < children.length) {
      const child = children[f.i++];
      let drop = false;
      if (child.type === 'text') {
        const n = countChars((child as Text).data);
        if (n) {
          if (f.info) {
            f.info.text += n;
            if (f.inLink) f.info.link += n;
          }
          if (f.block) {
            f.block.ownText += n;
            if (f.inLink) f.block.ownLink += n;
          }
        }
      } else if (isTag(child)) {
        const name = child.name;
        if (DROP_TAGS.has(name) || (checkExcluded && excluded.has(child))) drop = true;
        else {
          const flags = classify(child, name, blockAds);
          const neg = (f.info ? f.info.neg : 1) * penalty(flags);
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
          if (!g) frames.push((g = { el: child, info: ci, block, inLink: false, i: 0, kept: null, marked, inComment: false }));
          g.el = child;
          g.info = ci;
          g.block = block;
          g.inLink = f.inLink || name === 'a';
          g.i = 0;
          g.kept = null;
          g.marked = marked;
          g.inComment = f.inComment || comment;
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
    if (name.length === 2 && name.charCodeAt(0) === 104 /* h */ && name.charCodeAt(1) >= 49 && name.charCodeAt(1) <= 54) {
      ci.headings++;
      if (name === 'h1') ci.h1++;
    }
    const parent = depth >= 0 ? frames[depth].info : null;
    if (parent) {
      parent.text += ci.text;
      parent.link += ci.link;
      parent.good += ci.good;
      parent.mass += ci.mass;
      parent.h1 += ci.h1;
      parent.headings += ci.headings;
    }
  }
  return m;
}

/** Replace a parent's children, keeping domhandler's sibling links right. */
function relink(parent: ParentNode, kept: ChildNode[]): void {
  for (let i = 0; i < kept.length; i++) {
    const c = kept[i];
    c.prev = i > 0 ? kept[i - 1] : null;
    c.next = i + 1 < kept.length ? kept[i + 1] : null;
    c.parent = parent;
  }
  parent.children = kept;
}

/** Detach elements (each once; none inside another) and take their figures off their ancestors. */
function detach(m: Measure, els: Element[]): void {
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
      ai.h1 -= ci.h1;
      ai.headings -= ci.headings;
    }
  }
  for (const [p, set] of byParent) {
    relink(p, p.children.filter((c) => !set.has(c)));
    for (const c of set) c.parent = c.prev = c.next = null;
  }
}

// ---------------------------------------------------------------------------------------------
// Selection

function select(selectors: string[], root: AnyNode | AnyNode[], option: string): Element[] {
  if (!selectors.length) return [];
  try {
    return selectAll(selectors.join(', '), root) as Element[];
  } catch {
    validateSelectors(selectors, option);
    return [];
  }
}

function elementChildren(el: ParentNode): Element[] {
  return el.children.filter(isTag);
}

function bodyNodes(m: Measure): AnyNode[] {
  return [...m.body.children];
}

/** Similar items (forum posts, answers, cards): same tag and a class in common. */
function similar(a: Element, b: Element): boolean {
  if (a.name !== b.name) return false;
  const ca = a.attribs.class?.trim();
  const cb = b.attribs.class?.trim();
  if (!ca || !cb) return !ca && !cb && (a.name === 'article' || a.name === 'li' || a.name === 'section' || a.name === 'tr');
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
    let stop = false;
    for (const k of kids) {
      if (k === best) continue;
      const ki = m.info.get(k)!;
      // One of several similar items: the list is the content.
      if (ki.good >= 150 && similar(k, best)) stop = true;
      // A sibling with substantial prose that nothing marks as boilerplate.
      else if (ki.good >= 300 && ki.good >= 0.15 * bi.good && ki.mult >= ci.mult && ki.link < 0.3 * ki.text) stop = true;
      if (stop) break;
    }
    if (stop) return c;
    c = best;
  }
}

function isAncestor(a: ParentNode, b: AnyNode): boolean {
  for (let p = b.parent; p; p = p.parent) if (p === a) return true;
  return false;
}

/** The main-content container, and a page title to put before it when it sits outside. */
function findMain(m: Measure, docTitle: string): { container: Element; title: Element | null } {
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
    if (si.mass >= 0.6 * ci0.mass && (!narrowed || m.info.get(narrowed)!.text > si.text)) narrowed = s;
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

/** Step 5: the boilerplate inside the container (outermost elements only). */
function boilerplateIn(m: Measure, root: Element, pageLevelOnly: boolean): Element[] {
  const ri = m.info.get(root)!;
  // A forum thread: the comments are the content (the container is, or is mostly, comments).
  let forum = false;
  for (let p: ParentNode | null = root; p && isTag(p) && !forum; p = p.parent) forum = !!(m.info.get(p)!.flags & F_COMMENT);
  if (!forum) {
    let commentGood = 0;
    for (const c of m.comments) if (c.parent && isAncestor(root, c)) commentGood += m.info.get(c)!.good;
    forum = commentGood > 0.5 * ri.good;
  }
  const half = 0.5 * ri.good;
  const remove: Element[] = [];
  const stack: Element[] = [];
  pushChildren(stack, root);
  while (stack.length) {
    const el = stack.pop()!;
    const ei = m.info.get(el);
    if (!ei) continue;
    const big = ei.good > half && ri.good > 0;
    if (!big && (pageLevelOnly ? isLayoutBoilerplate(el, ei) : isBoilerplate(el, ei, forum))) remove.push(el);
    // Nothing inside code is boilerplate (`<span class="hljs-comment">`).
    else if (el.name !== 'pre' && el.name !== 'code') pushChildren(stack, el);
  }
  return remove;
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

function isBoilerplate(el: Element, ei: Info, forum: boolean): boolean {
  const f = ei.flags;
  if (f & F_BOILER || CONTROL_TAGS.has(el.name)) return true;
  // Inside the content a header is kept when it holds any heading (listing cards link theirs).
  if (f & F_HEADER) return ei.headings === 0;
  if (f & F_SR_ONLY || f & F_AD) return true;
  if (f & F_COMMENT && !forum && !(f & F_SEMANTIC)) return true;
  if (f & F_NEG && !(f & F_SEMANTIC) && !(f & F_POS && f & F_ARTICLE)) return true;
  // "Skip to content" links and "Advertisement" labels: short leaves (their text is one text node).
  if (ei.text > 1 && ei.text < 40 && el.children.length === 1 && el.children[0].type === 'text') {
    const t = (el.children[0] as Text).data.trim();
    if (el.name === 'a' ? SKIP_LINK.test(t) : ei.text <= 20 && AD_LABEL.test(t.replace(EDGE_PUNCT, ''))) return true;
  }
  // Link-dense blocks; in a thread, short ones are each post's attribution ("user · 2 hours ago").
  if (LINK_BLOCK_TAGS.has(el.name) && ei.text > 0 && ei.link > 0.5 * ei.text && ei.headings === 0 && !(forum && ei.text < 80)) {
    // A paragraph that is one sentence-long link is content ("Read the report").
    if (el.name === 'p' || el.name === 'span') return ei.link > 0.8 * ei.text && ei.text < 60;
    return true;
  }
  return false;
}

/** htmlparser2 does not invent a <body> for pages that omit the tag: wrap their top level in one. */
function ensureBody(doc: Document): void {
  const html = doc.children.find((c): c is Element => isTag(c) && c.name === 'html');
  const parent: ParentNode = html ?? doc;
  if (parent.children.some((c) => isTag(c) && c.name === 'body')) return;
  if (findOne((e) => e.name === 'body', doc.children, true)) return;
  const head = parent.children.filter((c) => isTag(c) && c.name === 'head');
  const rest = parent.children.filter((c) => !(isTag(c) && c.name === 'head'));
  if (!rest.length) return;
  const body = new ElementNode('body', {});
  relink(body, rest);
  relink(parent, [...head, body]);
}

/** The <title> text, found without walking the body (html > head > title). */
function documentTitle(doc: Document): string {
  const queue: ParentNode[] = [doc];
  for (let depth = 0; depth < 3 && queue.length; depth++) {
    const next: ParentNode[] = [];
    for (const p of queue) {
      for (const k of p.children) {
        if (!isTag(k)) continue;
        if (k.name === 'title') return textContent(k);
        if (k.name === 'html' || k.name === 'head') next.push(k);
      }
    }
    queue.splice(0, queue.length, ...next);
  }
  return '';
}

// ---------------------------------------------------------------------------------------------

export function cleanDocument(doc: Document, opts: CleanOptions): AnyNode[] {
  const onlyMain = opts.onlyMainContent ?? true;
  const blockAds = opts.blockAds ?? true;
  const exclude = opts.excludeTags?.filter((s) => s.trim()) ?? [];
  const include = opts.includeTags?.filter((s) => s.trim()) ?? [];

  const excluded = new Set(select(exclude, doc, 'excludeTags'));
  const docTitle = documentTitle(doc);
  ensureBody(doc);
  const m = measure(doc, excluded, blockAds);
  const included = include.length ? select(include, doc, 'includeTags') : null;

  // Hidden elements and ads: removed unless they hold most of the page or contain an explicit include.
  if (m.removable.length) {
    const bodyInfo = isTag(m.body) ? m.info.get(m.body) : undefined;
    const total = bodyInfo ? bodyInfo.text : Infinity;
    const protect = new Set<ParentNode>();
    for (const el of included ?? []) for (let p: ParentNode | null = el; p; p = p.parent) protect.add(p);
    const gone = m.removable.filter((el) => {
      const ei = m.info.get(el)!;
      return !protect.has(el) && el !== m.body && !(ei.text > 200 && ei.text > 0.6 * total);
    });
    detach(m, gone);
  }

  if (included) {
    const set = new Set(included);
    return included.filter((el) => {
      for (let p = el.parent; p; p = p.parent) if (set.has(p as Element)) return false;
      return !!el.parent;
    });
  }
  if (!onlyMain || !isTag(m.body)) return bodyNodes(m);

  const { container, title } = findMain(m, docTitle);
  const isBody = container === m.body;
  const remove = boilerplateIn(m, container, false);
  if (title) remove.push(...boilerplateIn(m, title, false));
  if (keepsText(m, [container, ...(title ? [title] : [])], remove)) {
    detach(m, remove);
    return isBody ? [...container.children] : title ? [title, container] : [container];
  }
  // Never empty when the page has text: the body without its page-level header/nav/footer/aside,
  // else the whole body.
  const layout = boilerplateIn(m, m.body, true);
  if (keepsText(m, [m.body], layout)) detach(m, layout);
  return bodyNodes(m);
}

/** Whether the roots keep some text once `remove` is gone. */
function keepsText(m: Measure, roots: Element[], remove: Element[]): boolean {
  let text = 0;
  for (const r of roots) text += m.info.get(r)!.text;
  for (const el of remove) text -= m.info.get(el)!.text;
  return text > 0;
}

