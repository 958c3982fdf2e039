// Every feature that runs on the job queue (crawl pages, batch scrapes, extracts, monitors, agents, webhook
// deliveries, periodic sweeps) is listed here, in order. Each process runs the whole list at start
// (src/runtime.ts): the API process (`npm start`, with embedded workers unless GLEANER_WORKERS=0)
// and every `npm run worker`.
import type { FastifyBaseLogger } from 'fastify';
import { registerAgentJobs } from './agent/job.ts';
import { Mapper } from './crawl/map.ts';
import type { SiteFiles } from './crawl/site-files.ts';
import { registerCrawlExpiry } from './crawl/crawl-expiry.ts';
import { registerCrawlJobs } from './crawl/crawl-jobs.ts';
import { registerExtractJobs } from './extract/job.ts';
import type { JobContext, JobRegistration } from './jobs/job-context.ts';
import { registerWebhookJobs } from './jobs/webhooks.ts';
import { registerMonitorJobs } from './monitor/monitor-jobs.ts';
import { monitorSearch } from './monitor-search.ts';
import { deleteExpiredFiles } from './store/files.ts';
import { failInterruptedJobs } from './store/jobs.ts';
import { vacuumEmbedded } from './store/maintenance.ts';
import { createSearcher } from './searcher.ts';

/** The features' registrations, with the process's robots.txt cache and sitemap reader. */
export function jobRegistrations(site: SiteFiles): JobRegistration[] {
  return [
    sweepFiles,
    sweepInterruptedJobs,
    vacuumPglite,
    (ctx) => registerCrawlJobs(ctx, site),
    registerCrawlExpiry,
    (ctx) => registerExtractJobs(ctx, site),
    registerWebhookJobs,
    (ctx) => registerMonitorJobs(ctx, site, monitorSearch(ctx)),
    (ctx) => registerAgents(ctx, site),
  ];
}

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
 * Request-bound jobs (scrape, map, search, parse) left active by a process that stopped mid-request
 * are closed as failed (JOB_INTERRUPTED): at start on PGlite (one process owns the data, so any
 * active one is a leftover), and every hour those older than any request may last (Postgres: other
 * processes' requests may be in flight).
 */
async function sweepInterruptedJobs({ queue, db, log }: JobContext): Promise<void> {
  const sweep = async (olderThanMs: number) => {
    const n = await failInterruptedJobs(db, olderThanMs);
    if (n) log.warn({ jobs: n }, 'closed jobs interrupted by a stopped process');
  };
  if (db.kind === 'pglite') await sweep(0);
  await queue.createQueue('sweep-interrupted', { retryLimit: 1 });
  await queue.work('sweep-interrupted', () => sweep(INTERRUPTED_AFTER_MS));
  await queue.schedule('sweep-interrupted', '23 * * * *');
}

/** Longer than any request may take (a scrape's timeout is at most 300 s, plus queueing and storage). */
const INTERRUPTED_AFTER_MS = 15 * 60_000;

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

/** Agents, with this process's own searcher (the configured backends) and mapper. */
async function registerAgents(ctx: JobContext, site: SiteFiles): Promise<void> {
  const { db, stack, config } = ctx;
  // pino's logger (what every process hands its jobs) is what Fastify's logger type describes.
  const log = ctx.log as FastifyBaseLogger;
  const search = createSearcher(config, db, stack, log);
  ctx.onStop?.(search.close);
  const mapper = new Mapper({ ...site, db, http: stack.http, log });
  await registerAgentJobs(ctx, { mapper, searcher: search.searcher });
}
