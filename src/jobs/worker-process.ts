// A process that only runs jobs (`npm run worker`): the store, the queue and every feature's
// handlers, no HTTP. For scale-out on Postgres; the embedded database belongs to one process,
// whose `npm start` already runs workers.
import pino from 'pino';
import type { Config } from '../config.ts';
import { openStore } from '../service.ts';
import type { Db } from '../store/db-types.ts';
import { type JobQueue, jobQueueFromConfig, type Log } from './queue.ts';
import { createScrapeStack } from '../scrape/stack.ts';
import { type JobRegistration, registerJobs } from './registrations.ts';

export class WorkerConfigError extends Error {
  override name = 'WorkerConfigError';
}

export interface WorkerService {
  queue: JobQueue;
  db: Db;
  config: Config;
  log: Log;
  /** Stops fetching, lets running jobs finish within SHUTDOWN_TIMEOUT_MS, then closes. */
  stop(): Promise<void>;
}

export interface WorkerOptions {
  /** Registrations beyond the features' own (tests). */
  jobs?: JobRegistration[];
}

export async function startWorker(config: Config, opts: WorkerOptions = {}): Promise<WorkerService> {
  if (!config.databaseUrl) {
    throw new WorkerConfigError(
      'npm run worker needs DATABASE_URL: separate worker processes share a Postgres with the API. ' +
        'The embedded database (DATA_DIR) belongs to one process, and `npm start` already runs workers there (GLEANER_WORKERS).',
    );
  }
  if (config.workers === 0) throw new WorkerConfigError('GLEANER_WORKERS=0 leaves a worker process nothing to do');
  const log = pino({ level: config.logLevel });
  const db = await openStore(config);
  const queue = jobQueueFromConfig(config, db, log.child({ component: 'jobs' }), 'worker');
  const stack = createScrapeStack(config, db, log.child({ component: 'scrape' }));
  let cleanupJobs: () => Promise<void> = async () => undefined;
  try {
    await queue.start();
    // Its clean-up also closes the stack, after the server and the queue stopped using it.
    cleanupJobs = await registerJobs({ queue, db, config, log, stack }, opts.jobs);
  } catch (err) {
    await queue.stop({ graceful: false }).catch(() => undefined);
    await cleanupJobs();
    await stack.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw err;
  }
  let stopping: Promise<void> | undefined;
  return {
    queue,
    db,
    config,
    log,
    stop() {
      stopping ??= (async () => {
        try {
          await queue.stop({ graceful: true, timeoutMs: config.shutdownTimeoutMs });
        } finally {
          await cleanupJobs();
          await db.close();
        }
      })();
      return stopping;
    },
  };
}

/** SIGTERM or SIGINT stops the worker gracefully, then ends the process (0 when clean). */
export function stopWorkerOnSignals(worker: WorkerService): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      worker.log.info({ signal }, 'worker shutting down');
      worker.stop().then(
        () => process.exit(0),
        (err) => {
          worker.log.error({ err }, 'worker shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}
