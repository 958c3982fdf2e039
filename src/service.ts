// The running service: database opened and migrated, the configured key ensured, the HTTP app
// listening; and a bounded, graceful stop. Used by src/server.ts and by the tests.
import type { FastifyInstance } from 'fastify';
import pino from 'pino';
import { buildApp } from './app.ts';
import type { Config } from './config.ts';
import type { JobRegistration } from './jobs/job-context.ts';
import type { JobQueue } from './jobs/queue.ts';
import { openProcess, startJobs } from './runtime.ts';
import type { Db } from './store/db-types.ts';

export interface Service {
  app: FastifyInstance;
  db: Db;
  config: Config;
  /** The job queue: send jobs from routes; this process also runs them unless GLEANER_WORKERS=0. */
  queue: JobQueue;
  /** Base URL the server listens on, e.g. http://127.0.0.1:3002 */
  url: string;
  /** Settles once the storage of scrapes answered so far is done (src/scrape/pending-writes.ts). */
  settled(): Promise<void>;
  stop(): Promise<void>;
}

export interface StartOptions {
  /** Adds plugins or routes before the server listens (embedding, tests). */
  configure?: (app: FastifyInstance) => Promise<void> | void;
  /** Job registrations beyond the features' own (src/job-registrations.ts), e.g. tests'. */
  jobs?: JobRegistration[];
}

export async function startService(config: Config, opts: StartOptions = {}): Promise<Service> {
  const root = pino({ level: config.logLevel });
  const parts = await openProcess(config, 'api', root);
  const { db, queue, stack, site } = parts;
  const log = root.child({ component: 'jobs' });
  if (config.workers === 0 && db.kind === 'pglite') {
    log.warn('GLEANER_WORKERS=0 with the embedded database: jobs are queued, but no process can run them');
  }
  let app!: FastifyInstance;
  const cleanupJobs = await startJobs(parts, {
    log,
    extra: opts.jobs,
    beforeJobs: async () => {
      app = await buildApp({ config, db, queue, stack, site });
    },
    afterJobs: async () => {
      await opts.configure?.(app);
      await app.listen({ port: config.port, host: config.host });
    },
  });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  let stopping: Promise<void> | undefined;
  return {
    app,
    db,
    config,
    queue,
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    settled: () => stack.scraper.pendingWrites.drain(),
    stop() {
      stopping ??= stopGracefully(app, queue, db, config.shutdownTimeoutMs, cleanupJobs);
      return stopping;
    },
  };
}

// Stop accepting requests and fetching jobs, let in-flight requests and jobs finish within the
// bound, then cut what is left (running jobs are retried later) and close the database, so a
// restart on the same data loses nothing.
async function stopGracefully(
  app: FastifyInstance,
  queue: JobQueue,
  db: Db,
  timeoutMs: number,
  cleanupJobs: () => Promise<void>,
): Promise<void> {
  const timer = setTimeout(() => {
    app.log.warn({ timeoutMs }, 'shutdown bound reached: closing remaining connections');
    app.server.closeAllConnections();
  }, timeoutMs);
  // A keep-alive connection whose request finishes after close() began would otherwise hold the
  // server open until the bound: drop connections as soon as they turn idle.
  const idleSweep = setInterval(() => app.server.closeIdleConnections(), 50);
  try {
    await Promise.all([
      app.close(),
      queue.stop({ graceful: true, timeoutMs }).catch((err) => app.log.error({ err }, 'job queue stop failed')),
    ]);
  } finally {
    clearTimeout(timer);
    clearInterval(idleSweep);
    await cleanupJobs();
    await db.close();
  }
}

/** SIGTERM or SIGINT stops the service gracefully, then ends the process (0 when clean). */
export function stopOnSignals(service: Service): void {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      service.app.log.info({ signal }, 'shutting down');
      service.stop().then(
        () => process.exit(0),
        (err) => {
          service.app.log.error({ err }, 'shutdown failed');
          process.exit(1);
        },
      );
    });
  }
}
