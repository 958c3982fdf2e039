// The end of a crawl or batch scrape: once seeding is over and no page is queued, it is
// `completed` (or `failed`), its job ends and its webhook hears of it.
import type { WebhookSpec } from '../jobs/webhooks.ts';
import { updateJob } from '../store/jobs.ts';
import type { CrawlEvents } from './crawl-events.ts';
import type { Queryable } from '../store/db-types.ts';

/**
 * Ends the crawl when sitemap seeding is over and no page is queued: `completed`, or `failed`
 * when not one page could be scraped and some failed (the start URL unreachable, every URL of a
 * batch failing); the job's error is then the first page's error.
 */
export async function finishIfDone(db: Queryable, events: CrawlEvents, crawlId: string): Promise<void> {
  const { rows } = await db.query<{
    id: string;
    webhook: WebhookSpec | null;
    status: 'completed' | 'failed';
    error: string | null;
  }>(
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
    await updateJob(db, crawlId, {
      status: 'failed',
      error: `no page could be scraped: ${ended.error ?? 'every page failed'}`,
    });
    await events.event(ended, 'failed');
  } else {
    await updateJob(db, crawlId, { status: 'completed' });
    await events.event(ended, 'completed');
  }
}
