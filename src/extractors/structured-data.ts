// Structured data of a parsed page, model-free: JSON-LD, microdata, RDFa Lite and the flat
// OpenGraph / twitter / product:* meta tags.
//
// - JSON-LD: every <script type="application/ld+json">; a top-level array and @graph are
//   flattened into items. Broken JSON is parsed leniently (comments, trailing commas, raw
//   newlines in strings, HTML entities, <!-- --> / CDATA wrappers); a block that still fails is
//   skipped and counted in `errors`. Nested nodes stay nested (objects keep their '@type'); a
//   nested {"@id"} reference is replaced by the node of that @id found elsewhere on the page.
// - Microdata: every itemscope without itemprop is a
//   top-level item (an itemscope with itemprop is only a property value); properties come from descendants (not crossing a nested itemscope) plus
//   itemref. Values: meta → content; a/area/link → href; img/audio/video/source/track/embed/
//   iframe → src; object → data; data/meter → value; time → datetime (else text); any element
//   with a content attribute → content (as Google reads it); else the text. Nested itemscope →
//   a nested object with '@type'. URLs are resolved against baseUrl.
// - RDFa Lite: vocab/typeof/property/resource (href/src/content/datetime as values); prefixed
//   ("schema:name") and full-IRI property and type names are reduced to their local names.
// - OpenGraph: every meta property|name starting og:, product:, twitter:, article:, book:,
//   profile:, music:, video: → a string (an array when the key repeats).
//
// Types are local names: "https://schema.org/Product" → "Product". A repeated property becomes
// an array.
import type { AnyNode, Document, Element } from 'domhandler';
import { isTag } from 'domhandler';
import { textContent } from 'domutils';
import { decodeHTML } from 'entities';

export type StructuredSource = 'json-ld' | 'microdata' | 'rdfa';

export type Properties = Record<string, unknown>;

export interface StructuredItem {
  /** The first type's local name ('Product', 'Recipe'…); '' when the node has none. */
  type: string;
  /** Every type's local name. */
  types: string[];
  source: StructuredSource;
  /** @id (JSON-LD), itemid (microdata) or resource (RDFa). */
  id?: string;
  /** Property name → value (string, number, boolean, nested object with '@type', or an array of those). */
  properties: Properties;
}

export interface StructuredData {
  items: StructuredItem[];
  /** og:*, product:*, twitter:*, article:*… meta tags: key → value(s). */
  openGraph: Record<string, string | string[]>;
  /** JSON-LD blocks that could not be parsed even leniently. */
  errors: number;
}

export interface StructuredDataOptions {
  /** Base for relative URLs in microdata / RDFa. */
  baseUrl?: string;
}

export function extractStructuredData(doc: Document | AnyNode[], opts: StructuredDataOptions = {}): StructuredData {
  const roots = Array.isArray(doc) ? doc : doc.children;
  const out: StructuredData = { items: [], openGraph: {}, errors: 0 };
  const base = opts.baseUrl ?? baseFromDoc(roots);
  const scripts: Element[] = [];
  const microRoots: Element[] = [];
  const rdfaRoots: { el: Element; vocab: string }[] = [];
  const ids = new Map<string, Element>();

  // One walk: collect scripts, meta, id map, microdata and RDFa roots.
  const walk = (nodes: AnyNode[], inItem: boolean, inRdfa: boolean, vocab: string) => {
    for (const node of nodes) {
      if (!isTag(node)) continue;
      const a = node.attribs;
      if (a.id) ids.set(a.id, node);
      if (node.name === 'script') {
        if ((a.type ?? '').trim().toLowerCase().startsWith('application/ld+json')) scripts.push(node);
        continue;
      }
      if (node.name === 'meta') {
        const key = (a.property ?? a.name ?? '').trim();
        if (key && a.content !== undefined && OG_PREFIX.test(key) && !('itemprop' in a))
          addValue(out.openGraph, key, clean(a.content));
      }
      const v = a.vocab !== undefined ? a.vocab : vocab;
      let childInItem = inItem;
      if ('itemscope' in a) {
        if (!('itemprop' in a)) microRoots.push(node);
        childInItem = true;
      }
      let childInRdfa = inRdfa;
      if (a.typeof !== undefined) {
        if (!inRdfa || a.property === undefined) rdfaRoots.push({ el: node, vocab: v });
        childInRdfa = true;
      }
      if (node.name === 'style' || node.name === 'template') continue;
      walk(node.children, childInItem, childInRdfa, v);
    }
  };
  walk(roots, false, false, '');

  // JSON-LD
  const ld: StructuredItem[] = [];
  for (const s of scripts) {
    const value = parseLenientJson(textContent(s));
    if (value === undefined) {
      out.errors++;
      continue;
    }
    for (const node of flattenJsonLd(decodeStrings(value) as unknown)) ld.push(toItem(node, 'json-ld'));
  }
  resolveRefs(ld);
  out.items.push(...ld);

  // Microdata
  for (const el of microRoots) {
    const obj = microdataItem(el, ids, base, new Set());
    out.items.push(toItem(obj, 'microdata'));
  }

  // RDFa Lite
  for (const { el, vocab } of rdfaRoots) {
    const obj = rdfaItem(el, vocab, base);
    out.items.push(toItem(obj, 'rdfa'));
  }
  return out;
}

const OG_PREFIX = /^(og|product|twitter|article|book|profile|music|video):/i;

function clean(v: string): string {
  const t = v.replace(/\s+/g, ' ').trim();
  return /&(#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);/i.test(t) ? decodeHTML(t) : t;
}

function addValue(obj: Record<string, any>, key: string, value: unknown): void {
  if (key === '__proto__' || value === undefined || value === '') return;
  if (!Object.hasOwn(obj, key)) obj[key] = value;
  else if (Array.isArray(obj[key])) obj[key].push(value);
  else obj[key] = [obj[key], value];
}

function baseFromDoc(nodes: AnyNode[]): string | undefined {
  const stack = [...nodes];
  while (stack.length) {
    const n = stack.shift()!;
    if (!isTag(n)) continue;
    if (n.name === 'base' && n.attribs.href) return n.attribs.href;
    if (n.name === 'body') return undefined;
    stack.unshift(...n.children);
  }
  return undefined;
}

function resolveUrl(href: string, base: string | undefined): string {
  const h = href.trim();
  if (!base) return h;
  try {
    return new URL(h, base).href;
  } catch {
    return h;
  }
}

/** "https://schema.org/Product", "schema:Product", "http://schema.org/Product/" → "Product". */
export function localName(t: string): string {
  const s = t.trim().replace(/[/#]+$/, '');
  const m = /[/#:]([^/#:]+)$/.exec(s);
  return m ? m[1] : s;
}

function typesOf(v: unknown): string[] {
  const list = Array.isArray(v) ? v : v === undefined ? [] : [v];
  return list.filter((t): t is string => typeof t === 'string' && t.trim() !== '').map(localName);
}

function toItem(node: Properties, source: StructuredSource): StructuredItem {
  const types = typesOf(node['@type']);
  const properties: Properties = {};
  for (const [k, v] of Object.entries(node)) if (k !== '@type' && k !== '@context' && k !== '@id') properties[k] = v;
  const id = typeof node['@id'] === 'string' ? node['@id'] : undefined;
  return { type: types[0] ?? '', types, source, ...(id ? { id } : {}), properties };
}

// ---------------------------------------------------------------------------------------------
// JSON-LD

/** JSON.parse, then a lenient retry (comments, trailing commas, raw control characters in
 * strings, HTML entities, comment/CDATA wrappers). undefined when nothing parses. */
export function parseLenientJson(text: string): unknown {
  const t = text.trim();
  if (!t) return undefined;
  try {
    return JSON.parse(t);
  } catch {
    /* lenient below */
  }
  const unwrapped = t
    .replace(/^<!\[CDATA\[|\]\]>$/g, '')
    .replace(/^\s*(?:\/\/\s*)?<!--|(?:\/\/\s*)?-->\s*$/g, '')
    .trim();
  for (const candidate of [unwrapped, decodeHTML(unwrapped)]) {
    try {
      return JSON.parse(repairJson(candidate));
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** Removes comments and trailing commas outside strings; escapes raw control characters inside. */
function repairJson(s: string): string {
  let out = '';
  let inStr = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (inStr) {
      if (c === '\\') {
        out += c + (s[i + 1] ?? '');
        i++;
      } else if (c === '"') {
        inStr = false;
        out += c;
      } else if (c === '\n') out += '\\n';
      else if (c === '\r') out += '\\r';
      else if (c === '\t') out += '\\t';
      else if (c < ' ') out += ' ';
      else out += c;
      continue;
    }
    if (c === '"') {
      inStr = true;
      out += c;
    } else if (c === '/' && s[i + 1] === '/') {
      while (i < s.length && s[i] !== '\n') i++;
    } else if (c === '/' && s[i + 1] === '*') {
      const end = s.indexOf('*/', i + 2);
      i = end < 0 ? s.length : end + 1;
    } else if (c === ',') {
      let j = i + 1;
      while (j < s.length && /\s/.test(s[j])) j++;
      if (s[j] !== '}' && s[j] !== ']') out += c;
    } else out += c;
  }
  return out;
}

/** Entity-decodes and trims every string of a parsed JSON value. */
function decodeStrings(v: unknown): unknown {
  if (typeof v === 'string') return /&(#\d+|#x[0-9a-f]+|[a-z][a-z0-9]*);/i.test(v) ? decodeHTML(v).trim() : v.trim();
  if (Array.isArray(v)) return v.map(decodeStrings);
  if (isObj(v)) {
    const o: Properties = {};
    for (const [k, x] of Object.entries(v)) o[k] = decodeStrings(x);
    return o;
  }
  return v;
}

function isObj(v: unknown): v is Properties {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function flattenJsonLd(value: unknown): Properties[] {
  if (Array.isArray(value)) return value.flatMap(flattenJsonLd);
  if (!isObj(value)) return [];
  const graph = value['@graph'];
  if (graph !== undefined) {
    const rest = Object.keys(value).filter((k) => k !== '@graph' && k !== '@context');
    return [...(rest.length && value['@type'] ? [value] : []), ...flattenJsonLd(graph)];
  }
  return [value];
}

/** Replaces nested {"@id": x} stubs by the full node of that @id (no cycles). */
function resolveRefs(items: StructuredItem[]): void {
  const byId = new Map<string, Properties>();
  for (const it of items)
    if (it.id) byId.set(it.id, { '@type': it.types.length > 1 ? it.types : it.type, '@id': it.id, ...it.properties });
  if (!byId.size) return;
  const fix = (v: unknown, path: Set<string>): unknown => {
    if (Array.isArray(v)) return v.map((x) => fix(x, path));
    if (!isObj(v)) return v;
    const id = v['@id'];
    if (typeof id === 'string' && Object.keys(v).length === 1 && byId.has(id) && !path.has(id)) {
      const next = new Set(path).add(id);
      return fix(byId.get(id), next);
    }
    const o: Properties = {};
    for (const [k, x] of Object.entries(v)) o[k] = fix(x, path);
    return o;
  };
  for (const it of items) {
    const path = new Set(it.id ? [it.id] : []);
    for (const k of Object.keys(it.properties)) it.properties[k] = fix(it.properties[k], path);
  }
}

// ---------------------------------------------------------------------------------------------
// Microdata

const SRC_TAGS = new Set(['img', 'audio', 'video', 'source', 'track', 'embed', 'iframe']);
const HREF_TAGS = new Set(['a', 'area', 'link']);

function elementValue(el: Element, base: string | undefined): string {
  const a = el.attribs;
  if (el.name === 'meta') return clean(a.content ?? '');
  if (HREF_TAGS.has(el.name) && a.href !== undefined) return resolveUrl(a.href, base);
  if (SRC_TAGS.has(el.name) && a.src !== undefined) return resolveUrl(a.src, base);
  if (el.name === 'object' && a.data !== undefined) return resolveUrl(a.data, base);
  if ((el.name === 'data' || el.name === 'meter') && a.value !== undefined) return a.value.trim();
  if (el.name === 'time' && a.datetime !== undefined) return a.datetime.trim();
  if (a.content !== undefined) return clean(a.content);
  return clean(textContent(el));
}

function microdataItem(
  el: Element,
  ids: Map<string, Element>,
  base: string | undefined,
  seen: Set<Element>,
): Properties {
  seen.add(el);
  const a = el.attribs;
  const obj: Properties = {};
  const types = (a.itemtype ?? '').split(/\s+/).filter(Boolean).map(localName);
  if (types.length) obj['@type'] = types.length === 1 ? types[0] : types;
  if (a.itemid) obj['@id'] = resolveUrl(a.itemid, base);
  const props: Element[] = [];
  const collect = (nodes: AnyNode[]) => {
    for (const n of nodes) {
      if (!isTag(n)) continue;
      if ('itemprop' in n.attribs) props.push(n);
      if (!('itemscope' in n.attribs)) collect(n.children);
    }
  };
  collect(el.children);
  for (const ref of (a.itemref ?? '').split(/\s+/).filter(Boolean)) {
    const target = ids.get(ref);
    if (!target) continue;
    if ('itemprop' in target.attribs) props.push(target);
    if (!('itemscope' in target.attribs)) collect(target.children);
  }
  for (const p of props) {
    const value =
      'itemscope' in p.attribs ? (seen.has(p) ? undefined : microdataItem(p, ids, base, seen)) : elementValue(p, base);
    for (const name of p.attribs.itemprop.split(/\s+/).filter(Boolean)) addValue(obj, localName(name), value);
  }
  return obj;
}

// ---------------------------------------------------------------------------------------------
// RDFa Lite

function rdfaItem(el: Element, vocab: string, base: string | undefined): Properties {
  const a = el.attribs;
  const obj: Properties = {};
  const types = (a.typeof ?? '').split(/\s+/).filter(Boolean).map(localName);
  if (types.length) obj['@type'] = types.length === 1 ? types[0] : types;
  const id = a.resource ?? a.about;
  if (id) obj['@id'] = resolveUrl(id, base);
  void vocab;
  const walk = (nodes: AnyNode[], v: string) => {
    for (const n of nodes) {
      if (!isTag(n)) continue;
      const na = n.attribs;
      const nv = na.vocab ?? v;
      if (na.property !== undefined) {
        const value = na.typeof !== undefined ? rdfaItem(n, nv, base) : rdfaValue(n, base);
        for (const name of na.property.split(/\s+/).filter(Boolean)) addValue(obj, localName(name), value);
        if (na.typeof !== undefined) continue;
      } else if (na.typeof !== undefined) continue; // a separate top-level item
      walk(n.children, nv);
    }
  };
  walk(el.children, vocab);
  return obj;
}

function rdfaValue(el: Element, base: string | undefined): string {
  const a = el.attribs;
  if (a.content !== undefined) return clean(a.content);
  if (a.resource !== undefined) return resolveUrl(a.resource, base);
  if (a.datetime !== undefined) return a.datetime.trim();
  if (a.href !== undefined) return resolveUrl(a.href, base);
  if (a.src !== undefined) return resolveUrl(a.src, base);
  return clean(textContent(el));
}

// ---------------------------------------------------------------------------------------------
// Helpers for consumers

/** Items and nested objects (at any depth) whose type is one of `types`, as plain objects with
 * '@type'; top-level items first, in page order. */
export function findByType(data: StructuredData, ...types: string[]): { node: Properties; source: StructuredSource }[] {
  const want = new Set(types);
  const out: { node: Properties; source: StructuredSource }[] = [];
  const seen = new Set<unknown>();
  const visit = (v: unknown, source: StructuredSource, depth: number) => {
    if (depth > 12 || v === null || typeof v !== 'object' || seen.has(v)) return;
    seen.add(v);
    if (Array.isArray(v)) {
      for (const x of v) visit(x, source, depth + 1);
      return;
    }
    const o = v as Properties;
    if (typesOf(o['@type']).some((t) => want.has(t))) out.push({ node: o, source });
    for (const [k, x] of Object.entries(o)) if (k !== '@type') visit(x, source, depth + 1);
  };
  for (const it of data.items) {
    const node: Properties = {
      '@type': it.types.length > 1 ? it.types : it.type,
      ...(it.id ? { '@id': it.id } : {}),
      ...it.properties,
    };
    if (it.types.some((t) => want.has(t))) {
      out.push({ node, source: it.source });
      seen.add(node);
    }
    for (const x of Object.values(it.properties)) visit(x, it.source, 1);
  }
  return out;
}

/** The local type names of a node's '@type'. */
export function nodeTypes(node: unknown): string[] {
  return isObj(node) ? typesOf(node['@type']) : [];
}

/** A value as a list (undefined → []). */
export function asList(v: unknown): unknown[] {
  return v === undefined || v === null ? [] : Array.isArray(v) ? v : [v];
}

/** A text value: a string or number as is; {'@value'}, {name} or {text} of an object; the first of an array. */
export function asText(v: unknown): string | undefined {
  if (typeof v === 'string') return clean(v) || undefined;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) {
    for (const x of v) {
      const t = asText(x);
      if (t) return t;
    }
    return undefined;
  }
  if (isObj(v)) return asText(v['@value'] ?? v.name ?? v.text);
  return undefined;
}

export { isObj };
