// POST /v2/map: the URLs of a site, fast, without scraping it.
//
// Sources, in the order links are reported:
//   1. the start page itself (its URL after redirects), when it answers 2xx (not with sitemap "only");
//   2. the links of the start page, in page order (not with "only");
//   3. the site's sitemaps (robots.txt Sitemap lines, else /sitemap.xml and /sitemap_index.xml;
//      indexes, gzip, text; see sitemap.ts), in file order (not with sitemap "skip");
//   4. a shallow crawl: same-site HTML pages linked from the start page (depth 1), then from
//      those (depth 2), at most MAP_TUNING.crawlMaxPages pages, fetched MAP_TUNING.concurrency
//      at a time (MAP_TUNING.perHostConcurrency per host), within a time budget; robots.txt
//      Allow/Disallow obeyed for these, and the crawler's per-host politeness (politeness.ts:
//      Crawl-delay and GLEANER_HOST_MIN_INTERVAL_MS, shared by every process): a page whose turn
//      is further off than the politeness sleep bound is not fetched (its link stays listed).
//      Each level's new links in page order (not with "only").
// The start page is fetched whatever robots.txt says: it is the caller's explicit request, as a
// scrape is.
// Every URL is normalised (url.ts; ignoreQueryParameters drops queries) and reported once; only
// the start URL's host (www-insensitive) or, with includeSubdomains, its whole registrable domain
// is kept. Links disallowed by robots.txt are listed (they are public links) but never fetched.
// Pages fetched that answered 404 or 410 are left out, and so are URLs seen to redirect (their
// target is listed instead). Titles and descriptions come from pages
// actually fetched (start page and crawl), never guessed.
// With `search`, links are ordered by relevance (rank.ts); then `limit` cuts the list.
//
// Timeout: without `timeout` each phase has its own bounds. With it, optional work (sitemaps,
// shallow crawl) stops at 80% of it and what was found is returned; if the essential part (the
// start page; robots.txt and sitemap discovery with sitemap "only") is not done when it expires,
// the request fails with 408 MAP_TIMEOUT.
//
// Cost: 1 credit per successful call (neither the spec's Limits nor wire-names.md state a map
// cost; Firecrawl bills map at 1 credit), checked before any work (402) and charged on success.
import type { FastifyBaseLogger } from 'fastify';
import { chargeCredits, ensureCredits } from '../billing/credits.ts';
import type { MapLink, MapRequest } from '../contract/map.ts';
import type { HttpEngine, HttpResponse } from '../scrape/engines/http.ts';
import { decodeText } from '../documents/charset.ts';
import type { Db } from '../store/db-types.ts';
import { createJob, updateJob } from '../store/jobs.ts';
import type { Caller } from '../store/teams.ts';
import { extractPageLinks } from './links.ts';
import { rankByRelevance } from './rank.ts';
import type { Politeness } from './politeness.ts';
import type { RobotsCache } from './robots.ts';
import type { SitemapReader } from './sitemap.ts';
import { UrlScope, looksLikePage } from './url.ts';
import { ApiError, BlockedUrlError } from '../errors.ts';
import { detectContentKind } from '../documents/detect.ts';
import { type NormalizeOptions, normalizeUrl, urlKey } from '../net/url-key.ts';
import { refuseBlockedTarget } from '../net/ssrf.ts';

/** Credits one map call costs. */
export const MAP_CREDITS = 1;

export interface MapTuning {
  /** Link levels the shallow crawl follows below the start page. */
  crawlDepth: number;
  /** Pages the shallow crawl fetches at most (the start page not counted). */
  crawlMaxPages: number;
  /** Pages fetched at once. */
  concurrency: number;
  /** Pages fetched at once from one host. */
  perHostConcurrency: number;
  /** Time the shallow crawl may take, from the start of the request. */
  crawlBudgetMs: number;
  /** Time sitemap reading may take, from the start of the request. */
  sitemapBudgetMs: number;
  /** Timeout of one crawled page. */
  pageTimeoutMs: number;
  /** Timeout of the start page when the request has no timeout. */
  startTimeoutMs: number;
  /** Sitemap files read at most. */
  sitemapMaxFiles: number;
}

export const MAP_TUNING: MapTuning = {
  crawlDepth: 2,
  crawlMaxPages: 50,
  concurrency: 8,
  perHostConcurrency: 4,
  crawlBudgetMs: 10_000,
  sitemapBudgetMs: 30_000,
  pageTimeoutMs: 10_000,
  startTimeoutMs: 30_000,
  sitemapMaxFiles: 50,
};

/** Share of `timeout` after which optional work stops so the answer is in time. */
const SOFT_SHARE = 0.8;
/** Most links collected before ranking (the largest `limit`). */
const MAX_COLLECTED = 100_000;

export class MapTimeoutError extends ApiError {
  constructor(timeoutMs: number, url: string) {
    super('MAP_TIMEOUT', `Map of ${url} timed out after ${timeoutMs} ms`);
  }
}

export interface MapDeps {
  db: Db;
  http: HttpEngine;
  robots: RobotsCache;
  sitemaps: SitemapReader;
  log: FastifyBaseLogger;
  /** The process's per-host politeness (Crawl-delay, host interval); without it, none. */
  politeness?: Politeness;
  tuning?: Partial<MapTuning>;
}

export interface MapOutcome {
  links: MapLink[];
  jobId: string;
}

interface Page {
  /** The URL asked for (normalised as the links are). */
  requested: string;
  /** Final URL after redirects (normalised, query kept). */
  url: string;
  status: number;
  title?: string;
  description?: string;
  /** Links when the page is HTML and answered 2xx. */
  links?: string[];
}

interface Found {
  url: string;
  key: string;
}

/** Links found, each once by urlKey, in the order of the sources above; capped. */
class Collector {
  readonly #scope: UrlScope;
  readonly #norm: NormalizeOptions;
  readonly #cap: number;
  readonly #items: Found[] = [];
  readonly #keys = new Set<string>();

  constructor(scope: UrlScope, norm: NormalizeOptions, cap: number) {
    this.#scope = scope;
    this.#norm = norm;
    this.#cap = cap;
  }

  get size(): number {
    return this.#items.length;
  }

  add(url: string): void {
    if (this.#items.length >= this.#cap) return;
    const normal = normalizeUrl(url, this.#norm);
    if (!normal || !this.#scope.allows(normal)) return;
    const key = urlKey(normal, this.#norm)!;
    if (this.#keys.has(key)) return;
    this.#keys.add(key);
    this.#items.push({ url: normal, key });
  }

  items(): Found[] {
    return this.#items;
  }
}

/** A counting semaphore. */
class Slots {
  #free: number;
  readonly #waiting: (() => void)[] = [];
  constructor(n: number) {
    this.#free = n;
  }
  async take(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }
  give(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}

function settle<T>(p: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  return p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
}

function abortPromise(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

export class Mapper {
  readonly #d: MapDeps;
  readonly #t: MapTuning;

  constructor(deps: MapDeps) {
    this.#d = deps;
    this.#t = { ...MAP_TUNING, ...deps.tuning };
  }

  /** The endpoint: credits checked, job recorded, links discovered, 1 credit charged. */
  async map(caller: Caller, req: MapRequest): Promise<MapOutcome> {
    const { db } = this.#d;
    refuseBlockedTarget(req.url, 'url', this.#d.http.targetPolicy);
    await ensureCredits(db, caller.teamId, MAP_CREDITS);
    const job = await createJob(db, {
      teamId: caller.teamId,
      apiKeyId: caller.keyId,
      endpoint: 'map',
      status: 'active',
      target: req.url,
    });
    try {
      const links = await this.discover(req);
      await chargeCredits(db, caller, job.id, MAP_CREDITS);
      await updateJob(db, job.id, { status: 'completed' });
      return { links, jobId: job.id };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      await updateJob(db, job.id, { status: 'failed', error: typeof code === 'string' ? code : 'UNKNOWN_ERROR' }).catch(
        () => undefined,
      );
      throw err;
    }
  }

  /** The links of a map request, without job or credit side effects. */
  async discover(req: MapRequest): Promise<MapLink[]> {
    const hard = req.timeout !== undefined ? AbortSignal.timeout(req.timeout) : undefined;
    const work = this.#run(req, hard);
    if (!hard) return work;
    work.catch(() => undefined); // the race below may leave it behind
    try {
      return await Promise.race([work, abortPromise(hard)]);
    } catch (err) {
      if (hard.aborted && !(err instanceof BlockedUrlError)) throw new MapTimeoutError(req.timeout!, req.url);
      throw err;
    }
  }

  async #run(req: MapRequest, hard: AbortSignal | undefined): Promise<MapLink[]> {
    const t = this.#t;
    const norm: NormalizeOptions = { ignoreQueryParameters: req.ignoreQueryParameters };
    const scope = new UrlScope(req.url, { allowSubdomains: req.includeSubdomains });
    const cap = req.search ? MAX_COLLECTED : Math.min(MAX_COLLECTED, req.limit + t.crawlMaxPages + 1);
    // Optional work ends `budgetMs` after the request began, and in any case at 80% of `timeout`.
    const began = Date.now();
    const softFor = (budgetMs: number) => {
      const ms = req.timeout !== undefined ? Math.min(budgetMs, Math.floor(req.timeout * SOFT_SHARE)) : budgetMs;
      const timer = AbortSignal.timeout(Math.max(1, began + ms - Date.now()));
      return hard ? AbortSignal.any([hard, timer]) : timer;
    };

    // Sitemaps run beside the start page and the crawl.
    // Discovery (robots.txt) is essential to sitemap "only", reading is cut short at the soft deadline.
    const sitemapsP =
      req.sitemap === 'skip'
        ? undefined
        : settle(
            (async () => {
              const files = await this.#d.sitemaps.discover(req.url, { signal: hard });
              return this.#d.sitemaps.read(files, {
                signal: softFor(t.sitemapBudgetMs),
                maxUrls: cap,
                maxFiles: t.sitemapMaxFiles,
                accept: (u) => scope.allows(u),
                languages: req.location?.languages,
              });
            })(),
          );

    let start: Page | undefined;
    let startError: unknown;
    if (req.sitemap !== 'only') {
      try {
        start = await this.#fetchPage(req.url, norm, {
          signal: hard,
          timeoutMs: req.timeout ?? t.startTimeoutMs,
          languages: req.location?.languages,
        });
      } catch (err) {
        if (err instanceof BlockedUrlError || hard?.aborted) throw err; // sitemapsP is settled: no unhandled rejection
        startError = err;
      }
    }

    const crawlP = start?.links ? settle(this.#crawl(req, start, scope, norm, softFor(t.crawlBudgetMs))) : undefined;
    const [sitemaps, crawl] = await Promise.all([sitemapsP, crawlP]);
    if (sitemaps && !sitemaps.ok) {
      // Only discovery fails (reading never throws): a blocked origin is a 403, a hard timeout a 408.
      if (sitemaps.error instanceof BlockedUrlError || hard?.aborted) throw sitemaps.error;
      this.#d.log.debug({ err: sitemaps.error }, 'map: sitemaps unavailable');
    }

    const collector = new Collector(scope, norm, cap);
    const pages = new Map<string, Page>();
    // URLs known to redirect elsewhere: their targets are listed instead.
    const redirected = new Set<string>();
    const remember = (p: Page) => {
      const key = urlKey(p.url, norm);
      if (key && !pages.has(key)) pages.set(key, p);
      const asked = urlKey(p.requested, norm);
      if (asked && asked !== key) redirected.add(asked);
    };
    if (start) {
      remember(start);
      if (start.status >= 200 && start.status < 300) collector.add(start.url);
      for (const l of start.links ?? []) collector.add(l);
    }
    if (sitemaps?.ok) for (const e of sitemaps.value.entries) collector.add(e.url);
    if (crawl?.ok) {
      for (const p of crawl.value) {
        remember(p);
        if (p.status >= 200 && p.status < 300) collector.add(p.url);
        for (const l of p.links ?? []) collector.add(l);
      }
    }
    if (collector.size === 0 && startError) throw startError;

    const gone = (key: string) => {
      const s = pages.get(key)?.status;
      return s === 404 || s === 410;
    };
    const links: MapLink[] = collector
      .items()
      .filter((f) => !gone(f.key) && !redirected.has(f.key))
      .map((f) => {
        const p = pages.get(f.key);
        const link: MapLink = { url: f.url };
        if (p && p.status < 400) {
          if (p.title) link.title = p.title;
          if (p.description) link.description = p.description;
        }
        return link;
      });
    const ordered = req.search ? rankByRelevance(links, req.search).map((r) => r.item) : links;
    return ordered.slice(0, req.limit);
  }

  /** Levels 1..crawlDepth below the start page, each level's pages fetched concurrently, results in link order. */
  async #crawl(
    req: MapRequest,
    start: Page,
    scope: UrlScope,
    norm: NormalizeOptions,
    signal: AbortSignal,
  ): Promise<Page[]> {
    const t = this.#t;
    const out: Page[] = [];
    const tried = new Set<string>(
      [urlKey(start.url, norm)!, urlKey(req.url, norm)].filter((k): k is string => Boolean(k)),
    );
    const all = new Slots(t.concurrency);
    const hosts = new Map<string, Slots>();
    let level = start.links ?? [];
    let budget = t.crawlMaxPages;
    for (let depth = 1; depth <= t.crawlDepth && budget > 0 && !signal.aborted; depth++) {
      const candidates: string[] = [];
      for (const url of level) {
        if (candidates.length >= budget) break;
        const key = urlKey(url, norm);
        if (!key || tried.has(key) || !scope.allows(url) || !looksLikePage(url)) continue;
        tried.add(key);
        candidates.push(url);
      }
      budget -= candidates.length;
      const results = await Promise.all(
        candidates.map(async (url): Promise<Page | undefined> => {
          try {
            const robots = await this.#d.robots.get(url, { signal });
            if (robots.status === 'blocked' || !robots.isAllowed(url)) return undefined;
            const turn = await this.#d.politeness?.take({ url, robots: true, signal });
            if (turn && !turn.go) return undefined; // not this map's turn within the sleep bound
            try {
              return await this.#fetchPolitely(url, norm, req, hosts, all, signal);
            } finally {
              if (turn?.go) turn.release();
            }
          } catch {
            return undefined; // out of time, unreachable, not allowed: the link stays listed
          }
        }),
      );
      const next: string[] = [];
      for (const page of results) {
        if (!page) continue;
        out.push(page);
        if (page.url) tried.add(urlKey(page.url, norm) ?? page.url);
        if (!scope.allows(page.url)) continue; // redirected off-site: not ours to follow
        for (const l of page.links ?? []) next.push(l);
      }
      level = next;
    }
    return out;
  }

  // One page of the shallow crawl, within the map's overall and per-host concurrency.
  async #fetchPolitely(
    url: string,
    norm: NormalizeOptions,
    req: MapRequest,
    hosts: Map<string, Slots>,
    all: Slots,
    signal: AbortSignal,
  ): Promise<Page> {
    const t = this.#t;
    const host = new URL(url).host;
    let hostSlots = hosts.get(host);
    if (!hostSlots) hosts.set(host, (hostSlots = new Slots(t.perHostConcurrency)));
    await hostSlots.take();
    await all.take();
    try {
      signal.throwIfAborted();
      return await this.#fetchPage(url, norm, {
        signal,
        timeoutMs: t.pageTimeoutMs,
        languages: req.location?.languages,
      });
    } finally {
      all.give();
      hostSlots.give();
    }
  }

  async #fetchPage(
    url: string,
    norm: NormalizeOptions,
    o: { signal?: AbortSignal; timeoutMs: number; languages?: string[] },
  ): Promise<Page> {
    const res: HttpResponse = await this.#d.http.fetch({
      url,
      timeoutMs: o.timeoutMs,
      skipTlsVerification: true,
      mobile: false,
      proxy: 'basic',
      languages: o.languages,
      signal: o.signal,
    });
    const page: Page = {
      requested: normalizeUrl(url, norm) ?? url,
      url: normalizeUrl(res.url) ?? res.url,
      status: res.status,
    };
    if (res.status < 200 || res.status >= 300) return page;
    if (detectContentKind(res.contentType, res.url, res.body) !== 'html') return page;
    const { text } = decodeText(res.body, res.contentType, true);
    const extracted = extractPageLinks(text, res.url, norm);
    if (extracted.title) page.title = extracted.title;
    if (extracted.description) page.description = extracted.description;
    page.links = extracted.links;
    return page;
  }
}
