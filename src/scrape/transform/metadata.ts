// Page metadata in Firecrawl's shape. Call it on the ORIGINAL parsed document, before
// cleanDocument(): cleaning drops <head>, <meta>, <link> and hidden elements, which is where
// almost all of this lives. Which field comes from where: docs/design/scrape.md ("Page metadata").
import type { AnyNode, Document, Element } from 'domhandler';
import { isTag } from 'domhandler';
import { textContent } from 'domutils';
import { decodeHTML } from 'entities';

export interface MetadataContext {
  /** The URL the caller asked for. */
  sourceURL: string;
  /** The final URL (after redirects). */
  url: string;
  statusCode: number;
  contentType?: string;
}

export type Metadata = Record<string, string | string[] | number>;

const ENTITY = /&(#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);/i;

function clean(v: string): string {
  const t = v.replace(/\s+/g, ' ').trim();
  return ENTITY.test(t) ? decodeHTML(t) : t;
}

function resolve(href: string | undefined, base: string): string | undefined {
  if (!href) return undefined;
  try {
    return new URL(href.trim(), base).href;
  } catch {
    return href.trim() || undefined;
  }
}

interface Collected {
  htmlLang?: string;
  title?: string;
  h1?: Element;
  base?: string;
  icons: string[];
  canonical?: string;
  metas: [key: string, value: string][];
}

/** One walk over the document, skipping the insides of svg/math (their <title> is not the page's). */
function collect(doc: Document): Collected {
  const c: Collected = { icons: [], metas: [] };
  const stack: AnyNode[] = [...doc.children].reverse();
  while (stack.length) {
    const node = stack.pop()!;
    if (!isTag(node)) continue;
    const a = node.attribs;
    switch (node.name) {
      case 'html':
        if (c.htmlLang === undefined && a.lang?.trim()) c.htmlLang = a.lang.trim();
        break;
      case 'title':
        if (c.title === undefined) c.title = clean(textContent(node));
        continue;
      case 'h1':
        c.h1 ??= node;
        continue;
      case 'base':
        if (c.base === undefined && a.href) c.base = a.href;
        continue;
      case 'link': {
        const rel = (a.rel ?? '').toLowerCase().split(/\s+/);
        if (rel.includes('icon') && a.href) c.icons.push(a.href);
        if (rel.includes('canonical') && a.href && c.canonical === undefined) c.canonical = a.href;
        continue;
      }
      case 'meta': {
        const key = a.name ?? a.property ?? a.itemprop ?? a['http-equiv'];
        if (key?.trim() && a.content !== undefined) {
          const value = clean(a.content);
          if (value) c.metas.push([key.trim(), value]);
        }
        continue;
      }
      case 'svg':
      case 'math':
      case 'script':
      case 'style':
      case 'template':
        continue;
    }
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
  }
  return c;
}

/** Firecrawl's camelCase aliases of common meta keys (matched case-insensitively). */
const ALIASES: [camel: string, keys: string[]][] = [
  ['ogTitle', ['og:title']],
  ['ogDescription', ['og:description']],
  ['ogUrl', ['og:url']],
  ['ogImage', ['og:image', 'og:image:url', 'og:image:secure_url']],
  ['ogSiteName', ['og:site_name']],
  ['ogLocale', ['og:locale']],
  ['ogAudio', ['og:audio']],
  ['ogVideo', ['og:video']],
  ['ogDeterminer', ['og:determiner']],
  ['publishedTime', ['article:published_time', 'og:published_time', 'og:article:published_time']],
  ['modifiedTime', ['article:modified_time', 'og:modified_time', 'og:updated_time', 'og:article:modified_time']],
  ['dcTermsCreated', ['dcterms.created']],
  ['dcDateCreated', ['dc.date.created']],
  ['dcDate', ['dc.date']],
  ['dcTermsType', ['dcterms.type']],
  ['dcType', ['dc.type']],
  ['dcTermsAudience', ['dcterms.audience']],
  ['dcTermsSubject', ['dcterms.subject']],
  ['dcSubject', ['dc.subject']],
  ['dcDescription', ['dc.description']],
  ['dcTermsKeywords', ['dcterms.keywords']],
  ['articleSection', ['article:section']],
  ['articleTag', ['article:tag']],
];

/** Metadata keys the scrape pipeline fills in itself (the document's own fields, by their wire names). */
const RESERVED = new Set([
  'sourceURL',
  'url',
  'statusCode',
  'contentType',
  'scrapeId',
  'error',
  'numPages',
  'totalPages',
  'concurrencyLimited',
  'concurrencyQueueDurationMs',
  'proxyUsed',
  'cacheState',
  'cachedAt',
  'creditsUsed',
  'engine',
  'ogLocaleAlternate',
]);

export function extractMetadata(doc: Document, ctx: MetadataContext): Metadata {
  const c = collect(doc);
  const base = resolve(c.base, ctx.url) ?? ctx.url;
  // Every meta under its own key; repeated keys become arrays.
  const raw: Metadata = {};
  const firstByLower = new Map<string, string>();
  for (const [key, value] of c.metas) {
    if (key === '__proto__' || RESERVED.has(key)) continue;
    const prev = Object.hasOwn(raw, key) ? raw[key] : undefined;
    if (prev === undefined) raw[key] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else raw[key] = [prev as string, value];
    const lower = key.toLowerCase();
    if (!firstByLower.has(lower)) firstByLower.set(lower, value);
  }
  const meta = (...keys: string[]) => {
    for (const k of keys) {
      const v = firstByLower.get(k);
      if (v) return v;
    }
    return undefined;
  };

  // Computed fields first (Firecrawl's order), then the raw keys they do not shadow, then the context.
  const out: Metadata = {};
  const set = (key: string, value: string | undefined) => {
    if (value) out[key] = value;
  };
  const h1 = c.h1 ? clean(textContent(c.h1)) : undefined;
  set('title', c.title || meta('og:title') || h1 || meta('title'));
  set('description', meta('description') || meta('og:description'));
  const contentLanguage = meta('content-language')?.split(',')[0].trim();
  set('language', c.htmlLang || contentLanguage || meta('language'));
  set('keywords', meta('keywords'));
  set('robots', meta('robots'));
  for (const [camel, keys] of ALIASES) set(camel, meta(...keys));
  set('ogImage', resolve(meta('og:image', 'og:image:url', 'og:image:secure_url'), base));
  set('ogUrl', resolve(meta('og:url'), base));
  out.ogLocaleAlternate = c.metas.filter(([k]) => k.toLowerCase() === 'og:locale:alternate').map(([, v]) => v);
  set('favicon', resolve(c.icons[0], base) ?? faviconFallback(ctx.url));
  set('canonicalUrl', resolve(c.canonical, base));
  for (const key of Object.keys(raw)) if (!Object.hasOwn(out, key)) out[key] = raw[key];

  out.sourceURL = ctx.sourceURL;
  out.url = ctx.url;
  out.statusCode = ctx.statusCode;
  if (ctx.contentType !== undefined) out.contentType = ctx.contentType;
  return out;
}

function faviconFallback(url: string): string | undefined {
  try {
    return new URL('/favicon.ico', url).href;
  } catch {
    return undefined;
  }
}
