// The 'crawl-seed' job: a crawl's sitemaps (`sitemap` include/only) read on the queue, their URLs
// in scope admitted at depth 0, then seeding is over (the crawl may end).
import { normalizeUrl } from '../net/url-key.ts';
import { admit } from './admission.ts';
import { finishIfDone } from './crawl-end.ts';
import type { CrawlEvents } from './crawl-events.ts';
import { crawlKey, scopeOf } from './crawl-row.ts';
import type { CrawlState } from './crawl-state.ts';
import type { SitemapReader } from './sitemap.ts';
import { looksLikePage } from './url.ts';
import type { Log } from '../jobs/log.ts';
import type { Job } from '../jobs/job-runner.ts';
import type { Db } from '../store/db-types.ts';

export const SEED_QUEUE = 'crawl-seed';
/** Retries of the sitemap seed job. */
export const SEED_RETRIES = 2;

export interface SitemapSeederDeps {
  db: Db;
  sitemaps: SitemapReader;
  log: Log;
  state: CrawlState;
  events: CrawlEvents;
}

export class SitemapSeeder {
  readonly #d: SitemapSeederDeps;

  constructor(deps: SitemapSeederDeps) {
    this.#d = deps;
  }

  /** 'crawl-seed': sitemap URLs in scope, depth 0. */
  async run(job: Job<{ crawlId: string }>): Promise<void> {
    const { crawlId } = job.data;
    const crawl = await this.#d.state.crawlOf(crawlId);
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
        await admit(
          this.#d.db,
          crawlId,
          candidates.map((c) => ({ ...c, depth: 0, parentKey: null })),
        );
      } catch (err) {
        if (job.signal.aborted && job.retryCount < SEED_RETRIES) throw err;
        this.#d.log.warn({ err, crawlId }, 'crawl: sitemaps unavailable');
      }
    }
    await this.#d.db.query('UPDATE crawls SET seeding = false WHERE id = $1', [crawlId]);
    await finishIfDone(this.#d.db, this.#d.events, crawlId);
  }
}
