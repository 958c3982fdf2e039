// What a feature's job registration receives, and the runner that calls the registrations each
// process lists at its composition root (src/job-registrations.ts). A registration creates its
// queues (createQueue is idempotent), registers its handlers with work() (a no-op in a process
// without workers) and its schedules; it must not assume it runs in only one process.
import type { Config } from '../config.ts';
import type { ScrapeStack } from '../scrape/stack.ts';
import { type JobQueue } from './queue.ts';
import type { Log } from './log.ts';
import type { Db } from '../store/db-types.ts';

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

/**
 * Runs the registrations in order, after the queue started and before the process serves;
 * resolves to the clean-up to run once the queue (and the server) has stopped: the
 * registrations' own clean-ups, then the process's scrape stack.
 */
export async function registerJobs(ctx: JobContext, registrations: JobRegistration[]): Promise<() => Promise<void>> {
  const closers: (() => Promise<void> | void)[] = [() => ctx.stack.close()];
  const full: JobContext = { ...ctx, onStop: (fn) => closers.push(fn) };
  const cleanup = async () => {
    for (const fn of closers.reverse())
      await Promise.resolve(fn()).catch((err: unknown) => ctx.log.warn({ err }, 'job clean-up failed'));
  };
  try {
    for (const register of registrations) await register(full);
  } catch (err) {
    await cleanup();
    throw err;
  }
  return cleanup;
}
