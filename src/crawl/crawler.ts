// Crawls: POST /v2/crawl starts one here, and the Crawler is what the routes and the frontier
// call; batch scrapes, page runs, records, events and reads are its sibling files. How crawls
// run (state, frontier, depth, pace, politeness, webhooks): docs/design/crawl.md.
import { createBillableJob } from '../billing/credits.ts';
import type { BatchScrapeRequest } from '../contract/batch.ts';
import type { CrawlRequest } from '../contract/crawl.ts';
import { type JobQueue } from '../jobs/queue.ts';
import { normalizeUrl } from '../net/url-key.ts';
import type { Scraper } from '../scrape/scrape.ts';
import { TableVacuum } from '../store/maintenance.ts';
import type { PageCacheBatcher } from '../store/pages.ts';
import type { Caller } from '../store/teams.ts';
import { admit } from './admission.ts';
import { BatchScrapes } from './batch-scrape.ts';
import { finishIfDone } from './crawl-end.ts';
import { CrawlEvents } from './crawl-events.ts';
import { CRAWL_TTL_MS, type CrawlKind, type CrawlRow, crawlKey, scopeOf } from './crawl-row.ts';
import { type CrawlStatus, CrawlState } from './crawl-state.ts';
import { type Settled, PageRecorder } from './page-record.ts';
import { type ClaimedPage, type PageContext, type PageOutcome, PageRunner } from './page-run.ts';
import type { Politeness } from './politeness.ts';
import { refuse } from './refuse.ts';
import type { RobotsCache } from './robots.ts';
import { SEED_QUEUE, SitemapSeeder } from './sitemap-seed.ts';
import type { SitemapReader } from './sitemap.ts';
import type { Log } from '../jobs/log.ts';
import type { Job } from '../jobs/job-runner.ts';
import type { Db } from '../store/db-types.ts';

/** Pages recorded between two VACUUMs of crawl_pages on the embedded database. */
const VACUUM_EVERY_PAGES = 2000;

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

export class Crawler {
  readonly #d: CrawlerDeps;
  readonly #events: CrawlEvents;
  readonly #state: CrawlState;
  readonly #batches: BatchScrapes;
  readonly #pages: PageRunner;
  readonly #recorder: PageRecorder;
  readonly #seeder: SitemapSeeder;

  constructor(deps: CrawlerDeps) {
    this.#d = deps;
    const { db, scraper, robots, sitemaps, log, politeness, cache } = deps;
    const events = (this.#events = new CrawlEvents(deps));
    const state = (this.#state = new CrawlState(db, events));
    this.#batches = new BatchScrapes({ db, scraper, events, state });
    this.#pages = new PageRunner({ db, scraper, robots, politeness, cache });
    // Each page's row changes twice or more (claimed, recorded): on PGlite the table is vacuumed as
    // a crawl goes, or a big crawl's status reads and claims wade through dead rows.
    const vacuum = new TableVacuum(db, 'crawl_pages', VACUUM_EVERY_PAGES, (err) =>
      log.warn({ err }, 'crawl pages: VACUUM failed'),
    );
    this.#recorder = new PageRecorder(db, events, scraper.searchIndexer, vacuum);
    this.#seeder = new SitemapSeeder({ db, sitemaps, log, state, events });
  }

  /** POST /v2/crawl: validates, records the job and the crawl, seeds the frontier. */
  async start(caller: Caller, req: CrawlRequest, publicUrl: string): Promise<{ id: string; warning?: string }> {
    const { db, queue } = this.#d;
    const webhook = this.#events.webhookOf(req.webhook);
    this.#d.scraper.refuseBlockedTarget(req.url, 'url');
    if (req.prompt !== undefined)
      refuse('prompt', 'deriving crawl options from a prompt needs an LLM, which is not configured');
    if (req.zeroDataRetention)
      refuse(
        'zeroDataRetention',
        'crawl results are stored until they expire; zero data retention is not supported for crawls',
      );
    if (req.scrapeOptions.zeroDataRetention) refuse('scrapeOptions.zeroDataRetention', 'not supported for crawls');
    const { url, origin: _o, integration: _i, webhook: _w, prompt: _p, ...options } = req;
    // Regexes and scrape options are checked now (400), not page by page.
    scopeOf({ url, options });
    this.#d.scraper.check({ url, ...options.scrapeOptions });
    const start = normalizeUrl(url) ?? url;
    const job = await createBillableJob(
      db,
      { teamId: caller.teamId, apiKeyId: caller.keyId, endpoint: 'crawl', status: 'active', target: start },
      1,
    );
    const seeding = options.sitemap !== 'skip';
    await db.query(
      `INSERT INTO crawls (id, team_id, api_key_id, kind, url, options, page_limit, public_url, status, seeding, webhook, expires_at)
       VALUES ($1, $2, $3, 'crawl', $4, $5::jsonb, $6, $7, 'scraping', $8, $10::jsonb, clock_timestamp() + $9 * interval '1 millisecond')`,
      [
        job.id,
        caller.teamId,
        caller.keyId,
        start,
        JSON.stringify(options),
        options.limit,
        publicUrl,
        seeding,
        CRAWL_TTL_MS,
        webhook && JSON.stringify(webhook),
      ],
    );
    await this.#events.event({ id: job.id, webhook }, 'started');
    if (options.sitemap !== 'only') {
      const key = crawlKey(start, options)!;
      await admit(db, job.id, [{ url: start, key, depth: 0, parentKey: null }]);
    }
    if (seeding) await queue.send(SEED_QUEUE, { crawlId: job.id }, { singletonKey: job.id });
    else await finishIfDone(db, this.#events, job.id);
    // stopOnContent (newer SDKs) names a Firecrawl cloud behaviour with no counterpart here: said, not silent.
    if (req.stopOnContent !== undefined)
      return { id: job.id, warning: 'stopOnContent: ignored (no effect in Gleaner)' };
    return { id: job.id };
  }

  /** POST /v2/batch/scrape (src/crawl/batch-scrape.ts). */
  startBatch(
    caller: Caller,
    req: BatchScrapeRequest,
    publicUrl: string,
    idempotencyKey?: string,
  ): Promise<{ id: string; invalidURLs?: string[] }> {
    return this.#batches.start(caller, req, publicUrl, idempotencyKey);
  }

  /** The crawl (or batch scrape) of this team (another team's reads as missing: 404). */
  get(teamId: string, id: string, kind: CrawlKind = 'crawl'): Promise<CrawlRow> {
    return this.#state.get(teamId, id, kind);
  }

  /** The status document of GET /v2/crawl/{id} and /v2/batch/scrape/{id} (src/crawl/crawl-state.ts). */
  status(
    teamId: string,
    id: string,
    kind: CrawlKind,
    page: { skip: number; limit?: number },
    base: string,
  ): Promise<CrawlStatus> {
    return this.#state.status(teamId, id, kind, page, base);
  }

  /** Documents of done pages in admission order, from `skip`, at most `limit` and about 10 MiB. */
  documents(id: string, skip: number, limit: number | undefined) {
    return this.#state.documents(id, skip, limit);
  }

  cancel(teamId: string, id: string, kind: CrawlKind = 'crawl'): Promise<void> {
    return this.#state.cancel(teamId, id, kind);
  }

  errors(teamId: string, id: string, kind: CrawlKind = 'crawl') {
    return this.#state.errors(teamId, id, kind);
  }

  active(teamId: string) {
    return this.#state.active(teamId);
  }

  /** 'crawl-seed': sitemap URLs in scope, depth 0 (src/crawl/sitemap-seed.ts). */
  seed(job: Job<{ crawlId: string }>): Promise<void> {
    return this.#seeder.run(job);
  }

  /** Crawl rows by id (the frontier caches them: nothing but status and counters ever changes). */
  crawlsById(ids: string[]): Promise<CrawlRow[]> {
    return this.#state.crawlsById(ids);
  }

  /** Of these crawls, the ones still `scraping`. */
  scraping(ids: string[]): Promise<Set<string>> {
    return this.#state.scraping(ids);
  }

  /** One claimed page, up to its outcome (src/crawl/page-run.ts). */
  runPage(crawl: CrawlRow, page: ClaimedPage, ctx: PageContext): Promise<PageOutcome> {
    return this.#pages.runPage(crawl, page, ctx);
  }

  /** Pages of crawls with a maxConcurrency running in this process (the frontier claims none beyond it). */
  runningOf(crawlId: string): number {
    return this.#pages.runningOf(crawlId);
  }

  /** Records a batch of outcomes (src/crawl/page-record.ts). */
  settle(items: Settled[]): Promise<void> {
    return this.#recorder.settle(items);
  }

  /** Page events a dead process left unqueued, queued now (the frontier, every minute). */
  resendPageEvents(): Promise<void> {
    return this.#events.resendPageEvents();
  }
}
