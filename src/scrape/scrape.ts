// One scrape, start to finish: plan, job ledger, credits, cache, engine, transform, store.
// Data flows one way: request → job → engine (or cache) → transform → store → document.
// The class Scraper runs the steps in order; each step lives in its own module (docs/design/scrape.md).
import { randomUUID } from 'node:crypto';
import { creditCosts } from '../billing/credits.ts';
import type { ScrapeDocument, ScrapeRequest } from '../contract/scrape.ts';
import { DEFAULT_MEDIA_CONFIG } from '../config.ts';
import { BadRequestError, ScrapeTimeoutError } from '../errors.ts';
import { blockedTarget, refuseBlockedTarget } from '../net/ssrf.ts';
import { timeoutSignal } from '../net/timeout.ts';
import type { SearchEntry } from '../store/search-index.ts';
import type { SearchIndexer } from '../store/search-indexer.ts';
import type { Caller } from '../store/teams.ts';
import { assembleDocument } from './assemble.ts';
import { attachBrowserOutputs, attachMedia, type MediaTools } from './attachments.ts';
import { cacheKey } from './cache-key.ts';
import { wantsAi } from './formats/ai.ts';
import { Ffmpeg } from './media/ffmpeg.ts';
import { cacheFreshPage, readCachedSource, refuseCacheMiss } from './page-cache.ts';
import { fetchFresh, type Source } from './page-source.ts';
import { PendingWrites } from './pending-writes.ts';
import { type ScrapePlan, planScrape, wantsMedia } from './plan.ts';
import { scrapeReplay } from './replay.ts';
import { searchEntryOf } from './search-entry.ts';
import type { ScrapeContext, ScrapeDeps } from './scrape-deps.ts';
import { failScrapeJob, finishScrapeJob, openScrapeJob } from './scrape-job.ts';
import type { Slot } from './team-concurrency.ts';

export interface ScrapeOutcome {
  document: ScrapeDocument;
  /** The document as JSON text, made once: stored, and spliced into the answer (src/api/routes/scrape.ts). */
  json: string;
  jobId: string;
}

/** What #produce made: the document, its credits, and the page-cache write still under way. */
interface Produced {
  document: ScrapeDocument;
  credits: number;
  cacheWrite?: Promise<void>;
}

export class Scraper {
  readonly #d: ScrapeDeps;
  readonly #media: MediaTools;
  /** A single scrape's storage, finishing after its answer (src/scrape/pending-writes.ts says why). */
  readonly pendingWrites = new PendingWrites();

  constructor(deps: ScrapeDeps) {
    this.#d = deps;
    const limits = deps.media ?? DEFAULT_MEDIA_CONFIG;
    this.#media = { limits, ffmpeg: new Ffmpeg(limits) };
  }

  async scrape(caller: Caller, req: ScrapeRequest, ctx: ScrapeContext): Promise<ScrapeOutcome> {
    this.refuseBlockedTarget(req.url, 'url');
    const plan = this.#check(req);
    const { db } = this.#d;
    // Under zero data retention or lockdown the URL is not written anywhere.
    const quiet = req.zeroDataRetention || req.lockdown;
    // The credit check (402) and the job record, in one statement. For a team without a quota
    // (it cannot be refused) it runs while the page is fetched: #produce waits for it before
    // anything refers to the job. A team with a quota is checked first, so that a 402 never
    // contacts the target.
    const jobId = randomUUID();
    const job = openScrapeJob(db, caller, req, jobId, quiet);
    job.catch(() => undefined);
    if (caller.creditQuota !== null) await job;
    let produced: Produced;
    try {
      produced = await this.#produce(caller, req, plan, ctx, jobId, jobId, job);
    } catch (err) {
      // No job (402): that is the answer, whatever the fetch did meanwhile.
      await job;
      throw await failScrapeJob(db, jobId, err, quiet, req.url);
    }
    const { document, credits, cacheWrite } = produced;
    const json = JSON.stringify(document);
    // Lockdown is treated as zero data retention (spec): neither keeps the document nor its replay.
    const kept = quiet
      ? undefined
      : { json, replay: JSON.stringify(scrapeReplay(req)), searchEntry: this.#searchEntryOf(document) };
    finishScrapeJob(this.#d, this.pendingWrites, caller, jobId, credits, kept, cacheWrite);
    return { document, json, jobId };
  }

  /** The own search index's background step (GLEANER_SEARCH_INDEX; none when off): stored pages are queued for it. */
  get searchIndexer(): SearchIndexer | undefined {
    return this.#d.searchIndexer;
  }

  /** The document's search index entry (src/scrape/search-entry.ts), when indexing is on. */
  #searchEntryOf(document: ScrapeDocument): SearchEntry | undefined {
    return this.#d.searchIndexer ? searchEntryOf(document) : undefined;
  }

  /** Validates a request as POST /v2/scrape would (400 naming the field); returns its plan. */
  check(req: ScrapeRequest): ScrapePlan {
    return this.#check(req);
  }

  /**
   * The SSRF policy at the request, before any job exists: a target named by the body's `field`
   * whose host is a blocked address literal or a localhost name is a 403 SCRAPE_BLOCKED_URL.
   */
  refuseBlockedTarget(url: string, field: string): void {
    refuseBlockedTarget(url, field, this.#d.http.targetPolicy);
  }

  /** Whether refuseBlockedTarget would refuse url (batch and extract list such URLs with ignoreInvalidURLs). */
  isBlockedTarget(url: string): boolean {
    return blockedTarget(url, this.#d.http.targetPolicy) !== null;
  }

  /**
   * One page of a parent job (a crawl or batch scrape page): the same pipeline, without a job row
   * of its own, a stored result or a charge. The caller stores the document and charges `credits`
   * (idempotently, once per page). Files (screenshots) belong to the parent job;
   * metadata.scrapeId is a fresh id.
   */
  async scrapeForParent(
    caller: Caller,
    req: ScrapeRequest,
    ctx: ScrapeContext,
    parentJobId: string,
  ): Promise<{ document: ScrapeDocument; credits: number }> {
    const plan = this.#check(req);
    const { document, credits, cacheWrite } = await this.#produce(caller, req, plan, ctx, parentJobId, randomUUID());
    await cacheWrite;
    return { document, credits };
  }

  #check(req: ScrapeRequest): ScrapePlan {
    const plan = planScrape(req);
    const wantsEnhanced = req.proxy === 'enhanced' || req.proxy === 'stealth';
    if (wantsEnhanced && !this.#d.http.hasEnhancedProxy) {
      // Refused before any job exists or credit is checked, like every other invalid option.
      const message = `proxy "${req.proxy}" needs PROXY_ENHANCED_URL to be configured`;
      throw new BadRequestError(`Invalid request: body.proxy: ${message}`, [{ path: 'body.proxy', message }]);
    }
    return plan;
  }

  /**
   * Slot, source, document: `jobId` owns charges and files, `scrapeId` goes in the metadata.
   * `jobReady` settles once the job row exists (a 402 rejects it): the fetch goes on meanwhile,
   * nothing that refers to the job does.
   */
  async #produce(
    caller: Caller,
    req: ScrapeRequest,
    plan: ScrapePlan,
    ctx: ScrapeContext,
    jobId: string,
    scrapeId: string,
    jobReady: Promise<unknown> = Promise.resolve(),
  ): Promise<Produced> {
    const startedAt = Date.now();
    const timeout = timeoutSignal(req.timeout);
    const deadline = timeout.signal;
    let slot: Slot | undefined;
    let endTurn: (() => void) | undefined;
    try {
      const key = cacheKey({
        url: req.url,
        mobile: req.mobile,
        country: req.location?.country,
        languages: req.location?.languages,
      });
      // The cache is read before the team's slot is taken: a lookup in our own store puts no load
      // on targets or engines, and a crawl's pages then hold their slots only for fetch and transform.
      const cached = await readCachedSource(this.#d, this.pendingWrites, req, plan, key, ctx.cache);
      if (!cached) {
        await refuseCacheMiss(this.#d, req, plan, caller, jobId, jobReady);
        // A crawl page's turn for its host, before the team's slot: a page that waits for its
        // turn holds nothing the team's other work could use.
        endTurn = await ctx.beforeFetch?.();
      }
      // Waiting for a free slot counts against the timeout; a wait that runs out fails the job
      // like any other timeout (it must not stay "active").
      slot = await this.#d.concurrency.acquire(caller.teamId, this.#d.maxConcurrency, deadline).catch(() => {
        throw new ScrapeTimeoutError(req.timeout, req.url);
      });
      // A 402 ends the fetch at once (its error is dropped: the 402 is the answer).
      const refused = new AbortController();
      jobReady.catch(() => refused.abort());
      const fetched = () => {
        endTurn?.();
        endTurn = undefined;
      };
      const source =
        cached ??
        (await this.#obtain(req, plan, caller, key, AbortSignal.any([deadline, refused.signal]), fetched, ctx.cache));
      // Formats that record against the job (LLM usage, change snapshots) wait for its row; the
      // others are rendered while it is written.
      const f = plan.formats;
      if (wantsAi(f) || f.changeTracking) await jobReady;
      const base = req.lockdown
        ? creditCosts.lockdownHit
        : source.proxyUsed === 'enhanced'
          ? creditCosts.enhancedProxy
          : creditCosts.page;
      const usage = { teamId: caller.teamId, apiKeyId: caller.keyId, jobId };
      const rendered = await assembleDocument(
        this.#d,
        req,
        plan,
        source,
        scrapeId,
        base,
        { deadline, startedAt },
        usage,
      );
      await jobReady;
      const { document } = rendered;
      let { credits } = rendered;
      await attachBrowserOutputs(this.#d, document, source, req, caller, jobId, ctx);
      if (wantsMedia(plan.formats)) {
        credits += await attachMedia(
          this.#d,
          this.#media,
          document,
          rendered.media ?? [],
          source,
          req,
          plan,
          caller,
          jobId,
          ctx,
          { deadline, startedAt },
        );
        document.metadata.creditsUsed = credits;
      }
      if (slot.waitedMs > 0) {
        document.metadata.concurrencyLimited = true;
        document.metadata.concurrencyQueueDurationMs = slot.waitedMs;
      }
      return { document, credits, ...(source.cacheWrite ? { cacheWrite: source.cacheWrite } : {}) };
    } finally {
      timeout.clear();
      endTurn?.();
      slot?.release();
    }
  }

  /** The page from the target (a cache miss), and its copy into the cache; `fetched` runs once the target is done with. */
  async #obtain(
    req: ScrapeRequest,
    plan: ScrapePlan,
    caller: Caller,
    key: string,
    deadline: AbortSignal,
    fetched: () => void,
    batch?: ScrapeContext['cache'],
  ): Promise<Source> {
    let fresh: Source;
    try {
      fresh = await fetchFresh(this.#d, req, plan, caller, deadline);
    } finally {
      fetched();
    }
    return cacheFreshPage(this.#d, this.pendingWrites, caller, plan, key, fresh, batch);
  }
}
