// Expiry: crawl and batch-scrape results stay readable for CRAWL_TTL_MS; an hourly sweep removes
// the expired ones with their pages, and the batch scrapes' expired idempotency keys.
import type { JobContext } from '../jobs/job-context.ts';
import { deleteExpiredIdempotencyKeys } from '../store/idempotency.ts';
import type { Queryable } from '../store/db-types.ts';

const SWEEP_QUEUE = 'sweep-crawls';

/** Expired crawls and their pages are removed (hourly). */
export async function deleteExpiredCrawls(db: Queryable): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM crawls WHERE expires_at < clock_timestamp()');
  return rowCount;
}

/** The hourly sweep of expired crawls and idempotency keys. */
export async function registerCrawlExpiry({ queue, db }: JobContext): Promise<void> {
  await queue.createQueue(SWEEP_QUEUE, { retryLimit: 1 });
  await queue.schedule(SWEEP_QUEUE, '41 * * * *');
  await queue.work(SWEEP_QUEUE, async () => {
    await deleteExpiredCrawls(db);
    await deleteExpiredIdempotencyKeys(db);
  });
}
