// The own search index's background step: a crawl or batch-scrape page's record queues it
// (src/crawl/page-record.ts, table search_queue), a stored scrape's storing statement queues it
// (src/store/pages.ts finishScrape, table search_scrape_queue), and this indexes the queues in
// batches. While pages are being stored it takes a small share of the time (on PGlite every
// statement, the crawl's and the scrapes' own included, runs on one database thread, and indexing
// a page costs more database time than storing it), then catches up at full speed once they stop.
// A search indexes its team's queued pages first (src/search/own-index.ts), so a search right
// after a crawl or a scrape finds its pages. Why and what it costs: docs/api/search.md, "The own index".
import type { Db } from './db-types.ts';
import { indexQueued } from './search-index.ts';

/** Where the step reports a failed batch (pino's and Fastify's loggers fit). */
interface WarnLog {
  warn(obj: object, msg?: string): void;
}

/** Pages indexed per statement, of each queue. */
export const INDEX_BATCH = 32;
/** Share of the time spent indexing while pages are being stored (a page queued in the last ACTIVE_MS). */
const DUTY_WHILE_ACTIVE = 0.1;
const ACTIVE_MS = 250;
/** Pause between batches otherwise (other statements get their turn). */
const QUIET_PAUSE_MS = 2;
/** Wait after a page is queued before the first batch (more pages to batch). */
const DELAY_MS = 20;
const RETRY_MS = 1000;
/** Pages indexed since the queues' last VACUUM after which emptied queues are vacuumed (PGlite). */
const VACUUM_AFTER = 5000;

export class SearchIndexer {
  readonly #db: Db;
  readonly #log: WarnLog;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #poked = false;
  #stopped = false;
  /** When pages were last queued (performance.now()). */
  #activeAt = 0;
  #sinceVacuum = 0;

  constructor(db: Db, log: WarnLog) {
    this.#db = db;
    this.#log = log;
  }

  /** Pages were queued: index them soon. */
  poke(): void {
    if (this.#stopped) return;
    this.#activeAt = performance.now();
    if (this.#running) this.#poked = true;
    else if (!this.#timer) this.#schedule(DELAY_MS);
  }

  /** No batch starts any more; resolves once the running one is over. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  #schedule(ms: number): void {
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#running = this.#step().finally(() => (this.#running = undefined));
    }, ms);
    this.#timer.unref();
  }

  /** One batch, then the next after a pause (until the queue is empty). */
  async #step(): Promise<void> {
    this.#poked = false;
    const started = performance.now();
    let n: number;
    try {
      n = await indexQueued(this.#db, { limit: INDEX_BATCH });
    } catch (err) {
      if (this.#stopped) return;
      this.#log.warn({ err }, 'search index: could not index queued pages; retrying');
      return this.#schedule(RETRY_MS);
    }
    if (this.#stopped) return;
    this.#sinceVacuum += n;
    if (n === 0 && this.#sinceVacuum >= VACUUM_AFTER && this.#db.kind === 'pglite') {
      // PGlite has no autovacuum: the emptied queues' dead rows would slow their scans until the
      // hourly maintenance.
      this.#sinceVacuum = 0;
      await this.#db
        .exec('VACUUM search_queue, search_scrape_queue')
        .catch((err: unknown) => this.#log.warn({ err }, 'search index: VACUUM failed'));
      if (this.#stopped) return;
    }
    const now = performance.now();
    const active = now - this.#activeAt < ACTIVE_MS;
    const spent = now - started;
    if (n > 0)
      this.#schedule(
        active ? Math.max(DELAY_MS, (spent * (1 - DUTY_WHILE_ACTIVE)) / DUTY_WHILE_ACTIVE) : QUIET_PAUSE_MS,
      );
    else if (this.#poked) this.#schedule(DELAY_MS);
  }
}
