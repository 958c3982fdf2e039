// The deterministic fill of the pages an extract read: each page's fill (with a schema,
// fillJsonSchema; with a prompt only, its main structured-data item), then the pages' fills merged.
import type { Document } from 'domhandler';
import { parseHtml } from '../markdown/html-parser.ts';
import type { ScrapeDocument } from '../contract/scrape.ts';
import { fillJsonSchema } from '../extractors/json-fields.ts';
import { type StructuredData, extractStructuredData } from '../extractors/structured-data.ts';
import type { JsonSchema } from '../llm/json.ts';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isEmpty = (v: unknown) =>
  v === undefined ||
  v === null ||
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (isObject(v) && Object.keys(v).length === 0);

/** The pages' values together: first non-empty value per field, objects merged, arrays concatenated without duplicates. */
export function mergeFills(values: unknown[]): unknown {
  let out: unknown = undefined;
  for (const v of values) out = mergeTwo(out, v);
  return out;
}

function mergeTwo(a: unknown, b: unknown): unknown {
  if (isEmpty(b)) return a;
  if (isEmpty(a)) return b;
  if (Array.isArray(a) && Array.isArray(b)) {
    const seen = new Set(a.map((x) => JSON.stringify(x)));
    return [...a, ...b.filter((x) => !seen.has(JSON.stringify(x)) && seen.add(JSON.stringify(x)))];
  }
  if (isObject(a) && isObject(b)) {
    const out: Record<string, unknown> = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = mergeTwo(out[k], v);
    return out;
  }
  return a;
}

/** The page's main structured data item (JSON-LD first, then the richest), else its title and description. */
function mainItem(
  structured: StructuredData | undefined,
  metadata: Record<string, unknown>,
  url: string,
): Record<string, unknown> {
  const order = { 'json-ld': 0, microdata: 1, rdfa: 2 };
  const best = [...(structured?.items ?? [])].sort(
    (a, b) => order[a.source] - order[b.source] || Object.keys(b.properties).length - Object.keys(a.properties).length,
  )[0];
  if (best) return { ...(best.type ? { '@type': best.type } : {}), ...best.properties };
  const out: Record<string, unknown> = {};
  for (const k of ['title', 'description'] as const) if (typeof metadata[k] === 'string') out[k] = metadata[k];
  out.url = url;
  return out;
}

export interface ScrapedPage {
  url: string;
  markdown: string;
  fill: unknown;
  missing: string[];
}

/** A scraped page's deterministic fill (the job's step 3, src/extract/job.ts). */
export function fillOf(doc: ScrapeDocument, schema: JsonSchema | undefined): ScrapedPage {
  const url = doc.metadata.url ?? doc.metadata.sourceURL ?? '';
  const markdown = doc.markdown ?? '';
  let structured: { data: StructuredData; doc: Document } | undefined;
  if (doc.rawHtml !== undefined && /html/i.test(String(doc.metadata.contentType ?? 'text/html'))) {
    const dom = parseHtml(doc.rawHtml);
    structured = { data: extractStructuredData(dom, { baseUrl: url }), doc: dom };
  }
  if (schema) {
    const fill = fillJsonSchema({ schema, structured: structured?.data, markdown, doc: structured?.doc });
    return { url, markdown, fill: fill.data, missing: fill.missing };
  }
  return { url, markdown, fill: mainItem(structured?.data, doc.metadata as Record<string, unknown>, url), missing: [] };
}
