// The AI formats of a scrape: json, summary, question/query (→ answer), highlights, product, menu
// and the onlyCleanContent pass. Each has two paths (README "AI formats"):
//
// - Deterministic (no LLM configured, or the LLM failed): the extractors of src/extractors/ —
//   fillJsonSchema, extractiveSummary, BM25 answer/highlights, extractProduct, extractMenu,
//   cleanMarkdown — and a warning naming the path that ran.
// - LLM (OPENAI_BASE_URL / OPENAI_API_KEY): the page's markdown in the prompt, grounded by the
//   deterministic result (values already read, best-matching passages), so prompts are shorter
//   and the model has less to invent. product and menu use the deterministic result alone when
//   it is confident (a titled product with a priced variant; a menu of confidence ≥ 0.9).
//
// An LLM failure (LLM_TIMEOUT, LLM_RATE_LIMITED, LLM_ERROR, LLM_INVALID_OUTPUT) degrades that
// format to its deterministic result with a warning carrying the error code; it never fails the
// scrape, and is never silent. The scrape's own deadline still fails it (SCRAPE_TIMEOUT).
// onlyCleanContent runs first: the other formats read the cleaned markdown.
import type { Document } from 'domhandler';
import { answerQuestion, highlights as bm25Highlights, highlightsText } from '../../extractors/bm25.ts';
import { cleanMarkdown } from '../../extractors/clean-content.ts';
import { fillJsonSchema } from '../../extractors/json-fields.ts';
import { type Menu, extractMenu } from '../../extractors/menu.ts';
import { type Product, extractProduct } from '../../extractors/product.ts';
import type { StructuredData } from '../../extractors/structured-data.ts';
import type { JsonSchema } from '../../llm/json.ts';
import {
  cleanContentPrompt,
  highlightsPrompt,
  highlightsSchema,
  jsonExtractionPrompt,
  questionPrompt,
  summaryPrompt,
} from '../../llm/prompts.ts';
import type { LlmProvider, UsageOwner } from '../../llm/provider.ts';
import type { FormatPlan } from '../plan.ts';
import { extractiveSummary } from './summary.ts';
import { LlmError, LlmUpstreamError } from '../../errors.ts';

/** Output tokens assumed when LLM_MAX_OUTPUT_TOKENS is unset (a common endpoint default). */
export const DEFAULT_OUTPUT_TOKENS = 4096;
const CHARS_PER_TOKEN = 4;
/** Grounding (deterministic results) carried in a prompt, at most. */
const GROUNDING_CHARS = 8000;

export interface AiPage {
  /** The page's markdown (after redactPII). */
  markdown: string;
  url: string;
  /** HTML pages: structured data of the original DOM and the parsed document. */
  structured?: { data: StructuredData; doc: Document };
  metadata: Record<string, unknown>;
}

export interface AiContext {
  /** Used when `available`; otherwise every format takes its deterministic path. */
  llm?: LlmProvider;
  usage: UsageOwner;
  /** The scrape's deadline. */
  signal: AbortSignal;
  /** LLM_MAX_OUTPUT_TOKENS. */
  maxOutputTokens?: number;
}

export interface AiOutput {
  markdown: string;
  json?: unknown;
  summary?: string;
  answer?: string;
  highlights?: string;
  product?: Product;
  menu?: Menu;
  warnings: string[];
}

/** Whether the plan asks for any format this module produces. */
export function wantsAi(f: FormatPlan): boolean {
  return f.summary || f.cleanContent || f.product || f.menu || Boolean(f.json || f.question || f.highlights);
}

interface Done<T> {
  value: T;
  warning?: string;
}

// Product and Menu of the spec as JSON Schemas for the LLM path.
const priceSchema = {
  type: 'object',
  properties: { amount: { type: 'number' }, currency: { type: 'string' }, formatted: { type: 'string' } },
  required: ['amount'],
};
const imagesSchema = {
  type: 'array',
  items: { type: 'object', properties: { url: { type: 'string' }, alt: { type: 'string' } }, required: ['url'] },
};
const availabilitySchema = {
  type: 'object',
  properties: { inStock: { type: 'boolean' }, text: { type: 'string' } },
  required: ['inStock', 'text'],
};
/** The properties a menu's sections and items both start with. */
const menuEntryProperties = { name: { type: 'string' }, id: { type: 'string' }, description: { type: 'string' } };

/**
 * The schema with every optional property also allowing null: the extraction prompt tells the
 * model to use null for a value the page lacks (nulls are dropped from the reply afterwards).
 */
function tolerateNulls(schema: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...schema };
  if (out.items) out.items = tolerateNulls(out.items);
  if (out.properties) {
    const required = new Set<string>(out.required ?? []);
    out.properties = Object.fromEntries(
      Object.entries(out.properties as Record<string, Record<string, any>>).map(([k, v]) => {
        const inner = tolerateNulls(v);
        return [
          k,
          required.has(k) || typeof inner.type !== 'string' ? inner : { ...inner, type: [inner.type, 'null'] },
        ];
      }),
    );
  }
  return out;
}

export const productSchema: JsonSchema = tolerateNulls({
  type: 'object',
  properties: {
    title: { type: 'string' },
    url: { type: 'string' },
    brand: { type: 'string' },
    category: { type: 'string' },
    description: { type: 'string' },
    variants: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          availability: availabilitySchema,
          id: { type: 'string' },
          sku: { type: 'string' },
          title: { type: 'string' },
          values: { type: 'object', additionalProperties: { type: 'string' } },
          price: priceSchema,
          sale: { type: 'object', properties: { originalPrice: priceSchema }, required: ['originalPrice'] },
          images: imagesSchema,
        },
      },
    },
  },
  required: ['variants'],
});

export const menuSchema: JsonSchema = tolerateNulls({
  type: 'object',
  properties: {
    isMenu: { type: 'boolean' },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    merchant: {
      type: 'object',
      properties: { name: { type: 'string' }, type: { type: 'string' } },
      required: ['name', 'type'],
    },
    currency: { type: 'string' },
    sourceUrl: { type: 'string' },
    sections: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          ...menuEntryProperties,
          items: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                ...menuEntryProperties,
                images: imagesSchema,
                price: priceSchema,
                availability: availabilitySchema,
                dietary: { type: 'array', items: { type: 'string' } },
                calories: { type: 'number' },
                optionGroups: { type: 'array', items: { type: 'object' } },
                identifiers: {
                  type: 'object',
                  properties: { merchantItemId: { type: 'string' } },
                  required: ['merchantItemId'],
                },
                url: { type: 'string' },
                sourceUrl: { type: 'string' },
              },
              required: ['name'],
            },
          },
        },
        required: ['name', 'items'],
      },
    },
  },
  required: ['isMenu', 'sections', 'confidence'],
});

/** The value without null properties (a model's "unknown"): the spec's shapes have optional fields, not nullable ones. */
function withoutNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.filter((x) => x !== null).map(withoutNulls);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== null)
        .map(([k, x]) => [k, withoutNulls(x)]),
    );
  return v;
}

function grounding(label: string, value: unknown): string {
  let text = typeof value === 'string' ? value : JSON.stringify(value);
  if (text.length > GROUNDING_CHARS) text = `${text.slice(0, GROUNDING_CHARS)}… (cut)`;
  return `\n\n${label}\n${text}`;
}

/** The page's main structured data item (JSON-LD first, then the richest), for a prompt-only json without an LLM. */
function mainStructured(page: AiPage): Record<string, unknown> {
  const items = page.structured?.data.items ?? [];
  const order = { 'json-ld': 0, microdata: 1, rdfa: 2 };
  const best = [...items].sort(
    (a, b) => order[a.source] - order[b.source] || Object.keys(b.properties).length - Object.keys(a.properties).length,
  )[0];
  if (best) return { '@type': best.type || undefined, ...best.properties };
  const m = page.metadata;
  const out: Record<string, unknown> = {};
  for (const k of ['title', 'description', 'language'] as const) if (typeof m[k] === 'string') out[k] = m[k];
  out.url = page.url;
  return out;
}

export async function renderAiFormats(f: FormatPlan, page: AiPage, ctx: AiContext): Promise<AiOutput> {
  const llm = ctx.llm?.available ? ctx.llm : undefined;
  const warnings: string[] = [];
  const prompted = (name: string, truncated: boolean) => {
    if (truncated) warnings.push(`${name}: the page was cut to the LLM's page budget`);
  };

  // Runs the LLM path, degrading to the deterministic one (with a warning) when the LLM fails.
  const run = async <T>(
    name: string,
    viaLlm: (() => Promise<T>) | undefined,
    fallback: () => Done<T>,
    noLlm: string,
  ): Promise<Done<T>> => {
    if (!llm || !viaLlm) {
      const d = fallback();
      return { value: d.value, warning: llm ? d.warning : `${name}: no LLM is configured; ${noLlm}` };
    }
    try {
      return { value: await viaLlm() };
    } catch (err) {
      if (ctx.signal.aborted || !(err instanceof LlmError)) throw err;
      return { value: fallback().value, warning: `${name}: the LLM failed (${err.code}: ${err.message}); ${noLlm}` };
    }
  };

  // 1. onlyCleanContent, first: the other formats read the cleaned markdown.
  let markdown = page.markdown;
  if (f.cleanContent) {
    const det = cleanMarkdown(markdown);
    const removed = `${det.removed} boilerplate block(s) removed deterministically`;
    const limitTokens = ctx.maxOutputTokens ?? DEFAULT_OUTPUT_TOKENS;
    const tooLong = det.markdown.length > limitTokens * CHARS_PER_TOKEN;
    const done = await run(
      'onlyCleanContent',
      tooLong
        ? undefined
        : async () => {
            const p = cleanContentPrompt({ markdown: det.markdown, url: page.url });
            prompted('onlyCleanContent', p.truncated);
            const r = await llm!.complete({ system: p.system, prompt: p.prompt, signal: ctx.signal, usage: ctx.usage });
            if (r.truncated) throw new LlmUpstreamError('the cleaned markdown was cut at the output token limit');
            const text = r.text.trim();
            if (!text) throw new LlmUpstreamError('the LLM returned empty markdown');
            return text;
          },
      // Too long for the LLM's output: the spec keeps the original markdown (with a warning).
      // Without an LLM, or when it failed, the deterministic clean-up is the answer.
      () =>
        llm && tooLong
          ? {
              value: page.markdown,
              warning: `onlyCleanContent: the markdown (${det.markdown.length} characters) exceeds the LLM's output limit (${limitTokens} tokens); the clean-up was skipped and the original markdown kept`,
            }
          : { value: det.markdown },
      removed,
    );
    markdown = done.value;
    if (done.warning) warnings.push(done.warning);
  }

  const structured = page.structured;
  const tasks: Promise<void>[] = [];
  const out: AiOutput = { markdown, warnings };
  const slots: (string | undefined)[] = [];
  const task = <T>(p: Promise<Done<T>>, set: (v: T) => void) => {
    const slot = slots.push(undefined) - 1;
    tasks.push(
      p.then((d) => {
        set(d.value);
        slots[slot] = d.warning;
      }),
    );
  };
  const pageInput = { markdown, url: page.url };

  if (f.json) {
    const { schema, prompt } = f.json;
    const fill = schema
      ? fillJsonSchema({ schema, structured: structured?.data, markdown, doc: structured?.doc })
      : undefined;
    const noLlm = fill
      ? `filled from the page's structured data and labels (deterministic): ${fill.filled.length} value(s) filled` +
        (fill.missing.length ? `, missing ${fill.missing.slice(0, 10).join(', ')}` : '') +
        (prompt ? '; the prompt was not used' : '')
      : "the prompt needs one; the page's main structured data (schema.org, else its metadata) was returned (deterministic)";
    task(
      run(
        'json',
        async () => {
          const p = jsonExtractionPrompt(pageInput, { prompt, schema });
          prompted('json', p.truncated);
          const ground = fill
            ? grounding(
                `Values already read from the page's structured data and labels (deterministic; keep them unless the page contradicts them)${fill.missing.length ? `; not found: ${fill.missing.join(', ')}` : ''}:`,
                fill.data,
              )
            : structured?.data.items.length
              ? grounding("The page's structured data (schema.org):", mainStructured(page))
              : '';
          const r = await llm!.extractJson({
            system: p.system,
            prompt: p.prompt + ground,
            schema,
            signal: ctx.signal,
            usage: ctx.usage,
          });
          return r.data;
        },
        () => ({ value: fill ? fill.data : mainStructured(page) }),
        noLlm,
      ),
      (v) => (out.json = v),
    );
  }

  if (f.summary) {
    task(
      run(
        'summary',
        async () => {
          const p = summaryPrompt(pageInput);
          prompted('summary', p.truncated);
          const r = await llm!.complete({ system: p.system, prompt: p.prompt, signal: ctx.signal, usage: ctx.usage });
          const text = r.text.trim();
          if (!text) throw new LlmUpstreamError('the LLM returned an empty summary');
          return text;
        },
        () => ({ value: extractiveSummary(markdown) }),
        'an extractive summary of the page was returned',
      ),
      (v) => (out.summary = v),
    );
  }

  if (f.question) {
    const { question, mode } = f.question;
    const det = answerQuestion(markdown, question);
    task(
      run(
        'answer',
        async () => {
          const p = questionPrompt(pageInput, question);
          prompted('answer', p.truncated);
          const hints = det.passages.slice(0, 3).map((x) => `- ${x.text}`);
          const quote = mode === 'directQuote' ? "\n\nAnswer with a verbatim quote of the page's own words." : '';
          const ground = hints.length
            ? grounding('Passages of the page that match the question best (keyword search):', hints.join('\n'))
            : '';
          const r = await llm!.complete({
            system: p.system,
            prompt: p.prompt + quote + ground,
            signal: ctx.signal,
            usage: ctx.usage,
          });
          const text = r.text.trim();
          if (!text) throw new LlmUpstreamError('the LLM returned an empty answer');
          return text;
        },
        () => ({ value: det.answer }),
        det.answer
          ? 'the passage of the page that best matches the question was returned (BM25, extractive)'
          : 'no passage of the page matches the question (BM25, extractive): the answer is empty',
      ),
      (v) => (out.answer = v),
    );
  }

  if (f.highlights) {
    const { query } = f.highlights;
    task(
      run(
        'highlights',
        async () => {
          const p = highlightsPrompt(pageInput, query);
          prompted('highlights', p.truncated);
          const hints = bm25Highlights(markdown, query, 5).map((x) => `- ${x.text}`);
          const ground = hints.length
            ? grounding('Passages that match the query best (keyword search):', hints.join('\n'))
            : '';
          const r = await llm!.extractJson<{ highlights: string[] }>({
            system: p.system,
            prompt: p.prompt + ground,
            schema: highlightsSchema,
            signal: ctx.signal,
            usage: ctx.usage,
          });
          return r.data.highlights
            .map((h) => h.trim())
            .filter(Boolean)
            .join('\n\n');
        },
        () => ({ value: highlightsText(markdown, query, 3) }),
        'the passages that best match the query were returned (BM25, extractive)',
      ),
      (v) => (out.highlights = v),
    );
  }

  if (f.product) {
    const det = structured ? extractProduct(structured.data, { url: page.url, doc: structured.doc }) : undefined;
    const confident = Boolean(det?.title && det.variants.some((v) => v.price));
    const fallback = det ?? { url: page.url, variants: [] };
    const detWhat = det
      ? "read from the page's schema.org / OpenGraph product data (deterministic)"
      : 'the page has no schema.org or OpenGraph product data (deterministic): the product is empty';
    task(
      run(
        'product',
        confident
          ? undefined
          : async () => {
              const p = jsonExtractionPrompt(pageInput, {
                prompt:
                  'Extract the product this page offers: title, brand, category, description, and one variant per purchasable option (price as {amount, currency, formatted}, availability, sku, images). Use only facts stated in the page.',
              });
              prompted('product', p.truncated);
              const ground = det
                ? grounding(
                    "Product data already read from the page's structured data (deterministic; keep it unless the page contradicts it):",
                    det,
                  )
                : '';
              const r = await llm!.extractJson<Product>({
                system: p.system,
                prompt: p.prompt + ground,
                schema: productSchema,
                signal: ctx.signal,
                usage: ctx.usage,
              });
              const product = withoutNulls(r.data) as Product;
              return { ...product, url: product.url || page.url };
            },
        () => ({ value: fallback, warning: `product: ${detWhat}; the LLM was not needed` }),
        detWhat,
      ),
      (v) => (out.product = v),
    );
  }

  if (f.menu) {
    const det = structured
      ? extractMenu(structured.data, { url: page.url })
      : { isMenu: false, sections: [], confidence: 0 };
    const confident = det.confidence >= 0.9;
    const detWhat = det.isMenu
      ? "read from the page's schema.org Menu data (deterministic)"
      : 'the page has no schema.org Menu data (deterministic): isMenu is false';
    task(
      run(
        'menu',
        confident
          ? undefined
          : async () => {
              const p = jsonExtractionPrompt(pageInput, {
                prompt:
                  'Decide whether this page is a food or drink menu (isMenu) and extract it: sections with their items (name, description, price as {amount, currency, formatted}, dietary labels, calories), the merchant, the currency, and your confidence (0 to 1). A page that is not a menu: {"isMenu": false, "sections": [], "confidence": <your confidence>}.',
              });
              prompted('menu', p.truncated);
              const ground = det.isMenu
                ? grounding(
                    "Menu data already read from the page's structured data (deterministic; keep it unless the page contradicts it):",
                    det,
                  )
                : '';
              const r = await llm!.extractJson<Menu>({
                system: p.system,
                prompt: p.prompt + ground,
                schema: menuSchema,
                signal: ctx.signal,
                usage: ctx.usage,
              });
              const menu = withoutNulls(r.data) as Menu;
              return { ...menu, sourceUrl: menu.sourceUrl || page.url };
            },
        () => ({ value: det, warning: `menu: ${detWhat}; the LLM was not needed` }),
        detWhat,
      ),
      (v) => (out.menu = v),
    );
  }

  await Promise.all(tasks);
  // Warnings in a fixed order (the order of the formats above), whatever finished first.
  for (const w of slots) if (w) warnings.push(w);
  return out;
}

/** Puts the AI formats' outputs on a document (scrape and parse). */
export function assignAiOutput(
  doc: { json?: unknown; summary?: string; answer?: string; highlights?: string; product?: Product; menu?: Menu },
  ai: AiOutput,
): void {
  if (ai.json !== undefined) doc.json = ai.json;
  if (ai.summary !== undefined) doc.summary = ai.summary;
  if (ai.answer !== undefined) doc.answer = ai.answer;
  if (ai.highlights !== undefined) doc.highlights = ai.highlights;
  if (ai.product !== undefined) doc.product = ai.product;
  if (ai.menu !== undefined) doc.menu = ai.menu;
}
