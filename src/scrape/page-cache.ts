// The page cache in a scrape: which cached copy a request accepts, what a miss means for lockdown and
// cache-only requests, and writing a fresh copy (without fragments) while the page is transformed.
import { chargeCredits, creditCosts } from '../billing/credits.ts';
import type { ScrapeRequest } from '../contract/scrape.ts';
import { NotFoundError } from '../errors.ts';
import { readCachedPage, writeCachedPage } from '../store/pages.ts';
import type { Caller } from '../store/teams.ts';
import type { Source } from './page-source.ts';
import type { PendingWrites } from './pending-writes.ts';
import type { ScrapePlan } from './plan.ts';
import type { ScrapeContext, ScrapeDeps } from './scrape-deps.ts';

/** The cached copy this request accepts, if any (none is read for a personalised or session request). */
export async function readCachedSource(
  d: ScrapeDeps,
  pendingWrites: PendingWrites,
  req: ScrapeRequest,
  plan: ScrapePlan,
  key: string,
  batch?: ScrapeContext['cache'],
): Promise<Source | undefined> {
  // Caller headers make the page the caller's own; screenshots, actions and profiles need a
  // fresh browser session.
  const personalised = Boolean(req.headers && Object.keys(req.headers).length);
  const needsSession = Boolean(plan.formats.screenshot || plan.formats.branding || req.actions?.length || req.profile);
  // maxAge 0 asks for the live page (monitor checks, changeTracking): no copy, however new, is read.
  if (personalised || needsSession || plan.cache.maxAgeMs <= 0) return undefined;
  // A copy this process is still writing (a scrape answered a moment ago) is waited for.
  if (plan.cache.maxAgeMs > 0) await pendingWrites.forCacheKey(key);
  const cached = await (batch ? batch.read(key, plan.cache) : readCachedPage(d.db, key, plan.cache));
  const age = cached ? Date.now() - cached.fetchedAt.getTime() : Infinity;
  if (!cached || age > plan.cache.maxAgeMs || age < plan.cache.minAgeMs) return undefined;
  // The cache is shared by every fragment of a URL: this request's own fragment goes on the
  // final URL, as a browser carries it across redirects.
  const page = { ...cached, finalUrl: withFragment(cached.finalUrl, req.url) };
  return { page, cacheState: 'hit', proxyUsed: 'basic', engine: cached.engine, warnings: [] };
}

/** A cache miss ends lockdown and cache-only requests here (404); the others go to the target. */
export async function refuseCacheMiss(
  d: ScrapeDeps,
  req: ScrapeRequest,
  plan: ScrapePlan,
  caller: Caller,
  jobId: string,
  jobReady: Promise<unknown>,
): Promise<void> {
  if (req.lockdown) {
    await jobReady;
    await chargeCredits(d.db, caller, jobId, creditCosts.lockdownMiss);
    throw new NotFoundError(
      'No cached copy of this page (lockdown serves from the cache only)',
      'SCRAPE_LOCKDOWN_CACHE_MISS',
    );
  }
  if (plan.cache.cacheOnly) {
    throw new NotFoundError(
      `No cached copy of this page at least ${plan.cache.minAgeMs} ms old`,
      'SCRAPE_NO_CACHED_DATA',
    );
  }
}

/** A fresh page's copy into the cache (2xx answers whose body was read, when the plan stores). */
export function cacheFreshPage(
  d: ScrapeDeps,
  pendingWrites: PendingWrites,
  caller: Caller,
  plan: ScrapePlan,
  key: string,
  fresh: Source,
  batch?: ScrapeContext['cache'],
): Source {
  const { page } = fresh;
  if (plan.cache.store && page.statusCode >= 200 && page.statusCode < 300 && !fresh.bodySkipped) {
    // Stored without fragments: another request for the same page must not inherit this one's.
    const stored = { ...page, url: withoutFragment(page.url), finalUrl: withoutFragment(page.finalUrl) };
    const failed = (err: unknown) => d.log.warn({ err }, 'could not write the page cache');
    // Batched: not waited for (the copy is written within a few ms, with the next ones). Alone:
    // the database writes it (on its own thread with PGlite) while the page is transformed.
    if (batch) batch.write(key, stored).catch(failed);
    else {
      const cacheWrite = writeCachedPage(d.db, key, stored).catch(failed);
      pendingWrites.track(cacheWrite, { teamId: caller.teamId, cacheKey: key });
      return { ...fresh, cacheWrite };
    }
  }
  return fresh;
}

function withoutFragment(url: string): string {
  const u = new URL(url);
  u.hash = '';
  return u.href;
}

function withFragment(finalUrl: string, requested: string): string {
  const { hash } = new URL(requested);
  if (!hash) return finalUrl;
  const u = new URL(finalUrl);
  if (!u.hash) u.hash = hash;
  return u.href;
}
