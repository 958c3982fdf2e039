// The crawl frontier: each process that runs jobs keeps up to GLEANER_CRAWL_CONCURRENCY crawl and
// batch-scrape pages running (claimed by lease from crawl_pages, run, recorded in batches, leases
// renewed, pages put back on stop). How and why: docs/design/crawl.md, "The frontier".
import type { CrawlRow } from './crawl-row.ts';
import type { Settled } from './page-record.ts';
import type { ClaimedPage, PageContext, PageOutcome } from './page-run.ts';
import type { Log } from '../jobs/log.ts';
import type { Db } from '../store/db-types.ts';

const LEASE_MS = 30_000;
const RENEW_MS = 10_000;
const POLL_MS = 200;
const BATCH_MS = 20;
const BATCH_MAX = 32;
const MAX_ATTEMPTS = 3;
const RETRY_DELAY_MS = 2000;
/** A crawl's status read for a page after a wait is at most this old. */
const STATUS_TTL_MS = 250;

/** What the frontier needs of the crawls (the Crawler of src/crawl/crawler.ts). */
export interface FrontierWork {
  crawlsById(ids: string[]): Promise<CrawlRow[]>;
  /** Of these crawls, the ones still `scraping`. */
  scraping(ids: string[]): Promise<Set<string>>;
  /** Pages of the crawl running in this process (its maxConcurrency). */
  runningOf(crawlId: string): number;
  runPage(crawl: CrawlRow, page: ClaimedPage, ctx: PageContext): Promise<PageOutcome>;
  /** Records a batch of outcomes. */
  settle(items: Settled[]): Promise<void>;
  /** Queues the webhook page events a dead process left unqueued. */
  resendPageEvents(): Promise<void>;
}

export interface FrontierOptions {
  db: Db;
  crawler: FrontierWork;
  /** Registers the frontier's wake-up for pages admitted in this process; returns its removal. */
  onAdmitted: (wake: () => void) => () => void;
  log: Log;
  /** Pages running at once in this process. */
  concurrency: number;
  leaseMs?: number;
  renewMs?: number;
  pollMs?: number;
}

interface Held {
  page: ClaimedPage;
  controller: AbortController;
}

interface PutBack {
  page: ClaimedPage;
  /** When it may be claimed again (null: now). */
  at: Date | null;
  /** The politeness reservation to keep with it. */
  slot?: string | null;
  /** The claim does not count as an attempt. */
  refund: boolean;
}

const idOf = (p: { crawlId: string; key: string }) => `${p.crawlId}\0${p.key}`;

export class Frontier {
  readonly #o: Required<FrontierOptions>;
  #inflight = 0;
  /** Claimed pages waiting for a free slot (claimed ahead; held, so their leases are renewed). */
  #ready: { crawl: CrawlRow; page: ClaimedPage; checkCredits: boolean; claimedAt: number }[] = [];
  /** Pages this process holds a lease on: running or waiting to be recorded. */
  readonly #held = new Map<string, Held>();
  #pending: Settled[] = [];
  #flushing: Promise<void> | undefined;
  #flushTimer: NodeJS.Timeout | undefined;
  readonly #crawls = new Map<string, CrawlRow>();
  readonly #status = new Map<string, { at: number; running: Promise<boolean> }>();
  #quota = { at: 0, teams: new Set<string>(), known: new Set<string>() };
  #stopping = false;
  #stopped: Promise<void> | undefined;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;
  #woken = false;
  #renewTimer: NodeJS.Timeout | undefined;
  #eventsTimer: NodeJS.Timeout | undefined;
  #offAdmitted: (() => void) | undefined;
  #idle: (() => void) | undefined;

  constructor(opts: FrontierOptions) {
    this.#o = { leaseMs: LEASE_MS, renewMs: RENEW_MS, pollMs: POLL_MS, ...opts };
  }

  async start(): Promise<void> {
    const { db } = this.#o;
    if (db.kind === 'pglite') {
      await db.query(`UPDATE crawl_pages SET lease_until = NULL WHERE status = 'queued' AND lease_until IS NOT NULL`);
    }
    this.#offAdmitted = this.#o.onAdmitted(() => this.wake());
    this.#renewTimer = setInterval(() => void this.#renew(), this.#o.renewMs);
    this.#renewTimer.unref();
    // Page events a dead process left unqueued (Crawler.resendPageEvents).
    this.#eventsTimer = setInterval(() => {
      this.#o.crawler
        .resendPageEvents()
        .catch((err: unknown) => this.#o.log.warn({ err }, 'crawl frontier: could not queue pending page events'));
    }, 60_000);
    this.#eventsTimer.unref();
    this.#loop = this.#run();
  }

  /** Claim now (pages were admitted, a slot freed). */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  async #pause(ms: number): Promise<void> {
    if (this.#woken || this.#stopping) {
      this.#woken = false;
      return;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
    this.#wake = undefined;
    this.#woken = false;
  }

  async #run(): Promise<void> {
    const { concurrency, log } = this.#o;
    while (!this.#stopping) {
      this.#startReady();
      // Top the stock up once half of it is gone: `concurrency` running and as many waiting.
      const want = 2 * concurrency - this.#inflight - this.#ready.length;
      if (this.#ready.length > concurrency / 2 || want <= 0) {
        await this.#pause(this.#o.pollMs);
        continue;
      }
      let claimed: number;
      try {
        claimed = await this.#claim(want);
      } catch (err) {
        if (this.#stopping) break;
        log.warn({ err }, 'crawl frontier: claim failed');
        await new Promise((r) => setTimeout(r, 1000));
        continue;
      }
      if (claimed < want) await this.#pause(this.#o.pollMs);
    }
  }

  /** Starts waiting pages while slots are free. */
  #startReady(): void {
    while (this.#inflight < this.#o.concurrency && this.#ready.length && !this.#stopping) {
      const r = this.#ready.shift()!;
      this.#startPage(r.crawl, r.page, r.checkCredits, r.claimedAt);
    }
  }

  /** Claims up to `n` due pages into the stock (starting what free slots allow); resolves to how many. */
  async #claim(n: number): Promise<number> {
    const { db, crawler, leaseMs } = this.#o;
    // Crawls at their maxConcurrency in this process (running or waiting here) get nothing more now.
    const waiting = (id: string) => this.#ready.reduce((n, r) => n + (r.crawl.id === id ? 1 : 0), 0);
    const full = [...this.#crawls.values()]
      .filter((c) => c.options.maxConcurrency && crawler.runningOf(c.id) + waiting(c.id) >= c.options.maxConcurrency)
      .map((c) => c.id);
    const { rows } = await db.query<ClaimedPage>(
      // Each running crawl's first due pages in admission order, read in the (crawl_id, status, seq)
      // index's order so that the scan stops after them. (One scan of every queued page ordered by
      // time, joined to crawls, let the planner read and sort all of them: 13–21 ms a claim with
      // 7,000 queued, 1.1 ms this way.)
      `WITH s AS (
         SELECT p.crawl_id, p.url_key FROM crawls c CROSS JOIN LATERAL (
           SELECT p.crawl_id, p.url_key, p.seq FROM crawl_pages p
           WHERE p.crawl_id = c.id AND p.status = 'queued' AND p.available_at <= clock_timestamp()
             AND (p.lease_until IS NULL OR p.lease_until < clock_timestamp())
           ORDER BY p.seq LIMIT $1
           FOR UPDATE SKIP LOCKED
         ) p
         WHERE c.status = 'scraping' AND NOT (c.id = ANY($3::uuid[]))
         ORDER BY p.seq LIMIT $1
       )
       UPDATE crawl_pages p SET lease_until = clock_timestamp() + $2 * interval '1 millisecond', attempts = p.attempts + 1
       FROM s WHERE p.crawl_id = s.crawl_id AND p.url_key = s.url_key
       RETURNING p.crawl_id AS "crawlId", p.url_key AS key, p.url, p.depth, p.attempts, p.slot`,
      [n, leaseMs, full],
    );
    if (rows.length === 0) return 0;
    for (const r of rows) this.#held.set(idOf(r), { page: r, controller: new AbortController() });
    try {
      const missing = [...new Set(rows.map((r) => r.crawlId))].filter((id) => !this.#crawls.has(id));
      if (missing.length) {
        if (this.#crawls.size > 1000) this.#crawls.clear();
        for (const c of await crawler.crawlsById(missing)) this.#crawls.set(c.id, c);
      }
      const now = Date.now();
      for (const r of rows) this.#status.set(r.crawlId, { at: now, running: Promise.resolve(true) });
      const quota = await this.#teamsWithQuota([
        ...new Set(rows.map((r) => this.#crawls.get(r.crawlId)?.teamId).filter((t) => t !== undefined)),
      ]);
      for (const page of rows) {
        const crawl = this.#crawls.get(page.crawlId);
        if (!crawl) {
          this.#held.delete(idOf(page));
          continue;
        }
        this.#ready.push({ crawl, page, checkCredits: quota.has(crawl.teamId), claimedAt: now });
      }
      this.#startReady();
    } catch (err) {
      // Not started: back to the frontier (the claim does not count).
      const left = rows.filter(
        (r) => this.#held.has(idOf(r)) && !this.#running.has(idOf(r)) && !this.#ready.some((w) => w.page === r),
      );
      await this.#putBack(left.map((page) => ({ page, at: null, refund: true }))).catch(() => undefined);
      throw err;
    }
    return rows.length;
  }

  readonly #running = new Set<string>();

  /** Teams among these with a credit quota (read at most once a second). */
  async #teamsWithQuota(teams: string[]): Promise<Set<string>> {
    const q = this.#quota;
    if (Date.now() - q.at > 1000) {
      q.at = Date.now();
      q.known.clear();
      q.teams.clear();
    }
    const unknown = teams.filter((t) => !q.known.has(t));
    if (unknown.length) {
      const { rows } = await this.#o.db.query<{ id: string }>(
        'SELECT id FROM teams WHERE id = ANY($1::uuid[]) AND credit_quota IS NOT NULL',
        [unknown],
      );
      for (const t of unknown) q.known.add(t);
      for (const r of rows) q.teams.add(r.id);
    }
    return q.teams;
  }

  /** Whether the crawl is still `scraping` (re-read when the last answer is older than STATUS_TTL_MS). */
  #stillRunning(id: string): Promise<boolean> {
    const s = this.#status.get(id);
    if (s && Date.now() - s.at < STATUS_TTL_MS) return s.running;
    const running = this.#o.crawler.scraping([id]).then(
      (ids) => ids.has(id),
      () => true,
    );
    this.#status.set(id, { at: Date.now(), running });
    return running;
  }

  #startPage(crawl: CrawlRow, page: ClaimedPage, checkCredits: boolean, claimedAt: number): void {
    const id = idOf(page);
    const held = this.#held.get(id)!;
    this.#inflight++;
    this.#running.add(id);
    void (async () => {
      let outcome: PageOutcome | undefined;
      let putBack: PutBack | undefined;
      try {
        // Waited in the stock: a crawl cancelled meanwhile starts nothing more.
        if (Date.now() - claimedAt > STATUS_TTL_MS && !(await this.#stillRunning(crawl.id))) {
          outcome = { kind: 'drop' };
        } else if (page.attempts > MAX_ATTEMPTS) {
          outcome = {
            kind: 'record',
            result: {
              status: 'failed',
              error: `the page's run stopped ${MAX_ATTEMPTS} times without a result`,
              code: 'UNKNOWN_ERROR',
            },
          };
        } else {
          outcome = await this.#o.crawler.runPage(crawl, page, {
            signal: held.controller.signal,
            checkCredits,
            stillRunning: () => this.#stillRunning(crawl.id),
          });
        }
      } catch (err) {
        if (held.controller.signal.aborted) putBack = { page, at: null, refund: true };
        else if (page.attempts >= MAX_ATTEMPTS) {
          outcome = {
            kind: 'record',
            result: { status: 'failed', error: (err as Error).message ?? String(err), code: 'UNKNOWN_ERROR' },
          };
        } else {
          this.#o.log.warn({ err, crawlId: page.crawlId, url: page.url }, 'crawl page failed; retrying');
          putBack = { page, at: new Date(Date.now() + RETRY_DELAY_MS), refund: false };
        }
      } finally {
        this.#inflight--;
        this.#running.delete(id);
        this.#startReady();
      }
      if (outcome?.kind === 'record') {
        this.#pending.push({
          crawl,
          page,
          result: outcome.result,
          follow: outcome.follow,
          keepLinks: outcome.keepLinks,
        });
        this.#scheduleFlush();
      } else if (outcome?.kind === 'later') {
        putBack = { page, at: outcome.availableAt, slot: outcome.slot ?? null, refund: true };
      } else if (outcome?.kind === 'drop') {
        putBack = { page, at: null, refund: true };
      }
      if (putBack) {
        await this.#putBack([putBack]).catch((err: unknown) =>
          this.#o.log.warn({ err }, 'crawl frontier: could not put a page back'),
        );
      }
      this.#settled();
      this.wake();
    })();
  }

  #settled(): void {
    if (this.#inflight === 0 && this.#pending.length === 0 && !this.#flushing) this.#idle?.();
  }

  #scheduleFlush(): void {
    if (this.#flushing) return;
    if (this.#pending.length >= BATCH_MAX || this.#stopping) return this.#flush();
    this.#flushTimer ??= setTimeout(() => {
      this.#flushTimer = undefined;
      this.#flush();
    }, BATCH_MS);
  }

  #flush(): void {
    if (this.#flushing) return;
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    const items = this.#pending.splice(0);
    if (items.length === 0) return;
    this.#flushing = (async () => {
      try {
        await this.#o.crawler.settle(items);
        for (const it of items) this.#held.delete(idOf(it.page));
      } catch (err) {
        this.#o.log.warn({ err, pages: items.length }, 'crawl frontier: could not record pages; they will run again');
        await this.#putBack(
          items.map((it) => ({ page: it.page, at: new Date(Date.now() + RETRY_DELAY_MS), refund: false })),
        ).catch(() => undefined);
      } finally {
        this.#flushing = undefined;
        if (this.#pending.length) this.#scheduleFlush();
        this.#settled();
      }
    })();
  }

  /** Releases pages' leases (the page stays queued), optionally until a time and with a reservation. */
  async #putBack(pages: PutBack[]): Promise<void> {
    if (pages.length === 0) return;
    for (const p of pages) this.#held.delete(idOf(p.page));
    await this.#o.db.query(
      `UPDATE crawl_pages p SET lease_until = NULL, available_at = COALESCE(t.at, clock_timestamp()),
         attempts = CASE WHEN t.refund THEN GREATEST(p.attempts - 1, 0) ELSE p.attempts END,
         slot = CASE WHEN t.keep THEN p.slot ELSE t.slot END
       FROM jsonb_to_recordset($1::jsonb) AS t(c uuid, k text, at timestamptz, slot timestamptz, refund boolean, keep boolean)
       WHERE p.crawl_id = t.c AND p.url_key = t.k AND p.status = 'queued'`,
      [
        JSON.stringify(
          pages.map((p) => ({
            c: p.page.crawlId,
            k: p.page.key,
            at: p.at?.toISOString() ?? null,
            slot: p.slot ?? null,
            refund: p.refund,
            keep: p.slot === undefined,
          })),
        ),
      ],
    );
  }

  async #renew(): Promise<void> {
    const held = [...this.#held.values()].map((h) => h.page);
    if (held.length === 0) return;
    try {
      await this.#o.db.query(
        `UPDATE crawl_pages p SET lease_until = clock_timestamp() + $3 * interval '1 millisecond'
         FROM unnest($1::uuid[], $2::text[]) AS t(c, k) WHERE p.crawl_id = t.c AND p.url_key = t.k AND p.status = 'queued'`,
        [held.map((p) => p.crawlId), held.map((p) => p.key), this.#o.leaseMs],
      );
    } catch (err) {
      this.#o.log.warn({ err }, 'crawl frontier: could not renew leases');
    }
  }

  /**
   * Claims nothing more; running pages may finish until `deadline` (graceful), the rest are
   * aborted and put back; finished pages are recorded. Idempotent.
   */
  stop(graceful: boolean, deadline: number): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopping = true;
      // Pages waiting in the stock never start; they are held, so they go back with the rest below.
      this.#ready = [];
      this.#offAdmitted?.();
      this.wake();
      await this.#loop;
      const idle = () =>
        new Promise<void>((resolve) => {
          this.#idle = resolve;
          this.#settled();
        });
      const until = (ms: number) =>
        Promise.race([idle(), new Promise<void>((r) => setTimeout(r, Math.max(0, ms)).unref())]);
      if (graceful) await until(deadline - Date.now());
      for (const h of this.#held.values()) h.controller.abort(new Error('the process is stopping'));
      await until(2000);
      this.#flush();
      await this.#flushing;
      clearInterval(this.#renewTimer);
      clearInterval(this.#eventsTimer);
      const left = [...this.#held.values()].map((h) => ({ page: h.page, at: null, refund: true }));
      await this.#putBack(left).catch((err: unknown) =>
        this.#o.log.warn({ err }, 'crawl frontier: could not release leases'),
      );
    })();
    return this.#stopped;
  }
}
