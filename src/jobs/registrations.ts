// Every feature that runs on the job queue (crawl pages, batch scrapes, webhook deliveries,
// periodic sweeps) adds one registration here. Each process runs the whole list at start, after
// the queue started and before it serves: the API process (`npm start`, with embedded workers
// unless GLEANER_WORKERS=0) and every `npm run worker`. A registration creates its queues
// (createQueue is idempotent), registers its handlers with work() (a no-op in a process without
// workers) and its schedules; it must not assume it runs in only one process.
import type { Config } from '../config.ts';
import type { Db } from '../store/db-types.ts';
import { deleteExpiredFiles } from '../store/files.ts';
import { vacuumEmbedded } from '../store/maintenance.ts';
import { registerCrawlJobs } from '../crawl/crawler.ts';
import { registerExtractJobs } from '../extract/extract.ts';
import type { ScrapeStack } from '../scrape/stack.ts';
import type { JobQueue, Log } from './queue.ts';
import { registerWebhookJobs } from './webhooks.ts';

export interface JobContext {
  queue: JobQueue;
  db: Db;
  config: Config;
  log: Log;
  /** Engines and scraper of this process (shared with the API routes in `npm start`). */
  stack: ScrapeStack;
  /** Registers a clean-up (engines to close) run when the process stops, after the queue stopped. */
  onStop?: (fn: () => Promise<void> | void) => void;
}

export type JobRegistration = (ctx: JobContext) => Promise<void> | void;

/** Expired screenshots and PDFs are deleted every hour (reads already refuse them). */
async function sweepFiles({ queue, db, log }: JobContext): Promise<void> {
  await queue.createQueue('sweep-files', { retryLimit: 1 });
  await queue.work('sweep-files', async () => {
    const n = await deleteExpiredFiles(db);
    if (n) log.info({ files: n }, 'deleted expired files');
  });
  await queue.schedule('sweep-files', '17 * * * *');
}

/**
 * Embedded PGlite only: VACUUM (ANALYZE) every hour, after the sweeps (src/store/maintenance.ts
 * says why). It holds PGlite's one session for its duration, on the database's own thread.
 */
async function vacuumPglite({ queue, db, log }: JobContext): Promise<void> {
  if (db.kind !== 'pglite') return;
  await queue.createQueue('vacuum-embedded', { retryLimit: 0 });
  await queue.work('vacuum-embedded', async () => {
    const started = Date.now();
    await vacuumEmbedded(db);
    log.info({ ms: Date.now() - started }, 'vacuumed the embedded database');
  });
  await queue.schedule('vacuum-embedded', '52 * * * *');
}

/** The features' registrations, in order. */
export const jobRegistrations: JobRegistration[] = [sweepFiles, vacuumPglite, registerCrawlJobs, registerExtractJobs, registerWebhookJobs];

/**
 * Runs every registration; resolves to the clean-up to run once the queue (and the server) has
 * stopped: the registrations' own clean-ups, then the process's scrape stack.
 */
export async function registerJobs(ctx: JobContext, extra: JobRegistration[] = []): Promise<() => Promise<void>> {
  const closers: (() => Promise<void> | void)[] = [() => ctx.stack.close()];
  const full: JobContext = { ...ctx, onStop: (fn) => closers.push(fn) };
  const cleanup = async () => {
    for (const fn of closers.reverse()) await Promise.resolve(fn()).catch((err: unknown) => ctx.log.warn({ err }, 'job clean-up failed'));
  };
  try {
    for (const register of [...jobRegistrations, ...extra]) await register(full);
  } catch (err) {
    await cleanup();
    throw err;
  }
  return cleanup;
}
