// Crawls: state in the database, pages run by each worker process's frontier (src/crawl/frontier.ts).
//
// State lives in the database: `crawls` (one row per crawl, id = its job id) and `crawl_pages`
// (the frontier and the visited set: UNIQUE (crawl_id, url_key)). The frontier is the page queue:
// a URL is admitted by inserting its row (status 'queued'), under a row lock on the crawl (so
// `limit` is exact with any number of workers), and workers claim queued rows by lease (no job per
// page). So no URL is scraped twice for the results, even when a page runs twice (a lease that
// ran out under a slow run, a killed worker): the page's result is written by `UPDATE … WHERE
// status = 'queued'`, which only one run wins, and that same statement charges its credits and
// counts it (crawls.completed, crawls.ended).
//
// A page (runPage, once claimed: claims only take pages of crawls still `scraping`, so a cancel
// stops new pages at once): robots.txt (unless ignoreRobotsTxt; disallowed → `blocked`, listed in
// the errors route's robotsBlocked); credits, for a team with a quota (402 → the page fails with
// INSUFFICIENT_CREDITS); the scrape through the same pipeline as POST /v2/scrape
// (Scraper.scrapeForParent, the user's scrapeOptions, the page cache read and written in batches;
// `links` is added internally to discover links and removed again unless asked for); links of a
// 2xx/3xx page in scope (UrlScope: includePaths/excludePaths, regexOnFullURL, allowSubdomains,
// allowExternalLinks, crawlEntireDomain) are kept, and followed within maxDiscoveryDepth. The
// frontier records outcomes in batches (settle): the children of the batch's pages are admitted
// first (one transaction per crawl), then every page is recorded in one statement, so the queued
// count never drops to zero while work remains; when seeding is over and every admitted page is
// recorded (ended = total, read from that statement) the crawl is `completed` (or `failed`, see
// #finishIfDone). A page whose run fails for an unexpected reason (database, shutdown) is retried;
// at its third attempt it is recorded as failed so the crawl still ends.
//
// Depth is the shortest link distance from the start URL, whatever order the workers take pages
// in: every page's in-scope links are kept (crawl_pages.links), and a page later found at a
// smaller depth gets it and, if already scraped, has its links admitted again from there.
//
// Sitemaps (`sitemap` include/only) are read by a separate 'crawl-seed' job (pg-boss): URLs in
// scope at depth 0, admitted like links.
//
// Dedup key: urlKey (fragment, default port, one trailing slash; the query dropped with
// ignoreQueryParameters), and with deduplicateSimilarURLs (default) also the scheme and a leading
// "www." ignored.
//
// Pace: `delay` (seconds) spaces the start times of a crawl's pages: each admitted page is
// available `delay` after the previous one (crawl_pages.available_at from crawls.next_start_at,
// under the same lock), and claims take only pages due. `maxConcurrency` caps the crawl's pages
// scraped at once in each worker process (the frontier claims none of a crawl at its cap, and a
// per-process semaphore holds any excess; N processes may run up to N × maxConcurrency). The
// team's concurrency limit (GLEANER_TEAM_MAX_CONCURRENCY) applies per process as for scrapes.
// Per-host politeness (src/crawl/politeness.ts), for every crawl together, just before the fetch:
// request starts to a host are at least max(GLEANER_HOST_MIN_INTERVAL_MS, robots.txt Crawl-delay
// unless ignoreRobotsTxt) apart across all processes (a database row per host), so a crawl's
// pages are max(delay, Crawl-delay) apart; and each process has at most
// GLEANER_HOST_MAX_CONCURRENCY requests to one host in flight. A turn more than a few seconds
// away is not slept: the page is put back, unleased, available shortly before its reserved start
// (crawl_pages.slot keeps the reservation).
//
// Webhook (src/jobs/webhooks.ts): the request's webhook is stored with the crawl (crawls.webhook)
// and its events are queued as the crawl goes (started at start, page when a page is recorded:
// one insert per batch, completed/cancelled when the crawl ends); delivery is a job of its own.
// The record statement marks the pages whose event is due (event_pending) and the mark is cleared
// once the events are queued, so the events of a process killed in between are queued by a
// frontier's sweep a minute later (the event's job id makes a second send a no-op).
import { createBillableJob, ensureCredits } from '../billing/credits.ts';
import type { BatchScrapeRequest } from '../contract/batch.ts';
import type { CrawlRequest } from '../contract/crawl.ts';
import { type ScrapeDocument, type ScrapeFormatInput, type ScrapeRequest, targetUrl } from '../contract/scrape.ts';
import type { Job, JobQueue, Log } from '../jobs/queue.ts';
import type { JobContext } from '../jobs/registrations.ts';
import { type CrawlEvent, type WebhookSpec, enqueueCrawlEvent, enqueueCrawlEvents, isWebhookEvent, normalizeWebhook, wantsEvent, webhookEvents } from '../jobs/webhooks.ts';
import { assertUrlAllowed } from '../net/ssrf.ts';
import { Scraper } from '../scrape/scrape.ts';
import type { Db, Queryable } from '../store/db.ts';
import { claimIdempotencyKey, deleteExpiredIdempotencyKeys, recordIdempotentJob, releaseIdempotencyKey, requestHash } from '../store/idempotency.ts';
import { updateJob } from '../store/jobs.ts';
import { PageCacheBatcher } from '../store/pages.ts';
import type { Caller } from '../store/teams.ts';
import { Frontier } from './frontier.ts';
import { Politeness } from './politeness.ts';
import { RobotsCache } from './robots.ts';
import { SitemapReader } from './sitemap.ts';
import { UrlScope, looksLikePage } from './url.ts';
import { ApiError, BadRequestError, ConflictError, NotFoundError } from '../errors.ts';
import { normalizeUrl, urlKey } from '../net/url-key.ts';

export const SEED_QUEUE = 'crawl-seed';
/** Retries of the sitemap seed job. */
const SEED_RETRIES = 2;
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

/** A URL and its dedup key. */
interface Link {
  url: string;
  key: string;
}

/** A URL offered for admission: its depth and the page it was found on. */
interface Candidate extends Link {
  depth: number;
  parentKey: string | null;
}

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

export type RecordInput = { status: 'done'; document: ScrapeDocument; credits: number; links?: Link[] } | { status: 'failed' | 'blocked'; error: string; code: string };

/** What became of a claimed page: record it (and admit its links when `follow`), put it back until `availableAt`, or drop the claim (crawl no longer running). */
export type PageOutcome = { kind: 'record'; result: RecordInput; follow?: boolean; keepLinks?: boolean } | { kind: 'later'; availableAt: Date; slot?: string } | { kind: 'drop' };

/** The page is not fetched now (its politeness turn is far off, or its crawl ended while it waited). */
class NotNow extends Error {
  readonly outcome: Exclude<PageOutcome, { kind: 'record' }>;
  constructor(outcome: Exclude<PageOutcome, { kind: 'record' }>) {
    super(`crawl page not fetched now (${outcome.kind})`);
    this.name = 'NotNow';
    this.outcome = outcome;
  }
}

/** A page's outcome to record (Crawler.settle). */
export interface Settled {
  crawl: CrawlRow;
  page: ClaimedPage;
  result: RecordInput;
  follow?: boolean;
  /** Store the page's links (crawl_pages.links: depth corrections, with maxDiscoveryDepth). */
  keepLinks?: boolean;
}

// Frontiers of this process (src/crawl/frontier.ts), woken when pages are admitted here.
const frontiers = new Set<() => void>();

/** Registers a frontier's wake-up; returns its removal. */
export function onAdmitted(wake: () => void): () => void {
  frontiers.add(wake);
  return () => frontiers.delete(wake);
}

function wakeFrontiers(): void {
  for (const wake of frontiers) wake();
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
  /** The page cache of crawl pages' scrapes, gathered into one statement per few pages (workers only). */
  cache?: PageCacheBatcher;
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
      await this.#admit(job.id, [{ url: start, key, depth: 0, parentKey: null }]);
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
    wakeFrontiers();
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
   * row lock on the crawl, as queued pages the frontier claims (available at once, or spaced by
   * the crawl's `delay`). Candidates may come from several parents (a batch of pages): each has
   * its depth and parent. With maxDiscoveryDepth, a known page found here at a smaller depth gets
   * that depth, and if it was already scraped its stored links are admitted again from there
   * (depth is the shortest link distance, whatever order the workers took the pages in).
   */
  async #admit(crawlId: string, candidates: Candidate[]): Promise<void> {
    const best = new Map<string, Candidate>();
    for (const c of candidates) {
      const b = best.get(c.key);
      if (!b || c.depth < b.depth) best.set(c.key, c);
    }
    const unique = [...best.values()];
    if (unique.length === 0) return;
    const { admitted, lowered, maxDepth } = await this.#d.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ status: string; room: number; delay: number | null; maxDepth: number | null; base: Date }>(
        `SELECT status, page_limit - total AS room, (options->>'delay')::float8 AS delay, (options->>'maxDiscoveryDepth')::int AS "maxDepth",
                GREATEST(clock_timestamp(), COALESCE(next_start_at, clock_timestamp())) AS base
         FROM crawls WHERE id = $1 FOR UPDATE`,
        [crawlId],
      );
      const c = rows[0];
      const none = { admitted: 0, lowered: [], maxDepth: null };
      if (!c || c.status !== 'scraping') return none;
      const keys = unique.map((u) => u.key);
      let lowered: { key: string; depth: number; links: Link[] }[] = [];
      if (c.maxDepth !== null) {
        const { rows: low } = await tx.query<{ key: string; depth: number; status: string; links: Link[] | null }>(
          `UPDATE crawl_pages p SET depth = t.d FROM unnest($2::text[], $3::int[]) AS t(k, d)
           WHERE p.crawl_id = $1 AND p.url_key = t.k AND p.depth > t.d
           RETURNING p.url_key AS key, p.depth, p.status, p.links`,
          [crawlId, keys, unique.map((u) => u.depth)],
        );
        lowered = low.filter((l) => l.status === 'done' && l.links).map((l) => ({ key: l.key, depth: l.depth, links: l.links! }));
      }
      if (c.room <= 0) return { admitted: 0, lowered, maxDepth: c.maxDepth };
      // Unseen candidates in order, at most `room` (the crawl row is locked: no one else admits
      // meanwhile); with a delay, each starts `delay` after the one before (next_start_at).
      const { rows: n } = await tx.query<{ n: number }>(
        `WITH ins AS (
           INSERT INTO crawl_pages (crawl_id, url_key, url, depth, parent_key, status, available_at)
           SELECT $1, k, u, d, pk, 'queued',
                  CASE WHEN $6::float8 > 0 THEN $7::timestamptz + (row_number() OVER (ORDER BY o) - 1) * $6::float8 * interval '1 second'
                       ELSE clock_timestamp() END
           FROM unnest($2::text[], $3::text[], $4::int[], $5::text[]) WITH ORDINALITY AS t(k, u, d, pk, o)
           -- one index lookup per candidate (an anti-join could scan every crawl's pages)
           LEFT JOIN LATERAL (SELECT 1 AS seen FROM crawl_pages e WHERE e.crawl_id = $1 AND e.url_key = t.k LIMIT 1) e ON true
           WHERE e.seen IS NULL
           ORDER BY o LIMIT $8
           ON CONFLICT DO NOTHING RETURNING 1
         ), n AS (SELECT count(*)::int AS n FROM ins)
         UPDATE crawls SET total = total + n.n,
           next_start_at = CASE WHEN $6::float8 > 0 THEN $7::timestamptz + n.n * $6::float8 * interval '1 second' ELSE next_start_at END
         FROM n WHERE id = $1 RETURNING n.n`,
        [crawlId, keys, unique.map((u) => u.url), unique.map((u) => u.depth), unique.map((u) => u.parentKey), c.delay ?? 0, c.base, c.room],
      );
      return { admitted: n[0]?.n ?? 0, lowered, maxDepth: c.maxDepth };
    });
    if (admitted > 0) wakeFrontiers();
    if (maxDepth === null) return;
    const again = lowered.filter((l) => l.depth < maxDepth).flatMap((l) => l.links.map((k) => ({ ...k, depth: l.depth + 1, parentKey: l.key })));
    if (again.length > 0) await this.#admit(crawlId, again);
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
        await this.#admit(crawlId, candidates.map((c) => ({ ...c, depth: 0, parentKey: null })));
      } catch (err) {
        if (job.signal.aborted && job.retryCount < SEED_RETRIES) throw err;
        this.#d.log.warn({ err, crawlId }, 'crawl: sitemaps unavailable');
      }
    }
    await this.#d.db.query('UPDATE crawls SET seeding = false WHERE id = $1', [crawlId]);
    await this.#finishIfDone(crawlId);
  }

  /** Crawl rows by id (the frontier caches them: nothing but status and counters ever changes). */
  async crawlsById(ids: string[]): Promise<CrawlRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.#d.db.query<CrawlRow>(`SELECT ${crawlColumns} FROM crawls WHERE id = ANY($1::uuid[])`, [ids]);
    return rows;
  }

  /** Of these crawls, the ones still `scraping`. */
  async scraping(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const { rows } = await this.#d.db.query<{ id: string }>(`SELECT id FROM crawls WHERE id = ANY($1::uuid[]) AND status = 'scraping'`, [ids]);
    return new Set(rows.map((r) => r.id));
  }

  /**
   * One claimed page (file comment), up to its outcome; the frontier records outcomes in batches
   * (settle). Throws for an unexpected failure (database, shutdown): the frontier retries the page.
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
        return record({ status: 'failed', error: `robots.txt unreachable: ${robots.error ?? 'no answer'}`, code: 'ROBOTS_UNREACHABLE' });
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
    const req: ScrapeRequest = { ...o.scrapeOptions, url: page.url, formats: collect && !userLinks ? [...formats, 'links'] : formats };
    const caller: Caller = { teamId: crawl.teamId, teamName: '', keyId: crawl.apiKeyId ?? '' };
    // Per-host politeness (src/crawl/politeness.ts), asked for only when the target is contacted
    // (a cached copy needs no turn) and held for the fetch alone: a far-off turn puts the page back.
    const robots = !o.ignoreRobotsTxt && !batch;
    const politeness = this.#d.politeness;
    const beforeFetch =
      politeness &&
      (async () => {
        const turn = await politeness.take({ url: page.url, robots, userAgent: o.robotsUserAgent, slot: page.slot?.toISOString(), signal });
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
        { publicUrl: crawl.publicUrl, cache: this.#d.cache, filesExpireAt: new Date(crawl.expiresAt), ...(beforeFetch ? { beforeFetch } : {}) },
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

  /**
   * Queues the page events of recorded pages, then clears their event_pending mark (set by the
   * record statement), so a process that dies in between leaves them for resendPageEvents.
   */
  async #sendPageEvents(events: { crawl: Pick<CrawlRow, 'id' | 'webhook'>; keys: string[] }[]): Promise<void> {
    const sent: { c: string; k: string }[] = [];
    for (const { crawl, keys } of events) {
      if (!crawl.webhook || !wantsEvent(crawl.webhook, 'page')) continue;
      if (await enqueueCrawlEvents(this.#d.queue, this.#d.log, crawl, 'page', keys)) for (const k of keys) sent.push({ c: crawl.id, k });
    }
    if (sent.length === 0) return;
    await this.#d.db.query(
      `UPDATE crawl_pages p SET event_pending = false FROM unnest($1::uuid[], $2::text[]) AS t(c, k)
       WHERE p.crawl_id = t.c AND p.url_key = t.k AND p.event_pending`,
      [sent.map((s) => s.c), sent.map((s) => s.k)],
    );
  }

  /** Page events left unqueued (a process died between a record and its events) for a minute or more: queued now (the frontier, every minute). */
  async resendPageEvents(): Promise<void> {
    const { rows } = await this.#d.db.query<{ crawlId: string; key: string; webhook: WebhookSpec | null }>(
      `SELECT p.crawl_id AS "crawlId", p.url_key AS key, c.webhook FROM crawl_pages p JOIN crawls c ON c.id = p.crawl_id
       WHERE p.event_pending AND p.updated_at < clock_timestamp() - interval '1 minute' ORDER BY p.updated_at LIMIT 1000`,
    );
    const byCrawl = new Map<string, { crawl: { id: string; webhook: WebhookSpec | null }; keys: string[] }>();
    for (const r of rows) {
      const e = byCrawl.get(r.crawlId) ?? { crawl: { id: r.crawlId, webhook: r.webhook }, keys: [] };
      e.keys.push(r.key);
      byCrawl.set(r.crawlId, e);
    }
    await this.#sendPageEvents([...byCrawl.values()]);
  }

  /**
   * Records a batch of outcomes: the children of each page first (per crawl, one admission), so a
   * crawl's queued count never drops to zero while work remains; then every page in one statement
   * that only changes queued pages (a page recorded already, by an earlier run, stays as it is),
   * charges done pages and counts them on their crawls (ended: the crawl may end); then the pages'
   * webhook events, links of pages found at a smaller depth while they were scraped, and the end
   * of the crawls whose every page is recorded.
   */
  async settle(items: Settled[]): Promise<void> {
    if (items.length === 0) return;
    const children = new Map<string, Candidate[]>();
    for (const it of items) {
      if (it.result.status !== 'done' || !it.follow || !it.result.links?.length) continue;
      const list = children.get(it.crawl.id) ?? [];
      for (const l of it.result.links) list.push({ ...l, depth: it.page.depth + 1, parentKey: it.page.key });
      children.set(it.crawl.id, list);
    }
    for (const [crawlId, list] of children) await this.#admit(crawlId, list);
    const rows = items.map(({ crawl, page, result: r, keepLinks }) => {
      const done = r.status === 'done';
      return {
        c: crawl.id,
        k: page.key,
        s: r.status,
        d: done ? r.document : null,
        e: done ? null : r.error,
        x: done ? null : r.code,
        l: done && r.links && keepLinks ? r.links : null,
        n: done ? r.credits : 0,
        t: crawl.teamId,
        a: crawl.apiKeyId,
        w: r.status !== 'blocked' && crawl.webhook !== null && wantsEvent(crawl.webhook, 'page'),
      };
    });
    const { rows: recorded } = await this.#d.db.query<{ crawlId: string; key: string; depth: number; status: string; seeding: boolean; ended: number; total: number }>(
      `WITH r AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(c uuid, k text, s text, d jsonb, e text, x text, l jsonb, n int, t uuid, a uuid, w boolean)
       ), page AS (
         UPDATE crawl_pages p SET status = r.s, document = r.d, error = r.e, code = r.x, links = r.l, lease_until = NULL, event_pending = r.w,
           updated_at = clock_timestamp()
         FROM r WHERE p.crawl_id = r.c AND p.url_key = r.k AND p.status = 'queued'
           -- lets the planner find the rows through the (crawl_id, url_key) index
           AND p.crawl_id = ANY($2::uuid[]) AND p.url_key = ANY($3::text[])
         RETURNING p.crawl_id, p.url_key, p.depth, p.status, r.n, r.t, r.a
       ), charge AS (
         INSERT INTO credit_usage (team_id, api_key_id, job_id, credits) SELECT t, a, crawl_id, n FROM page WHERE n > 0
       ), per AS (
         SELECT crawl_id, count(*)::int AS ended, count(*) FILTER (WHERE status = 'done')::int AS done, COALESCE(sum(n), 0)::int AS credits FROM page GROUP BY crawl_id
       ), job AS (
         UPDATE jobs j SET credits = j.credits + per.credits, updated_at = clock_timestamp() FROM per WHERE j.id = per.crawl_id AND per.credits > 0
       ), crawl AS (
         UPDATE crawls c SET completed = c.completed + per.done, credits_used = c.credits_used + per.credits, ended = c.ended + per.ended
         FROM per WHERE c.id = per.crawl_id RETURNING c.id, c.seeding, c.ended, c.total
       )
       SELECT page.crawl_id AS "crawlId", page.url_key AS key, page.depth, page.status, crawl.seeding, crawl.ended, crawl.total
       FROM page JOIN crawl ON crawl.id = page.crawl_id`,
      [JSON.stringify(rows, jsonbSafe), [...new Set(rows.map((r) => r.c))], rows.map((r) => r.k)],
    );
    const byKey = new Map(items.map((it) => [`${it.crawl.id}\0${it.page.key}`, it]));
    const events = new Map<string, { crawl: CrawlRow; keys: string[] }>();
    const ending = new Set<string>();
    for (const r of recorded) {
      const it = byKey.get(`${r.crawlId}\0${r.key}`);
      if (!it) continue;
      if (r.status !== 'blocked') {
        const e = events.get(r.crawlId) ?? { crawl: it.crawl, keys: [] };
        e.keys.push(r.key);
        events.set(r.crawlId, e);
      }
      if (!r.seeding && r.ended >= r.total) ending.add(r.crawlId);
    }
    await this.#sendPageEvents([...events.values()]);
    // Found at a smaller depth while it was being scraped: its links go in from there.
    for (const r of recorded) {
      const it = byKey.get(`${r.crawlId}\0${r.key}`);
      const max = it?.crawl.options.maxDiscoveryDepth;
      if (!it || it.result.status !== 'done' || !it.result.links || max === undefined) continue;
      if (r.depth < it.page.depth && r.depth < max) {
        await this.#admit(r.crawlId, it.result.links.map((l) => ({ ...l, depth: r.depth + 1, parentKey: r.key })));
        ending.delete(r.crawlId);
        ending.add(r.crawlId);
      }
    }
    for (const id of ending) await this.#finishIfDone(id);
  }
}

// jsonb refuses U+0000 and unpaired surrogates in strings.
function jsonbSafe(_key: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const s = value.includes('\0') ? value.replaceAll('\0', '') : value;
  return s.isWellFormed() ? s : s.toWellFormed();
}

/** Crawl seed and sweep handlers, and this process's frontier (crawl pages), scraping with the process's shared engines. */
export async function registerCrawlJobs({ queue, db, config, log, stack, onStop }: JobContext): Promise<void> {
  await queue.createQueue(SEED_QUEUE, { retryLimit: SEED_RETRIES, retryDelay: 2 });
  await queue.createQueue(SWEEP_QUEUE, { retryLimit: 1 });
  await queue.schedule(SWEEP_QUEUE, '41 * * * *');
  const { scraper, robots, sitemaps } = stack;
  const { hostMaxConcurrency, hostMinIntervalMs, maxCrawlDelaySeconds } = config;
  const politeness = new Politeness({ db, robots, hostMaxConcurrency, hostMinIntervalMs, maxCrawlDelaySeconds });
  const cache = new PageCacheBatcher(db);
  const crawler = new Crawler({ db, queue, scraper, robots, sitemaps, log, allowPrivateNetwork: config.allowPrivateNetwork, politeness, cache });
  await queue.work<{ crawlId: string }>(SEED_QUEUE, (job) => crawler.seed(job));
  await queue.work(SWEEP_QUEUE, async () => {
    await deleteExpiredCrawls(db);
    await deleteExpiredIdempotencyKeys(db);
  });
  if (queue.workers > 0) {
    const frontier = new Frontier({ db, crawler, log, concurrency: config.crawlConcurrency });
    await frontier.start();
    // Stopped with the queue (before it closes: page events go through it).
    const stop = async (graceful: boolean, deadline: number) => {
      await frontier.stop(graceful, deadline);
      await cache.flush().catch((err: unknown) => log.warn({ err }, 'could not write the page cache'));
    };
    queue.beforeStop(stop);
    onStop?.(() => stop(false, Date.now()));
  }
}

const SWEEP_QUEUE = 'sweep-crawls';

/** Expired crawls and their pages are removed (hourly). */
export async function deleteExpiredCrawls(db: Queryable): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM crawls WHERE expires_at < clock_timestamp()');
  return rowCount;
}
