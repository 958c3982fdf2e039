// Recording pages' outcomes, a batch at a time (the frontier's flush): children admitted first,
// every page in one statement with its charge, its crawl's counters and its search index entry
// (queued: src/store/search-indexer.ts),
// then the pages' webhook events, depth corrections and the end of crawls whose every page is recorded.
import { wantsEvent } from '../jobs/webhooks.ts';
import { type Candidate, admit } from './admission.ts';
import { finishIfDone } from './crawl-end.ts';
import type { CrawlEvents } from './crawl-events.ts';
import type { CrawlRow } from './crawl-row.ts';
import type { ClaimedPage, RecordInput } from './page-run.ts';
import type { Db } from '../store/db-types.ts';
import { searchEntryOf } from '../scrape/search-entry.ts';
import type { TableVacuum } from '../store/maintenance.ts';
import type { SearchIndexer } from '../store/search-indexer.ts';

/** A page's outcome to record (PageRecorder.settle). */
export interface Settled {
  crawl: CrawlRow;
  page: ClaimedPage;
  result: RecordInput;
  follow?: boolean;
  /** Store the page's links (crawl_pages.links: depth corrections, with maxDiscoveryDepth). */
  keepLinks?: boolean;
}

export class PageRecorder {
  readonly #db: Db;
  readonly #events: CrawlEvents;
  readonly #indexer: SearchIndexer | undefined;
  readonly #vacuum: TableVacuum | undefined;

  /**
   * `indexer`: done pages are queued for the own search index (src/store/search-index.ts) with
   * their record, and the indexer poked; none: they are not indexed. `vacuum`: told of every
   * recorded page (the embedded database's crawl_pages; src/store/maintenance.ts).
   */
  constructor(db: Db, events: CrawlEvents, indexer?: SearchIndexer, vacuum?: TableVacuum) {
    this.#db = db;
    this.#events = events;
    this.#indexer = indexer;
    this.#vacuum = vacuum;
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
    for (const [crawlId, list] of children) await admit(this.#db, crawlId, list);
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
        i: done && this.#indexer ? (searchEntryOf(r.document) ?? null) : null,
      };
    });
    const { rows: recorded } = await this.#db.query<{
      crawlId: string;
      key: string;
      depth: number;
      status: string;
      seeding: boolean;
      ended: number;
      total: number;
    }>(
      `WITH r AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(c uuid, k text, s text, d jsonb, e text, x text, l jsonb, n int, t uuid, a uuid, w boolean, i jsonb)
       ), page AS (
         UPDATE crawl_pages p SET status = r.s, document = r.d, error = r.e, code = r.x, links = r.l, lease_until = NULL, event_pending = r.w,
           updated_at = clock_timestamp()
         FROM r WHERE p.crawl_id = r.c AND p.url_key = r.k AND p.status = 'queued'
           -- lets the planner find the rows through the (crawl_id, url_key) index
           AND p.crawl_id = ANY($2::uuid[]) AND p.url_key = ANY($3::text[])
         RETURNING p.crawl_id, p.url_key, p.depth, p.status, r.n, r.t, r.a
       ), queued AS (
         -- the own search index's queue (indexed shortly after, off this path: src/store/search-indexer.ts)
         INSERT INTO search_queue (crawl_id, page_key, team_id, entry)
         SELECT r.c, r.k, r.t, r.i FROM page JOIN r ON r.c = page.crawl_id AND r.k = page.url_key
         WHERE page.status = 'done' AND r.i IS NOT NULL
       ), charge AS (
         -- one ledger row per crawl and batch (the ledger is only ever summed)
         INSERT INTO credit_usage (team_id, api_key_id, job_id, credits)
         SELECT t, a, crawl_id, sum(n) FROM page WHERE n > 0 GROUP BY t, a, crawl_id
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
    this.#indexer?.poke();
    this.#vacuum?.changed(recorded.length);
    await this.#events.sendPageEvents([...events.values()]);
    // Found at a smaller depth while it was being scraped: its links go in from there.
    for (const r of recorded) {
      const it = byKey.get(`${r.crawlId}\0${r.key}`);
      const max = it?.crawl.options.maxDiscoveryDepth;
      if (!it || it.result.status !== 'done' || !it.result.links || max === undefined) continue;
      if (r.depth < it.page.depth && r.depth < max) {
        await admit(
          this.#db,
          r.crawlId,
          it.result.links.map((l) => ({ ...l, depth: r.depth + 1, parentKey: r.key })),
        );
        ending.delete(r.crawlId);
        ending.add(r.crawlId);
      }
    }
    for (const id of ending) await finishIfDone(this.#db, this.#events, id);
  }
}

// jsonb refuses U+0000 and unpaired surrogates in strings.
function jsonbSafe(_key: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const s = value.includes('\0') ? value.replaceAll('\0', '') : value;
  return s.isWellFormed() ? s : s.toWellFormed();
}
