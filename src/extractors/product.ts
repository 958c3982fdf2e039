// The `product` format without a model: the spec's Product shape from schema.org data.
//
// Product: {title, url, variants, brand, category, description}. Variant: {availability:
// {inStock, text}, id, sku, title, values, price: Price, sale: {originalPrice: Price}, images:
// [{url, alt}]}. Price: {amount, currency, formatted}.
//
// Sources, best first: JSON-LD, microdata, RDFa schema.org Product / ProductGroup (also nested,
// e.g. in an ItemPage's mainEntity); fields a source lacks are taken from the next one that
// describes the same product (same name or sku) and finally from OpenGraph product:* tags
// (og:title, og:description, og:url, og:image, product:brand, product:category,
// product:price:amount/currency, product:sale_price:*, product:original_price:*,
// product:availability, product:retailer_item_id).
//
// Variants: ProductGroup.hasVariant (values from variesBy / color / size / material / pattern /
// additionalProperty); else one variant per Offer of the Product (AggregateOffer: its offers,
// else one variant priced at lowPrice). Availability: the schema.org ItemAvailability local name
// as a short text ("in stock", "out of stock", "pre-order"…); inStock is true for InStock,
// LimitedAvailability, InStoreOnly, OnlineOnly. sale.originalPrice: a priceSpecification of
// priceType ListPrice/StrikethroughPrice (or product:original_price) above the price.
// formatted: Intl en-US currency style ("$49.99"), "49.99 XYZ" for unknown codes.
// Rating and review count have no field in the spec's shape and are not emitted.
//
// Returns undefined when the page has no product data at all.
import type { Document } from 'domhandler';
import { isTag } from 'domhandler';
import type { AnyNode } from 'domhandler';
import {
  type Properties,
  type StructuredData,
  asList,
  asText,
  findByType,
  isObj,
  nodeTypes,
} from './structured-data.ts';

export interface Price {
  amount: number;
  currency?: string;
  formatted?: string;
}

export interface ProductVariant {
  availability?: { inStock: boolean; text: string };
  id?: string;
  sku?: string;
  title?: string;
  values?: Record<string, string>;
  price?: Price;
  sale?: { originalPrice: Price };
  images?: { url: string; alt?: string }[];
}

export interface Product {
  title?: string;
  url?: string;
  variants: ProductVariant[];
  brand?: string;
  category?: string;
  description?: string;
}

export interface ProductOptions {
  /** Page URL: the product's url when the data has none; base for relative image URLs. */
  url?: string;
  /** The parsed page: image alt texts are read from its <img> elements. */
  doc?: Document;
}

const AVAILABILITY: Record<string, [boolean, string]> = {
  instock: [true, 'in stock'],
  limitedavailability: [true, 'limited availability'],
  instoreonly: [true, 'in store only'],
  onlineonly: [true, 'online only'],
  outofstock: [false, 'out of stock'],
  soldout: [false, 'sold out'],
  discontinued: [false, 'discontinued'],
  preorder: [false, 'pre-order'],
  presale: [false, 'pre-sale'],
  backorder: [false, 'backorder'],
  madetoorder: [false, 'made to order'],
  reserved: [false, 'reserved'],
  oos: [false, 'out of stock'],
  pending: [false, 'pending'],
};

/** A schema.org ItemAvailability (URL or local name) or an OpenGraph value → {inStock, text}. */
export function availabilityOf(v: unknown): { inStock: boolean; text: string } | undefined {
  const s = asText(v);
  if (!s) return undefined;
  const key = s
    .replace(/[/#]+$/, '')
    .split(/[/#:]/)
    .pop()!
    .toLowerCase()
    .replace(/[^a-z]/g, '');
  const hit = AVAILABILITY[key];
  return hit ? { inStock: hit[0], text: hit[1] } : undefined;
}

/** "$1,299.00", "1.299,00 €", 49.99 → a number; undefined when there is none. */
export function parseAmount(v: unknown): number | undefined {
  if (typeof v === 'number') return Number.isFinite(v) ? v : undefined;
  const s = asText(v);
  if (!s) return undefined;
  const m = /-?\d[\d.,' \u00a0\u202f]*/.exec(s);
  if (!m) return undefined;
  let num = m[0].replace(/[' \u00a0\u202f]/g, '').replace(/[.,]$/, '');
  const lastDot = num.lastIndexOf('.');
  const lastComma = num.lastIndexOf(',');
  if (lastDot >= 0 && lastComma >= 0) {
    num = lastComma > lastDot ? num.replace(/\./g, '').replace(',', '.') : num.replace(/,/g, '');
  } else if (lastComma >= 0) {
    const parts = num.split(',');
    num = parts.length === 2 && parts[1].length !== 3 ? num.replace(',', '.') : num.replace(/,/g, '');
  } else if ((num.match(/\./g) ?? []).length > 1) num = num.replace(/\./g, '');
  const n = Number(num);
  return Number.isFinite(n) ? n : undefined;
}

const SYMBOLS: Record<string, string> = {
  $: 'USD',
  '€': 'EUR',
  '£': 'GBP',
  '¥': 'JPY',
  '₹': 'INR',
  '₩': 'KRW',
  CHF: 'CHF',
};

/** The currency code of a price text ("€12", "12 EUR"), if any. */
export function currencyOf(text: string | undefined): string | undefined {
  if (!text) return undefined;
  const code = /\b([A-Z]{3})\b/.exec(text);
  if (code) return code[1];
  for (const [sym, c] of Object.entries(SYMBOLS)) if (text.includes(sym)) return c;
  return undefined;
}

export function makePrice(amount: number | undefined, currency: string | undefined): Price | undefined {
  if (amount === undefined) return undefined;
  const cur = currency?.trim().toUpperCase() || undefined;
  let formatted: string;
  if (cur) {
    try {
      formatted = new Intl.NumberFormat('en-US', { style: 'currency', currency: cur }).format(amount);
    } catch {
      formatted = `${amount} ${cur}`;
    }
  } else formatted = String(amount);
  return { amount, ...(cur ? { currency: cur } : {}), formatted };
}

function resolve(u: string, base: string | undefined): string {
  try {
    return base ? new URL(u, base).href : u;
  } catch {
    return u;
  }
}

function imageAlts(doc: Document | undefined, base: string | undefined): Map<string, string> {
  const map = new Map<string, string>();
  if (!doc) return map;
  const stack: AnyNode[] = [...doc.children];
  while (stack.length) {
    const n = stack.pop()!;
    if (!isTag(n)) continue;
    if (n.name === 'img' && n.attribs.src && n.attribs.alt?.trim()) {
      const u = resolve(n.attribs.src.trim(), base);
      if (!map.has(u)) map.set(u, n.attribs.alt.trim());
    }
    stack.push(...n.children);
  }
  return map;
}

function imagesOf(v: unknown, base: string | undefined, alts: Map<string, string>): { url: string; alt?: string }[] {
  const out: { url: string; alt?: string }[] = [];
  for (const x of asList(v)) {
    let url: string | undefined;
    let alt: string | undefined;
    if (typeof x === 'string') url = x.trim();
    else if (isObj(x)) {
      url = asText(x.contentUrl ?? x.url);
      alt = asText(x.caption ?? x.name ?? x.description);
    }
    if (!url) continue;
    url = resolve(url, base);
    if (out.some((i) => i.url === url)) continue;
    alt ??= alts.get(url);
    out.push(alt ? { url, alt } : { url });
  }
  return out;
}

interface OfferInfo {
  price?: Price;
  sale?: { originalPrice: Price };
  availability?: { inStock: boolean; text: string };
  sku?: string;
  name?: string;
}

function offerInfo(offer: Properties, fallbackCurrency?: string): OfferInfo {
  const spec = asList(offer.priceSpecification).filter(isObj);
  const currency = asText(offer.priceCurrency) ?? asText(spec[0]?.priceCurrency) ?? fallbackCurrency;
  let amount = parseAmount(offer.price ?? offer.lowPrice);
  const sale = spec.find((s) => /ListPrice|StrikethroughPrice|MSRP/i.test(asText(s.priceType) ?? ''));
  if (amount === undefined) {
    const plain = spec.find((s) => s !== sale && s.price !== undefined);
    amount = parseAmount(plain?.price);
  }
  const info: OfferInfo = { price: makePrice(amount, currency) };
  const orig = parseAmount(sale?.price);
  if (orig !== undefined && amount !== undefined && orig > amount)
    info.sale = { originalPrice: makePrice(orig, asText(sale?.priceCurrency) ?? currency)! };
  const av = availabilityOf(offer.availability);
  if (av) info.availability = av;
  const sku = asText(offer.sku);
  if (sku) info.sku = sku;
  const name = asText(offer.name);
  if (name) info.name = name;
  return info;
}

/** The offers of a product: AggregateOffer's inner offers when listed, else the offers themselves. */
function offersOf(p: Properties): Properties[] {
  const out: Properties[] = [];
  for (const o of asList(p.offers).filter(isObj)) {
    const inner = asList(o.offers).filter(isObj);
    if (nodeTypes(o).includes('AggregateOffer') && inner.length)
      out.push(...inner.map((i) => ({ priceCurrency: o.priceCurrency, ...i })));
    else out.push(o);
  }
  return out;
}

const VALUE_KEYS = [
  'color',
  'size',
  'material',
  'pattern',
  'width',
  'depth',
  'height',
  'weight',
  'audience',
  'suggestedAge',
  'suggestedGender',
];

function variantValues(p: Properties, variesBy: string[]): Record<string, string> | undefined {
  const values: Record<string, string> = {};
  const keys = variesBy.length ? variesBy : VALUE_KEYS;
  for (const k of keys) {
    const t = asText(p[k]);
    if (t) values[k] = t;
  }
  for (const ap of asList(p.additionalProperty).filter(isObj)) {
    const name = asText(ap.name);
    const value = asText(ap.value);
    if (name && value && (!variesBy.length || variesBy.includes(name))) values[name] = value;
  }
  return Object.keys(values).length ? values : undefined;
}

function buildVariant(
  p: Properties,
  offer: Properties | undefined,
  ctx: { base?: string; alts: Map<string, string>; variesBy: string[]; parentImages?: unknown },
): ProductVariant {
  const v: ProductVariant = {};
  const info = offer ? offerInfo(offer) : {};
  if (info.availability) v.availability = info.availability;
  const sku = info.sku ?? asText(p.sku);
  const id =
    sku ??
    asText(p.productID) ??
    asText(p.gtin13 ?? p.gtin12 ?? p.gtin14 ?? p.gtin8 ?? p.gtin) ??
    asText(p.mpn) ??
    (typeof p['@id'] === 'string' ? p['@id'] : undefined);
  if (id) v.id = id;
  if (sku) v.sku = sku;
  const title = info.name ?? asText(p.name);
  if (title) v.title = title;
  const values = variantValues(p, ctx.variesBy);
  if (values) v.values = values;
  if (info.price) v.price = info.price;
  if (info.sale) v.sale = info.sale;
  const images = imagesOf(p.image ?? ctx.parentImages, ctx.base, ctx.alts);
  if (images.length) v.images = images;
  return v;
}

function brandOf(p: Properties): string | undefined {
  return asText(p.brand) ?? asText(p.manufacturer);
}

function categoryOf(p: Properties): string | undefined {
  const c = p.category;
  if (Array.isArray(c)) {
    const parts = c.map(asText).filter((x): x is string => !!x);
    return parts.length ? parts.join(' > ') : undefined;
  }
  return asText(c);
}

function productFromNode(p: Properties, ctx: { base?: string; alts: Map<string, string> }): Product {
  const out: Product = { variants: [] };
  const title = asText(p.name);
  if (title) out.title = title;
  const firstOffer = offersOf(p)[0];
  const url = asText(p.url) ?? (firstOffer ? asText(firstOffer.url) : undefined);
  if (url) out.url = resolve(url, ctx.base);
  const brand = brandOf(p);
  if (brand) out.brand = brand;
  const category = categoryOf(p);
  if (category) out.category = category;
  const description = asText(p.description);
  if (description) out.description = description;

  const variesBy = asList(p.variesBy)
    .map((x) => (asText(x) ?? '').split(/[/#]/).pop()!)
    .filter(Boolean);
  const vctx = { ...ctx, variesBy };
  const hasVariant = asList(p.hasVariant).filter(isObj);
  if (hasVariant.length) {
    for (const hv of hasVariant) {
      const offers = offersOf(hv);
      out.variants.push(buildVariant(hv, offers[0], { ...vctx, parentImages: p.image }));
    }
  } else {
    const offers = offersOf(p);
    const aggregate = asList(p.offers)
      .filter(isObj)
      .find((o) => nodeTypes(o).includes('AggregateOffer') && !asList(o.offers).length);
    if (offers.length > 1 && !aggregate) for (const o of offers) out.variants.push(buildVariant(p, o, vctx));
    else out.variants.push(buildVariant(p, aggregate ?? offers[0], vctx));
  }
  return out;
}

function sameProduct(a: Properties, b: Properties): boolean {
  const na = asText(a.name)?.toLowerCase();
  const nb = asText(b.name)?.toLowerCase();
  const sa = asText(a.sku);
  const sb = asText(b.sku);
  return (!!na && na === nb) || (!!sa && sa === sb);
}

function richness(p: Properties): number {
  return Object.keys(p).length + (p.offers ? 5 : 0) + (p.hasVariant ? 5 : 0);
}

/** Fills fields `a` lacks from `b` (variant 0 only, for single-variant products). */
function merge(a: Product, b: Product): void {
  for (const k of ['title', 'url', 'brand', 'category', 'description'] as const)
    if (a[k] === undefined && b[k] !== undefined) a[k] = b[k];
  if (!a.variants.length) {
    a.variants = b.variants;
    return;
  }
  if (a.variants.length === 1 && b.variants.length === 1) {
    const va = a.variants[0];
    const vb = b.variants[0];
    for (const k of Object.keys(vb) as (keyof ProductVariant)[]) if (va[k] === undefined) (va as any)[k] = vb[k];
  }
}

function fromOpenGraph(
  og: Record<string, string | string[]>,
  ctx: { base?: string; alts: Map<string, string> },
): Product | undefined {
  const get = (...keys: string[]) => {
    for (const k of keys) {
      const v = og[k];
      const t = Array.isArray(v) ? v[0] : v;
      if (t) return t;
    }
    return undefined;
  };
  const isProduct = /product/i.test(get('og:type') ?? '') || Object.keys(og).some((k) => /^product:/i.test(k));
  if (!isProduct) return undefined;
  const out: Product = { variants: [] };
  const title = get('og:title', 'product:title');
  if (title) out.title = title;
  const url = get('og:url');
  if (url) out.url = resolve(url, ctx.base);
  const brand = get('product:brand', 'og:brand');
  if (brand) out.brand = brand;
  const category = get('product:category');
  if (category) out.category = category;
  const description = get('og:description');
  if (description) out.description = description;
  const v: ProductVariant = {};
  const currency = get('product:price:currency', 'og:price:currency');
  const sale = parseAmount(get('product:sale_price:amount'));
  const amount = sale ?? parseAmount(get('product:price:amount', 'og:price:amount'));
  const price = makePrice(amount, sale !== undefined ? (get('product:sale_price:currency') ?? currency) : currency);
  if (price) v.price = price;
  const orig =
    parseAmount(get('product:original_price:amount')) ??
    (sale !== undefined ? parseAmount(get('product:price:amount')) : undefined);
  if (orig !== undefined && amount !== undefined && orig > amount)
    v.sale = { originalPrice: makePrice(orig, get('product:original_price:currency') ?? currency)! };
  const av = availabilityOf(get('product:availability', 'og:availability'));
  if (av) v.availability = av;
  const id = get('product:retailer_item_id', 'product:sku');
  if (id) {
    v.id = id;
    v.sku = id;
  }
  if (title) v.title = title;
  const images = imagesOf(og['og:image'] ?? og['og:image:url'], ctx.base, ctx.alts);
  if (images.length) v.images = images;
  if (Object.keys(v).length) out.variants.push(v);
  return Object.keys(out).length > 1 || out.variants.length ? out : undefined;
}

export function extractProduct(data: StructuredData, opts: ProductOptions = {}): Product | undefined {
  const ctx = { base: opts.url, alts: imageAlts(opts.doc, opts.url) };
  const found = findByType(data, 'ProductGroup', 'Product', 'IndividualProduct', 'ProductModel', 'Vehicle', 'Car');
  // Variants listed in a ProductGroup are not products of their own.
  const groups = found.filter((f) => nodeTypes(f.node).includes('ProductGroup'));
  const inGroup = new Set<unknown>(groups.flatMap((g) => asList(g.node.hasVariant)));
  const candidates = found.filter((f) => !inGroup.has(f.node));
  let product: Product | undefined;
  if (candidates.length) {
    const order = { 'json-ld': 0, microdata: 1, rdfa: 2 };
    const ranked = candidates
      .map((c, i) => ({ ...c, i }))
      .sort((a, b) => order[a.source] - order[b.source] || richness(b.node) - richness(a.node) || a.i - b.i);
    const main = ranked[0];
    product = productFromNode(main.node, ctx);
    for (const other of ranked.slice(1))
      if (sameProduct(main.node, other.node)) merge(product, productFromNode(other.node, ctx));
  }
  const og = fromOpenGraph(data.openGraph, ctx);
  if (og) {
    if (product) merge(product, og);
    else product = og;
  }
  if (!product) return undefined;
  if (!product.url && opts.url) product.url = opts.url;
  return product;
}
