// One scrape, start to finish: plan, job ledger, credits, cache, engine, transform, store.
// Data flows one way: request → job → engine (or cache) → transform → store → document.
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { BadRequestError, NotFoundError } from '../api/errors.ts';
import { chargeCredits, createBillableJob, creditCosts } from '../billing/credits.ts';
import type { ScrapeDocument, ScrapeRequest } from '../contract/scrape.ts';
import type { Slot, TeamConcurrency } from '../jobs/concurrency.ts';
import type { Db } from '../store/db.ts';
import { updateJob } from '../store/jobs.ts';
import { type CachedPage, type PageCacheBatcher, finishScrape, readCachedPage, writeCachedPage } from '../store/pages.ts';
import { storeFile } from '../store/files.ts';
import { readProfile, saveProfile } from '../store/profiles.ts';
import type { Caller } from '../store/teams.ts';
import { cacheKey } from './cache-key.ts';
import type { BrowserEngine, BrowserResponse, StorageState } from './engines/browser.ts';
import type { HttpEngine, HttpResponse } from './engines/http.ts';
import { BrowserUnavailableError, ScrapeError, ScrapeTimeoutError, UnsupportedFileError } from './errors.ts';
import { extractiveSummary } from './formats/summary.ts';
import { needsRendering } from './needs-render.ts';
import { type ScrapePlan, planScrape } from './plan.ts';
import { detectContentKind, decodeText } from './transform/decode.ts';
import { transformHtml } from './transform/index.ts';
import { redactPII } from './transform/redact.ts';

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
}

/** Per-request context from the route. */
export interface ScrapeContext {
  /** Base of the URLs of stored screenshots and PDFs (PUBLIC_URL, or the request's own origin). */
  publicUrl: string;
  /** Page-cache access gathered with other scrapes' (crawl pages: src/store/pages.ts PageCacheBatcher); default: one statement each. */
  cache?: Pick<PageCacheBatcher, 'read' | 'write'>;
}

export interface ScrapeOutcome {
  document: ScrapeDocument;
  jobId: string;
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
  warnings: string[];
}

export class Scraper {
  readonly #d: ScrapeDeps;

  constructor(deps: ScrapeDeps) {
    this.#d = deps;
  }

  async scrape(caller: Caller, req: ScrapeRequest, ctx: ScrapeContext): Promise<ScrapeOutcome> {
    const plan = this.#check(req);
    const { db } = this.#d;
    // Under zero data retention or lockdown the URL is not written anywhere.
    const quiet = req.zeroDataRetention || req.lockdown;
    // The credit check (402) and the job record, in one statement.
    const job = await createBillableJob(
      db,
      { teamId: caller.teamId, apiKeyId: caller.keyId, endpoint: 'scrape', status: 'active', target: quiet ? null : req.url },
      1,
    );
    try {
      const { document, credits } = await this.#produce(caller, req, plan, ctx, job.id, job.id);
      // Charge, stored document and completed job in one statement. Lockdown is treated as zero
      // data retention (spec): neither keeps the document.
      await finishScrape(db, { jobId: job.id, teamId: caller.teamId, apiKeyId: caller.keyId, credits, document: quiet ? undefined : document });
      return { document, jobId: job.id };
    } catch (err) {
      const code = err instanceof ScrapeError || (err as { code?: string }).code ? (err as { code: string }).code : 'UNKNOWN_ERROR';
      await updateJob(db, job.id, { status: 'failed', error: code }).catch(() => undefined);
      // Under zero data retention or lockdown the URL must not reach the logs through the message.
      if (quiet && err instanceof ScrapeError) throw withoutUrl(err, req.url);
      throw err;
    }
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
    return this.#produce(caller, req, plan, ctx, parentJobId, randomUUID());
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

  /** Slot, source, document: `jobId` owns charges and files, `scrapeId` goes in the metadata. */
  async #produce(
    caller: Caller,
    req: ScrapeRequest,
    plan: ScrapePlan,
    ctx: ScrapeContext,
    jobId: string,
    scrapeId: string,
  ): Promise<{ document: ScrapeDocument; credits: number }> {
    const deadline = AbortSignal.timeout(req.timeout);
    let slot: Slot | undefined;
    try {
      // Waiting for a free slot counts against the timeout; a wait that runs out fails the job
      // like any other timeout (it must not stay "active").
      slot = await this.#d.concurrency.acquire(caller.teamId, this.#d.maxConcurrency, deadline).catch(() => {
        throw new ScrapeTimeoutError(req.timeout, req.url);
      });
      const source = await this.#obtain(req, plan, caller, jobId, deadline, ctx.cache);
      const credits = req.lockdown ? creditCosts.lockdownHit : source.proxyUsed === 'enhanced' ? creditCosts.enhancedProxy : creditCosts.page;
      const document = this.#render(req, plan, source, scrapeId, credits);
      await this.#attachBrowserOutputs(document, source, req, caller, jobId, ctx);
      if (slot.waitedMs > 0) {
        document.metadata.concurrencyLimited = true;
        document.metadata.concurrencyQueueDurationMs = slot.waitedMs;
      }
      return { document, credits };
    } finally {
      slot?.release();
    }
  }

  async #obtain(req: ScrapeRequest, plan: ScrapePlan, caller: Caller, jobId: string, deadline: AbortSignal, batch?: ScrapeContext['cache']): Promise<Source> {
    const { db } = this.#d;
    const key = cacheKey({ url: req.url, mobile: req.mobile, country: req.location?.country, languages: req.location?.languages });
    // Caller headers make the page the caller's own; screenshots, actions and profiles need a
    // fresh browser session.
    const personalised = Boolean(req.headers && Object.keys(req.headers).length);
    const needsSession = Boolean(plan.formats.screenshot || req.actions?.length || req.profile);
    if (!personalised && !needsSession) {
      const cached = await (batch ? batch.read(key, plan.cache) : readCachedPage(db, key, plan.cache));
      const age = cached ? Date.now() - cached.fetchedAt.getTime() : Infinity;
      if (cached && age <= plan.cache.maxAgeMs && age >= plan.cache.minAgeMs) {
        // The cache is shared by every fragment of a URL: this request's own fragment goes on the
        // final URL, as a browser carries it across redirects.
        const page = { ...cached, finalUrl: withFragment(cached.finalUrl, req.url) };
        return { page, cacheState: 'hit', proxyUsed: 'basic', engine: cached.engine, warnings: [] };
      }
    }
    if (req.lockdown) {
      await chargeCredits(db, caller, jobId, creditCosts.lockdownMiss);
      throw new NotFoundError('No cached copy of this page (lockdown serves from the cache only)', 'SCRAPE_LOCKDOWN_CACHE_MISS');
    }
    if (plan.cache.cacheOnly) {
      throw new NotFoundError(`No cached copy of this page at least ${plan.cache.minAgeMs} ms old`, 'SCRAPE_NO_CACHED_DATA');
    }
    const fresh = await this.#fetchFresh(req, plan, caller, deadline);
    const { page } = fresh;
    if (plan.cache.store && page.statusCode >= 200 && page.statusCode < 300) {
      // Stored without fragments: another request for the same page must not inherit this one's.
      const stored = { ...page, url: withoutFragment(page.url), finalUrl: withoutFragment(page.finalUrl) };
      // Batched: not waited for (the copy is written within a few ms, with the next ones).
      if (batch) batch.write(key, stored).catch((err: unknown) => this.#d.log.warn({ err }, 'could not write the page cache'));
      else await writeCachedPage(db, key, stored).catch((err) => this.#d.log.warn({ err }, 'could not write the page cache'));
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
    const { response, proxyUsed } = await this.#fetch(req, deadline);
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
    if (isHtml && proxyUsed === 'basic' && browser?.available && needsRendering(decodeText(response.body, response.contentType, true).text)) {
      try {
        return await this.#renderInBrowser(req, plan, caller, deadline, warnings);
      } catch (err) {
        if (deadline.aborted || !(err instanceof ScrapeError)) throw err;
        warnings.push(`the page looks rendered by JavaScript but the browser failed (${err.code}); the served HTML was used`);
      }
    }
    return { page, cacheState: 'miss', proxyUsed, engine: 'http', warnings };
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
      const id = await storeFile(this.#d.db, { teamId: caller.teamId, jobId, contentType: type, data, ttlMs: this.#d.fileTtlMs });
      return `${ctx.publicUrl}/v2/files/${id}.${ext}`;
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

  // proxy: basic → PROXY_URL or direct; enhanced/stealth → PROXY_ENHANCED_URL; auto → basic,
  // then enhanced when the target refused us and an enhanced proxy is configured.
  async #fetch(req: ScrapeRequest, deadline: AbortSignal): Promise<{ response: HttpResponse; proxyUsed: 'basic' | 'enhanced' }> {
    const { http } = this.#d;
    const base = {
      url: req.url,
      headers: req.headers,
      timeoutMs: req.timeout,
      skipTlsVerification: req.skipTlsVerification,
      mobile: req.mobile,
      languages: req.location?.languages,
      signal: deadline,
    };
    const wantsEnhanced = req.proxy === 'enhanced' || req.proxy === 'stealth';
    const response = await http.fetch({ ...base, proxy: wantsEnhanced ? 'enhanced' : 'basic' });
    if (req.proxy === 'auto' && http.hasEnhancedProxy && looksBlocked(response)) {
      const retry = await http.fetch({ ...base, proxy: 'enhanced' }).catch(() => undefined);
      if (retry && !looksBlocked(retry)) return { response: retry, proxyUsed: 'enhanced' };
    }
    return { response, proxyUsed: wantsEnhanced ? 'enhanced' : 'basic' };
  }

  #render(req: ScrapeRequest, plan: ScrapePlan, source: Source, jobId: string, credits: number): ScrapeDocument {
    const { page } = source;
    const f = plan.formats;
    const kind = detectContentKind(page.contentType, page.finalUrl, page.body);
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
      const { text } = decodeText(page.body, page.engine === 'browser' ? 'text/html; charset=utf-8' : page.contentType, kind === 'html');
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
      } else {
        // Plain text, JSON and XML are their own markdown (JSON and XML fenced).
        doc.markdown = kind === 'text' ? text.trim() : `\`\`\`${kind}\n${text.trim()}\n\`\`\``;
        if (f.html) doc.html = `<pre>${escapeHtml(text)}</pre>`;
        if (f.links) doc.links = [];
        if (f.images) doc.images = [];
        if (f.attributes) doc.attributes = f.attributes.map((a) => ({ ...a, values: [] }));
      }
    } else {
      throw new UnsupportedFileError(`${page.contentType || 'unknown'} (${kind}); request format "rawBase64" to receive the bytes`);
    }

    if (doc.markdown !== undefined && req.redactPII) {
      const { text, counts } = redactPII(doc.markdown, req.redactPII === true ? true : req.redactPII);
      doc.markdown = text;
      const total = Object.values(counts).reduce((a, b) => a + (b ?? 0), 0);
      if (total) warnings.push(`redactPII replaced ${total} item(s) in markdown`);
    }
    if (f.summary) doc.summary = extractiveSummary(doc.markdown ?? '');
    if (!f.markdown) delete doc.markdown;
    if (f.summary) warnings.push('summary: no LLM is configured; an extractive summary of the page was returned');

    if (page.statusCode >= 400) doc.metadata.error = `${page.statusCode} ${STATUS_CODES[page.statusCode] ?? 'error'}`;
    doc.metadata.scrapeId = jobId;
    doc.metadata.proxyUsed = source.proxyUsed;
    doc.metadata.cacheState = source.cacheState;
    if (source.cacheState === 'hit') doc.metadata.cachedAt = page.fetchedAt.toISOString();
    doc.metadata.creditsUsed = credits;
    doc.metadata.engine = source.engine;
    if (warnings.length) doc.warning = warnings.join('; ');
    return doc;
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

function withoutUrl(err: ScrapeError, url: string): ScrapeError {
  const host = URL.canParse(url) ? new URL(url).hostname : url;
  const message = err.message.split(url).join('the requested URL').split(host).join('the requested host');
  return message === err.message ? err : new ScrapeError(err.statusCode, err.code, message);
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
