// A process's monitor work on the queue: the 'monitor-tick' schedule (every minute; a tick's data
// may carry `now`, so tests run one at a chosen time), the 'monitor-check' handler (with the web search
// of search targets, which the composition root hands in) and the hourly retention pruning.
import { Crawler } from '../crawl/crawler.ts';
import type { SiteFiles } from '../crawl/site-files.ts';
import type { JobContext } from '../jobs/job-context.ts';
import { pruneMonitorChecks } from '../store/monitors.ts';
import { MonitorChecks } from './check.ts';
import { MONITOR_CHECK_QUEUE, MONITOR_TICK_QUEUE, MonitorScheduler } from './scheduler.ts';
import type { MonitorSearch } from './search-target.ts';

const PRUNE_QUEUE = 'monitor-prune';

export async function registerMonitorJobs(ctx: JobContext, site: SiteFiles, search?: MonitorSearch): Promise<void> {
  const { queue, db, config, log, stack } = ctx;
  await queue.createQueue(MONITOR_TICK_QUEUE, { retryLimit: 1, expireInSeconds: 120 });
  // A check waits for its crawls: up to an hour an attempt.
  await queue.createQueue(MONITOR_CHECK_QUEUE, { retryLimit: 2, retryDelay: 10, expireInSeconds: 3600 });
  await queue.createQueue(PRUNE_QUEUE, { retryLimit: 1 });
  const scheduler = new MonitorScheduler({ db, queue, log });
  const crawler = new Crawler({
    db,
    queue,
    scraper: stack.scraper,
    robots: site.robots,
    sitemaps: site.sitemaps,
    log,
    allowPrivateNetwork: config.allowPrivateNetwork,
  });
  const checks = new MonitorChecks({ db, queue, scraper: stack.scraper, crawler, llm: stack.llm, search, config, log });
  await queue.work<{ now?: string }>(MONITOR_TICK_QUEUE, { concurrency: 1 }, async (job) => {
    await scheduler.tick(job.data.now ? new Date(job.data.now) : new Date());
  });
  await queue.work<{ checkId: string }>(MONITOR_CHECK_QUEUE, (job) => checks.run(job));
  await queue.work(PRUNE_QUEUE, { concurrency: 1 }, async () => {
    const n = await pruneMonitorChecks(db, new Date());
    if (n) log.info({ checks: n }, 'pruned monitor checks past their retention');
  });
  await queue.schedule(MONITOR_TICK_QUEUE, '* * * * *');
  await queue.schedule(PRUNE_QUEUE, '41 * * * *');
}
