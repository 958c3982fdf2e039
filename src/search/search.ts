// POST /v2/search: the request's sources sent to their backends at once (web: the own index or
// SearXNG; news, images: SearXNG), hits filtered by domain and category and cut to `limit`, then
// with scrapeOptions every web and news result scraped through the normal pipeline in parallel.
// One search job in the ledger (activity listing); credits as Firecrawl's: 2 per 10 results,
// rounded up, plus what each scraped result costs (charged on its own scrape job).
import type { FastifyBaseLogger } from 'fastify';
import { chargeCredits, createBillableJob } from '../billing/credits.ts';
import type { SearchRequest, SearchResult, SearchSource } from '../contract/search.ts';
import type { ScrapeRequest } from '../contract/scrape.ts';
import { SearchTimeoutError } from '../errors.ts';
import { inertOptionNotes } from '../scrape/plan.ts';
import type { Scraper } from '../scrape/scrape.ts';
import type { Db } from '../store/db-types.ts';
import { updateJob } from '../store/jobs.ts';
import type { Caller } from '../store/teams.ts';
import type { SearchBackend, SearchHit, SearchParams } from './backend.ts';
import { categoryOf, hostOf, normalizeDomain, onDomains } from './filters.ts';
import { highlightOf } from './highlight.ts';
import { countryOfLocation } from './location.ts';
import { parseTbs } from './tbs.ts';

/** Credits per started block of SEARCH_RESULTS_PER_BLOCK results. */
export const SEARCH_CREDITS_PER_BLOCK = 2;
export const SEARCH_RESULTS_PER_BLOCK = 10;
/** Least time a result's scrape is given; with less left of `timeout` the result stays unscraped. */
const MIN_SCRAPE_MS = 1000;

export interface SearcherDeps {
  db: Db;
  scraper: Scraper;
  /** The backend of each source; a source without one gets a warning, not results. */
  backends: Partial<Record<SearchSource, SearchBackend>>;
  log: FastifyBaseLogger;
}

export interface SearchOutcome {
  data: Partial<Record<SearchSource, SearchResult[]>>;
  warning?: string;
  id: string;
  creditsUsed: number;
}

export function searchCredits(results: number): number {
  return Math.ceil(results / SEARCH_RESULTS_PER_BLOCK) * SEARCH_CREDITS_PER_BLOCK;
}

export class Searcher {
  readonly #d: SearcherDeps;

  constructor(deps: SearcherDeps) {
    this.#d = deps;
  }

  async search(caller: Caller, req: SearchRequest, ctx: { publicUrl: string }): Promise<SearchOutcome> {
    const { db, scraper, backends } = this.#d;
    // Scrape options are checked now (400), not result by result.
    if (req.scrapeOptions) scraper.check({ url: 'https://example.com/', ...req.scrapeOptions });
    const startedAt = Date.now();
    const sources = [...new Set(req.sources)];
    const base = {
      teamId: caller.teamId,
      query: req.query,
      limit: req.limit,
      includeDomains: req.includeDomains?.map(normalizeDomain),
      excludeDomains: req.excludeDomains?.map(normalizeDomain),
      categories: req.categories?.length ? [...new Set(req.categories)] : undefined,
      time: parseTbs(req.tbs),
      country: req.country?.toUpperCase() ?? countryOfLocation(req.location),
      highlights: req.highlights,
    };
    const quiet = req.scrapeOptions?.zeroDataRetention === true;
    const job = await createBillableJob(
      db,
      {
        teamId: caller.teamId,
        apiKeyId: caller.keyId,
        endpoint: 'search',
        status: 'active',
        target: quiet ? null : req.query,
      },
      SEARCH_CREDITS_PER_BLOCK,
    );
    try {
      const deadline = AbortSignal.timeout(req.timeout);
      const warnings: string[] = inertOptionNotes(req);
      const missing = sources.filter((s) => !backends[s]);
      if (missing.length)
        warnings.push(
          `No search backend for ${missing.join(', ')} (set SEARXNG_URL): no results for ${missing.length > 1 ? 'them' : 'it'}.`,
        );
      const served = sources.filter((s) => backends[s]);
      const answers = await Promise.allSettled(
        served.map((source) => withDeadline(backends[source]!.search({ ...base, source, signal: deadline }), deadline)),
      );
      const data: SearchOutcome['data'] = {};
      const failures: unknown[] = [];
      answers.forEach((a, i) => {
        const source = served[i];
        if (a.status === 'fulfilled') {
          data[source] = this.#results(a.value, source, base, req.ignoreInvalidURLs);
          return;
        }
        failures.push(a.reason);
        data[source] = [];
        const why = deadline.aborted ? `no answer within ${req.timeout} ms` : (a.reason as Error).message;
        warnings.push(`${source} results failed (${backends[source]!.name}): ${why}`);
        this.#d.log.warn({ err: a.reason, source }, 'search backend failed');
      });
      if (served.length > 0 && failures.length === served.length)
        throw deadline.aborted ? new SearchTimeoutError(req.timeout) : failures[0];
      const count = Object.values(data).reduce((n, list) => n + list.length, 0);
      let scrapeCredits = 0;
      if (req.scrapeOptions) {
        const scraped = await this.#scrapeAll(caller, req, data, ctx, startedAt);
        scrapeCredits = scraped.credits;
        if (scraped.warning) warnings.push(scraped.warning);
      }
      const credits = searchCredits(count);
      await chargeCredits(db, caller, job.id, credits);
      await updateJob(db, job.id, { status: 'completed' });
      return {
        data,
        ...(warnings.length ? { warning: warnings.join(' ') } : {}),
        id: job.id,
        creditsUsed: credits + scrapeCredits,
      };
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      await updateJob(db, job.id, { status: 'failed', error: typeof code === 'string' ? code : 'UNKNOWN_ERROR' }).catch(
        () => undefined,
      );
      throw err;
    }
  }

  /** A backend's hits filtered again (domains, categories, invalid URLs), cut to limit, numbered. */
  #results(
    hits: SearchHit[],
    source: SearchSource,
    p: Omit<SearchParams, 'source' | 'signal'>,
    ignoreInvalid: boolean,
  ): SearchResult[] {
    const out: SearchResult[] = [];
    for (const h of hits) {
      const host = hostOf(h.url);
      if (!host && ignoreInvalid) continue;
      if (host && p.includeDomains?.length && !onDomains(host, p.includeDomains)) continue;
      if (host && p.excludeDomains?.length && onDomains(host, p.excludeDomains)) continue;
      const category = source === 'web' && p.categories ? categoryOf(h.url, p.categories) : undefined;
      if (source === 'web' && p.categories && !category) continue;
      const r: SearchResult = { url: h.url, title: h.title, position: out.length + 1 };
      if (source === 'news') r.snippet = h.description;
      else r.description = h.description;
      if (h.date) r.date = h.date;
      if (h.imageUrl) r.imageUrl = h.imageUrl;
      if (h.imageWidth !== undefined) r.imageWidth = h.imageWidth;
      if (h.imageHeight !== undefined) r.imageHeight = h.imageHeight;
      if (category) r.category = category;
      out.push(r);
      if (out.length >= p.limit) break;
    }
    return out;
  }

  /**
   * Web and news results scraped at once (each a scrape of its own: job, charge, stored document,
   * index entry, as POST /v2/scrape), the Documents merged into the results in place. A result
   * that cannot be scraped stays as it is, named in the warning.
   */
  async #scrapeAll(
    caller: Caller,
    req: SearchRequest,
    data: SearchOutcome['data'],
    ctx: { publicUrl: string },
    startedAt: number,
  ): Promise<{ credits: number; warning?: string }> {
    const options = req.scrapeOptions!;
    const targets = [...(data.web ?? []), ...(data.news ?? [])].filter((r) => hostOf(r.url));
    const failed: string[] = [];
    let credits = 0;
    await Promise.all(
      targets.map(async (r) => {
        const left = req.timeout - (Date.now() - startedAt);
        if (left < MIN_SCRAPE_MS) {
          failed.push(`${r.url} (no time left)`);
          return;
        }
        const scrapeReq: ScrapeRequest = { ...options, url: r.url, timeout: Math.min(options.timeout, left) };
        try {
          const { document } = await this.#d.scraper.scrape(caller, scrapeReq, ctx);
          credits += document.metadata.creditsUsed ?? 0;
          const { url, title, snippet, position, category, date, imageUrl } = r;
          let { description } = r;
          if (r.snippet === undefined) {
            // A web result: the scraped page's passage for the query, or its meta description.
            const meta = document.metadata.description ?? document.metadata.ogDescription;
            description = req.highlights
              ? (highlightOf(document.markdown, req.query) ?? description)
              : typeof meta === 'string' && meta.trim()
                ? meta.trim()
                : description;
          }
          Object.assign(r, document, { url, title, position });
          for (const [k, v] of Object.entries({ description, snippet, category, date, imageUrl }))
            if (v !== undefined) (r as Record<string, unknown>)[k] = v;
        } catch (err) {
          const code = (err as { code?: unknown }).code;
          failed.push(`${r.url} (${typeof code === 'string' ? code : 'UNKNOWN_ERROR'})`);
        }
      }),
    );
    return {
      credits,
      ...(failed.length ? { warning: `${failed.length} result(s) could not be scraped: ${failed.join(', ')}.` } : {}),
    };
  }
}

/** The backend's answer, or a rejection once the deadline passes (a backend that ignores its signal). */
function withDeadline<T>(work: Promise<T>, deadline: AbortSignal): Promise<T> {
  if (deadline.aborted) return Promise.reject(deadline.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(deadline.reason as Error);
    deadline.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        deadline.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        deadline.removeEventListener('abort', onAbort);
        reject(e as Error);
      },
    );
  });
}
