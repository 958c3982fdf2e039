// The page cache (raw responses by request variant) and stored scrape documents.
import type { Queryable } from './db-types.ts';
import type { SearchEntry } from './search-index.ts';

export interface CachedPage {
  url: string;
  finalUrl: string;
  statusCode: number;
  contentType: string;
  headers: Record<string, string>;
  body: Buffer;
  fetchedAt: Date;
  /** What produced the body: the served bytes (`http`) or the rendered DOM (`browser`). */
  engine: 'http' | 'browser';
}

/** Which copies a request accepts, by age (ms). */
export interface CacheWindow {
  maxAgeMs: number;
  minAgeMs: number;
}

/**
 * The cached copy under this key, if any; with a window, only a copy of an acceptable age (a
 * stale body is never read: with maxAge 0 the lookup reads no body at all).
 */
export async function readCachedPage(
  db: Queryable,
  cacheKey: string,
  window?: CacheWindow,
  now = Date.now(),
): Promise<CachedPage | undefined> {
  // maxAge 0 ("always fetch"): no copy can qualify, no query needed.
  if (window && window.maxAgeMs <= 0) return undefined;
  // Ages beyond the representable date range mean "any".
  const at = (ageMs: number) => (Number.isFinite(ageMs) && Math.abs(ageMs) < 1e14 ? new Date(now - ageMs) : null);
  const { rows } = await db.query<CachedPage & { body: Uint8Array }>(
    `SELECT url, final_url AS "finalUrl", status_code AS "statusCode", content_type AS "contentType",
            headers, body, fetched_at AS "fetchedAt", engine
     FROM page_cache
     WHERE cache_key = $1 AND ($2::timestamptz IS NULL OR fetched_at >= $2) AND ($3::timestamptz IS NULL OR fetched_at <= $3)`,
    [cacheKey, window ? at(window.maxAgeMs) : null, window && window.minAgeMs > 0 ? at(window.minAgeMs) : null],
  );
  const row = rows[0];
  return row && { ...row, body: Buffer.from(row.body.buffer, row.body.byteOffset, row.body.byteLength) };
}

export async function writeCachedPage(db: Queryable, cacheKey: string, page: CachedPage): Promise<void> {
  await upsertCachedPages(db, [[cacheKey, page]]);
}

/**
 * One statement for any number of cached pages (a single write and the batcher's flush share it); a
 * copy older than the stored one does not replace it.
 */
async function upsertCachedPages(db: Queryable, pages: [cacheKey: string, page: CachedPage][]): Promise<void> {
  const params: unknown[] = [];
  const values = pages.map(([key, page]) => {
    const n = params.length;
    params.push(
      key,
      page.url,
      page.finalUrl,
      page.statusCode,
      page.contentType,
      JSON.stringify(page.headers),
      page.body,
      page.fetchedAt,
      page.engine,
    );
    return `($${n + 1}, $${n + 2}, $${n + 3}, $${n + 4}, $${n + 5}, $${n + 6}::jsonb, $${n + 7}, $${n + 8}, $${n + 9})`;
  });
  await db.query(
    `INSERT INTO page_cache (cache_key, url, final_url, status_code, content_type, headers, body, fetched_at, engine)
     VALUES ${values.join(', ')}
     ON CONFLICT (cache_key) DO UPDATE SET url = EXCLUDED.url, final_url = EXCLUDED.final_url,
       status_code = EXCLUDED.status_code, content_type = EXCLUDED.content_type, headers = EXCLUDED.headers,
       body = EXCLUDED.body, fetched_at = EXCLUDED.fetched_at, engine = EXCLUDED.engine
     WHERE page_cache.fetched_at <= EXCLUDED.fetched_at`,
    params,
  );
}

export interface FinishedScrape {
  jobId: string;
  teamId: string;
  apiKeyId: string | null;
  credits: number;
  /** The document to keep for GET /v2/scrape/{id}, as JSON text; none under zero data retention. */
  json?: string;
  /** What POST /v2/scrape/{id}/interact replays (src/interact/replay.ts), as JSON text; none under zero data retention. */
  replay?: string;
  /**
   * The page's search index entry (with `json` only: the index never outlives the document): the
   * scrape is queued for the index (search_scrape_queue; src/store/search-indexer.ts indexes it).
   */
  searchEntry?: SearchEntry;
}

/**
 * The end of a successful scrape in one statement: its credits charged (ledger and job row), its
 * document stored and queued for the search index, the job completed. All or nothing: a document that
 * cannot be stored leaves the job uncharged for the caller to fail.
 */
export async function finishScrape(db: Queryable, f: FinishedScrape): Promise<void> {
  await db.query(
    `WITH charge AS (
       INSERT INTO credit_usage (team_id, api_key_id, job_id, credits) SELECT $2, $3, $1, $4 WHERE $4 > 0
     ), result AS (
       INSERT INTO scrape_results (job_id, team_id, document) SELECT $1, $2, $5::text WHERE $5::text IS NOT NULL
     ), replay AS (
       INSERT INTO scrape_replays (job_id, team_id, replay) SELECT $1, $2, $6::text WHERE $6::text IS NOT NULL
     ), queued AS (
       INSERT INTO search_scrape_queue (job_id, team_id, entry) SELECT $1, $2, $7::jsonb WHERE $7::jsonb IS NOT NULL AND $5::text IS NOT NULL
     )
     UPDATE jobs SET status = 'completed', credits = credits + GREATEST($4, 0), updated_at = clock_timestamp(),
       completed_at = COALESCE(completed_at, clock_timestamp())
     WHERE id = $1`,
    // JSON text, not jsonb: nothing queries inside a stored document, and jsonb input costs ~5 ms
    // per 200 KB page (most of a scrape's database time).
    [
      f.jobId,
      f.teamId,
      f.apiKeyId,
      f.credits,
      f.json ?? null,
      f.replay ?? null,
      f.searchEntry ? JSON.stringify(f.searchEntry) : null,
    ],
  );
}

/** The document of a finished scrape of this team; another team's id reads as missing. */
export async function readScrapeResult(db: Queryable, teamId: string, jobId: string): Promise<unknown> {
  const { rows } = await db.query<{ document: string }>(
    'SELECT document FROM scrape_results WHERE job_id = $1 AND team_id = $2',
    [jobId, teamId],
  );
  return rows[0] && JSON.parse(rows[0].document);
}

/**
 * Page-cache reads and writes of many concurrent scrapes, each gathered into one statement (the
 * crawl frontier's pages: on the embedded database every statement costs the event loop ~0.3 ms
 * or more). A read waits at most `readMs` for company, a write at most `writeMs`; a write is
 * visible to reads once flushed (a copy is at most `writeMs` late: only a scrape of the same URL
 * in that window misses it). Ages and windows are exactly those of readCachedPage/writeCachedPage.
 */
export class PageCacheBatcher {
  readonly #db: Queryable;
  readonly #readMs: number;
  readonly #writeMs: number;
  readonly #max: number;
  #reads: {
    key: string;
    lo: string | null;
    hi: string | null;
    resolve: (p: CachedPage | undefined) => void;
    reject: (e: unknown) => void;
  }[] = [];
  #writes = new Map<string, { page: CachedPage; done: { resolve: () => void; reject: (e: unknown) => void }[] }>();
  #readTimer: NodeJS.Timeout | undefined;
  #writeTimer: NodeJS.Timeout | undefined;

  constructor(db: Queryable, opts: { readMs?: number; writeMs?: number; max?: number } = {}) {
    this.#db = db;
    this.#readMs = opts.readMs ?? 2;
    this.#writeMs = opts.writeMs ?? 10;
    this.#max = opts.max ?? 64;
  }

  read(cacheKey: string, window?: CacheWindow, now = Date.now()): Promise<CachedPage | undefined> {
    if (window && window.maxAgeMs <= 0) return Promise.resolve(undefined);
    const at = (ageMs: number) =>
      Number.isFinite(ageMs) && Math.abs(ageMs) < 1e14 ? new Date(now - ageMs).toISOString() : null;
    return new Promise((resolve, reject) => {
      this.#reads.push({
        key: cacheKey,
        lo: window ? at(window.maxAgeMs) : null,
        hi: window && window.minAgeMs > 0 ? at(window.minAgeMs) : null,
        resolve,
        reject,
      });
      if (this.#reads.length >= this.#max) this.#flushReads();
      else this.#readTimer ??= setTimeout(() => this.#flushReads(), this.#readMs);
    });
  }

  write(cacheKey: string, page: CachedPage): Promise<void> {
    return new Promise((resolve, reject) => {
      const prior = this.#writes.get(cacheKey);
      // One row per key per statement (ON CONFLICT cannot change a row twice): the newest copy.
      if (prior) {
        if (page.fetchedAt >= prior.page.fetchedAt) prior.page = page;
        prior.done.push({ resolve, reject });
      } else this.#writes.set(cacheKey, { page, done: [{ resolve, reject }] });
      if (this.#writes.size >= this.#max) this.#flushWrites();
      else this.#writeTimer ??= setTimeout(() => this.#flushWrites(), this.#writeMs);
    });
  }

  /** Writes what is gathered now (at shutdown). */
  async flush(): Promise<void> {
    await Promise.all([this.#flushReads(), this.#flushWrites()]);
  }

  async #flushReads(): Promise<void> {
    clearTimeout(this.#readTimer);
    this.#readTimer = undefined;
    const reads = this.#reads.splice(0);
    if (reads.length === 0) return;
    try {
      const { rows } = await this.#db.query<CachedPage & { body: Uint8Array; i: number }>(
        `SELECT t.i::int AS i, c.url, c.final_url AS "finalUrl", c.status_code AS "statusCode", c.content_type AS "contentType",
                c.headers, c.body, c.fetched_at AS "fetchedAt", c.engine
         FROM unnest($1::text[], $2::timestamptz[], $3::timestamptz[]) WITH ORDINALITY AS t(k, lo, hi, i)
         -- one index lookup per key (a join could scan the whole cache)
         CROSS JOIN LATERAL (
           SELECT * FROM page_cache c WHERE c.cache_key = t.k AND (t.lo IS NULL OR c.fetched_at >= t.lo) AND (t.hi IS NULL OR c.fetched_at <= t.hi) LIMIT 1
         ) c`,
        [reads.map((r) => r.key), reads.map((r) => r.lo), reads.map((r) => r.hi)],
      );
      const found = new Map(rows.map(({ i, ...row }) => [Number(i) - 1, row]));
      reads.forEach((r, i) => {
        const row = found.get(i);
        r.resolve(row && { ...row, body: Buffer.from(row.body.buffer, row.body.byteOffset, row.body.byteLength) });
      });
    } catch (err) {
      for (const r of reads) r.reject(err);
    }
  }

  async #flushWrites(): Promise<void> {
    clearTimeout(this.#writeTimer);
    this.#writeTimer = undefined;
    const writes = [...this.#writes];
    this.#writes.clear();
    if (writes.length === 0) return;
    try {
      await upsertCachedPages(
        this.#db,
        writes.map(([key, w]) => [key, w.page]),
      );
      for (const [, w] of writes) for (const d of w.done) d.resolve();
    } catch (err) {
      for (const [, w] of writes) for (const d of w.done) d.reject(err);
    }
  }
}
