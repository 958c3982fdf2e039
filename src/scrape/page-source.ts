// Obtaining a page from its target (a cache miss): the engine choice (HTTP, or the browser when the
// request needs it or the HTML is a JavaScript shell), the proxy choice, and browser profiles.
import type { ScrapeRequest } from '../contract/scrape.ts';
import { BrowserUnavailableError, ScrapeError } from '../errors.ts';
import type { CachedPage } from '../store/pages.ts';
import { readProfile, saveProfile } from '../store/profiles.ts';
import type { Caller } from '../store/teams.ts';
import type { BrowserResponse, StorageState } from './engines/browser.ts';
import type { HttpResponse } from './engines/http.ts';
import { isMediaFile } from './media/discover.ts';
import { needsRendering } from './needs-render.ts';
import { type ScrapePlan, wantsMedia } from './plan.ts';
import type { ScrapeDeps } from './scrape-deps.ts';
import { decodeText } from '../documents/charset.ts';
import { detectContentKind } from '../documents/detect.ts';

/** A response, fresh or from the cache, with how it was obtained. */
export interface Source {
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

// Engine choice (README "Engines"): the browser when the request needs it; otherwise HTTP,
// upgraded to the browser when the HTML is a shell that only JavaScript fills.
export async function fetchFresh(
  d: ScrapeDeps,
  req: ScrapeRequest,
  plan: ScrapePlan,
  caller: Caller,
  deadline: AbortSignal,
): Promise<Source> {
  const { browser } = d;
  const warnings: string[] = [];
  if (plan.engine.kind === 'browser') {
    const onlyMobile = plan.engine.reasons.length === 1 && plan.engine.reasons[0] === 'mobile';
    if (browser?.available || !onlyMobile) return renderInBrowser(d, req, plan, caller, deadline, warnings);
    warnings.push('mobile: Chromium is not installed, so the page was fetched over HTTP with a mobile User-Agent only');
  }
  const { response, proxyUsed } = await fetchWithProxy(d, req, plan, deadline);
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
  const isHtml =
    /html/i.test(response.contentType) ||
    detectContentKind(response.contentType, response.url, response.body) === 'html';
  const html =
    isHtml && proxyUsed === 'basic' && browser?.available
      ? decodeText(response.body, response.contentType, true).text
      : undefined;
  const shell = html !== undefined && needsRendering(html);
  if (shell && !plan.engine.upgrade)
    warnings.push('fastMode: the page looks rendered by JavaScript; the served HTML was used, not rendered');
  else if (shell) {
    try {
      return await renderInBrowser(d, req, plan, caller, deadline, warnings);
    } catch (err) {
      if (deadline.aborted || !(err instanceof ScrapeError)) throw err;
      warnings.push(
        `the page looks rendered by JavaScript but the browser failed (${err.code}); the served HTML was used`,
      );
    }
  }
  return {
    page,
    cacheState: 'miss',
    proxyUsed,
    engine: 'http',
    html,
    warnings,
    ...(response.bodySkipped ? { bodySkipped: true } : {}),
  };
}

async function renderInBrowser(
  d: ScrapeDeps,
  req: ScrapeRequest,
  plan: ScrapePlan,
  caller: Caller,
  deadline: AbortSignal,
  warnings: string[],
): Promise<Source> {
  const { browser, db } = d;
  if (!browser)
    throw new BrowserUnavailableError(
      `${plan.engine.reasons.join(', ') || 'rendering'} needs the browser engine, which this process does not run`,
    );
  const profile = req.profile ? await readProfile(db, caller.teamId, req.profile.name) : undefined;
  const saveProfileState = Boolean(req.profile && req.profile.saveChanges !== false);
  // proxy: basic → PROXY_URL or direct; enhanced/stealth → PROXY_ENHANCED_URL (auto renders through basic).
  const proxy = req.proxy === 'enhanced' || req.proxy === 'stealth' ? 'enhanced' : 'basic';
  const res = await browser.fetch({
    url: req.url,
    proxy,
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
  if (req.profile && res.storageState && saveProfileState)
    await saveProfile(db, caller.teamId, req.profile.name, res.storageState);
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
  return { page, cacheState: 'miss', proxyUsed: proxy, engine: 'browser', rendered: res, warnings };
}

// proxy: basic → PROXY_URL or direct; enhanced/stealth → PROXY_ENHANCED_URL; auto → basic,
// then enhanced when the target refused us and an enhanced proxy is configured.
async function fetchWithProxy(
  d: ScrapeDeps,
  req: ScrapeRequest,
  plan: ScrapePlan,
  deadline: AbortSignal,
): Promise<{ response: HttpResponse; proxyUsed: 'basic' | 'enhanced' }> {
  const { http } = d;
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

// A refusal rather than the page: bot walls answer 403/429/503, often with a challenge page.
function looksBlocked(r: HttpResponse): boolean {
  if (r.status === 403 || r.status === 429) return true;
  if (r.status !== 503 && r.status !== 200) return false;
  const head = r.body.subarray(0, 4096).toString('latin1');
  return /cf-chl|challenge-platform|captcha|Just a moment\.\.\.|Attention Required/i.test(head);
}
