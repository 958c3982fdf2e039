// The deterministic content filter behind the scrape options onlyMainContent, includeTags,
// excludeTags and blockAds: the entry point (cleanDocument, which mutates the parsed page and returns
// the nodes to render) and the include/exclude selectors. Order of operations and the main-content
// heuristics: docs/design/scrape.md ("Content filter").
import { selectAll } from 'css-select';
import {
  type AnyNode,
  type Document,
  type Element,
  Element as ElementNode,
  isTag,
  type ParentNode,
  type Text,
} from 'domhandler';
import { findOne, textContent } from 'domutils';
import { BadRequestError } from '../../errors.ts';
import { boilerplateIn } from './clean-boilerplate.ts';
import { F_AD, F_HIDDEN, F_SHEET_HIDDEN } from './clean-classify.ts';
import { bodyNodes, findMain, firstTitle, productDescription } from './clean-main-content.ts';
import { pageKind } from './clean-page-kind.ts';
import { railsIn, siteOf } from './clean-rails.ts';
import { carouselSlides, repeatedBlocks } from './clean-repeats.ts';
import { orphanHeadings, permalinkAnchors } from './clean-headings.ts';
import {
  detach,
  type Info,
  type Measure,
  measure,
  relink,
  ubiquitousNegTokens,
  unwrapNoscripts,
} from './clean-measure.ts';

export interface CleanOptions {
  /** Default true. */
  onlyMainContent: boolean;
  includeTags?: string[];
  excludeTags?: string[];
  /** Default true. */
  blockAds?: boolean;
  /** The page's URL: links to other pages of its site are told apart from links elsewhere. */
  url?: string;
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

function select(selectors: string[], root: AnyNode | AnyNode[], option: string): Element[] {
  if (!selectors.length) return [];
  try {
    return selectAll(selectors.join(', '), root) as Element[];
  } catch {
    validateSelectors(selectors, option);
    return [];
  }
}

/**
 * htmlparser2 does not invent a <body> for pages that omit the tag: wrap their top level in one.
 * Nor does it move what follows </body> or </html> into the body, as a browser does (a stray
 * closing tag early in a template leaves the whole article after it).
 */
function ensureBody(doc: Document): void {
  const html = doc.children.find((c): c is Element => isTag(c) && c.name === 'html');
  const parent: ParentNode = html ?? doc;
  const body = parent.children.find((c): c is Element => isTag(c) && c.name === 'body');
  if (body) {
    const after = [
      ...parent.children.slice(parent.children.indexOf(body) + 1),
      ...(html ? doc.children.slice(doc.children.indexOf(html) + 1) : []),
    ].filter((c) => isTag(c) || (c.type === 'text' && /\S/.test((c as Text).data)));
    if (after.length) {
      relink(
        parent,
        parent.children.filter((c) => !after.includes(c)),
      );
      if (html)
        relink(
          doc,
          doc.children.filter((c) => !after.includes(c)),
        );
      relink(body, [...body.children, ...after]);
    }
    return;
  }
  if (findOne((e) => e.name === 'body', doc.children, true)) return;
  const head = parent.children.filter((c) => isTag(c) && c.name === 'head');
  const rest = parent.children.filter((c) => !(isTag(c) && c.name === 'head'));
  if (!rest.length) return;
  const wrapper = new ElementNode('body', {});
  relink(wrapper, rest);
  relink(parent, [...head, wrapper]);
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

export function cleanDocument(doc: Document, opts: CleanOptions): AnyNode[] {
  const onlyMain = opts.onlyMainContent ?? true;
  const blockAds = opts.blockAds ?? true;
  const exclude = opts.excludeTags?.filter((s) => s.trim()) ?? [];
  const include = opts.includeTags?.filter((s) => s.trim()) ?? [];

  const excluded = new Set(select(exclude, doc, 'excludeTags'));
  const docTitle = documentTitle(doc);
  ensureBody(doc);
  let m = measure(doc, excluded, blockAds);
  const first = m;
  if (noscriptHoldsPage(m)) {
    unwrapNoscripts(m);
    m = measure(doc, excluded, blockAds, undefined, m.styles);
  }
  const ubiquitous = ubiquitousNegTokens(m);
  if (ubiquitous.size) m = measure(doc, excluded, blockAds, ubiquitous, m.styles);
  // The first walk dropped the <head> and the scripts: what they declared about the page stays known.
  if (m !== first) {
    m.declared = first.declared;
    m.selfUrls = first.selfUrls;
  }
  const included = include.length ? select(include, doc, 'includeTags') : null;

  // Hidden elements and ads: removed unless they hold most of the page or contain an explicit include.
  if (m.removable.length) {
    const bodyInfo = isTag(m.body) ? m.info.get(m.body) : undefined;
    const total = bodyInfo ? bodyInfo.text : Infinity;
    const protect = new Set<ParentNode>();
    for (const el of included ?? []) for (let p: ParentNode | null = el; p; p = p.parent) protect.add(p);
    const gone = m.removable.filter((el) => {
      const ei = m.info.get(el)!;
      const kept =
        protect.has(el) ||
        el === m.body ||
        (ei.text > 200 && ei.text > 0.6 * total) ||
        // An article carrying ad-targeting attributes (data-ad-unit) is no ad: ads are not long prose.
        (!(ei.flags & F_HIDDEN) && ei.good >= AD_PROSE && ei.link < 0.15 * ei.text) ||
        collapsed(m, el, ei);
      // Kept hidden content is shown: the renderer skips hidden elements (a streamed page parks its
      // body in a hidden element a script moves into place).
      if (kept && ei.flags & F_HIDDEN) unhide(el);
      return !kept;
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

  const kind = pageKind(m, opts.url);
  let { container, title } = findMain(m, docTitle);
  // A product page's description block, when it holds much of the prose, is its content (with the name).
  const description = kind === 'product' ? productDescription(m, container) : null;
  if (description) {
    container = description;
    title = m.info.get(description)!.h1 ? null : firstTitle(m, description);
  }
  const isBody = container === m.body;
  const site = siteHosts(opts.url, m.selfUrls);
  const remove = boilerplateIn(m, container, false, kind, site);
  if (title) remove.push(...boilerplateIn(m, title, false, kind, site));
  if (keepsText(m, [container, ...(title ? [title] : [])], remove)) {
    detach(m, remove);
    if (kind !== 'collection' && kind !== 'thread')
      detach(m, railsIn(m, container, site, kind === 'product', kind === 'article', opts.url));
    const roots = title ? [title, container] : [container];
    detach(m, repeatedBlocks(roots, m));
    detach(m, carouselSlides([container]));
    detach(m, permalinkAnchors(roots, opts.url));
    detach(m, orphanHeadings(roots));
    return isBody ? [...container.children] : roots;
  }
  // Never empty when the page has text: the body without its page-level header/nav/footer/aside,
  // else the whole body.
  const layout = boilerplateIn(m, m.body, true, kind);
  if (keepsText(m, [m.body], layout)) detach(m, layout);
  return bodyNodes(m);
}

/** The page's site: its URL's host, and those of the URLs it gives as its own (a mirror, a proxy). */
function siteHosts(url: string | undefined, selfUrls: string[]): Set<string> {
  const hosts = new Set<string>();
  for (const u of url ? [url, ...selfUrls] : selfUrls) {
    try {
      hosts.add(siteOf(new URL(u, url).hostname));
    } catch {
      // not a URL
    }
  }
  return hosts;
}

const AD_PROSE = 1000;

/**
 * A collapsed section (an accordion's answer, a tab's panel, a "show more" body): hidden until a
 * control naming it (aria-controls, data-target) opens it, or hidden prose, outside boilerplate.
 * Its text is the page's.
 */
function collapsed(m: Measure, el: Element, ei: Info): boolean {
  const a = el.attribs;
  if (ei.flags & F_AD) return false;
  // A stylesheet hides an accordion's answers as well as decoy letters: what holds prose is left to the
  // content filter as if shown; only what has none (labels, decoys, empty states) goes here.
  if (ei.flags & F_SHEET_HIDDEN && ei.good >= SHEET_HIDDEN_PROSE) return true;
  return (
    !!(ei.flags & F_HIDDEN) &&
    ei.neg >= 0.5 &&
    ((!!a.id && m.controlled.has(a.id)) || hiddenProse(el, ei)) &&
    // Dialogs, popovers and menus a control opens are not the page's text.
    a.popover === undefined &&
    el.name !== 'dialog' &&
    !(a.role && OVERLAY_ROLES.has(a.role))
  );
}
/**
 * Prose hidden from the eye but not from assistive technology (aria-hidden is a copy or decoration;
 * a hidden <pre> or <textarea> a data store: the page's own markdown source, say).
 */
function hiddenProse(el: Element, ei: Info): boolean {
  return (
    ei.good >= HIDDEN_PROSE &&
    ei.link < 0.3 * ei.text &&
    el.attribs['aria-hidden'] !== 'true' &&
    el.name !== 'pre' &&
    el.name !== 'textarea'
  );
}
const HIDDEN_PROSE = 300;
/** Prose in an element the page's stylesheet hides: a collapsed answer, not a decoy or a label. */
const SHEET_HIDDEN_PROSE = 40;
const OVERLAY_ROLES = new Set(['dialog', 'alertdialog', 'menu', 'menubar', 'listbox', 'tooltip', 'navigation']);

/**
 * A page whose visible body is (nearly) empty while its <noscript> elements hold text: a script
 * renders the page and the no-script fallback is its content.
 */
function noscriptHoldsPage(m: Measure): boolean {
  if (!m.noscripts.length || !isTag(m.body)) return false;
  const bodyText = m.info.get(m.body)!.text;
  if (bodyText > 500) return false;
  let text = 0;
  for (const n of m.noscripts) text += textContent(n.el).replace(/\s+/g, '').length;
  return text > 200 && text > 2 * bodyText;
}

function unhide(el: Element): void {
  delete el.attribs.hidden;
  if (el.attribs['aria-hidden'] === 'true') delete el.attribs['aria-hidden'];
  delete el.attribs.style;
}

/** Whether the roots keep some text once `remove` is gone. */
function keepsText(m: Measure, roots: Element[], remove: Element[]): boolean {
  let text = 0;
  for (const r of roots) text += m.info.get(r)!.text;
  for (const el of remove) text -= m.info.get(el)!.text;
  return text > 0;
}
