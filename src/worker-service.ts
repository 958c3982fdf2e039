// A process that only runs jobs (`npm run worker`): the store, the queue and every feature's
// handlers, no HTTP. For scale-out on Postgres; the embedded database belongs to one process,
// whose `npm start` already runs workers.
import pino from 'pino';
import type { Config } from './config.ts';
import type { JobRegistration } from './jobs/job-context.ts';
import { type JobQueue } from './jobs/queue.ts';
import { openProcess, startJobs } from './runtime.ts';
import type { Log } from './jobs/log.ts';
import type { Db } from './store/db-types.ts';

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
  const parts = await openProcess(config, 'worker', log);
  const { db, queue } = parts;
  const cleanupJobs = await startJobs(parts, { log, extra: opts.jobs });
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
