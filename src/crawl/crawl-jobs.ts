// A process's crawl work on the queue: the sitemap seed handler and, in a process with workers,
// its frontier (crawl and batch-scrape pages), scraping with the process's shared engines.
import type { JobContext } from '../jobs/job-context.ts';
import { PageCacheBatcher } from '../store/pages.ts';
import { onAdmitted } from './admission.ts';
import { Crawler } from './crawler.ts';
import { Frontier } from './frontier.ts';
import type { SiteFiles } from './site-files.ts';
import { SEED_QUEUE, SEED_RETRIES } from './sitemap-seed.ts';

/** The crawl seed handler and this process's frontier (the hourly expiry: crawl-expiry.ts). */
export async function registerCrawlJobs(ctx: JobContext, site: SiteFiles): Promise<void> {
  const { queue, db, config, log, stack, onStop } = ctx;
  await queue.createQueue(SEED_QUEUE, { retryLimit: SEED_RETRIES, retryDelay: 2 });
  const { scraper } = stack;
  const { robots, sitemaps, politeness } = site;
  const cache = new PageCacheBatcher(db);
  const { allowPrivateNetwork } = config;
  const crawler = new Crawler({ db, queue, scraper, robots, sitemaps, log, allowPrivateNetwork, politeness, cache });
  await queue.work<{ crawlId: string }>(SEED_QUEUE, (job) => crawler.seed(job));
  if (queue.workers > 0) {
    const frontier = new Frontier({ db, crawler, onAdmitted, log, concurrency: config.crawlConcurrency });
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
