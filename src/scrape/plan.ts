// From a validated scrape request to what the pipeline must produce: the output formats, the
// cache policy, and a 400 naming every option this version cannot honour yet (never ignored).
import {
  DEFAULT_MAX_AGE_MS,
  LOCKDOWN_MAX_AGE_MS,
  type ScrapeFormatInput,
  type ScrapeRequest,
} from '../contract/scrape.ts';
import { checkJsonSchema } from '../llm/json.ts';
import type { ScreenshotOptions } from './engines/browser.ts';
import { selectorProblem } from './transform/clean.ts';
import { BadRequestError } from '../errors.ts';

export interface FormatPlan {
  markdown: boolean;
  html: boolean;
  rawHtml: boolean;
  rawBase64: boolean;
  links: boolean;
  images: boolean;
  summary: boolean;
  /** `json`: the caller's JSON Schema and/or prompt (at least one). */
  json: { schema?: Record<string, unknown>; prompt?: string } | undefined;
  /** `question` (or the deprecated `query`): the question → data.answer. */
  question: { question: string; mode?: 'freeform' | 'directQuote' } | undefined;
  /** `highlights`: the query → data.highlights. */
  highlights: { query: string } | undefined;
  product: boolean;
  menu: boolean;
  /** onlyCleanContent: an extra clean-up pass over the markdown. */
  cleanContent: boolean;
  /** `changeTracking`: compare with this team's previous scrape of the URL (src/scrape/formats/change-tracking.ts). */
  changeTracking:
    { modes: ('git-diff' | 'json')[]; schema?: Record<string, unknown>; prompt?: string; tag?: string } | undefined;
  /** `branding`: computed styles of the rendered page (browser engine). */
  branding: boolean;
  attributes: { selector: string; attribute: string }[] | undefined;
  screenshot: ScreenshotOptions | undefined;
  /** `video`: the page's primary media file (src/scrape/formats/media.ts). */
  video: boolean;
  /** `audio`: the primary media's audio track as MP3. */
  audio: boolean;
}

export interface CachePolicy {
  /** Serve a cached copy younger than this. */
  maxAgeMs: number;
  /** Only the cache is read; the target is never contacted. */
  cacheOnly: boolean;
  /** When cacheOnly: the copy must be at least this old. */
  minAgeMs: number;
  /** Store the fetched response for later requests. */
  store: boolean;
}

/**
 * Which engine fetches the page. `browser`: the request needs one (actions, screenshot, waitFor,
 * mobile emulation, profile). `http`: the HTTP engine, upgraded to the browser when its answer is
 * not the real page (an empty or script-only body, an SPA shell, a <noscript> wall).
 */
export interface EnginePlan {
  kind: 'http' | 'browser';
  /** Why the browser is needed (request fields), for messages and metadata. */
  reasons: string[];
  /** Whether an HTTP answer that is a JavaScript shell is rendered in the browser (false under fastMode). */
  upgrade: boolean;
}

export interface ScrapePlan {
  formats: FormatPlan;
  cache: CachePolicy;
  engine: EnginePlan;
  /** The document's warnings about options accepted for compatibility that have no effect here. */
  notes: string[];
}

/**
 * Options Firecrawl's SDKs send that name cloud-only services: accepted (the SDKs send them), never
 * silently: each one set is named in the document's `warning`.
 */
export function inertOptionNotes(req: {
  checkPromptInjection?: boolean;
  domainTools?: unknown;
  toolDetail?: unknown;
}): string[] {
  const notes: string[] = [];
  if (req.checkPromptInjection)
    notes.push(
      'checkPromptInjection: the content was not screened for prompt injection (a Firecrawl cloud service Gleaner does not have)',
    );
  const tools = [req.domainTools !== undefined && 'domainTools', req.toolDetail !== undefined && 'toolDetail'].filter(
    Boolean,
  );
  if (tools.length)
    notes.push(`${tools.join(', ')}: ignored (Firecrawl's hosted tool registry, which Gleaner does not have)`);
  return notes;
}

export interface Issue {
  path: string;
  message: string;
}

/** Formats that read the page's markdown (the content is converted when any of them is asked). */
export function needsMarkdown(f: FormatPlan): boolean {
  return f.markdown || f.summary || Boolean(f.json || f.question || f.highlights) || f.product || f.menu;
}

/** Formats that read the page's structured data (JSON-LD, microdata, RDFa, OpenGraph). */
export function needsStructuredData(f: FormatPlan): boolean {
  return Boolean(f.json) || f.product || f.menu || wantsMedia(f);
}

/** The media formats (audio, video): they download from the target beyond the page. */
export function wantsMedia(f: FormatPlan): boolean {
  return f.video || f.audio;
}

/** A plan with no format asked for yet. */
export function noFormats(): FormatPlan {
  return {
    markdown: false,
    html: false,
    rawHtml: false,
    rawBase64: false,
    links: false,
    images: false,
    summary: false,
    json: undefined,
    question: undefined,
    highlights: undefined,
    product: false,
    menu: false,
    cleanContent: false,
    attributes: undefined,
    screenshot: undefined,
    changeTracking: undefined,
    branding: false,
    video: false,
    audio: false,
  };
}

/**
 * The formats of a request (scrape, or parse with `prefix` "options.formats"): what to produce,
 * with a problem for each format that cannot be honoured (formats of later parts of Gleaner
 * included) pushed to `issues`.
 */
export function planFormats(list: ScrapeFormatInput[], prefix: string, issues: Issue[]): FormatPlan {
  const formats = noFormats();
  list.forEach((f, i) => {
    const type = typeof f === 'string' ? f : f.type;
    if (type === 'screenshot') {
      if (formats.screenshot)
        issues.push({ path: `${prefix}.${i}`, message: 'at most one screenshot format per request' });
      const { type: _type, ...options } =
        typeof f === 'string' ? { type } : (f as { type: string } & ScreenshotOptions);
      formats.screenshot = options;
      return;
    }
    if (type === 'attributes') {
      if (typeof f === 'string') {
        issues.push({
          path: `${prefix}.${i}`,
          message: 'format "attributes" needs {type: "attributes", selectors: [{selector, attribute}]}',
        });
        return;
      }
      formats.attributes = [
        ...(formats.attributes ?? []),
        ...(f as { selectors: { selector: string; attribute: string }[] }).selectors,
      ];
      return;
    }
    if (type === 'json') {
      // Firecrawl v2 takes json as an object only: the schema and/or the prompt are the request.
      const o = typeof f === 'string' ? {} : (f as { schema?: Record<string, unknown>; prompt?: string });
      if (!o.schema && !o.prompt?.trim()) {
        issues.push({
          path: `${prefix}.${i}`,
          message: 'format "json" needs {type: "json", schema: {...}} and/or {type: "json", prompt: "..."}',
        });
        return;
      }
      if (formats.json) issues.push({ path: `${prefix}.${i}`, message: 'at most one json format per request' });
      const problem = o.schema ? checkJsonSchema(o.schema) : null;
      if (problem) {
        issues.push({ path: `${prefix}.${i}.schema`, message: `not a usable JSON Schema: ${problem}` });
        return;
      }
      formats.json = { ...(o.schema ? { schema: o.schema } : {}), ...(o.prompt?.trim() ? { prompt: o.prompt } : {}) };
      return;
    }
    if (type === 'question' || type === 'query') {
      // query is the deprecated spelling of question ({prompt, mode}); both answer in data.answer.
      if (formats.question)
        issues.push({ path: `${prefix}.${i}`, message: 'at most one question (or query) format per request' });
      const o = f as { question?: string; prompt?: string; mode?: 'freeform' | 'directQuote' };
      formats.question = { question: (o.question ?? o.prompt ?? '').trim(), ...(o.mode ? { mode: o.mode } : {}) };
      return;
    }
    if (type === 'changeTracking') {
      if (formats.changeTracking)
        issues.push({ path: `${prefix}.${i}`, message: 'at most one changeTracking format per request' });
      const o =
        typeof f === 'string'
          ? {}
          : (f as { modes?: ('git-diff' | 'json')[]; schema?: Record<string, unknown>; prompt?: string; tag?: string });
      const modes = [...new Set(o.modes ?? [])];
      if (modes.includes('json') && !o.schema && !o.prompt?.trim()) {
        issues.push({ path: `${prefix}.${i}.modes`, message: 'mode "json" needs a schema and/or a prompt' });
        return;
      }
      const problem = o.schema ? checkJsonSchema(o.schema) : null;
      if (problem) {
        issues.push({ path: `${prefix}.${i}.schema`, message: `not a usable JSON Schema: ${problem}` });
        return;
      }
      formats.changeTracking = {
        modes,
        ...(o.schema ? { schema: o.schema } : {}),
        ...(o.prompt?.trim() ? { prompt: o.prompt } : {}),
        ...(o.tag ? { tag: o.tag } : {}),
      };
      return;
    }
    if (type === 'highlights') {
      if (formats.highlights)
        issues.push({ path: `${prefix}.${i}`, message: 'at most one highlights format per request' });
      formats.highlights = { query: (f as { query: string }).query.trim() };
      return;
    }
    formats[
      type as
        | 'markdown'
        | 'html'
        | 'rawHtml'
        | 'rawBase64'
        | 'links'
        | 'images'
        | 'summary'
        | 'product'
        | 'menu'
        | 'branding'
        | 'audio'
        | 'video'
    ] = true;
  });
  if (formats.rawBase64 && list.length > 1) {
    issues.push({ path: prefix, message: 'format "rawBase64" must be requested alone' });
  }
  return formats;
}

/** Pushes an issue for each invalid CSS selector: includeTags, excludeTags, the attributes format's. */
export function checkSelectors(
  prefix: string,
  tags: { includeTags?: string[]; excludeTags?: string[] },
  formats: FormatPlan,
  issues: Issue[],
): void {
  const selectors: [string, string[] | undefined][] = [
    [`${prefix}.includeTags`, tags.includeTags],
    [`${prefix}.excludeTags`, tags.excludeTags],
    [`${prefix}.formats.attributes.selectors`, formats.attributes?.map((a) => a.selector)],
  ];
  for (const [path, list] of selectors) {
    list?.forEach((selector, i) => {
      const problem = selectorProblem(selector);
      if (problem)
        issues.push({ path: `${path}.${i}`, message: `"${selector}" is not a valid CSS selector (${problem})` });
    });
  }
}

export function planScrape(req: ScrapeRequest): ScrapePlan {
  const issues: Issue[] = [];
  const formats = planFormats(req.formats ?? ['markdown'], 'body.formats', issues);

  req.parsers?.forEach((p, i) => {
    if (typeof p !== 'string' && p.type === 'image')
      issues.push({
        path: `body.parsers.${i}`,
        message: 'the "image" parser (OCR of an image URL) is not available in this version',
      });
    if (typeof p !== 'string' && p.type === 'pdf' && p.blocks && req.redactPII) {
      issues.push({
        path: `body.parsers.${i}.blocks`,
        message: 'cannot be combined with redactPII (block contents and spans index the unredacted text)',
      });
    }
  });
  if (req.onlyCleanContent && req.zeroDataRetention) {
    issues.push({
      path: 'body.onlyCleanContent',
      message: 'is not supported with zeroDataRetention (it sends the whole page to the LLM)',
    });
  }
  formats.cleanContent = req.onlyCleanContent;
  if (formats.changeTracking) {
    // The previous scrape is compared by its markdown (wire-names: markdown in the same request),
    // and a snapshot is stored for the next comparison.
    if (!formats.markdown)
      issues.push({ path: 'body.formats', message: 'changeTracking requires markdown in the same request' });
    if (req.zeroDataRetention || req.lockdown) {
      issues.push({
        path: 'body.formats',
        message: 'changeTracking stores a snapshot of the page; not available with zeroDataRetention or lockdown',
      });
    }
  }
  if (wantsMedia(formats) && (req.lockdown || req.minAge !== undefined)) {
    // Cache-only reads never contact the target; the media would have to be downloaded from it.
    issues.push({
      path: 'body.formats',
      message: `audio and video download the media from the target; not available with ${req.lockdown ? 'lockdown' : 'minAge'}`,
    });
  }
  const waits =
    req.waitFor + (req.actions ?? []).reduce((sum, a) => sum + (a.type === 'wait' ? (a.milliseconds ?? 0) : 0), 0);
  if (waits > 60_000)
    issues.push({ path: 'body.actions', message: 'waitFor plus all wait actions must not exceed 60000 ms' });
  if (req.waitFor > req.timeout / 2)
    issues.push({ path: 'body.waitFor', message: 'waitFor must not exceed half of timeout' });
  if (req.minAge !== undefined && req.lockdown) {
    // Both read only the cache; lockdown's own semantics (and billing) win.
    issues.push({ path: 'body.minAge', message: 'minAge cannot be combined with lockdown' });
  }
  checkSelectors('body', req, formats, issues);
  if (issues.length) {
    throw new BadRequestError(`Invalid request: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues);
  }

  const personalised =
    Boolean(req.headers && Object.keys(req.headers).length) || Boolean(req.actions?.length) || Boolean(req.profile);
  const reasons = [
    req.actions?.length ? 'actions' : '',
    formats.screenshot ? 'screenshot' : '',
    req.waitFor > 0 ? 'waitFor' : '',
    req.mobile ? 'mobile' : '',
    req.profile ? 'profile' : '',
    formats.branding ? 'branding' : '',
  ].filter(Boolean);
  return {
    formats,
    engine: { kind: reasons.length ? 'browser' : 'http', reasons, upgrade: !req.fastMode },
    notes: inertOptionNotes(req),
    cache: {
      // minAge alone reads whatever copy is old enough ("1 accepts any cached data"): the default
      // maxAge does not cap it; an explicit maxAge still does.
      // changeTracking compares with the live page unless the caller set maxAge: a cached copy
      // would always read as "same".
      maxAgeMs:
        req.maxAge ??
        (req.lockdown
          ? LOCKDOWN_MAX_AGE_MS
          : req.minAge !== undefined
            ? Number.POSITIVE_INFINITY
            : formats.changeTracking
              ? 0
              : DEFAULT_MAX_AGE_MS),
      cacheOnly: req.lockdown || req.minAge !== undefined,
      minAgeMs: req.minAge ?? 0,
      // Headers (cookies, auth), actions or a profile make the page the caller's own; zero data
      // retention and lockdown store nothing.
      store: req.storeInCache && !personalised && !req.zeroDataRetention && !req.lockdown,
    },
  };
}
