// What the page's own stylesheets hide: elements a top-level rule of a <style> element sets to display:none or
// visibility:hidden (`.nYpj{display:none}`), or moves off screen for screen readers only (`.zXCP{position:absolute;
// left:-2000px;width:1px;height:1px;overflow:hidden}`). A browser shows neither, and pages use them to scramble text
// a reader never sees (a "Sponsored" label spelled among hidden decoys) as much as for menus not yet opened.
//
// Only selectors made of classes count (`.card .price.old`; a child combinator is read as a descendant one), at
// the top level: a rule inside @media or @supports hides for some screens, one with a tag, id, attribute or
// pseudo-class for some states. A class that some other rule shows in the same place (`.tab.active{display:block}`,
// a media query's `.nav{display:flex}`) is left alone: it is hidden only until something happens.
import type { Element } from 'domhandler';

/** A selector of classes: compounds from the outermost ancestor to the element, each the classes it requires. */
type ClassSelector = string[][];

/** What the page's stylesheets hide, as read by readStylesheet; by the first class of the selector's last compound. */
export interface PageStyles {
  /** Selectors whose rule sets display:none or visibility:hidden. */
  hidden: Map<string, ClassSelector[]>;
  /** Selectors whose rule hides visually (screen-reader text). */
  visuallyHidden: Map<string, ClassSelector[]>;
  /** Classes some rule shows again in its last compound (display other than none, visibility visible, position static or relative). */
  shown: Set<string>;
  /** Class attribute → the classes in it that some rule hides (null: none, or one is shown); cleared as sheets are read. */
  memo: Map<string, string[] | null>;
}

export function emptyPageStyles(): PageStyles {
  return { hidden: new Map(), visuallyHidden: new Map(), shown: new Set(), memo: new Map() };
}

/** Whether the page's stylesheets hide this element: 'hidden', 'visually' or null. */
export function hiddenByStylesheet(styles: PageStyles, el: Element): 'hidden' | 'visually' | null {
  const classes = el.attribs.class;
  if (!classes) return null;
  // Class attributes repeat across a page: which of their classes matter is worked out once per attribute.
  let keys = styles.memo.get(classes);
  if (keys === undefined) {
    keys = hidingClasses(styles, classes);
    styles.memo.set(classes, keys);
  }
  if (!keys) return null;
  let out: 'visually' | null = null;
  for (const c of keys) {
    const hidden = styles.hidden.get(c);
    if (hidden && hidden.some((s) => matches(el, s))) return 'hidden';
    const visually = styles.visuallyHidden.get(c);
    if (visually && visually.some((s) => matches(el, s))) out = 'visually';
  }
  return out;
}

function hidingClasses(styles: PageStyles, classes: string): string[] | null {
  const list = classes.split(WS);
  // Any class some rule shows may be what shows it (Tailwind's `hidden lg:block` is shown on a desktop screen).
  for (const c of list) if (styles.shown.has(c)) return null;
  const keys = list.filter((c) => c && (styles.hidden.has(c) || styles.visuallyHidden.has(c)));
  return keys.length ? keys : null;
}

function hasClasses(el: Element, required: string[]): boolean {
  const attr = el.attribs.class;
  if (!attr) return false;
  if (required.length === 1) {
    // Fast path: most compounds are one class; a substring test rules most elements out before a split.
    if (!attr.includes(required[0])) return false;
  }
  const have = attr.split(WS);
  return required.every((c) => have.includes(c));
}

function matches(el: Element, selector: ClassSelector): boolean {
  let i = selector.length - 1;
  if (!hasClasses(el, selector[i])) return false;
  i--;
  for (let p = el.parent; p && i >= 0; p = p.parent) {
    if (p.type === 'tag' || p.type === 'script' || p.type === 'style') {
      if (hasClasses(p as Element, selector[i])) i--;
    }
  }
  return i < 0;
}

const WS = /\s+/;
const COMMENT = /\/\*[\s\S]*?\*\//g;
// Class names as CSS writes them: `.lg\:block` is the class "lg:block".
const CLASS_NAME = String.raw`-?(?:[_a-zA-Z]|\\.)(?:[\w-]|\\.)*`;
const COMPOUND = new RegExp(`^(?:\\.${CLASS_NAME})+$`);
const CLASS_IN_SELECTOR = new RegExp(`\\.(${CLASS_NAME})`, 'g');
const ESCAPE = /\\(.)/g;
const HIDES = /(?:^|[;\s])(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)/i;
const SHOWS =
  /(?:^|[;\s])(?:display\s*:\s*(?!none)[a-z-]+|visibility\s*:\s*visible|position\s*:\s*(?:static|relative))/i;
const ABSOLUTE = /position\s*:\s*(?:absolute|fixed)/i;
// Off screen: clipped to nothing, or a 1px box with overflow hidden, or pushed ≥ 1000px to the left or top.
const CLIPPED = /clip\s*:\s*rect\(\s*0|clip-path\s*:\s*inset\(\s*50%/i;
const ONE_PIXEL = /(?:^|[;\s])width\s*:\s*1px/i;
const ONE_PIXEL_HIGH = /(?:^|[;\s])height\s*:\s*1px/i;
const OVERFLOW_HIDDEN = /overflow\s*:\s*hidden/i;
const FAR_OFF = /(?:^|[;\s])(?:left|top|text-indent)\s*:\s*-\d{4,}(?:\.\d+)?px/i;

/** Reads one <style> element's text into `into`. */
export function readStylesheet(css: string, into: PageStyles): void {
  if (!css.includes('{')) return;
  into.memo.clear();
  if (css.includes('/*')) css = css.replace(COMMENT, '');
  // Open at-rule blocks (@media, @supports ...): rules inside hide conditionally, so only their showing counts.
  let atDepth = 0;
  let from = 0;
  for (;;) {
    const open = css.indexOf('{', from);
    const close = css.indexOf('}', from);
    if (close >= 0 && (open < 0 || close < open)) {
      if (atDepth > 0) atDepth--;
      from = close + 1;
      continue;
    }
    if (open < 0) return;
    const prelude = css.slice(from, open).trim();
    if (prelude.charCodeAt(0) === 64 /* @ */) {
      atDepth++;
      from = open + 1;
      continue;
    }
    const end = close < 0 ? css.length : close;
    readRule(prelude, css.slice(open + 1, end), atDepth === 0, into);
    from = end + 1;
  }
}

function unescape(name: string): string {
  return name.includes('\\') ? name.replace(ESCAPE, '$1') : name;
}

function readRule(selectors: string, body: string, topLevel: boolean, into: PageStyles): void {
  if (!selectors.includes('.')) return;
  // Most rules set colours and sizes: three substring tests rule them out before any regex.
  if (!body.includes('display') && !body.includes('visibility') && !body.includes('position')) return;
  const hides = HIDES.test(body);
  if (!hides && SHOWS.test(body)) {
    for (const s of selectors.split(',')) {
      const last =
        s
          .trim()
          .split(/[\s>+~]+/)
          .pop() ?? '';
      for (const m of last.matchAll(CLASS_IN_SELECTOR)) into.shown.add(unescape(m[1]));
    }
    return;
  }
  if (!topLevel) return;
  const visually =
    !hides &&
    ABSOLUTE.test(body) &&
    (CLIPPED.test(body) ||
      FAR_OFF.test(body) ||
      (ONE_PIXEL.test(body) && ONE_PIXEL_HIGH.test(body) && OVERFLOW_HIDDEN.test(body)));
  if (!hides && !visually) return;
  for (const s of selectors.split(',')) {
    const compounds = s.trim().split(/\s*>\s*|\s+/);
    if (!compounds.every((c) => COMPOUND.test(c))) continue;
    const selector = compounds.map((c) => Array.from(c.matchAll(CLASS_IN_SELECTOR), (m) => unescape(m[1])));
    const key = selector[selector.length - 1][0];
    const map = hides ? into.hidden : into.visuallyHidden;
    let list = map.get(key);
    if (!list) map.set(key, (list = []));
    if (list.length < 32) list.push(selector);
  }
}
