// What the content filter knows about one element from its tag, role and class/id tokens: the
// vocabulary, the flags (boilerplate, header, ad, hidden, semantic ...) and the penalties and
// boosts they give the prose inside. Class/id matching is on tokens, never substrings.
import { type PageStyles, hiddenByStylesheet } from './clean-stylesheet.ts';
import type { Element } from 'domhandler';

// Vocabulary

export const DROP_TAGS = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'title',
  'iframe',
  'object',
  'embed',
  'svg',
  'canvas',
  'link',
  'meta',
  'head',
  'base',
  'frame',
  'frameset',
  'applet',
]);

/** Elements whose text flows inside the nearest block ancestor. */
export const INLINE_TAGS = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'br',
  'cite',
  'code',
  'data',
  'dfn',
  'em',
  'i',
  'kbd',
  'mark',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'time',
  'u',
  'var',
  'wbr',
  'img',
  'label',
  'font',
  'strike',
  'tt',
  'big',
  'del',
  'ins',
  'nobr',
  'picture',
  'source',
  'abbr',
  'acronym',
  'ruby',
  'rt',
  'rp',
  'output',
  'meter',
  'progress',
]);

/** A "skip to content" link's text: the element it points to is the page's content, whatever its id says. */
export const SKIP_LINK = /^(skip|jump) to (the )?(main )?(content|article|navigation|main)/i;

/** Layout boilerplate by tag. */
const BOILER_TAGS = new Set(['nav', 'aside', 'footer', 'menu']);
const BOILER_ROLES = new Set([
  'navigation',
  'banner',
  'contentinfo',
  'complementary',
  'search',
  'menu',
  'menubar',
  'toolbar',
  'dialog',
  'alertdialog',
  'tablist',
  'tooltip',
]);

/** Advertising tokens (blockAds, and boilerplate for onlyMainContent). */
const AD_TOKENS = new Set([
  'ad',
  'ads',
  // Not "adv": page builders abbreviate "advanced" so ("kt-adv-heading" on every heading).
  'advert',
  'adverts',
  'advertisement',
  'advertisements',
  'advertising',
  'advertorial',
  'adsbygoogle',
  'adslot',
  'adunit',
  'adbox',
  'adbanner',
  'adcontainer',
  'adwrapper',
  'adsense',
  'adzone',
  'adspace',
  'adplaceholder',
  'dfp',
  'doubleclick',
  'googleads',
  'sponsor',
  'sponsored',
  'sponsorship',
  'taboola',
  'outbrain',
  'revcontent',
  'mgid',
  'zergnet',
  'adspot',
  'adthrive',
  'mediavine',
  'ezoic',
  'teads',
  'billboard',
  'leaderboard',
  'skyscraper',
  'dianomi',
]);
/** Consent tokens that are banners on their own. */
const CONSENT_TOKENS = new Set([
  'consent',
  'gdpr',
  'ccpa',
  'cookiebanner',
  'cookieconsent',
  'cookienotice',
  'cookiebar',
  'cookielaw',
  'cookiebot',
  'onetrust',
  'didomi',
  'usercentrics',
  'truste',
  'trustarc',
  'quantcast',
  'cmpbox',
  'termly',
  'iubenda',
  'osano',
]);
/** "cookie" is only a banner next to one of these (a recipe card may be classed "cookie-…"). */
const COOKIE_COMPANIONS = new Set([
  'banner',
  'bar',
  'notice',
  'notification',
  'consent',
  'popup',
  'modal',
  'policy',
  'law',
  'dialog',
  'message',
  'alert',
  'overlay',
  'container',
  'wrapper',
  'box',
  'warning',
  'info',
  'accept',
  'settings',
  'preferences',
  'prompt',
  'window',
]);
/** Newsletter and paywall interstitials: "newsletter"/"subscribe" next to one of these. */
const POPUP_TOKENS = new Set(['popup', 'modal', 'overlay', 'lightbox', 'interstitial', 'flyout', 'slidein', 'toast']);

/** Boilerplate tokens: weighted down when scoring, stripped inside the main content. */
const NEG_TOKENS = new Set([
  'nav',
  'navbar',
  'navigation',
  'navlinks',
  'navmenu',
  'menu',
  'menubar',
  'submenu',
  'megamenu',
  'topbar',
  'topnav',
  'breadcrumb',
  'breadcrumbs',
  'crumbs',
  'sidebar',
  'sidenav',
  'sidebars',
  'footer',
  'masthead',
  'share',
  'shares',
  'sharing',
  'sharebar',
  'sharedaddy',
  'addtoany',
  'social',
  'socials',
  'related',
  'recommended',
  'recommendations',
  'promo',
  'promos',
  'promotion',
  'promotions',
  'promoted',
  'disclaimer',
  'affiliate',
  'widget',
  'widgets',
  'newsletter',
  'subscribe',
  'subscription',
  'signup',
  'popup',
  'modal',
  'overlay',
  'pagination',
  'pager',
  'skip',
  'skiplink',
  'toolbar',
  'trending',
  'popular',
  'mostread',
  'mostpopular',
  'tagcloud',
  'toc',
  'login',
  'signin',
  'cookie',
  'cookies',
  'paywall',
  'jumplinks',
  'postnav',
  'byline',
  'dateline',
  'signature',
  'postprofile',
  'userinfo',
  'backtotop',
  'back2top',
  'facets',
  'filters',
  'refinements',
  'sortby',
  'vote',
  'votes',
  'voting',
  'votecell',
  'upvote',
  'downvote',
  ...AD_TOKENS,
  ...CONSENT_TOKENS,
]);
/** "author" (or a forum's "user", "poster", "member") next to one of these is an author box (bio, stats, rank). */
const AUTHOR_BOX = new Set([
  'bio',
  'box',
  'info',
  'card',
  'about',
  'profile',
  'details',
  'extras',
  'stats',
  'title',
  'banner',
  'rank',
]);
/** Comment sections: stripped unless they are most of the content (forum threads). */
const COMMENT_TOKENS = new Set([
  'comment',
  'comments',
  'commentlist',
  'disqus',
  'respond',
  'replies',
  'discussion',
  'commentary',
  'reviews',
  'yotpo',
  'bazaarvoice',
  'okendo',
  'judgeme',
  'powerreviews',
  'trustpilot',
]);
/** Content tokens (Readability's positive list, trimmed). */
const POS_TOKENS = new Set([
  'article',
  'articlebody',
  'body',
  'content',
  'entry',
  'hentry',
  'main',
  'maincontent',
  'post',
  'postbody',
  'text',
  'blog',
  'story',
  'storybody',
  'prose',
  'markdown',
  'typeset',
  'parser',
  'answer',
  'question',
  'recipe',
  'instructions',
  'ingredients',
  'description',
  'product',
  'documentation',
  'docs',
]);
/** Class names that hide text visually (screen-reader only). */
const SR_ONLY =
  /^(sr-only|visually-hidden|visuallyhidden|screen-reader-text|screen-reader-only|a11y-hidden|assistive-text|u-hidden-visually|hidden-visually|element-invisible|offscreen)$/i;
/** Taxonomy classes WordPress & co. put on the article itself ("tag-social-media", "category-sponsored"). */
const TAXONOMY_CLASS = /^(tag|tags|category|cat|categories|format|post-format|status|type|postid|page-id|topic)[-_]/i;

export const F_BOILER = 1; // nav/aside/footer/menu or boilerplate role
export const F_HEADER = 2;
export const F_NEG = 4;
export const F_COMMENT = 8;
export const F_POS = 16;
export const F_SEMANTIC = 32; // main, [role=main], [itemprop=articleBody]
export const F_ARTICLE = 64;
export const F_AD = 128; // ad / consent / popup by tokens or attributes
export const F_SR_ONLY = 256;
export const F_HIDDEN = 512;
export const F_LOGO = 1024; // logo/brand/site-title tokens
export const F_SHEET_HIDDEN = 2048; // hidden by the page's stylesheet (with F_HIDDEN)

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
const STATE_PREFIXES = new Set([
  'has',
  'no',
  'hide',
  'hidden',
  'show',
  'with',
  'without',
  'disable',
  'disabled',
  'enable',
  'enabled',
]);

function tokenFeatures(name: string): number {
  let f = 0;
  const tokens = name.replace(CAMEL, '$1 $2').toLowerCase().split(SPLIT);
  // A state class says what an element has or shows, not what it is: "has-sidebar" wraps a page
  // with a sidebar, "hide-read-more-ad" a grid whose ad is hidden, "no-ads" no ad at all.
  if (STATE_PREFIXES.has(tokens[tokens[0] === '' ? 1 : 0])) return 0;
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
    if (t === 'author' || t === 'authors' || t === 'user' || t === 'poster' || t === 'member') f |= T_AUTHOR;
    if (AUTHOR_BOX.has(t)) f |= T_AUTHOR_BOX;
    if (t === 'logo' || t === 'brand' || t === 'branding' || t === 'sitename') f |= T_LOGO;
  }
  const first = tokens[0] === '' ? 1 : 0;
  if (tokens[first] === 'site' && (tokens[first + 1] === 'title' || tokens[first + 1] === 'name')) f |= T_LOGO;
  return f;
}

/**
 * A BEM class without its modifier: "field--label-hidden" is a field whose label is hidden,
 * "container--section-more-ads" a container with ads in it, "card--sidebar" a card. A modifier
 * says how a block looks or what it holds, not what it is.
 */
function withoutModifier(c: string): string {
  const i = c.indexOf('--');
  return i > 0 ? c.slice(0, i) : c;
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
      f |= tokenFeatures(withoutModifier(c));
    }
  } else f = tokenFeatures(value);
  if (featureCache.size > 20_000) featureCache.clear();
  featureCache.set(key, f);
  return f;
}

const negTokenCache = new Map<string, string[]>();

/** The boilerplate tokens (NEG_TOKENS) of a class attribute or an id ("#" + id), as the flags read them. */
export function negTokensOf(value: string, isClass: boolean): string[] {
  const key = isClass ? value : '#' + value;
  let out = negTokenCache.get(key);
  if (out) return out;
  out = [];
  for (const c of isClass ? value.split(WS) : [value]) {
    if (!c || (isClass && TAXONOMY_CLASS.test(c))) continue;
    for (const t of (isClass ? withoutModifier(c) : c).replace(CAMEL, '$1 $2').toLowerCase().split(SPLIT))
      if (NEG_TOKENS.has(t) && !COMMENT_TOKENS.has(t) && !out.includes(t)) out.push(t);
  }
  if (negTokenCache.size > 20_000) negTokenCache.clear();
  negTokenCache.set(key, out);
  return out;
}

/** The boilerplate tokens of an element's class and id. */
export function elementNegTokens(a: Record<string, string>): string[] {
  if (!a.id) return a.class ? negTokensOf(a.class, true) : [];
  return a.class ? [...negTokensOf(a.class, true), ...negTokensOf(a.id, false)] : negTokensOf(a.id, false);
}

/** Whether every boilerplate token of the element's class and id is one of `ignored`. */
export function onlyIgnoredNeg(a: Record<string, string>, ignored: ReadonlySet<string>): boolean {
  return elementNegTokens(a).every((t) => ignored.has(t));
}

/** The boilerplate tokens of the element and its closest ancestors (`levels` elements in all). */
export function negTokensAround(el: Element, levels: number): Set<string> {
  const out = new Set<string>();
  let level = 0;
  for (let p: Element | null = el; p && p.attribs && level < levels; p = p.parent as Element | null, level++)
    for (const t of elementNegTokens(p.attribs)) out.add(t);
  return out;
}

const HIDDEN_STYLE = /(display\s*:\s*none|visibility\s*:\s*hidden)/i;

/**
 * The element's flags (F_*). `ignored`: boilerplate tokens that mark nothing on this page (its
 * naming scheme: a page builder classes every block "widget").
 */
export function classify(
  el: Element,
  name: string,
  blockAds: boolean,
  ignored?: ReadonlySet<string>,
  styles?: PageStyles,
): number {
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
  // A popover (the attribute) is hidden until shown, as a closed dialog is.
  if (
    a.hidden !== undefined ||
    a['aria-hidden'] === 'true' ||
    a.popover !== undefined ||
    (name === 'dialog' && a.open === undefined)
  )
    flags |= F_HIDDEN;
  else if (a.style && HIDDEN_STYLE.test(a.style)) flags |= F_HIDDEN;
  if (styles && a.class && (styles.hidden.size || styles.visuallyHidden.size)) {
    const hidden = hiddenByStylesheet(styles, el);
    if (hidden === 'hidden') flags |= F_HIDDEN | F_SHEET_HIDDEN;
    else if (hidden === 'visually') flags |= F_SR_ONLY;
  }
  if (name === 'ins' || name.startsWith('amp-')) {
    if (
      (a.class ?? '').includes('adsbygoogle') ||
      name === 'amp-ad' ||
      name === 'amp-sticky-ad' ||
      (name === 'amp-embed' && a.type)
    )
      flags |= F_AD;
  }
  if (
    a['data-ad-slot'] !== undefined ||
    a['data-ad-client'] !== undefined ||
    a['data-ad-unit'] !== undefined ||
    a['data-google-query-id'] !== undefined
  )
    flags |= F_AD;
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
    else if ((t & T_NEG && !(ignored && onlyIgnoredNeg(a, ignored))) || (t & T_AUTHOR && t & T_AUTHOR_BOX))
      flags |= F_NEG;
    if (t & T_POS) flags |= F_POS;
  }
  if (!blockAds) flags &= ~F_AD;
  return flags;
}

/** Boilerplate evidence multiplies down the tree (nav in a footer is doubly so; comments once). */
export function penalty(flags: number, inComment: boolean, inNeg: boolean): number {
  let f = 1;
  if (flags & F_BOILER) f *= 0.1;
  if (flags & F_HEADER) f *= 0.3;
  // A comment section counts once: its comments are classed "comment" too. So do boilerplate
  // classes: a widget's wrapper, the widget and its container are one widget.
  if (flags & F_COMMENT) f *= inComment ? 1 : 0.1;
  else if (flags & (F_NEG | F_AD) && !(flags & F_SEMANTIC) && !(flags & F_POS && flags & F_ARTICLE) && !inNeg)
    f *= 0.15;
  return f;
}

/** Content evidence counts once per kind however deeply it nests (recipe-card > recipe-instructions > ...). */
const B_POS = 1;
const B_SEMANTIC = 2;
const B_ARTICLE = 4;
export function boosts(flags: number): number {
  return (
    (flags & F_POS && !(flags & (F_NEG | F_COMMENT | F_AD)) ? B_POS : 0) |
    (flags & F_SEMANTIC ? B_SEMANTIC : 0) |
    (flags & F_ARTICLE ? B_ARTICLE : 0)
  );
}
export function boostFactor(b: number): number {
  return (b & B_POS ? 1.5 : 1) * (b & B_SEMANTIC ? 1.5 : 1) * (b & B_ARTICLE ? 1.3 : 1);
}
