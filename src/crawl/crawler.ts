// Crawls, driven by the job queue so any worker process can take any page.
//
// State lives in the database: `crawls` (one row per crawl, id = its job id) and `crawl_pages`
// (the frontier and the visited set: UNIQUE (crawl_id, url_key)). A URL is admitted by inserting
// its row, under a row lock on the crawl (so `limit` is exact with any number of workers), and
// only admitted URLs are sent to the queue ('crawl-page', one job per page). So no URL is scraped
// twice for the results, even when a page's job runs twice (at-least-once queue): the page's
// result is written by `UPDATE … WHERE status = 'queued'`, which only one run wins, and that same
// statement charges its credits and counts it.
//
// A page job: skip unless the crawl is `scraping` and the page still `queued` (cancel makes every
// pending job a no-op); robots.txt (unless ignoreRobotsTxt; disallowed → `blocked`, listed in
// the errors route's robotsBlocked); credits (402 → the page fails with INSUFFICIENT_CREDITS);
// the scrape through the same pipeline as POST /v2/scrape (Scraper.scrapeForParent, the user's
// scrapeOptions; `links` is added internally to discover links and removed again unless asked
// for); links of a 2xx/3xx page in scope (UrlScope: includePaths/excludePaths, regexOnFullURL,
// allowSubdomains, allowExternalLinks, crawlEntireDomain) and within maxDiscoveryDepth are
// admitted; then the page is recorded, and when nothing is queued and sitemap seeding is over the
// crawl is `completed`. Children are admitted before their parent is recorded, so the queued count
// never drops to zero while work remains. A page whose handler fails for an unexpected reason
// (database, shutdown) is retried by the queue; on its last attempt it is recorded as failed so
// the crawl still ends.
//
// Depth is the shortest link distance from the start URL, whatever order the workers take pages
// in: every page's in-scope links are kept (crawl_pages.links), and a page later found at a
// smaller depth gets it and, if already scraped, has its links admitted again from there.
//
// Sitemaps (`sitemap` include/only) are read by a separate 'crawl-seed' job: URLs in scope at
// depth 0, admitted like links.
//
// Dedup key: urlKey (fragment, default port, one trailing slash; the query dropped with
// ignoreQueryParameters), and with deduplicateSimilarURLs (default) also the scheme and a leading
// "www." ignored.
//
// Pace: `delay` (seconds) spaces the start times of a crawl's pages: each admitted page gets a
// start time `delay` after the previous one (crawls.next_start_at, under the same lock), which the
// queue honours (startAfter). `maxConcurrency` caps the crawl's pages scraped at once in each
// worker process (a per-process semaphore; N processes may run up to N × maxConcurrency). The
// team's concurrency limit (GLEANER_TEAM_MAX_CONCURRENCY) applies per process as for scrapes.
// Per-host politeness (src/crawl/politeness.ts), for every crawl together, just before the fetch:
// request starts to a host are at least max(GLEANER_HOST_MIN_INTERVAL_MS, robots.txt Crawl-delay
// unless ignoreRobotsTxt) apart across all processes (a database row per host), so a crawl's
// pages are max(delay, Crawl-delay) apart; and each process has at most
// GLEANER_HOST_MAX_CONCURRENCY requests to one host in flight. A turn more than a few seconds
// away is not slept: the page is sent again with startAfter (and its reserved start).
//
// Webhook (src/jobs/webhooks.ts): the request's webhook is stored with the crawl (crawls.webhook)
// and its events are queued as the crawl goes (started at start, page when a page is recorded,
// completed/cancelled when the crawl ends); queueing is one insert and delivery a job of its own.
import { ApiError, BadRequestError, ConflictError, NotFoundError } from '../api/errors.ts';
import { createBillableJob, ensureCredits } from '../billing/credits.ts';
import type { BatchScrapeRequest } from '../contract/batch.ts';
import type { CrawlRequest } from '../contract/crawl.ts';
import { type ScrapeDocument, type ScrapeFormatInput, type ScrapeRequest, targetUrl } from '../contract/scrape.ts';
import type { Job, JobQueue, Log } from '../jobs/queue.ts';
import type { JobContext } from '../jobs/registrations.ts';
import { type CrawlEvent, type WebhookSpec, enqueueCrawlEvent, isWebhookEvent, normalizeWebhook, webhookEvents } from '../jobs/webhooks.ts';
import { assertUrlAllowed } from '../net/ssrf.ts';
import { Scraper } from '../scrape/scrape.ts';
import type { Db, Queryable } from '../store/db.ts';
import { claimIdempotencyKey, deleteExpiredIdempotencyKeys, recordIdempotentJob, releaseIdempotencyKey, requestHash } from '../store/idempotency.ts';
import { updateJob } from '../store/jobs.ts';
import type { Caller } from '../store/teams.ts';
import { Politeness } from './politeness.ts';
import { RobotsCache } from './robots.ts';
import { SitemapReader } from './sitemap.ts';
import { UrlScope, looksLikePage, normalizeUrl, urlKey } from './url.ts';

export const PAGE_QUEUE = 'crawl-page';
export const SEED_QUEUE = 'crawl-seed';
/** Retries of a page job before it is recorded as failed. */
const PAGE_RETRIES = 2;
/** How long crawl results stay readable. */
export const CRAWL_TTL_MS = 24 * 60 * 60 * 1000;
/** Largest status response: the rest is behind `next`. */
export const STATUS_MAX_BYTES = 10 * 1024 * 1024;

/** What a crawl row keeps of the request (the URL is a column). */
export type CrawlOptions = Omit<CrawlRequest, 'url' | 'origin' | 'integration' | 'webhook' | 'prompt'>;

export type CrawlKind = 'crawl' | 'batch_scrape';

/** The status document (src/contract/crawl.ts crawlStatus). */
export interface CrawlStatus {
  success: true;
  status: CrawlRow['status'];
  total: number;
  completed: number;
  creditsUsed: number;
  expiresAt: string;
  createdAt: string;
  completedAt?: string;
  duration: number;
  next: string | null;
  data: ScrapeDocument[];
}

export interface CrawlRow {
  id: string;
  kind: CrawlKind;
  teamId: string;
  apiKeyId: string | null;
  url: string;
  options: CrawlOptions;
  pageLimit: number;
  publicUrl: string;
  status: 'scraping' | 'completed' | 'failed' | 'cancelled';
  total: number;
  completed: number;
  creditsUsed: number;
  createdAt: Date;
  completedAt: Date | null;
  expiresAt: Date;
  webhook: WebhookSpec | null;
}

const crawlColumns = `id, kind, team_id AS "teamId", api_key_id AS "apiKeyId", url, options, page_limit AS "pageLimit",
  public_url AS "publicUrl", status, total, completed, credits_used AS "creditsUsed", created_at AS "createdAt",
  completed_at AS "completedAt", expires_at AS "expiresAt", webhook`;

interface PageJob {
  crawlId: string;
  key: string;
  /** A start reserved by the page's earlier run (src/crawl/politeness.ts). */
  slot?: string;
}

/** A URL and its dedup key. */
interface Link {
  url: string;
  key: string;
}

export interface CrawlerDeps {
  db: Db;
  queue: JobQueue;
  scraper: Scraper;
  robots: RobotsCache;
  sitemaps: SitemapReader;
  log: Log;
  /** GLEANER_ALLOW_PRIVATE_NETWORK: webhook URLs on private addresses are refused at start without it. */
  allowPrivateNetwork?: boolean;
  /** Per-host politeness before each page's fetch (workers only). */
  politeness?: Politeness;
}

/** The dedup key of a URL in a crawl (file comment). */
export function crawlKey(url: string, o: Pick<CrawlOptions, 'ignoreQueryParameters' | 'deduplicateSimilarURLs'>): string | undefined {
  const k = urlKey(url, { ignoreQueryParameters: o.ignoreQueryParameters });
  if (!k || !o.deduplicateSimilarURLs) return k;
  const u = new URL(k);
  return `${u.host.replace(/^www\./, '')}${u.pathname}${u.search}`;
}

function scopeOf(crawl: Pick<CrawlRow, 'url' | 'options'>): UrlScope {
  const o = crawl.options;
  return new UrlScope(crawl.url, {
    allowSubdomains: o.allowSubdomains,
    allowExternalLinks: o.allowExternalLinks,
    restrictToStartPath: !o.crawlEntireDomain,
    includePaths: o.includePaths,
    excludePaths: o.excludePaths,
    regexOnFullURL: o.regexOnFullURL,
  });
}

function refuse(field: string, message: string): never {
  throw new BadRequestError(`Invalid request: body.${field}: ${message}`, [{ path: `body.${field}`, message }]);
}

const formatType = (f: ScrapeFormatInput) => (typeof f === 'string' ? f : f.type);

/** A per-process counting semaphore per crawl (maxConcurrency). */
class CrawlSlots {
  readonly #running = new Map<string, { n: number; waiting: (() => void)[] }>();
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

export class Crawler {
  readonly #d: CrawlerDeps;
  readonly #slots = new CrawlSlots();

  constructor(deps: CrawlerDeps) {
    this.#d = deps;
  }

  /** POST /v2/crawl: validates, records the job and the crawl, seeds the frontier. */
  async start(caller: Caller, req: CrawlRequest, publicUrl: string): Promise<{ id: string }> {
    const { db, queue } = this.#d;
    const webhook = this.#webhookOf(req.webhook);
    if (req.prompt !== undefined) refuse('prompt', 'deriving crawl options from a prompt needs an LLM, which is not configured');
    if (req.zeroDataRetention) refuse('zeroDataRetention', 'crawl results are stored until they expire; zero data retention is not supported for crawls');
    if (req.scrapeOptions.zeroDataRetention) refuse('scrapeOptions.zeroDataRetention', 'not supported for crawls');
    const { url, origin: _o, integration: _i, webhook: _w, prompt: _p, ...options } = req;
    // Regexes and scrape options are checked now (400), not page by page.
    scopeOf({ url, options });
    this.#d.scraper.check({ url, ...options.scrapeOptions });
    const start = normalizeUrl(url) ?? url;
    const job = await createBillableJob(db, { teamId: caller.teamId, apiKeyId: caller.keyId, endpoint: 'crawl', status: 'active', target: start }, 1);
    const seeding = options.sitemap !== 'skip';
    await db.query(
      `INSERT INTO crawls (id, team_id, api_key_id, kind, url, options, page_limit, public_url, status, seeding, webhook, expires_at)
       VALUES ($1, $2, $3, 'crawl', $4, $5::jsonb, $6, $7, 'scraping', $8, $10::jsonb, clock_timestamp() + $9 * interval '1 millisecond')`,
      [job.id, caller.teamId, caller.keyId, start, JSON.stringify(options), options.limit, publicUrl, seeding, CRAWL_TTL_MS, webhook && JSON.stringify(webhook)],
    );
    await this.#event({ id: job.id, webhook }, 'started');
    if (options.sitemap !== 'only') {
      const key = crawlKey(start, options)!;
      await this.#admitAndSend(db, job.id, [{ url: start, key }], 0, null);
    }
    if (seeding) await queue.send(SEED_QUEUE, { crawlId: job.id }, { singletonKey: job.id });
    else await this.#finishIfDone(job.id);
    return { id: job.id };
  }

  /** The request's webhook in stored form; a 400 naming the field when it is unusable. */
  #webhookOf(w: CrawlRequest['webhook']): WebhookSpec | null {
    if (w === undefined) return null;
    if (typeof w === 'object') {
      const bad = (w.events ?? []).findIndex((e) => !isWebhookEvent(e));
      if (bad >= 0) refuse(`webhook.events.${bad}`, `"${w.events![bad]}" is not one of ${webhookEvents.join(', ')}`);
    }
    const webhook = normalizeWebhook(w);
    try {
      assertUrlAllowed(webhook.url, { allowPrivateNetwork: this.#d.allowPrivateNetwork ?? false });
    } catch (err) {
      refuse(typeof w === 'string' ? 'webhook' : 'webhook.url', `must be an http(s) URL of a public host: ${(err as Error).message}`);
    }
    return webhook;
  }

  /**
   * POST /v2/batch/scrape: a batch is a crawl of kind batch_scrape whose pages are the given URLs,
   * in order (keys are their positions, so a URL listed twice is scraped twice); no links are
   * followed and robots.txt is not read, as for a single scrape. With appendToId the URLs join
   * that running batch. With an idempotency key, a repeat returns the first request's batch.
   */
  async startBatch(caller: Caller, req: BatchScrapeRequest, publicUrl: string, idempotencyKey?: string): Promise<{ id: string; invalidURLs?: string[] }> {
    const { db } = this.#d;
    const { urls, webhook: w, ignoreInvalidURLs, maxConcurrency, appendToId, idempotencyKey: _k, origin: _o, integration: _i, ...scrapeOptions } = req;
    const valid: string[] = [];
    const invalidURLs: string[] = [];
    urls.forEach((u, i) => {
      const parsed = targetUrl.safeParse(u);
      if (parsed.success) valid.push(normalizeUrl(parsed.data) ?? parsed.data);
      else if (ignoreInvalidURLs) invalidURLs.push(u);
      else refuse(`urls.${i}`, `"${u.slice(0, 200)}" is not an http(s) URL (ignoreInvalidURLs: true leaves such URLs out)`);
    });
    if (valid.length === 0) refuse('urls', 'no valid http(s) URL');
    if (appendToId !== undefined && w !== undefined) refuse('webhook', 'an append uses the webhook of the batch it joins');
    const webhook = this.#webhookOf(w);
    if (scrapeOptions.zeroDataRetention) refuse('zeroDataRetention', 'batch results are stored until they expire; zero data retention is not supported for batch scrapes');
    this.#d.scraper.check({ url: valid[0], ...scrapeOptions });
    const answer = (id: string) => ({ id, ...(ignoreInvalidURLs ? { invalidURLs } : {}) });

    if (idempotencyKey !== undefined) {
      const prior = await claimIdempotencyKey(db, caller.teamId, idempotencyKey, 'batch_scrape', requestHash(req));
      if (prior) return answer(prior);
    }
    try {
      let id: string;
      if (appendToId !== undefined) {
        const batch = await this.get(caller.teamId, appendToId, 'batch_scrape');
        if (batch.status !== 'scraping') throw new ConflictError(`Batch scrape ${appendToId} is ${batch.status}; URLs can only be added to a running batch`, 'BATCH_SCRAPE_NOT_RUNNING');
        await ensureCredits(db, caller.teamId, 1);
        id = appendToId;
      } else {
        const job = await createBillableJob(db, { teamId: caller.teamId, apiKeyId: caller.keyId, endpoint: 'batch_scrape', status: 'active', target: valid[0] }, 1);
        id = job.id;
        const options = { scrapeOptions, ...(maxConcurrency === undefined ? {} : { maxConcurrency }) };
        await db.query(
          `INSERT INTO crawls (id, team_id, api_key_id, kind, url, options, page_limit, public_url, status, seeding, webhook, expires_at)
           VALUES ($1, $2, $3, 'batch_scrape', $4, $5::jsonb, 0, $6, 'scraping', false, $8::jsonb, clock_timestamp() + $7 * interval '1 millisecond')`,
          [id, caller.teamId, caller.keyId, valid[0], JSON.stringify(options), publicUrl, CRAWL_TTL_MS, webhook && JSON.stringify(webhook)],
        );
        await this.#event({ id, webhook }, 'started');
      }
      if (!(await this.#admitBatch(id, valid))) {
        throw new ConflictError(`Batch scrape ${id} ended before the URLs could be added`, 'BATCH_SCRAPE_NOT_RUNNING');
      }
      if (idempotencyKey !== undefined) await recordIdempotentJob(db, caller.teamId, idempotencyKey, id);
      return answer(id);
    } catch (err) {
      if (idempotencyKey !== undefined) await releaseIdempotencyKey(db, caller.teamId, idempotencyKey).catch(() => undefined);
      throw err;
    }
  }

  /** Adds pages to a running batch under its row lock (keys: positions); false when it is not running. */
  async #admitBatch(id: string, urls: string[]): Promise<boolean> {
    const pages = await this.#d.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ status: string; total: number }>('SELECT status, total FROM crawls WHERE id = $1 FOR UPDATE', [id]);
      if (rows[0]?.status !== 'scraping') return undefined;
      const keys = urls.map((_, i) => String(rows[0].total + i));
      await tx.query(
        `INSERT INTO crawl_pages (crawl_id, url_key, url, depth, status)
         SELECT $1, k, u, 0, 'queued' FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(k, u, o) ORDER BY o`,
        [id, keys, urls],
      );
      await tx.query('UPDATE crawls SET total = total + $2, page_limit = page_limit + $2 WHERE id = $1', [id, urls.length]);
      return keys.map((key) => ({ key }));
    });
    if (!pages) return false;
    await this.#send(id, pages);
    return true;
  }

  /** The crawl (or batch scrape) of this team (another team's reads as missing: 404). */
  async get(teamId: string, id: string, kind: CrawlKind = 'crawl'): Promise<CrawlRow> {
    const { rows } = await this.#d.db.query<CrawlRow>(`SELECT ${crawlColumns} FROM crawls WHERE id = $1 AND team_id = $2 AND kind = $3`, [id, teamId, kind]);
    if (!rows[0]) {
      if (kind === 'crawl') throw new NotFoundError(`No crawl ${id} for this team`, 'CRAWL_NOT_FOUND');
      throw new NotFoundError(`No batch scrape ${id} for this team`, 'BATCH_SCRAPE_NOT_FOUND');
    }
    return rows[0];
  }

  /**
   * The status document of GET /v2/crawl/{id} and /v2/batch/scrape/{id} (also what the WebSocket
   * stream sends): documents from `skip`, `next` whenever more data remains or the job still runs.
   */
  async status(teamId: string, id: string, kind: CrawlKind, page: { skip: number; limit?: number }, base: string): Promise<CrawlStatus> {
    const crawl = await this.get(teamId, id, kind);
    const { skip, limit } = page;
    const { data, more } = await this.documents(id, skip, limit);
    const terminal = crawl.status !== 'scraping';
    const created = new Date(crawl.createdAt);
    const end = terminal && crawl.completedAt ? new Date(crawl.completedAt) : new Date();
    const path = kind === 'crawl' ? 'crawl' : 'batch/scrape';
    const next = more || !terminal ? `${base}/v2/${path}/${id}?skip=${skip + data.length}${limit !== undefined ? `&limit=${limit}` : ''}` : null;
    return {
      success: true,
      status: crawl.status,
      total: crawl.total,
      completed: crawl.completed,
      creditsUsed: crawl.creditsUsed,
      expiresAt: new Date(crawl.expiresAt).toISOString(),
      createdAt: created.toISOString(),
      ...(terminal && crawl.completedAt ? { completedAt: end.toISOString() } : {}),
      duration: Math.max(0, (end.getTime() - created.getTime()) / 1000),
      next,
      data,
    };
  }

  /** Documents of done pages in admission order, from `skip`, at most `limit` and about 10 MiB. */
  async documents(id: string, skip: number, limit: number | undefined): Promise<{ data: ScrapeDocument[]; more: boolean }> {
    const data: ScrapeDocument[] = [];
    let bytes = 0;
    const batch = 100;
    let offset = skip;
    for (;;) {
      const want = limit === undefined ? batch : Math.min(batch, limit - data.length);
      if (want <= 0) break;
      const { rows } = await this.#d.db.query<{ document: ScrapeDocument; size: number }>(
        `SELECT document, octet_length(document::text) AS size FROM crawl_pages
         WHERE crawl_id = $1 AND status = 'done' ORDER BY seq OFFSET $2 LIMIT $3`,
        [id, offset, want + 1],
      );
      for (let i = 0; i < Math.min(rows.length, want); i++) {
        const r = rows[i];
        if (data.length > 0 && bytes + Number(r.size) > STATUS_MAX_BYTES) return { data, more: true };
        data.push(r.document);
        bytes += Number(r.size);
      }
      if (rows.length <= want) return { data, more: false };
      offset += want;
      if (limit !== undefined && data.length >= limit) return { data, more: true };
    }
    return { data, more: false };
  }

  async cancel(teamId: string, id: string, kind: CrawlKind = 'crawl'): Promise<void> {
    await this.get(teamId, id, kind);
    const { rows } = await this.#d.db.query<{ id: string; webhook: WebhookSpec | null }>(
      `UPDATE crawls SET status = 'cancelled', completed_at = COALESCE(completed_at, clock_timestamp()) WHERE id = $1 AND status = 'scraping'
       RETURNING id, webhook`,
      [id],
    );
    await updateJob(this.#d.db, id, { status: 'cancelled' });
    if (rows[0]) await this.#event(rows[0], 'cancelled');
  }

  /** Queues a webhook event of the crawl (a no-op without a webhook; never throws). */
  async #event(crawl: { id: string; webhook: WebhookSpec | null }, event: CrawlEvent, key?: string): Promise<void> {
    await enqueueCrawlEvent(this.#d.queue, this.#d.log, crawl, event, key);
  }

  async errors(
    teamId: string,
    id: string,
    kind: CrawlKind = 'crawl',
  ): Promise<{ errors: { id: string; timestamp: string; url: string; error: string; code?: string }[]; robotsBlocked: string[] }> {
    await this.get(teamId, id, kind);
    const { rows } = await this.#d.db.query<{ id: string; updatedAt: Date; url: string; status: string; error: string | null; code: string | null }>(
      `SELECT id, updated_at AS "updatedAt", url, status, error, code FROM crawl_pages
       WHERE crawl_id = $1 AND status IN ('failed', 'blocked') ORDER BY seq`,
      [id],
    );
    return {
      errors: rows
        .filter((r) => r.status === 'failed')
        .map((r) => ({ id: r.id, timestamp: new Date(r.updatedAt).toISOString(), url: r.url, error: r.error ?? 'failed', ...(r.code ? { code: r.code } : {}) })),
      robotsBlocked: rows.filter((r) => r.status === 'blocked').map((r) => r.url),
    };
  }

  async active(teamId: string): Promise<{ id: string; teamId: string; url: string; options: CrawlOptions; created_at: string }[]> {
    const { rows } = await this.#d.db.query<CrawlRow>(
      `SELECT ${crawlColumns} FROM crawls WHERE team_id = $1 AND kind = 'crawl' AND status = 'scraping' ORDER BY created_at`,
      [teamId],
    );
    return rows.map((r) => ({ id: r.id, teamId: r.teamId, url: r.url, options: r.options, created_at: new Date(r.createdAt).toISOString() }));
  }

  /**
   * Admits the candidates not seen before (in order, up to the crawl's remaining limit), under a
   * row lock on the crawl, and sends a page job for each one admitted. With maxDiscoveryDepth, a
   * known page found here at a smaller depth gets that depth, and if it was already scraped its
   * stored links are admitted again from there (depth is the shortest link distance, whatever
   * order the workers took the pages in).
   */
  async #admitAndSend(db: Db, crawlId: string, candidates: Link[], depth: number, parentKey: string | null): Promise<void> {
    const unique = [...new Map(candidates.map((c) => [c.key, c])).values()];
    if (unique.length === 0) return;
    const { admitted, lowered, maxDepth } = await db.transaction(async (tx) => {
      const { rows } = await tx.query<{ status: string; room: number; delay: number | null; maxDepth: number | null; next: Date | null; now: Date }>(
        `SELECT status, page_limit - total AS room, (options->>'delay')::float8 AS delay, (options->>'maxDiscoveryDepth')::int AS "maxDepth",
                next_start_at AS next, clock_timestamp() AS now
         FROM crawls WHERE id = $1 FOR UPDATE`,
        [crawlId],
      );
      const c = rows[0];
      const none = { admitted: [], lowered: [], maxDepth: null };
      if (!c || c.status !== 'scraping') return none;
      const keys = unique.map((u) => u.key);
      let lowered: { key: string; links: Link[] }[] = [];
      if (c.maxDepth !== null) {
        const { rows: low } = await tx.query<{ key: string; status: string; links: Link[] | null }>(
          `UPDATE crawl_pages SET depth = $3 WHERE crawl_id = $1 AND url_key = ANY($2::text[]) AND depth > $3
           RETURNING url_key AS key, status, links`,
          [crawlId, keys, depth],
        );
        lowered = low.filter((l) => l.status === 'done' && l.links).map((l) => ({ key: l.key, links: l.links! }));
      }
      if (c.room <= 0) return { admitted: [], lowered, maxDepth: c.maxDepth };
      const { rows: seen } = await tx.query<{ key: string }>(`SELECT url_key AS key FROM crawl_pages WHERE crawl_id = $1 AND url_key = ANY($2::text[])`, [
        crawlId,
        keys,
      ]);
      const known = new Set(seen.map((s) => s.key));
      const fresh = unique.filter((u) => !known.has(u.key)).slice(0, c.room);
      if (fresh.length === 0) return { admitted: [], lowered, maxDepth: c.maxDepth };
      await tx.query(
        `INSERT INTO crawl_pages (crawl_id, url_key, url, depth, parent_key, status)
         SELECT $1, k, u, $4, $5, 'queued' FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(k, u, o) ORDER BY o
         ON CONFLICT DO NOTHING`,
        [crawlId, fresh.map((f) => f.key), fresh.map((f) => f.url), depth, parentKey],
      );
      let starts: (Date | undefined)[] = fresh.map(() => undefined);
      let next: Date | null = c.next;
      if (c.delay && c.delay > 0) {
        const now = new Date(c.now).getTime();
        let t = Math.max(now, next ? new Date(next).getTime() : now);
        starts = fresh.map(() => {
          const at = new Date(t);
          t += c.delay! * 1000;
          return at;
        });
        next = new Date(t);
      }
      await tx.query('UPDATE crawls SET total = total + $2, next_start_at = $3 WHERE id = $1', [crawlId, fresh.length, next]);
      return { admitted: fresh.map((f, i) => ({ ...f, startAfter: starts[i] })), lowered, maxDepth: c.maxDepth };
    });
    await this.#send(crawlId, admitted);
    if (maxDepth !== null && depth < maxDepth) {
      for (const l of lowered) await this.#admitAndSend(db, crawlId, l.links, depth + 1, l.key);
    }
  }

  async #send(crawlId: string, pages: { key: string; startAfter?: Date }[]): Promise<void> {
    if (pages.length === 0) return;
    await this.#d.queue.sendMany<PageJob>(
      PAGE_QUEUE,
      pages.map((p) => ({
        data: { crawlId, key: p.key },
        options: { singletonKey: `${crawlId}:${p.key}`, ...(p.startAfter && p.startAfter.getTime() > Date.now() ? { startAfter: p.startAfter } : {}) },
      })),
    );
  }

  /**
   * Ends the crawl when sitemap seeding is over and no page is queued: `completed`, or `failed`
   * when not one page could be scraped and some failed (the start URL unreachable, every URL of a
   * batch failing); the job's error is then the first page's error.
   */
  async #finishIfDone(crawlId: string): Promise<void> {
    const { rows } = await this.#d.db.query<{ id: string; webhook: WebhookSpec | null; status: 'completed' | 'failed'; error: string | null }>(
      `WITH failure AS (
         SELECT error, code FROM crawl_pages WHERE crawl_id = $1 AND status = 'failed' ORDER BY seq LIMIT 1
       )
       UPDATE crawls SET completed_at = clock_timestamp(),
         status = CASE WHEN completed = 0 AND EXISTS (SELECT 1 FROM failure) THEN 'failed' ELSE 'completed' END
       WHERE id = $1 AND status = 'scraping' AND NOT seeding
         AND NOT EXISTS (SELECT 1 FROM crawl_pages WHERE crawl_id = $1 AND status = 'queued')
       RETURNING id, webhook, status, (SELECT COALESCE(code || ': ', '') || error FROM failure) AS error`,
      [crawlId],
    );
    const ended = rows[0];
    if (!ended) return;
    if (ended.status === 'failed') {
      await updateJob(this.#d.db, crawlId, { status: 'failed', error: `no page could be scraped: ${ended.error ?? 'every page failed'}` });
      await this.#event(ended, 'failed');
    } else {
      await updateJob(this.#d.db, crawlId, { status: 'completed' });
      await this.#event(ended, 'completed');
    }
  }

  async #crawlOf(crawlId: string): Promise<CrawlRow | undefined> {
    const { rows } = await this.#d.db.query<CrawlRow>(`SELECT ${crawlColumns} FROM crawls WHERE id = $1`, [crawlId]);
    return rows[0];
  }

  /** 'crawl-seed': sitemap URLs in scope, depth 0. */
  async seed(job: Job<{ crawlId: string }>): Promise<void> {
    const { crawlId } = job.data;
    const crawl = await this.#crawlOf(crawlId);
    if (!crawl) return;
    if (crawl.status === 'scraping') {
      try {
        const scope = scopeOf(crawl);
        const read = await this.#d.sitemaps.readSite(crawl.url, {
          signal: job.signal,
          maxUrls: crawl.pageLimit,
          maxFiles: 50,
          accept: (u) => scope.allows(u) && looksLikePage(u),
        });
        const candidates = read.entries.flatMap((e) => {
          const url = normalizeUrl(e.url, { ignoreQueryParameters: crawl.options.ignoreQueryParameters });
          const key = url && crawlKey(url, crawl.options);
          return url && key ? [{ url, key }] : [];
        });
        await this.#admitAndSend(this.#d.db, crawlId, candidates, 0, null);
      } catch (err) {
        if (job.signal.aborted && job.retryCount < PAGE_RETRIES) throw err;
        this.#d.log.warn({ err, crawlId }, 'crawl: sitemaps unavailable');
      }
    }
    await this.#d.db.query('UPDATE crawls SET seeding = false WHERE id = $1', [crawlId]);
    await this.#finishIfDone(crawlId);
  }

  /** 'crawl-page': one page (file comment). */
  async page(job: Job<PageJob>): Promise<void> {
    const { crawlId, key } = job.data;
    const { db } = this.#d;
    const crawl = await this.#crawlOf(crawlId);
    if (!crawl || crawl.status !== 'scraping') return;
    const { rows } = await db.query<{ url: string; depth: number; status: string }>(
      'SELECT url, depth, status FROM crawl_pages WHERE crawl_id = $1 AND url_key = $2',
      [crawlId, key],
    );
    const page = rows[0];
    if (!page) return;
    if (page.status !== 'queued') {
      // A re-run after its page was recorded: make sure the children it admitted and its webhook
      // event were sent (the event's job id makes a second send a no-op).
      if (job.retryCount > 0) {
        await this.#resendChildren(crawlId, key);
        if (page.status === 'done' || page.status === 'failed') await this.#event(crawl, 'page', key);
      }
      await this.#finishIfDone(crawlId);
      return;
    }
    const o = crawl.options;
    const release = await this.#slots.take(crawlId, o.maxConcurrency);
    try {
      // A cancel while this page waited for its slot: it never starts.
      if (o.maxConcurrency && (await this.#crawlOf(crawlId))?.status !== 'scraping') return;
      await this.#runPage(job, crawl, key, page);
    } catch (err) {
      if (job.retryCount < PAGE_RETRIES) throw err;
      // Last attempt: record the failure so the crawl can end.
      await this.#record(db, crawl, key, { status: 'failed', error: (err as Error).message ?? String(err), code: 'UNKNOWN_ERROR' });
    } finally {
      release();
    }
    await this.#finishIfDone(crawlId);
  }

  async #runPage(job: Job<PageJob>, crawl: CrawlRow, key: string, page: { url: string; depth: number }): Promise<void> {
    const { db } = this.#d;
    const o = crawl.options;
    // A batch page is a scrape: no robots.txt, no links followed.
    const batch = crawl.kind === 'batch_scrape';
    if (!batch && !o.ignoreRobotsTxt) {
      const robots = await this.#d.robots.get(page.url, { signal: job.signal });
      if (robots.status === 'unreachable') {
        // RFC 9309: an unreachable robots.txt disallows everything; the page is not fetched, and
        // reported as a failure (not a robots rule).
        await this.#record(db, crawl, key, { status: 'failed', error: `robots.txt unreachable: ${robots.error ?? 'no answer'}`, code: 'ROBOTS_UNREACHABLE' });
        return;
      }
      if (robots.status === 'blocked' || !robots.isAllowed(page.url, o.robotsUserAgent)) {
        await this.#record(db, crawl, key, { status: 'blocked', error: 'disallowed by robots.txt', code: 'ROBOTS_DISALLOWED' });
        return;
      }
    }
    try {
      await ensureCredits(db, crawl.teamId, 1);
    } catch (err) {
      await this.#record(db, crawl, key, { status: 'failed', error: (err as Error).message, code: 'INSUFFICIENT_CREDITS' });
      return;
    }
    const formats: ScrapeFormatInput[] = o.scrapeOptions.formats ?? ['markdown'];
    const types = formats.map(formatType);
    // Links are read from every page (kept for depth corrections), followed within the depth.
    const collect = !batch && !types.includes('rawBase64');
    const follow = collect && (o.maxDiscoveryDepth === undefined || page.depth < o.maxDiscoveryDepth);
    const userLinks = types.includes('links');
    const req: ScrapeRequest = { ...o.scrapeOptions, url: page.url, formats: collect && !userLinks ? [...formats, 'links'] : formats };
    const caller: Caller = { teamId: crawl.teamId, teamName: '', keyId: crawl.apiKeyId ?? '' };
    // Per-host politeness (src/crawl/politeness.ts): a far-off turn sends the page again for later.
    const robots = !o.ignoreRobotsTxt && crawl.kind !== 'batch_scrape';
    const turn = await this.#d.politeness?.take({ url: page.url, robots, userAgent: o.robotsUserAgent, slot: job.data.slot, signal: job.signal });
    if (turn && !turn.go) {
      await this.#d.queue.send<PageJob>(PAGE_QUEUE, { crawlId: crawl.id, key, slot: turn.slot }, { singletonKey: `${crawl.id}:${key}`, startAfter: turn.startAfter });
      return;
    }
    if (turn?.waited && (await this.#crawlOf(crawl.id))?.status !== 'scraping') return turn.release();
    let document: ScrapeDocument;
    let credits: number;
    try {
      ({ document, credits } = await this.#d.scraper.scrapeForParent(caller, req, { publicUrl: crawl.publicUrl }, crawl.id));
    } catch (err) {
      // The target's or the request's failure is the page's outcome; anything else (database,
      // shutdown) is retried.
      if (job.signal.aborted || !(err instanceof ApiError)) throw err;
      await this.#record(db, crawl, key, { status: 'failed', error: err.message, code: err.code });
      return;
    } finally {
      turn?.release();
    }
    const found = document.links ?? [];
    if (!userLinks) delete document.links;
    const status = document.metadata.statusCode ?? 200;
    let links: Link[] | undefined;
    if (collect && status < 400) {
      const scope = scopeOf(crawl);
      const finalUrl = document.metadata.url ?? page.url;
      if (scope.allows(finalUrl) || finalUrl === page.url) {
        links = [];
        for (const l of found) {
          const url = normalizeUrl(l, { ignoreQueryParameters: o.ignoreQueryParameters });
          if (!url || !looksLikePage(url) || !scope.allows(url)) continue;
          const k = crawlKey(url, o);
          if (k && k !== key) links.push({ url, key: k });
        }
        if (follow) await this.#admitAndSend(db, crawl.id, links, page.depth + 1, key);
      }
    }
    const depth = await this.#record(db, crawl, key, { status: 'done', document, credits, links });
    // Found at a smaller depth while it was being scraped: its links go in from there.
    if (links && depth !== undefined && depth < page.depth && o.maxDiscoveryDepth !== undefined && depth < o.maxDiscoveryDepth) {
      await this.#admitAndSend(db, crawl.id, links, depth + 1, key);
    }
  }

  async #resendChildren(crawlId: string, key: string): Promise<void> {
    const { rows } = await this.#d.db.query<{ key: string }>(
      `SELECT url_key AS key FROM crawl_pages WHERE crawl_id = $1 AND parent_key = $2 AND status = 'queued'`,
      [crawlId, key],
    );
    await this.#send(crawlId, rows);
  }

  /**
   * Records a page's outcome once (only a queued page changes); a done page is charged and
   * counted in the same statement. Resolves to the page's depth when this call recorded it.
   */
  async #record(
    db: Queryable,
    crawl: CrawlRow,
    key: string,
    r: { status: 'done'; document: ScrapeDocument; credits: number; links?: Link[] } | { status: 'failed' | 'blocked'; error: string; code: string },
  ): Promise<number | undefined> {
    const done = r.status === 'done';
    const credits = done ? r.credits : 0;
    const { rows } = await db.query<{ depth: number }>(
      `WITH page AS (
         UPDATE crawl_pages SET status = $3, document = $4::jsonb, error = $5, code = $6, links = $10::jsonb, updated_at = clock_timestamp()
         WHERE crawl_id = $1 AND url_key = $2 AND status = 'queued' RETURNING depth
       ), charge AS (
         INSERT INTO credit_usage (team_id, api_key_id, job_id, credits) SELECT $7, $8, $1, $9 FROM page WHERE $9 > 0
       ), job AS (
         UPDATE jobs SET credits = credits + $9, updated_at = clock_timestamp() WHERE id = $1 AND $9 > 0 AND EXISTS (SELECT 1 FROM page)
       ), crawl AS (
         UPDATE crawls SET completed = completed + (CASE WHEN $3 = 'done' THEN 1 ELSE 0 END), credits_used = credits_used + $9
         WHERE id = $1 AND EXISTS (SELECT 1 FROM page)
       )
       SELECT depth FROM page`,
      [
        crawl.id,
        key,
        r.status,
        done ? JSON.stringify(r.document, jsonbSafe) : null,
        done ? null : r.error,
        done ? null : r.code,
        crawl.teamId,
        crawl.apiKeyId,
        credits,
        done && r.links ? JSON.stringify(r.links) : null,
      ],
    );
    if (rows[0] && r.status !== 'blocked') await this.#event(crawl, 'page', key);
    return rows[0]?.depth;
  }
}

// jsonb refuses U+0000 and unpaired surrogates in strings.
function jsonbSafe(_key: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const s = value.includes('\0') ? value.replaceAll('\0', '') : value;
  return s.isWellFormed() ? s : s.toWellFormed();
}

/** Crawl page, seed and sweep handlers, scraping with the process's shared engines. */
export async function registerCrawlJobs({ queue, db, config, log, stack }: JobContext): Promise<void> {
  await queue.createQueue(PAGE_QUEUE, { retryLimit: PAGE_RETRIES, retryDelay: 2 });
  await queue.createQueue(SEED_QUEUE, { retryLimit: PAGE_RETRIES, retryDelay: 2 });
  await queue.createQueue(SWEEP_QUEUE, { retryLimit: 1 });
  await queue.schedule(SWEEP_QUEUE, '41 * * * *');
  const { scraper, robots, sitemaps } = stack;
  const { hostMaxConcurrency, hostMinIntervalMs, maxCrawlDelaySeconds } = config;
  const politeness = new Politeness({ db, robots, hostMaxConcurrency, hostMinIntervalMs, maxCrawlDelaySeconds });
  const crawler = new Crawler({ db, queue, scraper, robots, sitemaps, log, allowPrivateNetwork: config.allowPrivateNetwork, politeness });
  await queue.work<PageJob>(PAGE_QUEUE, (job) => crawler.page(job));
  await queue.work<{ crawlId: string }>(SEED_QUEUE, (job) => crawler.seed(job));
  await queue.work(SWEEP_QUEUE, async () => {
    await deleteExpiredCrawls(db);
    await deleteExpiredIdempotencyKeys(db);
  });
}

const SWEEP_QUEUE = 'sweep-crawls';

/** Expired crawls and their pages are removed (hourly). */
export async function deleteExpiredCrawls(db: Queryable): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM crawls WHERE expires_at < clock_timestamp()');
  return rowCount;
}
