// Every feature that runs on the job queue (crawl pages, batch scrapes, webhook deliveries,
// periodic sweeps) adds one registration here. Each process runs the whole list at start, after
// the queue started and before it serves: the API process (`npm start`, with embedded workers
// unless GLEANER_WORKERS=0) and every `npm run worker`. A registration creates its queues
// (createQueue is idempotent), registers its handlers with work() (a no-op in a process without
// workers) and its schedules; it must not assume it runs in only one process.
import type { Config } from '../config.ts';
import type { Db } from '../store/db.ts';
import { deleteExpiredFiles } from '../store/files.ts';
import type { JobQueue, Log } from './queue.ts';

export interface JobContext {
  queue: JobQueue;
  db: Db;
  config: Config;
  log: Log;
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

/** The features' registrations, in order. */
export const jobRegistrations: JobRegistration[] = [sweepFiles];

export async function registerJobs(ctx: JobContext, extra: JobRegistration[] = []): Promise<void> {
  for (const register of [...jobRegistrations, ...extra]) await register(ctx);
}
