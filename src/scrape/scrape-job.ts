// A scrape's job record and charge: the credit check and the job row in one statement, the failure
// recorded on the job (and kept out of the logs under zero data retention), and the charge, stored
// document and completed job written in one statement after the answer.
import { createBillableJob } from '../billing/credits.ts';
import type { ScrapeRequest } from '../contract/scrape.ts';
import { ScrapeError } from '../errors.ts';
import { updateJob } from '../store/jobs.ts';
import { finishScrape } from '../store/pages.ts';
import type { SearchEntry } from '../store/search-index.ts';
import type { Caller } from '../store/teams.ts';
import type { PendingWrites } from './pending-writes.ts';
import type { ScrapeDeps } from './scrape-deps.ts';
import type { Db } from '../store/db-types.ts';

/** The credit check (402) and the job record; `quiet` (zero data retention, lockdown) keeps the URL out. */
export function openScrapeJob(
  db: Db,
  caller: Caller,
  req: ScrapeRequest,
  jobId: string,
  quiet: boolean,
): ReturnType<typeof createBillableJob> {
  return createBillableJob(
    db,
    {
      id: jobId,
      teamId: caller.teamId,
      apiKeyId: caller.keyId,
      endpoint: 'scrape',
      status: 'active',
      target: quiet ? null : req.url,
    },
    1,
  );
}

/** Marks the job failed with the error's code; resolves to the error to throw. */
export async function failScrapeJob(
  db: Db,
  jobId: string,
  err: unknown,
  quiet: boolean,
  url: string,
): Promise<unknown> {
  const code =
    err instanceof ScrapeError || (err as { code?: string }).code ? (err as { code: string }).code : 'UNKNOWN_ERROR';
  await updateJob(db, jobId, { status: 'failed', error: code }).catch(() => undefined);
  // Under zero data retention or lockdown the URL must not reach the logs through the message.
  if (quiet && err instanceof ScrapeError) return withoutUrl(err, url);
  return err;
}

/**
 * Charge, stored document (and its search index entry) and completed job in one statement, after
 * the answer (tracked with the page-cache write still under way). `kept` is undefined when the
 * document is not kept.
 */
export function finishScrapeJob(
  d: ScrapeDeps,
  pendingWrites: PendingWrites,
  caller: Caller,
  jobId: string,
  credits: number,
  kept: { json: string; replay: string; searchEntry?: SearchEntry } | undefined,
  cacheWrite: Promise<void> | undefined,
): void {
  const finished = finishScrape(d.db, {
    jobId,
    teamId: caller.teamId,
    apiKeyId: caller.keyId,
    credits,
    json: kept?.json,
    replay: kept?.replay,
    searchEntry: kept?.searchEntry,
  })
    .then(
      // Queued for the search index: the indexer takes it from there.
      () => kept?.searchEntry && d.searchIndexer?.poke(),
    )
    .catch((err: unknown) => d.log.error({ err, jobId }, 'could not store a finished scrape (its answer was sent)'));
  pendingWrites.track(cacheWrite ? Promise.all([finished, cacheWrite]).then(() => undefined) : finished, {
    teamId: caller.teamId,
    jobId,
  });
}

// The requested URL and host out of the message, and any other URL (a media file's, a redirect
// target's, both read from the target) with them.
function withoutUrl(err: ScrapeError, url: string): ScrapeError {
  const host = URL.canParse(url) ? new URL(url).hostname : url;
  const message = err.message
    .split(url)
    .join('the requested URL')
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, '(a URL withheld)')
    .split(host)
    .join('the requested host');
  return message === err.message ? err : new ScrapeError(err.code, message);
}
