// One claimed crawl or batch-scrape page, run to its outcome: robots.txt, credits, the crawl's
// maxConcurrency and per-host politeness, the scrape, the links in scope. The frontier
// (src/crawl/frontier.ts) claims pages, runs them here and records the outcomes in batches.
import { ensureCredits } from '../billing/credits.ts';
import type { ScrapeDocument, ScrapeFormatInput, ScrapeRequest } from '../contract/scrape.ts';
import { normalizeUrl } from '../net/url-key.ts';
import type { Scraper } from '../scrape/scrape.ts';
import type { PageCacheBatcher } from '../store/pages.ts';
import type { Caller } from '../store/teams.ts';
import { ApiError } from '../errors.ts';
import type { Link } from './admission.ts';
import { type CrawlRow, crawlKey, scopeOf } from './crawl-row.ts';
import type { Politeness } from './politeness.ts';
import type { RobotsCache } from './robots.ts';
import { type UrlScope, looksLikePage } from './url.ts';
import type { Db } from '../store/db-types.ts';

/** A queued page claimed by the frontier (src/crawl/frontier.ts). */
export interface ClaimedPage {
  crawlId: string;
  key: string;
  url: string;
  depth: number;
  /** Claims so far, this one included. */
  attempts: number;
  /** A start reserved by the page's earlier run (src/crawl/politeness.ts). */
  slot: Date | null;
}

export interface PageContext {
  /** Aborted when the page must stop (shutdown past the grace period). */
  signal: AbortSignal;
  /** The team has a credit quota: check it before the scrape. */
  checkCredits: boolean;
  /** Whether the crawl is still `scraping` (re-read after a wait: a cancel stops new pages). */
  stillRunning(): Promise<boolean>;
}

export type RecordInput =
  | { status: 'done'; document: ScrapeDocument; credits: number; links?: Link[] }
  | { status: 'failed' | 'blocked'; error: string; code: string };

/** What became of a claimed page: record it (and admit its links when `follow`), put it back until `availableAt`, or drop the claim (crawl no longer running). */
export type PageOutcome =
  | { kind: 'record'; result: RecordInput; follow?: boolean; keepLinks?: boolean }
  | { kind: 'later'; availableAt: Date; slot?: string }
  | { kind: 'drop' };

/** The page is not fetched now (its politeness turn is far off, or its crawl ended while it waited). */
class NotNow extends Error {
  readonly outcome: Exclude<PageOutcome, { kind: 'record' }>;
  constructor(outcome: Exclude<PageOutcome, { kind: 'record' }>) {
    super(`crawl page not fetched now (${outcome.kind})`);
    this.name = 'NotNow';
    this.outcome = outcome;
  }
}

const formatType = (f: ScrapeFormatInput) => (typeof f === 'string' ? f : f.type);

/** A per-process counting semaphore per crawl (maxConcurrency). */
class CrawlSlots {
  readonly #running = new Map<string, { n: number; waiting: (() => void)[] }>();
  running(id: string): number {
    const s = this.#running.get(id);
    return s ? s.n + s.waiting.length : 0;
  }
  async take(id: string, max: number | undefined): Promise<() => void> {
    if (!max) return () => undefined;
    let s = this.#running.get(id);
    if (!s) this.#running.set(id, (s = { n: 0, waiting: [] }));
    const slot = s;
    if (slot.n >= max) await new Promise<void>((resolve) => slot.waiting.push(resolve));
    else slot.n++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = slot.waiting.shift();
      if (next) next();
      else if (--slot.n === 0) this.#running.delete(id);
    };
  }
}

export interface PageRunnerDeps {
  db: Db;
  scraper: Scraper;
  robots: RobotsCache;
  /** Per-host politeness before each page's fetch (workers only). */
  politeness?: Politeness;
  /** The page cache of crawl pages' scrapes, gathered into one statement per few pages (workers only). */
  cache?: PageCacheBatcher;
}

export class PageRunner {
  readonly #d: PageRunnerDeps;
  readonly #slots = new CrawlSlots();

  constructor(deps: PageRunnerDeps) {
    this.#d = deps;
  }

  /**
   * One claimed page (docs/design/crawl.md), up to its outcome; the frontier records outcomes in
   * batches (PageRecorder.settle). Throws for an unexpected failure (database, shutdown): the frontier retries the page.
   */
  async runPage(crawl: CrawlRow, page: ClaimedPage, ctx: PageContext): Promise<PageOutcome> {
    const o = crawl.options;
    const release = await this.#slots.take(crawl.id, o.maxConcurrency);
    try {
      // A cancel while this page waited for its slot: it never starts.
      if (o.maxConcurrency && !(await ctx.stillRunning())) return { kind: 'drop' };
      return await this.#runPage(crawl, page, ctx);
    } finally {
      release();
    }
  }

  /** Pages of crawls with a maxConcurrency running in this process (the frontier claims none beyond it). */
  runningOf(crawlId: string): number {
    return this.#slots.running(crawlId);
  }

  async #runPage(crawl: CrawlRow, page: ClaimedPage, ctx: PageContext): Promise<PageOutcome> {
    const o = crawl.options;
    const { signal } = ctx;
    const record = (result: RecordInput): PageOutcome => ({ kind: 'record', result });
    // A batch page is a scrape: no robots.txt, no links followed.
    const batch = crawl.kind === 'batch_scrape';
    if (!batch && !o.ignoreRobotsTxt) {
      const robots = await this.#d.robots.get(page.url, { signal });
      if (robots.status === 'unreachable') {
        // RFC 9309: an unreachable robots.txt disallows everything; the page is not fetched, and
        // reported as a failure (not a robots rule).
        return record({
          status: 'failed',
          error: `robots.txt unreachable: ${robots.error ?? 'no answer'}`,
          code: 'ROBOTS_UNREACHABLE',
        });
      }
      if (robots.status === 'blocked' || !robots.isAllowed(page.url, o.robotsUserAgent)) {
        return record({ status: 'blocked', error: 'disallowed by robots.txt', code: 'ROBOTS_DISALLOWED' });
      }
    }
    // Credits: only a team with a quota has anything to check (the frontier asks once per claim).
    if (ctx.checkCredits) {
      try {
        await ensureCredits(this.#d.db, crawl.teamId, 1);
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        return record({ status: 'failed', error: err.message, code: 'INSUFFICIENT_CREDITS' });
      }
    }
    const formats: ScrapeFormatInput[] = o.scrapeOptions.formats ?? ['markdown'];
    const types = formats.map(formatType);
    // Links are read from every page (kept for depth corrections), followed within the depth.
    const collect = !batch && !types.includes('rawBase64');
    const follow = collect && (o.maxDiscoveryDepth === undefined || page.depth < o.maxDiscoveryDepth);
    const userLinks = types.includes('links');
    const req: ScrapeRequest = {
      ...o.scrapeOptions,
      url: page.url,
      formats: collect && !userLinks ? [...formats, 'links'] : formats,
    };
    const caller: Caller = { teamId: crawl.teamId, teamName: '', keyId: crawl.apiKeyId ?? '' };
    // Per-host politeness (src/crawl/politeness.ts), asked for only when the target is contacted
    // (a cached copy needs no turn) and held for the fetch alone: a far-off turn puts the page back.
    const robots = !o.ignoreRobotsTxt && !batch;
    const politeness = this.#d.politeness;
    const beforeFetch =
      politeness &&
      (async () => {
        const turn = await politeness.take({
          url: page.url,
          robots,
          userAgent: o.robotsUserAgent,
          slot: page.slot?.toISOString(),
          signal,
        });
        if (!turn.go) throw new NotNow({ kind: 'later', availableAt: turn.startAfter, slot: turn.slot });
        if (turn.waited && !(await ctx.stillRunning())) {
          turn.release();
          throw new NotNow({ kind: 'drop' });
        }
        return turn.release;
      });
    let document: ScrapeDocument;
    let credits: number;
    try {
      ({ document, credits } = await this.#d.scraper.scrapeForParent(
        caller,
        req,
        {
          publicUrl: crawl.publicUrl,
          cache: this.#d.cache,
          filesExpireAt: new Date(crawl.expiresAt),
          ...(beforeFetch ? { beforeFetch } : {}),
        },
        crawl.id,
      ));
    } catch (err) {
      if (err instanceof NotNow) return err.outcome;
      // The target's or the request's failure is the page's outcome; anything else (database,
      // shutdown) is retried.
      if (signal.aborted || !(err instanceof ApiError)) throw err;
      return record({ status: 'failed', error: err.message, code: err.code });
    }
    const found = document.links ?? [];
    if (!userLinks) delete document.links;
    const status = document.metadata.statusCode ?? 200;
    let links: Link[] | undefined;
    if (collect && status < 400) {
      const scope = this.#scopeOf(crawl);
      const finalUrl = document.metadata.url ?? page.url;
      if (scope.allows(finalUrl) || finalUrl === page.url) {
        links = [];
        for (const l of found) {
          const url = normalizeUrl(l, { ignoreQueryParameters: o.ignoreQueryParameters });
          if (!url || !looksLikePage(url) || !scope.allows(url)) continue;
          const k = crawlKey(url, o);
          if (k && k !== page.key) links.push({ url, key: k });
        }
      }
    }
    // Links are kept (crawl_pages.links) only where depth can be corrected later: with maxDiscoveryDepth.
    return {
      kind: 'record',
      result: { status: 'done', document, credits, links },
      follow: follow && links !== undefined,
      keepLinks: o.maxDiscoveryDepth !== undefined,
    };
  }

  // UrlScope per crawl (compiled regexes), kept while the crawl row is.
  readonly #scopes = new Map<string, UrlScope>();
  #scopeOf(crawl: CrawlRow): UrlScope {
    let s = this.#scopes.get(crawl.id);
    if (!s) {
      if (this.#scopes.size > 1000) this.#scopes.clear();
      this.#scopes.set(crawl.id, (s = scopeOf(crawl)));
    }
    return s;
  }
}
