// Batch scrapes (POST /v2/batch/scrape): a batch is a crawl of kind batch_scrape whose pages are
// the given URLs; it runs, reads and ends as crawls do (the frontier, src/crawl/crawl-state.ts).
import { createBillableJob, ensureCredits } from '../billing/credits.ts';
import type { BatchScrapeRequest } from '../contract/batch.ts';
import { targetUrl } from '../contract/scrape.ts';
import { normalizeUrl } from '../net/url-key.ts';
import type { Scraper } from '../scrape/scrape.ts';
import { claimIdempotencyKey, recordIdempotentJob, releaseIdempotencyKey, requestHash } from '../store/idempotency.ts';
import type { Caller } from '../store/teams.ts';
import { ConflictError } from '../errors.ts';
import { wakeFrontiers } from './admission.ts';
import type { CrawlEvents } from './crawl-events.ts';
import { CRAWL_TTL_MS } from './crawl-row.ts';
import type { CrawlState } from './crawl-state.ts';
import { refuse } from './refuse.ts';
import type { Db } from '../store/db-types.ts';

export interface BatchScrapesDeps {
  db: Db;
  scraper: Scraper;
  events: CrawlEvents;
  state: CrawlState;
}

export class BatchScrapes {
  readonly #d: BatchScrapesDeps;

  constructor(deps: BatchScrapesDeps) {
    this.#d = deps;
  }

  /**
   * POST /v2/batch/scrape: a batch is a crawl of kind batch_scrape whose pages are the given URLs,
   * in order (keys are their positions, so a URL listed twice is scraped twice); no links are
   * followed and robots.txt is not read, as for a single scrape. With appendToId the URLs join
   * that running batch. With an idempotency key, a repeat returns the first request's batch.
   */
  async start(
    caller: Caller,
    req: BatchScrapeRequest,
    publicUrl: string,
    idempotencyKey?: string,
  ): Promise<{ id: string; invalidURLs?: string[] }> {
    const { db } = this.#d;
    const {
      urls,
      webhook: w,
      ignoreInvalidURLs,
      maxConcurrency,
      appendToId,
      idempotencyKey: _k,
      origin: _o,
      integration: _i,
      ...scrapeOptions
    } = req;
    const valid: string[] = [];
    const invalidURLs: string[] = [];
    urls.forEach((u, i) => {
      const parsed = targetUrl.safeParse(u);
      if (parsed.success && !ignoreInvalidURLs) this.#d.scraper.refuseBlockedTarget(parsed.data, `urls.${i}`);
      if (parsed.success && !this.#d.scraper.isBlockedTarget(parsed.data))
        valid.push(normalizeUrl(parsed.data) ?? parsed.data);
      else if (ignoreInvalidURLs) invalidURLs.push(u);
      else
        refuse(
          `urls.${i}`,
          `"${u.slice(0, 200)}" is not an http(s) URL (ignoreInvalidURLs: true leaves such URLs out)`,
        );
    });
    if (valid.length === 0) refuse('urls', 'no valid http(s) URL');
    if (appendToId !== undefined && w !== undefined)
      refuse('webhook', 'an append uses the webhook of the batch it joins');
    const webhook = this.#d.events.webhookOf(w);
    if (scrapeOptions.zeroDataRetention)
      refuse(
        'zeroDataRetention',
        'batch results are stored until they expire; zero data retention is not supported for batch scrapes',
      );
    this.#d.scraper.check({ url: valid[0], ...scrapeOptions });
    const answer = (id: string) => ({ id, ...(ignoreInvalidURLs ? { invalidURLs } : {}) });

    if (idempotencyKey !== undefined) {
      const prior = await claimIdempotencyKey(db, caller.teamId, idempotencyKey, 'batch_scrape', requestHash(req));
      if (prior) return answer(prior);
    }
    try {
      let id: string;
      if (appendToId !== undefined) {
        const batch = await this.#d.state.get(caller.teamId, appendToId, 'batch_scrape');
        if (batch.status !== 'scraping')
          throw new ConflictError(
            `Batch scrape ${appendToId} is ${batch.status}; URLs can only be added to a running batch`,
            'BATCH_SCRAPE_NOT_RUNNING',
          );
        await ensureCredits(db, caller.teamId, 1);
        id = appendToId;
      } else {
        const job = await createBillableJob(
          db,
          {
            teamId: caller.teamId,
            apiKeyId: caller.keyId,
            endpoint: 'batch_scrape',
            status: 'active',
            target: valid[0],
          },
          1,
        );
        id = job.id;
        const options = { scrapeOptions, ...(maxConcurrency === undefined ? {} : { maxConcurrency }) };
        await db.query(
          `INSERT INTO crawls (id, team_id, api_key_id, kind, url, options, page_limit, public_url, status, seeding, webhook, expires_at)
           VALUES ($1, $2, $3, 'batch_scrape', $4, $5::jsonb, 0, $6, 'scraping', false, $8::jsonb, clock_timestamp() + $7 * interval '1 millisecond')`,
          [
            id,
            caller.teamId,
            caller.keyId,
            valid[0],
            JSON.stringify(options),
            publicUrl,
            CRAWL_TTL_MS,
            webhook && JSON.stringify(webhook),
          ],
        );
        await this.#d.events.event({ id, webhook }, 'started');
      }
      if (!(await this.#admitBatch(id, valid))) {
        throw new ConflictError(`Batch scrape ${id} ended before the URLs could be added`, 'BATCH_SCRAPE_NOT_RUNNING');
      }
      if (idempotencyKey !== undefined) await recordIdempotentJob(db, caller.teamId, idempotencyKey, id);
      return answer(id);
    } catch (err) {
      if (idempotencyKey !== undefined)
        await releaseIdempotencyKey(db, caller.teamId, idempotencyKey).catch(() => undefined);
      throw err;
    }
  }

  /** Adds pages to a running batch under its row lock (keys: positions); false when it is not running. */
  async #admitBatch(id: string, urls: string[]): Promise<boolean> {
    const pages = await this.#d.db.transaction(async (tx) => {
      const { rows } = await tx.query<{ status: string; total: number }>(
        'SELECT status, total FROM crawls WHERE id = $1 FOR UPDATE',
        [id],
      );
      if (rows[0]?.status !== 'scraping') return undefined;
      const keys = urls.map((_, i) => String(rows[0].total + i));
      await tx.query(
        `INSERT INTO crawl_pages (crawl_id, url_key, url, depth, status)
         SELECT $1, k, u, 0, 'queued' FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS t(k, u, o) ORDER BY o`,
        [id, keys, urls],
      );
      await tx.query('UPDATE crawls SET total = total + $2, page_limit = page_limit + $2 WHERE id = $1', [
        id,
        urls.length,
      ]);
      return keys.map((key) => ({ key }));
    });
    if (!pages) return false;
    wakeFrontiers();
    return true;
  }
}
