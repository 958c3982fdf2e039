// The json format without a model: fills the caller's JSON Schema from the page's own data.
//
// For each schema property (nested objects recursed, JSON pointers in `filled` / `missing`):
// 1. Structured data: the property name is normalised (camelCase / snake_case / kebab → words)
//    and looked up, with a light synonym table (title/name → name, headline, og:title; price →
//    offers.price, lowPrice, product:price:amount; author → author.name; date/publishedAt →
//    datePublished, article:published_time; ingredients → recipeIngredient…), in the item that
//    matches the schema best (most resolvable property names; an item whose type equals the
//    property name is used for a nested object), then in the other items, then OpenGraph.
//    Exact key match first, then one level inside nested objects (rating → aggregateRating.ratingValue).
// 2. Page text: "Label: value" in a line of the markdown ("Price: $19.99", "**SKU:** X"), a
//    definition list (dt/dd) or a two-column table row (th/td) whose label matches the field.
// 3. Title-like fields (title, name, headline) fall back to the first h1.
// Arrays: of primitives from a structured array value, else the list under a heading naming
// the field; of objects from a structured array of objects, else from the rows of a table
// whose header matches the item properties, else from list items (when the item has one
// string property).
// Coercion: number from "$1,299.00"; integer only when whole; boolean from true/false/yes/no
// and availability (InStock → true); format date → YYYY-MM-DD, date-time → ISO; enums matched
// case- and separator-insensitively; a value that does not coerce is not used.
// Never invents: an unfilled property is absent, or null when its schema allows null. The
// result is validated with ajv; a value that fails its schema is removed (and listed in
// missing) until the data validates (required-property errors aside).
import type { AnyNode, Document, Element } from 'domhandler';
import { isTag } from 'domhandler';
import { textContent } from 'domutils';
import { compileJsonSchema } from '../contract/json-schema.ts';
import { availabilityOf, parseAmount } from './product.ts';
import { type Properties, type StructuredData, asList, asText, isObj } from './structured-data.ts';

export type JsonSchema = Record<string, any>;

export interface JsonFieldsInput {
  schema: JsonSchema;
  structured?: StructuredData;
  markdown?: string;
  doc?: Document;
}

export interface JsonFieldsResult {
  data: unknown;
  /** JSON pointers of the values filled. */
  filled: string[];
  /** JSON pointers of schema properties left unfilled. */
  missing: string[];
}

/** "publishedAt", "published_at", "Published-At" → "published at". */
export function words(name: string): string {
  return name
    .replace(/^[a-z]+:/i, (m) => (/^(og|product|article|twitter):$/i.test(m) ? `${m.slice(0, -1)} ` : m))
    .replace(/([a-z\d])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .replace(/[_\-.:\s]+/g, ' ')
    .trim()
    .toLowerCase();
}

/** Field words → structured-data paths to try (after the field's own name). */
const SYNONYMS: Record<string, string[]> = {
  title: ['name', 'headline', 'og:title', 'twitter:title'],
  name: ['name', 'headline', 'title', 'og:title'],
  headline: ['headline', 'name', 'og:title'],
  description: ['description', 'og:description', 'twitter:description'],
  summary: ['description', 'abstract', 'og:description'],
  price: ['offers.price', 'offers.lowPrice', 'price', 'product:price:amount'],
  amount: ['offers.price', 'price', 'product:price:amount'],
  currency: ['offers.priceCurrency', 'priceCurrency', 'product:price:currency'],
  'price currency': ['offers.priceCurrency', 'product:price:currency'],
  availability: ['offers.availability', 'product:availability'],
  'in stock': ['offers.availability', 'product:availability'],
  available: ['offers.availability', 'product:availability'],
  author: ['author.name', 'author', 'creator.name', 'creator'],
  'author name': ['author.name', 'author'],
  date: ['datePublished', 'article:published_time', 'uploadDate', 'dateCreated', 'startDate'],
  'published at': ['datePublished', 'article:published_time'],
  published: ['datePublished', 'article:published_time'],
  'publish date': ['datePublished', 'article:published_time'],
  'publication date': ['datePublished', 'article:published_time'],
  'published date': ['datePublished', 'article:published_time'],
  'updated at': ['dateModified', 'article:modified_time'],
  modified: ['dateModified', 'article:modified_time'],
  'last modified': ['dateModified'],
  image: ['image.url', 'image', 'og:image'],
  'image url': ['image.url', 'image', 'og:image'],
  images: ['image'],
  url: ['url', 'og:url', 'offers.url'],
  link: ['url', 'og:url'],
  brand: ['brand.name', 'brand', 'product:brand', 'manufacturer.name'],
  manufacturer: ['manufacturer.name', 'brand.name'],
  sku: ['sku', 'offers.sku', 'product:retailer_item_id'],
  gtin: ['gtin13', 'gtin12', 'gtin14', 'gtin8', 'gtin'],
  rating: ['aggregateRating.ratingValue'],
  'average rating': ['aggregateRating.ratingValue'],
  'review count': ['aggregateRating.reviewCount', 'aggregateRating.ratingCount'],
  reviews: ['review'],
  'rating count': ['aggregateRating.ratingCount', 'aggregateRating.reviewCount'],
  ingredients: ['recipeIngredient', 'ingredients'],
  instructions: ['recipeInstructions'],
  steps: ['recipeInstructions', 'step'],
  'prep time': ['prepTime'],
  'cook time': ['cookTime'],
  'total time': ['totalTime'],
  servings: ['recipeYield'],
  yield: ['recipeYield'],
  category: ['category', 'articleSection', 'recipeCategory', 'product:category'],
  section: ['articleSection'],
  tags: ['keywords', 'article:tag'],
  keywords: ['keywords'],
  publisher: ['publisher.name', 'publisher'],
  language: ['inLanguage'],
  calories: ['nutrition.calories'],
  cuisine: ['recipeCuisine', 'servesCuisine'],
  phone: ['telephone'],
  telephone: ['telephone'],
  email: ['email'],
  address: ['address'],
  city: ['address.addressLocality'],
  country: ['address.addressCountry'],
};

const TITLE_WORDS = new Set(['title', 'name', 'headline', 'product name', 'article title', 'page title']);

interface Page {
  items: Properties[];
  og: Record<string, string | string[]>;
  lines: string[];
  pairs: [label: string, value: string][];
  tables: { head: string[]; rows: string[][] }[];
  lists: { heading: string; items: string[] }[];
  h1?: string;
}

function allTypes(schema: JsonSchema): string[] {
  if (Array.isArray(schema.type)) return schema.type;
  if (schema.type) return [schema.type];
  if (schema.properties) return ['object'];
  if (schema.items) return ['array'];
  if (schema.enum) return [...new Set(schema.enum.map((e: unknown) => (e === null ? 'null' : typeof e)))] as string[];
  return ['string'];
}

function mainType(schema: JsonSchema): string {
  return allTypes(schema).find((t) => t !== 'null') ?? 'string';
}

function resolveSchema(schema: JsonSchema, root: JsonSchema): JsonSchema {
  let s = schema;
  for (let i = 0; i < 10 && typeof s?.$ref === 'string' && s.$ref.startsWith('#/'); i++) {
    s = s.$ref
      .slice(2)
      .split('/')
      .reduce((o: any, k: string) => o?.[k.replace(/~1/g, '/').replace(/~0/g, '~')], root);
  }
  if (s && !s.type && Array.isArray(s.anyOf ?? s.oneOf)) {
    const alts = (s.anyOf ?? s.oneOf) as JsonSchema[];
    const nonNull = alts.find((a) => a.type !== 'null');
    const nullable = alts.some((a) => a.type === 'null');
    if (nonNull) s = { ...nonNull, ...(nullable ? { type: [...allTypes(nonNull), 'null'] } : {}) };
  }
  return s ?? {};
}

// ---------------------------------------------------------------------------------------------
// Lookup in structured data

function getPath(node: unknown, path: string): unknown {
  let cur: unknown = node;
  for (const part of path.split('.')) {
    if (Array.isArray(cur)) cur = cur.find((x) => isObj(x) && x[part] !== undefined) ?? cur[0];
    if (!isObj(cur)) return undefined;
    const key = Object.keys(cur).find((k) => k === part) ?? Object.keys(cur).find((k) => words(k) === words(part));
    if (key === undefined) return undefined;
    cur = cur[key];
  }
  return cur;
}

function candidatesFor(key: string, schema: JsonSchema): string[] {
  const w = words(key);
  const extra = typeof schema.title === 'string' ? [schema.title] : [];
  return [key, ...(SYNONYMS[w] ?? []), ...extra.flatMap((t) => [t, ...(SYNONYMS[words(t)] ?? [])])];
}

function lookupIn(node: Properties, key: string, schema: JsonSchema): unknown {
  for (const path of candidatesFor(key, schema)) {
    if (path.includes(':')) continue;
    const v = getPath(node, path);
    if (v !== undefined && v !== null && v !== '') return v;
  }
  // One level down: rating → aggregateRating.ratingValue style matches by words.
  const w = words(key);
  for (const v of Object.values(node)) {
    for (const o of asList(v)) {
      if (!isObj(o)) continue;
      for (const [k, x] of Object.entries(o)) if (words(k) === w && x !== undefined && x !== '') return x;
    }
  }
  return undefined;
}

function lookupOg(og: Record<string, string | string[]>, key: string, schema: JsonSchema): unknown {
  for (const path of candidatesFor(key, schema)) {
    if (!path.includes(':')) continue;
    const v = og[path];
    if (v !== undefined) return v;
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Page text

function collectPage(input: JsonFieldsInput): Page {
  const s = input.structured;
  const items: Properties[] = (s?.items ?? []).map((it) => ({ '@type': it.type, ...it.properties }));
  const page: Page = { items, og: s?.openGraph ?? {}, lines: [], pairs: [], tables: [], lists: [] };
  const md = input.markdown ?? '';
  page.lines = md
    .split('\n')
    .map((l) =>
      l
        .replace(/!\[[^\]]*\]\([^)]*\)/g, '')
        .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
        .replace(/(\*\*|__)(.*?)\1/g, '$2')
        .replace(/^\s*(?:[-*+]|\d+[.)])\s+/, '')
        .trim(),
    )
    .filter(Boolean);
  // Lists under headings (markdown).
  let heading = '';
  let cur: { heading: string; items: string[] } | undefined;
  for (const raw of md.split('\n')) {
    const h = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(raw);
    if (h) {
      heading = h[1].replace(/[*_`]/g, '').trim();
      cur = undefined;
      continue;
    }
    const li = /^\s{0,3}(?:[-*+]|\d+[.)])\s+(.*)$/.exec(raw);
    if (li) {
      if (!cur) page.lists.push((cur = { heading, items: [] }));
      cur.items.push(
        li[1]
          .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
          .replace(/[*_`]/g, '')
          .trim(),
      );
    } else if (raw.trim()) cur = undefined;
  }
  if (input.doc) readDom(input.doc.children, page);
  return page;
}

function text(el: AnyNode): string {
  return textContent(el).replace(/\s+/g, ' ').trim();
}

function readDom(nodes: AnyNode[], page: Page): void {
  const els = (root: AnyNode[], name: string): Element[] => {
    const out: Element[] = [];
    const stack = [...root].reverse();
    while (stack.length) {
      const n = stack.pop()!;
      if (!isTag(n)) continue;
      if (n.name === 'script' || n.name === 'style') continue;
      if (n.name === name) out.push(n);
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
    }
    return out;
  };
  page.h1 ??= els(nodes, 'h1').map(text).find(Boolean);
  for (const dl of els(nodes, 'dl')) {
    let label = '';
    for (const c of dl.children) {
      if (!isTag(c)) continue;
      if (c.name === 'dt') label = text(c);
      else if (c.name === 'dd' && label) page.pairs.push([label, text(c)]);
    }
  }
  for (const table of els(nodes, 'table')) {
    const rows = els([table], 'tr');
    const grid = rows.map((r) =>
      r.children.filter((c): c is Element => isTag(c) && (c.name === 'td' || c.name === 'th')),
    );
    for (const cells of grid) {
      if (cells.length === 2 && cells[0].name === 'th' && cells[1].name === 'td')
        page.pairs.push([text(cells[0]), text(cells[1])]);
    }
    const headIdx = grid.findIndex((cells) => cells.length > 1 && cells.every((c) => c.name === 'th'));
    if (headIdx >= 0)
      page.tables.push({
        head: grid[headIdx].map(text),
        rows: grid
          .slice(headIdx + 1)
          .filter((r) => r.length > 1)
          .map((r) => r.map(text)),
      });
  }
}

function labelsFor(key: string, schema: JsonSchema): string[] {
  const out = new Set<string>([words(key)]);
  if (typeof schema.title === 'string') out.add(words(schema.title));
  return [...out];
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function fromText(page: Page, key: string, schema: JsonSchema): string | undefined {
  const labels = labelsFor(key, schema);
  for (const [label, value] of page.pairs) if (labels.includes(words(label.replace(/:$/, ''))) && value) return value;
  for (const label of labels) {
    const re = new RegExp(
      `(?:^|[\\s·•|,;(])${label.split(' ').map(escapeRe).join('[\\s_-]*')}\\s*[:：]\\s*(.+?)(?=\\s+[·•|]\\s|\\s{2,}|\\s+\\w+(?:\\s\\w+)?\\s*:\\s|$)`,
      'i',
    );
    for (const line of page.lines) {
      const m = re.exec(line);
      if (m && m[1].trim()) return m[1].trim().replace(/[.;,]$/, '');
    }
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Coercion

function coerce(v: unknown, schema: JsonSchema, key: string): unknown {
  if (v === undefined || v === null) return undefined;
  const t = mainType(schema);
  if (Array.isArray(v) && t !== 'array') return coerce(v[0], schema, key);
  if (Array.isArray(schema.enum)) {
    const s = t === 'string' ? asText(v) : v;
    if (s === undefined) return undefined;
    const norm = (x: unknown) =>
      String(x)
        .split(/[/#]/)
        .pop()!
        .toLowerCase()
        .replace(/[^a-z0-9]/g, '');
    return schema.enum.find((e: unknown) => e !== null && norm(e) === norm(s));
  }
  switch (t) {
    case 'string': {
      let s = isObj(v)
        ? asText(v.url ?? v.contentUrl) && /url|image|link|logo/i.test(key)
          ? asText(v.url ?? v.contentUrl)
          : asText(v)
        : asText(v);
      if (s === undefined) return undefined;
      if (schema.format === 'date' || schema.format === 'date-time') {
        const d = parseDate(s);
        if (!d) return undefined;
        s = schema.format === 'date' ? d.toISOString().slice(0, 10) : d.toISOString();
      }
      return s;
    }
    case 'number':
      return parseAmount(v);
    case 'integer': {
      const n = parseAmount(v);
      return n !== undefined && Number.isInteger(n) ? n : undefined;
    }
    case 'boolean': {
      if (typeof v === 'boolean') return v;
      const av = availabilityOf(v);
      if (av) return av.inStock;
      const s = asText(v)?.toLowerCase();
      if (s && /^(true|yes|y|1|on|available)$/.test(s)) return true;
      if (s && /^(false|no|n|0|off|unavailable)$/.test(s)) return false;
      return undefined;
    }
    case 'object':
      return isObj(v) ? v : undefined;
    default:
      return undefined;
  }
}

function parseDate(s: string): Date | undefined {
  if (!/\d{4}|\d{1,2}[/.-]\d{1,2}/.test(s)) return undefined;
  const d = new Date(/^\d{4}-\d{2}-\d{2}$/.test(s) ? `${s}T00:00:00Z` : s);
  return Number.isNaN(d.getTime()) ? undefined : d;
}

// ---------------------------------------------------------------------------------------------
// Filling

interface Ctx {
  page: Page;
  root: JsonSchema;
  filled: string[];
  missing: string[];
}

function ptr(path: string, key: string | number): string {
  return `${path}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
}

function resolvable(node: Properties, schema: JsonSchema, root: JsonSchema): number {
  let n = 0;
  for (const [k, s] of Object.entries(schema.properties ?? {}))
    if (lookupIn(node, k, resolveSchema(s as JsonSchema, root)) !== undefined) n++;
  return n;
}

/** The structured items ordered by how well they fit an object schema. */
function rankItems(items: Properties[], schema: JsonSchema, root: JsonSchema): Properties[] {
  return items
    .map((it, i) => ({ it, i, n: resolvable(it, schema, root) }))
    .filter((x) => x.n > 0)
    .sort((a, b) => b.n - a.n || a.i - b.i)
    .map((x) => x.it);
}

function fillObject(
  schema: JsonSchema,
  sources: Properties[],
  ctx: Ctx,
  path: string,
  useText: boolean,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const ranked = rankItems(sources, schema, ctx.root);
  for (const [key, raw] of Object.entries(schema.properties ?? {})) {
    const s = resolveSchema(raw as JsonSchema, ctx.root);
    const p = ptr(path, key);
    const v = fillValue(key, s, ranked, ctx, p, useText);
    if (v !== undefined) out[key] = v;
    else if (allTypes(s).includes('null')) out[key] = null;
  }
  return out;
}

function fillValue(key: string, s: JsonSchema, ranked: Properties[], ctx: Ctx, p: string, useText: boolean): unknown {
  const t = mainType(s);
  if (t === 'object') {
    // A nested object: the structured value under that key, else an item whose type names it, else the same sources.
    const direct = ranked.map((n) => lookupIn(n, key, s)).find((v) => isObj(v) || (Array.isArray(v) && isObj(v[0])));
    const typed = ctx.page.items.filter((it) => words(String(it['@type'])) === words(key));
    const sources = direct ? [asList(direct)[0] as Properties] : typed.length ? typed : ranked;
    const before = ctx.filled.length;
    const obj = fillObject(s, sources, ctx, p, !direct && !typed.length && useText);
    if (ctx.filled.length > before) return obj;
    ctx.missing.push(p);
    return undefined;
  }
  if (t === 'array') return fillArray(key, s, ranked, ctx, p, useText);
  for (const n of ranked) {
    const v = coerce(lookupIn(n, key, s), s, key);
    if (v !== undefined) return done(ctx, p, v);
  }
  if (useText) {
    for (const it of ctx.page.items) {
      if (ranked.includes(it)) continue;
      const v = coerce(lookupIn(it, key, s), s, key);
      if (v !== undefined) return done(ctx, p, v);
    }
    const og = coerce(lookupOg(ctx.page.og, key, s), s, key);
    if (og !== undefined) return done(ctx, p, og);
    const tv = coerce(fromText(ctx.page, key, s), s, key);
    if (tv !== undefined) return done(ctx, p, tv);
    if (TITLE_WORDS.has(words(key)) && ctx.page.h1) {
      const h = coerce(ctx.page.h1, s, key);
      if (h !== undefined) return done(ctx, p, h);
    }
  }
  ctx.missing.push(p);
  return undefined;
}

function done(ctx: Ctx, p: string, v: unknown): unknown {
  ctx.filled.push(p);
  return v;
}

function fillArray(
  key: string,
  s: JsonSchema,
  ranked: Properties[],
  ctx: Ctx,
  p: string,
  useText: boolean,
): unknown[] | undefined {
  const itemSchema = resolveSchema((s.items ?? {}) as JsonSchema, ctx.root);
  const it = mainType(itemSchema);
  const pool = useText ? [...ranked, ...ctx.page.items.filter((x) => !ranked.includes(x))] : ranked;
  let values: unknown[] | undefined;
  for (const n of pool) {
    const v = lookupIn(n, key, s);
    if (v !== undefined) {
      values = asList(v);
      break;
    }
  }
  if (!values && useText) {
    const og = lookupOg(ctx.page.og, key, s);
    if (og !== undefined) values = asList(og);
  }
  if (it === 'object') {
    if (values?.some(isObj)) {
      const out: unknown[] = [];
      values.filter(isObj).forEach((v) => {
        const before = ctx.filled.length;
        const obj = fillObject(itemSchema, [v], { ...ctx, missing: [] }, ptr(p, out.length), false);
        if (ctx.filled.length > before) out.push(obj);
      });
      if (out.length) return out;
    }
    if (useText) {
      const rows = rowsFromTables(ctx.page, itemSchema, ctx.root) ?? rowsFromLists(ctx.page, key, itemSchema, ctx.root);
      if (rows?.length) {
        rows.forEach((r, i) => Object.keys(r).forEach((k) => ctx.filled.push(ptr(ptr(p, i), k))));
        return rows;
      }
    }
    ctx.missing.push(p);
    return undefined;
  }
  if (!values && useText) {
    const w = words(key);
    const list = ctx.page.lists.find(
      (l) => l.heading && (words(l.heading) === w || words(l.heading).split(' ').includes(w)),
    );
    if (list) values = list.items;
  }
  // A comma-separated string (keywords) is a list.
  if (values?.length === 1 && typeof values[0] === 'string' && values[0].includes(',') && it === 'string')
    values = values[0]
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean);
  const out = (values ?? [])
    .map((v) => coerce(isObj(v) ? (v.text ?? v.name ?? v) : v, itemSchema, key))
    .filter((v) => v !== undefined);
  if (out.length) return done(ctx, p, out) as unknown[];
  ctx.missing.push(p);
  return undefined;
}

function rowsFromTables(page: Page, itemSchema: JsonSchema, root: JsonSchema): Record<string, unknown>[] | undefined {
  const props = Object.entries(itemSchema.properties ?? {}).map(
    ([k, v]) => [k, resolveSchema(v as JsonSchema, root)] as const,
  );
  for (const table of page.tables) {
    const cols = props.map(([k, s]) => {
      const labels = labelsFor(k, s);
      return table.head.findIndex(
        (h) => labels.includes(words(h)) || (SYNONYMS[words(k)] ?? []).some((x) => words(x) === words(h)),
      );
    });
    if (cols.filter((c) => c >= 0).length < Math.min(2, props.length)) continue;
    const rows: Record<string, unknown>[] = [];
    for (const r of table.rows) {
      const o: Record<string, unknown> = {};
      props.forEach(([k, s], i) => {
        if (cols[i] < 0) return;
        const v = coerce(r[cols[i]], s, k);
        if (v !== undefined) o[k] = v;
      });
      if (Object.keys(o).length) rows.push(o);
    }
    if (rows.length) return rows;
  }
  return undefined;
}

function rowsFromLists(
  page: Page,
  key: string,
  itemSchema: JsonSchema,
  root: JsonSchema,
): Record<string, unknown>[] | undefined {
  const strProps = Object.entries(itemSchema.properties ?? {}).filter(
    ([, v]) => mainType(resolveSchema(v as JsonSchema, root)) === 'string',
  );
  if (strProps.length !== 1) return undefined;
  const w = words(key);
  const list = page.lists.find((l) => l.heading && (words(l.heading) === w || words(l.heading).split(' ').includes(w)));
  if (!list) return undefined;
  return list.items.map((x) => ({ [strProps[0][0]]: x }));
}

// ---------------------------------------------------------------------------------------------
// Validation

function removeAt(data: unknown, pointer: string): boolean {
  const parts = pointer
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (!parts.length) return false;
  let cur: any = data;
  for (const p of parts.slice(0, -1)) {
    cur = cur?.[p];
    if (cur === undefined) return false;
  }
  const last = parts[parts.length - 1];
  if (Array.isArray(cur)) cur.splice(Number(last), 1);
  else if (cur && typeof cur === 'object' && last in cur) delete cur[last];
  else return false;
  return true;
}

export function fillJsonSchema(input: JsonFieldsInput): JsonFieldsResult {
  const schema = input.schema;
  const page = collectPage(input);
  const ctx: Ctx = { page, root: schema, filled: [], missing: [] };
  const root = resolveSchema(schema, schema);
  let data: unknown;
  if (mainType(root) === 'array') data = fillArray('items', root, [], ctx, '', true) ?? [];
  else data = fillObject(root, page.items, ctx, '', true);

  // Validate and drop what does not fit.
  let validate;
  try {
    validate = compileJsonSchema(schema);
  } catch {
    validate = undefined;
  }
  for (let i = 0; validate && i < 50 && !validate(data); i++) {
    const bad = (validate.errors ?? []).filter((e) => e.keyword !== 'required' && e.instancePath);
    if (!bad.length) break;
    const p = bad[0].instancePath;
    if (!removeAt(data, p)) break;
    const under = (x: string) => x === p || x.startsWith(`${p}/`);
    ctx.filled = ctx.filled.filter((x) => !under(x));
    if (!/\/\d+$/.test(p)) ctx.missing.push(p);
  }
  return { data, filled: ctx.filled, missing: [...new Set(ctx.missing)] };
}
