// What kind of page this is, from what it declares about itself (schema.org types in JSON-LD or
// microdata, og:type), else from its URL's shape (only a few product paths are unambiguous enough).
// The content filter applies some rules only where they fit: a rail of teaser cards beside an
// article is boilerplate, the same cards on an index page are the content.
import type { Measure } from './clean-measure.ts';

export type PageKind = 'article' | 'product' | 'thread' | 'collection' | 'other';

const THREAD = ['discussionforumposting', 'qapage', 'og:forum'];
const COLLECTION = ['collectionpage', 'itemlist', 'searchresultspage', 'og:product.group'];
const PRODUCT = ['product', 'productgroup', 'og:product'];
const ARTICLE = [
  'article',
  'newsarticle',
  'blogposting',
  'techarticle',
  'scholarlyarticle',
  'reportagenewsarticle',
  'analysisnewsarticle',
  'opinionnewsarticle',
  'reviewnewsarticle',
  'og:article',
];

export function pageKind(m: Measure, url?: string): PageKind {
  const d = m.declared;
  const has = (list: string[]) => list.some((t) => d.has(t));
  if (has(THREAD)) return 'thread';
  // A category page may declare each of its tiles a Product: many products in a list are a collection.
  const products = PRODUCT.reduce((n, t) => n + (d.get(t) ?? 0), 0);
  if (has(COLLECTION) && products >= MANY_PRODUCTS) return 'collection';
  if (products && (d.has('offer') || d.has('aggregateoffer') || d.has('og:product'))) return 'product';
  if (has(COLLECTION)) return 'collection';
  if (has(ARTICLE)) return 'article';
  // Undeclared: a URL (the page's, or the one it gives as its own) that names a product page
  // (Amazon's /dp/, eBay's /itm/, /pdp/). Not /products/: software vendors and category pages use it too.
  for (const u of url ? [url, ...m.selfUrls] : m.selfUrls)
    if (PRODUCT_PATH.test(URL.parse(u)?.pathname.toLowerCase() ?? '')) return 'product';
  return 'other';
}

/** Products declared on a page that also declares a list: the list's items, not the page's one product. */
const MANY_PRODUCTS = 3;

const PRODUCT_PATH = /\/(dp|pdp|itm|gp\/product)\/[^/]+/;
