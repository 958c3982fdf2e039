// One scrape, start to finish: plan, job ledger, credits, cache, engine, transform, store.
// Data flows one way: request → job → engine (or cache) → transform → store → document.
import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { STATUS_CODES } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import { chargeCredits, createBillableJob, creditCosts } from '../billing/credits.ts';
import type { ScrapeDocument, ScrapeRequest } from '../contract/scrape.ts';
import type { Slot, TeamConcurrency } from './team-concurrency.ts';
import type { Db } from '../store/db-types.ts';
import { updateJob } from '../store/jobs.ts';
import { type CachedPage, type PageCacheBatcher, finishScrape, readCachedPage, writeCachedPage } from '../store/pages.ts';
import { storeFile } from '../store/files.ts';
import { readProfile, saveProfile } from '../store/profiles.ts';
import type { Caller } from '../store/teams.ts';
import { cacheKey } from './cache-key.ts';
import type { BrowserEngine, BrowserResponse, StorageState } from './engines/browser.ts';
import type { HttpEngine, HttpResponse } from './engines/http.ts';
import { type PdfParserOptions, convertDocument, documentApiError, markdownTargets } from '../documents/convert.ts';
import { detectContentKind, detectDocument } from '../documents/detect.ts';
import type { ParsePool } from '../documents/parse-pool.ts';
import type { LlmProvider } from '../llm/provider.ts';
import { type AiPage, assignAiOutput, renderAiFormats, wantsAi } from './formats/ai.ts';
import { needsRendering } from './needs-render.ts';
import { PendingWrites } from './pending-writes.ts';
import { trackChanges } from './formats/change-tracking.ts';
import { mediaMinutes, renderMediaFormats } from './formats/media.ts';
import { type MediaCandidate, directMedia, isMediaFile } from './media/discover.ts';
import { Ffmpeg } from './media/ffmpeg.ts';
import { type ScrapePlan, noFormats, planScrape, wantsMedia } from './plan.ts';
import { DEFAULT_MEDIA_CONFIG, type MediaConfig } from '../config.ts';
import { decodeText } from '../documents/charset.ts';
import { transformHtml } from './transform/index.ts';
import { redactDocumentText } from './transform/redact.ts';
import { ApiError, BadRequestError, BrowserUnavailableError, DocumentError, MediaTooLargeError, NotFoundError, ScrapeError, ScrapeTimeoutError, UnsupportedFileError } from '../errors.ts';

export interface ScrapeDeps {
  db: Db;
  http: HttpEngine;
  concurrency: TeamConcurrency;
  maxConcurrency: number;
  log: FastifyBaseLogger;
  /** Renders pages in Chromium; without it (or without Chromium) browser-only requests get 503. */
  browser?: BrowserEngine;
  /** How long stored screenshots and PDFs stay readable. */
  fileTtlMs: number;
  /** Parses documents (PDF, office, EPUB…) off the event loop; without it a document URL is 415. */
  parsePool?: ParsePool;
  /** The AI formats' LLM; without it (or not configured) they take their deterministic paths. */
  llm?: LlmProvider;
  /** LLM_MAX_OUTPUT_TOKENS (bounds the onlyCleanContent pass). */
  llmMaxOutputTokens?: number;
  /** The audio and video formats' limits and ffmpeg (default: the configuration's defaults). */
  media?: MediaConfig;
}

/** Per-request context from the route. */
export interface ScrapeContext {
  /** Base of the URLs of stored screenshots and PDFs (PUBLIC_URL, or the request's own origin). */
  publicUrl: string;
  /** Page-cache access gathered with other scrapes' (crawl pages: src/store/pages.ts PageCacheBatcher); default: one statement each. */
  cache?: Pick<PageCacheBatcher, 'read' | 'write'>;
  /** When the parent's results expire (a crawl's or batch's expiresAt): its files go no later. */
  filesExpireAt?: Date;
  /**
   * Called when the target is to be contacted (not for a cache hit), before the team's slot is
   * taken; what it resolves to is called once the fetch is over. A crawl's per-host politeness
   * turn (src/crawl/politeness.ts): it may throw to put the page back instead.
   */
  beforeFetch?: () => Promise<() => void>;
}

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

/** A response, fresh or from the cache, with how it was obtained. */
interface Source {
  page: CachedPage;
  cacheState: 'hit' | 'miss';
  proxyUsed: 'basic' | 'enhanced';
  /** The engine that fetched it (for a cache hit: the one that fetched the cached copy). */
  engine: 'http' | 'browser';
  /** A browser fetch's own outputs (screenshot, actions). */
  rendered?: BrowserResponse;
  /** The HTML body already decoded to text (by the render check), so it is decoded once. */
  html?: string;
  /** The page-cache write of a fresh copy, under way while the page is transformed. */
  cacheWrite?: Promise<void>;
  /** A media file's body was left unread (the media stage downloads it): never cached. */
  bodySkipped?: boolean;
  warnings: string[];
}

export class Scraper {
  readonly #d: ScrapeDeps;
  readonly #media: MediaConfig;
  readonly #ffmpeg: Ffmpeg;
  /** A single scrape's storage, finishing after its answer (src/scrape/pending-writes.ts says why). */
  readonly pendingWrites = new PendingWrites();

  constructor(deps: ScrapeDeps) {
    this.#d = deps;
    this.#media = deps.media ?? DEFAULT_MEDIA_CONFIG;
    this.#ffmpeg = new Ffmpeg(this.#media);
  }

  async scrape(caller: Caller, req: ScrapeRequest, ctx: ScrapeContext): Promise<ScrapeOutcome> {
    const plan = this.#check(req);
    const { db } = this.#d;
    // Under zero data retention or lockdown the URL is not written anywhere.
    const quiet = req.zeroDataRetention || req.lockdown;
    // The credit check (402) and the job record, in one statement. For a team without a quota
    // (it cannot be refused) it runs while the page is fetched: #produce waits for it before
    // anything refers to the job. A team with a quota is checked first, so that a 402 never
    // contacts the target.
    const jobId = randomUUID();
    const job = createBillableJob(
      db,
      { id: jobId, teamId: caller.teamId, apiKeyId: caller.keyId, endpoint: 'scrape', status: 'active', target: quiet ? null : req.url },
      1,
    );
    job.catch(() => undefined);
    if (caller.creditQuota !== null) await job;
    let produced: Produced;
    try {
      produced = await this.#produce(caller, req, plan, ctx, jobId, jobId, job);
    } catch (err) {
      // No job (402): that is the answer, whatever the fetch did meanwhile.
      await job;
      const code = err instanceof ScrapeError || (err as { code?: string }).code ? (err as { code: string }).code : 'UNKNOWN_ERROR';
      await updateJob(db, jobId, { status: 'failed', error: code }).catch(() => undefined);
      // Under zero data retention or lockdown the URL must not reach the logs through the message.
      if (quiet && err instanceof ScrapeError) throw withoutUrl(err, req.url);
      throw err;
    }
    const { document, credits, cacheWrite } = produced;
    const json = JSON.stringify(document);
    // Charge, stored document and completed job in one statement, after the answer. Lockdown is
    // treated as zero data retention (spec): neither keeps the document.
    const finished = finishScrape(db, { jobId, teamId: caller.teamId, apiKeyId: caller.keyId, credits, json: quiet ? undefined : json }).catch((err: unknown) =>
      this.#d.log.error({ err, jobId }, 'could not store a finished scrape (its answer was sent)'),
    );
    this.pendingWrites.track(cacheWrite ? Promise.all([finished, cacheWrite]).then(() => undefined) : finished, { teamId: caller.teamId, jobId });
    return { document, json, jobId };
  }

  /** Validates a request as POST /v2/scrape would (400 naming the field); returns its plan. */
  check(req: ScrapeRequest): ScrapePlan {
    return this.#check(req);
  }

  /**
   * One page of a parent job (a crawl or batch scrape page): the same pipeline, without a job row
   * of its own, a stored result or a charge. The caller stores the document and charges `credits`
   * (idempotently, once per page). Files (screenshots) belong to the parent job;
   * metadata.scrapeId is a fresh id.
   */
  async scrapeForParent(caller: Caller, req: ScrapeRequest, ctx: ScrapeContext, parentJobId: string): Promise<{ document: ScrapeDocument; credits: number }> {
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
    if (wantsEnhanced && plan.engine.kind === 'browser' && this.#d.browser?.available) {
      // Browser fetches connect directly (through the SSRF guard), never through upstream proxies.
      const message = `proxy "${req.proxy}" cannot be combined with ${plan.engine.reasons.join(', ')} (browser fetches do not use upstream proxies)`;
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
    const deadline = AbortSignal.timeout(req.timeout);
    let slot: Slot | undefined;
    let endTurn: (() => void) | undefined;
    try {
      const key = cacheKey({ url: req.url, mobile: req.mobile, country: req.location?.country, languages: req.location?.languages });
      // The cache is read before the team's slot is taken: a lookup in our own store puts no load
      // on targets or engines, and a crawl's pages then hold their slots only for fetch and transform.
      const cached = await this.#fromCache(req, plan, key, ctx.cache);
      if (!cached) {
        await this.#missAllowed(req, plan, caller, jobId, jobReady);
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
      const source = cached ?? (await this.#obtain(req, plan, caller, key, AbortSignal.any([deadline, refused.signal]), fetched, ctx.cache));
      // Formats that record against the job (LLM usage, change snapshots) wait for its row; the
      // others are rendered while it is written.
      const f = plan.formats;
      if (wantsAi(f) || f.changeTracking) await jobReady;
      const base = req.lockdown ? creditCosts.lockdownHit : source.proxyUsed === 'enhanced' ? creditCosts.enhancedProxy : creditCosts.page;
      const usage = { teamId: caller.teamId, apiKeyId: caller.keyId, jobId };
      const rendered = await this.#render(req, plan, source, scrapeId, base, { deadline, startedAt }, usage);
      await jobReady;
      const { document } = rendered;
      let { credits } = rendered;
      await this.#attachBrowserOutputs(document, source, req, caller, jobId, ctx);
      if (wantsMedia(plan.formats)) {
        credits += await this.#attachMedia(document, rendered.media ?? [], source, req, plan, caller, jobId, ctx, { deadline, startedAt });
        document.metadata.creditsUsed = credits;
      }
      if (slot.waitedMs > 0) {
        document.metadata.concurrencyLimited = true;
        document.metadata.concurrencyQueueDurationMs = slot.waitedMs;
      }
      return { document, credits, ...(source.cacheWrite ? { cacheWrite: source.cacheWrite } : {}) };
    } finally {
      endTurn?.();
      slot?.release();
    }
  }

  /** The cached copy this request accepts, if any (none is read for a personalised or session request). */
  async #fromCache(req: ScrapeRequest, plan: ScrapePlan, key: string, batch?: ScrapeContext['cache']): Promise<Source | undefined> {
    // Caller headers make the page the caller's own; screenshots, actions and profiles need a
    // fresh browser session.
    const personalised = Boolean(req.headers && Object.keys(req.headers).length);
    const needsSession = Boolean(plan.formats.screenshot || plan.formats.branding || req.actions?.length || req.profile);
    if (personalised || needsSession) return undefined;
    // A copy this process is still writing (a scrape answered a moment ago) is waited for.
    if (plan.cache.maxAgeMs > 0) await this.pendingWrites.forCacheKey(key);
    const cached = await (batch ? batch.read(key, plan.cache) : readCachedPage(this.#d.db, key, plan.cache));
    const age = cached ? Date.now() - cached.fetchedAt.getTime() : Infinity;
    if (!cached || age > plan.cache.maxAgeMs || age < plan.cache.minAgeMs) return undefined;
    // The cache is shared by every fragment of a URL: this request's own fragment goes on the
    // final URL, as a browser carries it across redirects.
    const page = { ...cached, finalUrl: withFragment(cached.finalUrl, req.url) };
    return { page, cacheState: 'hit', proxyUsed: 'basic', engine: cached.engine, warnings: [] };
  }

  /** A cache miss ends lockdown and cache-only requests here (404); the others go to the target. */
  async #missAllowed(req: ScrapeRequest, plan: ScrapePlan, caller: Caller, jobId: string, jobReady: Promise<unknown>): Promise<void> {
    if (req.lockdown) {
      await jobReady;
      await chargeCredits(this.#d.db, caller, jobId, creditCosts.lockdownMiss);
      throw new NotFoundError('No cached copy of this page (lockdown serves from the cache only)', 'SCRAPE_LOCKDOWN_CACHE_MISS');
    }
    if (plan.cache.cacheOnly) {
      throw new NotFoundError(`No cached copy of this page at least ${plan.cache.minAgeMs} ms old`, 'SCRAPE_NO_CACHED_DATA');
    }
  }

  /** The page from the target (a cache miss), and its copy into the cache; `fetched` runs once the target is done with. */
  async #obtain(req: ScrapeRequest, plan: ScrapePlan, caller: Caller, key: string, deadline: AbortSignal, fetched: () => void, batch?: ScrapeContext['cache']): Promise<Source> {
    const { db } = this.#d;
    let fresh: Source;
    try {
      fresh = await this.#fetchFresh(req, plan, caller, deadline);
    } finally {
      fetched();
    }
    const { page } = fresh;
    if (plan.cache.store && page.statusCode >= 200 && page.statusCode < 300 && !fresh.bodySkipped) {
      // Stored without fragments: another request for the same page must not inherit this one's.
      const stored = { ...page, url: withoutFragment(page.url), finalUrl: withoutFragment(page.finalUrl) };
      const failed = (err: unknown) => this.#d.log.warn({ err }, 'could not write the page cache');
      // Batched: not waited for (the copy is written within a few ms, with the next ones). Alone:
      // the database writes it (on its own thread with PGlite) while the page is transformed.
      if (batch) batch.write(key, stored).catch(failed);
      else {
        const cacheWrite = writeCachedPage(db, key, stored).catch(failed);
        this.pendingWrites.track(cacheWrite, { teamId: caller.teamId, cacheKey: key });
        return { ...fresh, cacheWrite };
      }
    }
    return fresh;
  }

  // Engine choice (README "Engines"): the browser when the request needs it; otherwise HTTP,
  // upgraded to the browser when the HTML is a shell that only JavaScript fills.
  async #fetchFresh(req: ScrapeRequest, plan: ScrapePlan, caller: Caller, deadline: AbortSignal): Promise<Source> {
    const { browser } = this.#d;
    const warnings: string[] = [];
    if (plan.engine.kind === 'browser') {
      const onlyMobile = plan.engine.reasons.length === 1 && plan.engine.reasons[0] === 'mobile';
      if (browser?.available || !onlyMobile) return this.#renderInBrowser(req, plan, caller, deadline, warnings);
      warnings.push('mobile: Chromium is not installed, so the page was fetched over HTTP with a mobile User-Agent only');
    }
    const { response, proxyUsed } = await this.#fetch(req, plan, deadline);
    const page: CachedPage = {
      url: req.url,
      finalUrl: response.url,
      statusCode: response.status,
      contentType: response.contentType,
      headers: response.headers,
      body: response.body,
      fetchedAt: new Date(),
      engine: 'http',
    };
    const isHtml = /html/i.test(response.contentType) || detectContentKind(response.contentType, response.url, response.body) === 'html';
    const html = isHtml && proxyUsed === 'basic' && browser?.available ? decodeText(response.body, response.contentType, true).text : undefined;
    if (html !== undefined && needsRendering(html)) {
      try {
        return await this.#renderInBrowser(req, plan, caller, deadline, warnings);
      } catch (err) {
        if (deadline.aborted || !(err instanceof ScrapeError)) throw err;
        warnings.push(`the page looks rendered by JavaScript but the browser failed (${err.code}); the served HTML was used`);
      }
    }
    return { page, cacheState: 'miss', proxyUsed, engine: 'http', html, warnings, ...(response.bodySkipped ? { bodySkipped: true } : {}) };
  }

  async #renderInBrowser(req: ScrapeRequest, plan: ScrapePlan, caller: Caller, deadline: AbortSignal, warnings: string[]): Promise<Source> {
    const { browser, db } = this.#d;
    if (!browser) throw new BrowserUnavailableError(`${plan.engine.reasons.join(', ') || 'rendering'} needs the browser engine, which this process does not run`);
    const profile = req.profile ? await readProfile(db, caller.teamId, req.profile.name) : undefined;
    const saveProfileState = Boolean(req.profile && req.profile.saveChanges !== false);
    const res = await browser.fetch({
      url: req.url,
      headers: req.headers,
      timeoutMs: req.timeout,
      signal: deadline,
      skipTlsVerification: req.skipTlsVerification,
      mobile: req.mobile,
      location: req.location,
      waitForMs: req.waitFor,
      blockAds: req.blockAds,
      actions: req.actions,
      screenshot: plan.formats.screenshot,
      branding: plan.formats.branding,
      storageState: profile?.state as StorageState | undefined,
      saveStorageState: saveProfileState,
    });
    if (req.profile && res.storageState && saveProfileState) await saveProfile(db, caller.teamId, req.profile.name, res.storageState);
    const page: CachedPage = {
      url: req.url,
      finalUrl: res.url,
      statusCode: res.status,
      contentType: res.contentType,
      headers: res.headers,
      // The rendered DOM (UTF-8), or the raw bytes of a non-HTML answer.
      body: res.body ?? Buffer.from(res.html, 'utf8'),
      fetchedAt: new Date(),
      engine: res.body ? 'http' : 'browser',
    };
    return { page, cacheState: 'miss', proxyUsed: 'basic', engine: 'browser', rendered: res, warnings };
  }

  // Screenshots and action PDFs become URLs of our own file route (data: URLs under zero data
  // retention, where nothing is stored); action scrapes and script returns go in as they are.
  async #attachBrowserOutputs(doc: ScrapeDocument, source: Source, req: ScrapeRequest, caller: Caller, jobId: string, ctx: ScrapeContext): Promise<void> {
    const r = source.rendered;
    if (!r) return;
    const keep = async (data: Buffer, type: string, ext: string): Promise<string> => {
      if (req.zeroDataRetention || req.lockdown) return `data:${type};base64,${data.toString('base64')}`;
      return this.#storeFile(caller, jobId, ctx, data, type, ext);
    };
    const image = (s: { data: Buffer; type: 'png' | 'jpeg' }) => keep(s.data, `image/${s.type}`, s.type === 'jpeg' ? 'jpg' : 'png');
    if (r.screenshot) doc.screenshot = await image(r.screenshot);
    if (req.actions?.length) {
      doc.actions = {
        screenshots: await Promise.all(r.actions.screenshots.map(image)),
        scrapes: r.actions.scrapes,
        javascriptReturns: r.actions.javascriptReturns,
        pdfs: await Promise.all(r.actions.pdfs.map((p) => keep(p, 'application/pdf', 'pdf'))),
      };
    }
  }

  /**
   * Stores a binary output under the job for FILE_TTL_HOURS, or until the parent's results expire
   * if sooner; resolves to its URL on our file route.
   */
  async #storeFile(caller: Caller, jobId: string, ctx: ScrapeContext, data: Buffer | { path: string }, contentType: string, ext: string): Promise<string> {
    const id = await storeFile(this.#d.db, { teamId: caller.teamId, jobId, contentType, data, ttlMs: this.#d.fileTtlMs, notAfter: ctx.filesExpireAt });
    return `${ctx.publicUrl}/v2/files/${id}.${ext}`;
  }

  /**
   * The audio and video formats (src/scrape/formats/media.ts): the media is downloaded through the
   * HTTP engine (SSRF guard, MEDIA_MAX_BYTES, the scrape's deadline) into a directory of this
   * scrape's own, removed afterwards, and each output becomes a URL of our file route — or a
   * data: URL of at most MEDIA_ZDR_MAX_BYTES under zero data retention, where nothing is stored.
   * Resolves to the credits: one per started minute of each output.
   */
  async #attachMedia(
    doc: ScrapeDocument,
    candidates: MediaCandidate[],
    source: Source,
    req: ScrapeRequest,
    plan: ScrapePlan,
    caller: Caller,
    jobId: string,
    ctx: ScrapeContext,
    time: { deadline: AbortSignal; startedAt: number },
  ): Promise<number> {
    const limits = this.#media;
    const keep = async (file: { path: string; size: number; mimeType: string; ext: string; sourceUrl: string }): Promise<string> => {
      if (req.zeroDataRetention) {
        if (file.size > limits.zdrMaxBytes) throw new MediaTooLargeError(file.sourceUrl, limits.zdrMaxBytes, 'MEDIA_ZDR_MAX_BYTES');
        return `data:${file.mimeType};base64,${(await readFile(file.path)).toString('base64')}`;
      }
      // Stored from the file a chunk at a time (src/store/files.ts): a 100 MiB video never sits in memory whole.
      return this.#storeFile(caller, jobId, ctx, { path: file.path }, file.mimeType, file.ext);
    };
    const dir = await mkdtemp(join(tmpdir(), 'gleaner-media-'));
    try {
      const wantsEnhanced = req.proxy === 'enhanced' || req.proxy === 'stealth';
      const result = await renderMediaFormats({ video: plan.formats.video, audio: plan.formats.audio }, candidates, {
        http: this.#d.http,
        ffmpeg: this.#ffmpeg,
        dir,
        keep,
        signal: time.deadline,
        deadlineAt: time.startedAt + req.timeout,
        maxBytes: limits.maxBytes,
        pageUrl: source.page.finalUrl,
        headers: req.headers,
        proxy: wantsEnhanced ? 'enhanced' : source.proxyUsed,
        skipTlsVerification: req.skipTlsVerification,
        mobile: req.mobile,
        languages: req.location?.languages,
      });
      for (const format of ['video', 'audio'] as const) {
        const m = result[format];
        if (!m) continue;
        doc[format] = m.url;
        doc.metadata[`${format}SourceURL`] = m.sourceUrl;
        doc.metadata[`${format}MimeType`] = m.mimeType;
        doc.metadata[`${format}Size`] = m.size;
        if (m.duration !== undefined) doc.metadata[`${format}Duration`] = Math.round(m.duration * 1000) / 1000;
      }
      if (result.warnings.length) doc.warning = [doc.warning, ...result.warnings].filter(Boolean).join('; ');
      return mediaMinutes(result.video) + mediaMinutes(result.audio);
    } catch (err) {
      if (time.deadline.aborted) throw new ScrapeTimeoutError(req.timeout, req.url);
      throw err;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }

  // proxy: basic → PROXY_URL or direct; enhanced/stealth → PROXY_ENHANCED_URL; auto → basic,
  // then enhanced when the target refused us and an enhanced proxy is configured.
  async #fetch(req: ScrapeRequest, plan: ScrapePlan, deadline: AbortSignal): Promise<{ response: HttpResponse; proxyUsed: 'basic' | 'enhanced' }> {
    const { http } = this.#d;
    const base = {
      url: req.url,
      headers: req.headers,
      timeoutMs: req.timeout,
      skipTlsVerification: req.skipTlsVerification,
      mobile: req.mobile,
      languages: req.location?.languages,
      signal: deadline,
      // A media URL asked for audio/video: the media stage downloads it under its own cap.
      ...(wantsMedia(plan.formats) ? { skipBody: isMediaFile } : {}),
    };
    const wantsEnhanced = req.proxy === 'enhanced' || req.proxy === 'stealth';
    const response = await http.fetch({ ...base, proxy: wantsEnhanced ? 'enhanced' : 'basic' });
    if (req.proxy === 'auto' && http.hasEnhancedProxy && looksBlocked(response)) {
      const retry = await http.fetch({ ...base, proxy: 'enhanced' }).catch(() => undefined);
      if (retry && !looksBlocked(retry)) return { response: retry, proxyUsed: 'enhanced' };
    }
    return { response, proxyUsed: wantsEnhanced ? 'enhanced' : 'basic' };
  }

  async #render(
    req: ScrapeRequest,
    plan: ScrapePlan,
    source: Source,
    jobId: string,
    baseCredits: number,
    time: { deadline: AbortSignal; startedAt: number },
    usage: { teamId: string; apiKeyId: string | null; jobId: string },
  ): Promise<{ document: ScrapeDocument; credits: number; media?: MediaCandidate[] }> {
    const { page } = source;
    let structured: AiPage['structured'];
    let media: MediaCandidate[] | undefined;
    let credits = baseCredits;
    const f = plan.formats;
    // A media file (by type, or by its bytes under application/octet-stream) is the media
    // formats' own; its body may be only its first bytes (left unread by the engine).
    const kind = wantsMedia(f) && isMediaFile(page.contentType, page.body) ? 'media' : detectContentKind(page.contentType, page.finalUrl, page.body);
    const base = {
      sourceURL: req.url,
      url: page.finalUrl,
      statusCode: page.statusCode,
      contentType: page.contentType,
    };
    const doc: ScrapeDocument = { metadata: { ...base } };
    const warnings: string[] = [...source.warnings];
    if (f.rawBase64) {
      doc.rawBase64 = page.body.toString('base64');
    } else if (kind === 'html' || kind === 'xml' || kind === 'text' || kind === 'json') {
      // A rendered DOM is UTF-8 whatever charset the target declared.
      const text =
        kind === 'html' && source.html !== undefined
          ? source.html
          : decodeText(page.body, page.engine === 'browser' ? 'text/html; charset=utf-8' : page.contentType, kind === 'html').text;
      if (f.rawHtml) doc.rawHtml = text;
      if (kind === 'html') {
        const out = transformHtml({
          html: text,
          ...base,
          onlyMainContent: req.onlyMainContent,
          includeTags: req.includeTags,
          excludeTags: req.excludeTags,
          blockAds: req.blockAds,
          removeBase64Images: req.removeBase64Images,
          formats: f,
        });
        doc.metadata = { ...out.metadata, ...base };
        if (out.markdown !== undefined) doc.markdown = out.markdown;
        if (out.html !== undefined) doc.html = out.html;
        if (out.links) doc.links = out.links;
        if (out.images) doc.images = out.images;
        if (out.attributes) doc.attributes = out.attributes;
        structured = out.structured;
        media = out.media;
      } else {
        // Plain text, JSON and XML are their own markdown (JSON and XML fenced).
        doc.markdown = kind === 'text' ? text.trim() : `\`\`\`${kind}\n${text.trim()}\n\`\`\``;
        if (f.html) doc.html = `<pre>${escapeHtml(text)}</pre>`;
        if (f.links) doc.links = [];
        if (f.images) doc.images = [];
        if (f.attributes) doc.attributes = f.attributes.map((a) => ({ ...a, values: [] }));
      }
    } else if (kind === 'pdf' || kind === 'document' || kind === 'binary') {
      credits += await this.#renderDocument(doc, req, plan, page, warnings, time);
    } else if (kind === 'media' && wantsMedia(f)) {
      // The URL is the media itself: only the media formats exist for it.
      const others = [
        f.markdown && 'markdown',
        f.html && 'html',
        f.rawHtml && 'rawHtml',
        f.links && 'links',
        f.images && 'images',
        f.attributes && 'attributes',
        wantsAi(f) && 'the AI formats',
        f.changeTracking && 'changeTracking',
        f.branding && 'branding',
      ].filter(Boolean);
      if (others.length) warnings.push(`${others.join(', ')}: not available for a media file (${page.contentType})`);
    } else {
      throw new UnsupportedFileError(`${page.contentType || 'unknown'} (${kind}); request format "rawBase64" to receive the bytes`);
    }

    if (doc.markdown !== undefined && req.redactPII) {
      const r = redactDocumentText(doc.markdown, doc.pages, req.redactPII);
      doc.markdown = r.markdown;
      if (r.pages) doc.pages = r.pages;
      if (r.warning) warnings.push(r.warning);
    }
    if (wantsMedia(f) && kind !== 'html') {
      const direct = directMedia(page.finalUrl, page.contentType, page.body);
      media = direct ? [direct] : [];
    }
    if (wantsAi(f) && kind !== 'media') {
      let ai;
      try {
        ai = await renderAiFormats(
          f,
          { markdown: doc.markdown ?? '', url: page.finalUrl, structured, metadata: doc.metadata },
          { llm: this.#d.llm, usage, signal: time.deadline, maxOutputTokens: this.#d.llmMaxOutputTokens },
        );
      } catch (err) {
        if (time.deadline.aborted) throw new ScrapeTimeoutError(req.timeout, req.url);
        throw err;
      }
      if (doc.markdown !== undefined) doc.markdown = ai.markdown;
      assignAiOutput(doc, ai);
      warnings.push(...ai.warnings);
    }
    if (f.changeTracking && kind !== 'media') doc.changeTracking = await this.#trackChanges(f.changeTracking, doc, req, page, structured, usage, time.deadline, warnings);
    if (f.branding) {
      if (source.rendered?.branding) doc.branding = source.rendered.branding;
      else warnings.push('branding: the page could not be read in the browser (not an HTML page?), so no branding was extracted');
    }
    if (!f.markdown) delete doc.markdown;

    if (page.statusCode >= 400) doc.metadata.error = `${page.statusCode} ${STATUS_CODES[page.statusCode] ?? 'error'}`;
    doc.metadata.scrapeId = jobId;
    doc.metadata.proxyUsed = source.proxyUsed;
    doc.metadata.cacheState = source.cacheState;
    if (source.cacheState === 'hit') doc.metadata.cachedAt = page.fetchedAt.toISOString();
    doc.metadata.creditsUsed = credits;
    doc.metadata.engine = source.engine;
    if (warnings.length) doc.warning = warnings.join('; ');
    return { document: doc, credits, ...(media ? { media } : {}) };
  }

  /**
   * changeTracking: this page against the team's previous scrape of the URL (per tag); json mode
   * extracts the current values with the format's schema/prompt (LLM, or deterministically) and
   * compares them with the stored ones. `diff` is the git-style text diff (spec: a string).
   */
  async #trackChanges(
    ct: NonNullable<ScrapePlan['formats']['changeTracking']>,
    doc: ScrapeDocument,
    req: ScrapeRequest,
    page: CachedPage,
    structured: AiPage['structured'],
    usage: { teamId: string; apiKeyId: string | null; jobId: string },
    deadline: AbortSignal,
    warnings: string[],
  ): Promise<NonNullable<ScrapeDocument['changeTracking']>> {
    let json: unknown;
    if (ct.modes.includes('json')) {
      const ai = await renderAiFormats(
        { ...noFormats(), json: { ...(ct.schema ? { schema: ct.schema } : {}), ...(ct.prompt ? { prompt: ct.prompt } : {}) } },
        { markdown: doc.markdown ?? '', url: page.finalUrl, structured, metadata: doc.metadata },
        { llm: this.#d.llm, usage, signal: deadline, maxOutputTokens: this.#d.llmMaxOutputTokens },
      );
      json = ai.json;
      warnings.push(...ai.warnings.map((w) => `changeTracking ${w}`));
    }
    const t = await trackChanges({
      db: this.#d.db,
      teamId: usage.teamId,
      url: req.url,
      tag: ct.tag,
      markdown: doc.markdown ?? '',
      statusCode: page.statusCode,
      modes: ct.modes,
      json,
      scrapedAt: page.fetchedAt,
    });
    return {
      previousScrapeAt: t.previousScrapeAt,
      changeStatus: t.changeStatus,
      visibility: t.visibility,
      ...(t.diff ? { diff: t.diff.text } : {}),
      ...(t.json ? { json: t.json } : {}),
    };
  }

  /**
   * A document (PDF, office, EPUB, CSV…) through the parsers, in the worker pool: markdown (and
   * pages/blocks when `parsers` asks), its metadata, links/images from the markdown. `parsers: []`
   * leaves a PDF unconverted: the bytes come back in rawBase64 for the page's flat cost. Resolves
   * to the credits beyond the page's own: a PDF costs one per page converted.
   */
  async #renderDocument(
    doc: ScrapeDocument,
    req: ScrapeRequest,
    plan: ScrapePlan,
    page: CachedPage,
    warnings: string[],
    time: { deadline: AbortSignal; startedAt: number },
  ): Promise<number> {
    const f = plan.formats;
    const detection = detectDocument(page.body, { contentType: page.contentType, fileName: new URL(page.finalUrl).pathname });
    if (detection.encrypted) throw new ApiError('DOCUMENT_ENCRYPTED', `The file is a ${detection.type}; it cannot be read without its password`);
    const kind = detection.kind;
    if (!kind || kind === 'html') throw new UnsupportedFileError(`${detection.type}; request format "rawBase64" to receive the bytes`);
    const pdfEntry = req.parsers?.find((p) => p === 'pdf' || (typeof p !== 'string' && p.type === 'pdf'));
    if (kind === 'pdf' && req.parsers !== undefined && !pdfEntry) {
      // parsers: [] — the PDF itself, base64-encoded, unconverted.
      doc.rawBase64 = page.body.toString('base64');
      if (f.markdown || f.summary || f.links || f.images) warnings.push('parsers: [] returns the PDF base64-encoded in rawBase64, unconverted');
      return 0;
    }
    if (!this.#d.parsePool) throw new UnsupportedFileError(`${detection.type}: document parsing is not available in this process`);
    const parser: PdfParserOptions = pdfEntry && typeof pdfEntry !== 'string' ? pdfEntry : {};
    const remaining = Math.max(1, req.timeout - (Date.now() - time.startedAt));
    let converted;
    try {
      // A copy: the bytes are transferred to the worker, and the page may be the cached one.
      converted = await convertDocument(this.#d.parsePool, new Uint8Array(page.body), kind, parser, remaining, time.deadline);
    } catch (err) {
      if (err instanceof DocumentError) throw documentApiError(err, { unsupported: 'SCRAPE_UNSUPPORTED_FILE_ERROR', timeout: 'SCRAPE_TIMEOUT' });
      throw err;
    }
    Object.assign(doc.metadata, converted.metadata);
    warnings.push(...converted.warnings);
    doc.markdown = converted.markdown;
    if (converted.pages && parser.pages) doc.pages = converted.pages;
    if (converted.blocks) doc.blocks = converted.blocks;
    const targets = markdownTargets(converted.markdown);
    if (f.links) doc.links = targets.links;
    if (f.images) doc.images = targets.images;
    const htmlOnly = [f.html && 'html', f.rawHtml && 'rawHtml', f.attributes && 'attributes'].filter(Boolean);
    if (htmlOnly.length) warnings.push(`${htmlOnly.join(', ')}: not available for a ${kind} document (its markdown is returned)`);
    return converted.credits - 1;
  }
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

function escapeHtml(s: string): string {
  return s.replace(/[&<>]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : '&gt;'));
}

// A refusal rather than the page: bot walls answer 403/429/503, often with a challenge page.
function looksBlocked(r: HttpResponse): boolean {
  if (r.status === 403 || r.status === 429) return true;
  if (r.status !== 503 && r.status !== 200) return false;
  const head = r.body.subarray(0, 4096).toString('latin1');
  return /cf-chl|challenge-platform|captcha|Just a moment\.\.\.|Attention Required/i.test(head);
}
