// What every Gleaner process opens (the store, migrated; the job queue; the scrape engines; the
// robots.txt and sitemap readers) and how it starts its job handlers. The API process
// (src/service.ts) and `npm run worker` (src/worker-service.ts) both start through here.
import type { Config } from './config.ts';
import { type SiteFiles, createSiteFiles } from './crawl/site-files.ts';
import { jobRegistrations } from './job-registrations.ts';
import { type JobRegistration, registerJobs } from './jobs/job-context.ts';
import { type JobQueue, jobQueueFromConfig } from './jobs/queue.ts';
import { type ScrapeStack, createScrapeStack } from './scrape/stack.ts';
import { openDb } from './store/db.ts';
import { migrate } from './store/migrations.ts';
import { ensureApiKey, ensureTeam } from './store/teams.ts';
import type { Log } from './jobs/log.ts';
import type { Db } from './store/db-types.ts';

/** The database opened and migrated, with the configured API key ensured. */
export async function openStore(config: Config): Promise<Db> {
  const db = await openDb({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, schema: config.databaseSchema });
  try {
    await migrate(db);
    if (config.apiKey) {
      const team = await ensureTeam(db, config.defaultTeam);
      await ensureApiKey(db, team.id, config.apiKey);
    }
    return db;
  } catch (err) {
    await db.close().catch(() => undefined);
    throw err;
  }
}

/** A process's shared parts: routes and job handlers use the same ones. */
export interface ProcessParts {
  config: Config;
  db: Db;
  queue: JobQueue;
  stack: ScrapeStack;
  site: SiteFiles;
}

/** A pino-style logger: the queue and the engines log through children of it. */
type RootLog = Log & { child(bindings: object): Log & ScrapeLog };
type ScrapeLog = Parameters<typeof createScrapeStack>[2];

/** Opens the store and builds the queue (not started), the scrape stack and the site readers. */
export async function openProcess(config: Config, role: 'api' | 'worker', log: RootLog): Promise<ProcessParts> {
  const db = await openStore(config);
  const queue = jobQueueFromConfig(config, db, log.child({ component: 'jobs' }), role);
  const stack = createScrapeStack(config, db, log.child({ component: 'scrape' }));
  return { config, db, queue, stack, site: createSiteFiles(stack.http, db, config, stack.sharedSlots) };
}

export interface StartJobsOptions {
  /** The log the handlers get. */
  log: Log;
  /** Registrations beyond the features' own (tests). */
  extra?: JobRegistration[];
  /** After the queue started, before the handlers (the API process builds its app here). */
  beforeJobs?: () => Promise<void>;
  /** After the handlers (the API process listens here). */
  afterJobs?: () => Promise<void>;
}

/**
 * Starts the queue and registers every job handler (the features' list, then `extra`); resolves
 * to the handlers' clean-up (which also closes the stack). A failure anywhere closes the queue,
 * the clean-ups, the stack and the database, and rethrows.
 */
export async function startJobs(parts: ProcessParts, opts: StartJobsOptions): Promise<() => Promise<void>> {
  const { config, db, queue, stack, site } = parts;
  let cleanupJobs: () => Promise<void> = async () => undefined;
  try {
    await queue.start();
    await opts.beforeJobs?.();
    // Handlers start taking jobs here (embedded workers). Their clean-up also closes the stack,
    // after the server and the queue stopped using it.
    const registrations = [...jobRegistrations(site), ...(opts.extra ?? [])];
    cleanupJobs = await registerJobs({ queue, db, config, log: opts.log, stack }, registrations);
    await opts.afterJobs?.();
    return cleanupJobs;
  } catch (err) {
    await queue.stop({ graceful: false }).catch(() => undefined);
    await cleanupJobs();
    await stack.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw err;
  }
}
