// The browser engine: renders a target in Chromium (Debian's, driven by playwright-core), runs the
// request's actions, and returns the rendered DOM, screenshots and other outputs. The sibling of
// the HTTP engine (./http.ts): same SSRF policy, same error classes.
//
// One engine per process. It launches Chromium on first use (or `warm()`), gives each fetch a
// fresh isolated browser context (cookies, storage and cache never leak between fetches; always
// closed), runs at most `maxPages` fetches at once (others queue), recycles the browser after
// `recycleAfterPages` pages, and replaces a browser that crashed or hung and retries that fetch
// once. Without Chromium the engine can still be constructed; fetch() throws
// BrowserUnavailableError (503 BROWSER_UNAVAILABLE) naming what to install.
//
// A fetch, in order:
//   1. the URL is judged by the SSRF guard (scheme, IP literal, localhost names, DNS answer);
//   2. a page slot and a live browser are acquired (the timeout covers the wait);
//   3. a context is made with the request's emulation (desktop 1280×800 or a mobile device
//      profile, timezone and locale from location.country, languages, headers, cookies, storage
//      state), every connection of it going through a per-fetch guarded proxy (browser/guard-proxy.ts);
//      with blockAds, ad/tracker requests are aborted and cookie banners hidden (browser/adblock.ts);
//   4. navigation until DOMContentLoaded, then the smart wait (browser/settle.ts: network and DOM
//      quiet for 250 ms, longer while the page is still an app shell or its load-time timers
//      are pending, at most 5 s), then waitForMs;
//   5. actions (browser/actions.ts), then the screenshot, the rendered HTML (page.content()), and
//      the storage state when asked;
//   6. the context is closed, the slot given back.
import type { Browser, BrowserContext, Page, Request, Response } from 'playwright-core';
import { BlockedAddressError, type GuardedLookupOptions, InvalidTargetUrlError } from '../../net/ssrf.ts';
import type { BrowserAction } from '../../contract/actions.ts';
import {
  type ActionOutputs,
  type Screenshot,
  type ScreenshotOptions,
  emptyOutputs,
  runActions,
  takeScreenshot,
} from './browser/actions.ts';
import { AdBlocker } from './browser/adblock.ts';
import { type BrowserLocation, emulation } from './browser/emulation.ts';
import { type Branding, extractBranding } from '../formats/branding.ts';
import { timeoutSignal } from '../../net/timeout.ts';
import { GUARD_HEADER, type GuardFailure, GuardProxy } from './browser/guard-proxy.ts';
import {
  type BrowserHandle,
  BrowserPool,
  type PoolStats,
  chromiumAvailable,
  chromiumExecutable,
  missingChromiumError,
} from './browser/browser-pool.ts';
import { NetworkTracker, type SettleOptions, installSettleProbe, settle } from './browser/settle.ts';
import { prepareContext } from './browser/prepare-context.ts';
import {
  BadRequestError,
  BlockedUrlError,
  ConnectionError,
  DnsResolutionError,
  ScrapeError,
  ScrapeTimeoutError,
  SiteError,
  TlsError,
  TooManyRedirectsError,
  UnsupportedFileError,
} from '../../errors.ts';

export { BrowserUnavailableError, ScrapeActionError } from '../../errors.ts';
export type { ActionOutputs, JavascriptReturn, Screenshot, ScreenshotOptions } from './browser/actions.ts';
export { COUNTRIES, countryProfile } from './browser/emulation.ts';
export type { BrowserLocation } from './browser/emulation.ts';
export { CHROMIUM_ARGS, chromiumAvailable, chromiumExecutable } from './browser/browser-pool.ts';

/** Cookies, localStorage and IndexedDB of a context (Playwright's storage state format). */
export type StorageState = Awaited<ReturnType<BrowserContext['storageState']>>;

export interface BrowserEngineOptions {
  /** Allow private/loopback/link-local targets (metadata addresses stay blocked). */
  allowPrivateNetwork: boolean;
  /** Resolver and exception hook for the SSRF guard (tests: fake DNS without network). */
  ssrf?: Pick<GuardedLookupOptions, 'resolver' | 'isAllowed'>;
  /** Chromium executable; default CHROMIUM_PATH or /usr/bin/chromium. */
  executablePath?: string;
  /** Fetches rendering at once; more wait for a slot. Default 4. */
  maxPages?: number;
  /** Pages after which the browser is replaced (in-flight pages finish on the old one). Default 500. */
  recycleAfterPages?: number;
  /** Resident MB of the browser's processes above which it is replaced likewise (0: never). Default 1536. */
  recycleAboveMb?: number;
  /** Longest Chromium start-up. Default 30 s. */
  launchTimeoutMs?: number;
  /** Longest context creation before the browser is deemed hung, killed and replaced. Default 10 s. */
  contextTimeoutMs?: number;
  /** Smart wait after navigation: quiet period and cap (ms). Default {quietMs: 250, maxMs: 5000}. */
  settle?: Partial<SettleOptions>;
  /** Smart wait after click/press/scroll/executeJavascript actions. Default {quietMs: 150, maxMs: 3000}. */
  actionSettle?: Partial<SettleOptions>;
  /** Longest wait for an action's selector to match. Default 10 s (the fetch's deadline permitting). */
  selectorTimeoutMs?: number;
  /** Playwright device descriptor for `mobile`. Default "Pixel 7". */
  mobileDevice?: string;
  /** Extra filter lists (files, EasyList syntax) added to the built-in list for blockAds. */
  filterLists?: string[];
  /** Upstream proxy of every page's connections for proxy "basic" (PROXY_URL; none: direct). */
  proxyUrl?: string;
  /** Upstream proxy for proxy "enhanced" (PROXY_ENHANCED_URL). */
  enhancedProxyUrl?: string;
}

export interface BrowserFetchRequest {
  url: string;
  /** Sent with every request of the page; `user-agent` replaces the UA, `cookie` becomes cookies of the target URL. */
  headers?: Record<string, string>;
  /** Covers the whole fetch: queueing for a slot, launch, navigation, waits, actions, capture. */
  timeoutMs: number;
  /** Caller's cancellation (a TimeoutError reason counts as a timeout). */
  signal?: AbortSignal;
  /** Accept invalid TLS certificates. */
  skipTlsVerification: boolean;
  /** Which upstream proxy the page's connections go through: basic (PROXY_URL or direct, the default) or enhanced. */
  proxy?: 'basic' | 'enhanced';
  /** Emulate a mobile device (options.mobileDevice): viewport, UA, touch, device scale factor. */
  mobile: boolean;
  /** Country → timezone and locale (default US); languages → Accept-Language and navigator.languages. */
  location?: BrowserLocation;
  /** Extra wait after the smart wait (ms). */
  waitForMs?: number;
  /** Block ad and tracker requests and hide cookie banners. Default true. */
  blockAds?: boolean;
  /** Run in order after the page settled (validate with browserActionSchema first). */
  actions?: readonly BrowserAction[];
  /** Take a screenshot after the actions; its viewport is the page's viewport for the whole fetch. */
  screenshot?: ScreenshotOptions;
  /** Start from this storage state (a profile's cookies, localStorage, IndexedDB). */
  storageState?: StorageState;
  /** Return the context's storage state at the end (with IndexedDB). */
  saveStorageState?: boolean;
  /** Read the page's branding from its computed styles after the actions (src/scrape/formats/branding.ts). */
  branding?: boolean;
}

export interface BrowserTimings {
  /** Waiting for a page slot and a browser (includes a launch when one was needed). */
  acquireMs: number;
  /** Until DOMContentLoaded of the main document. */
  navigationMs: number;
  /** Smart wait plus waitForMs. */
  settleMs: number;
  actionsMs: number;
  totalMs: number;
  /** 2 when the browser crashed or hung and the fetch was retried. */
  attempts: number;
}

export interface BrowserResponse {
  /** The URL asked for. */
  requestedUrl: string;
  /** The page's URL at the end (after redirects, and after any navigation the actions caused). */
  url: string;
  /** Status of the main document's response (the last main-frame navigation). */
  status: number;
  /** Headers of that response, lower-case names (repeated ones joined as Playwright does). */
  headers: Record<string, string>;
  contentType: string;
  /** The rendered DOM serialised (page.content()) at the end. */
  html: string;
  /**
   * The main document's bytes as served (decoded from any Content-Encoding), only when its
   * content type is neither HTML/XHTML nor PDF (JSON, XML, images, plain text...). Documents
   * (PDF, office files) should be fetched with the HTTP engine: Chromium shows PDFs in its
   * viewer and downloads the rest (a download is UnsupportedFileError here).
   */
  body?: Buffer;
  /** URLs of the HTTP redirect hops before the main document, in order. */
  redirects: string[];
  screenshot?: Screenshot;
  actions: ActionOutputs;
  storageState?: StorageState;
  /** When asked: the page's branding; undefined when the page's script context refused it (a non-HTML document). */
  branding?: Branding;
  /** Requests aborted by blockAds. */
  blockedAds: number;
  timings: BrowserTimings;
}

export interface BrowserEngineStats extends PoolStats {
  fetches: number;
  retries: number;
  /** Browser contexts open now (one per fetch in flight; a leak shows here). */
  openContexts: number;
}

/** The context of one attempt, shared between the attempt and its rendering. */
interface RenderState {
  context?: BrowserContext;
  /** The attempt is over: a context made from now on must be closed at once. */
  done: boolean;
}

/** The browser died or hung under a fetch: replace it and retry once. */
class BrowserCrashed extends Error {}

/** How long BrowserEngine.available trusts its last look at the executable. */
const AVAILABLE_RECHECK_MS = 5000;
// A context that does not close within this is taken as a hung browser (generous: a loaded
// machine can take seconds).
const CONTEXT_CLOSE_BOUND_MS = 20_000;

const HTML_TYPES = /text\/html|application\/xhtml\+xml/i;

const DEFAULT_SETTLE: SettleOptions = { quietMs: 250, maxMs: 5000 };
const DEFAULT_ACTION_SETTLE: SettleOptions = { quietMs: 150, maxMs: 3000 };

export class BrowserEngine {
  readonly #opts: BrowserEngineOptions;
  readonly #executable: string;
  readonly #pool: BrowserPool;
  readonly #settle: SettleOptions;
  readonly #actionSettle: SettleOptions;
  #adblock: Promise<AdBlocker> | undefined;
  #fetches = 0;
  #retries = 0;

  constructor(opts: BrowserEngineOptions) {
    this.#opts = opts;
    this.#executable = opts.executablePath ?? chromiumExecutable();
    this.#pool = new BrowserPool({
      executablePath: this.#executable,
      maxPages: opts.maxPages ?? 4,
      recycleAfterPages: opts.recycleAfterPages ?? 500,
      recycleAboveMb: opts.recycleAboveMb ?? 1536,
      launchTimeoutMs: opts.launchTimeoutMs ?? 30_000,
    });
    this.#settle = { ...DEFAULT_SETTLE, ...opts.settle };
    this.#actionSettle = { ...DEFAULT_ACTION_SETTLE, ...opts.actionSettle };
  }

  /**
   * Whether Chromium is installed where this engine looks (does not launch it). Asked for every
   * HTTP page (may a shell be rendered?): the file is looked at again after AVAILABLE_RECHECK_MS,
   * not on every page, and an install while the service runs is still seen.
   */
  get available(): boolean {
    const now = Date.now();
    if (now - this.#checkedAt > AVAILABLE_RECHECK_MS) {
      this.#available = chromiumAvailable(this.#executable);
      this.#checkedAt = now;
    }
    return this.#available;
  }
  #available = false;
  #checkedAt = -Infinity;

  /** The executable this engine runs. */
  get executablePath(): string {
    return this.#executable;
  }

  /** Pid of the Chromium that new fetches go to (undefined before the first launch). Linux only. */
  get browserPid(): number | undefined {
    return this.#pool.currentPid;
  }

  /** Pids of every Chromium main process this engine runs now (current and retiring). */
  get browserPids(): number[] {
    return this.#pool.pids;
  }

  stats(): BrowserEngineStats {
    return {
      ...this.#pool.stats,
      fetches: this.#fetches,
      retries: this.#retries,
      openContexts: this.#pool.openContexts,
    };
  }

  /** Launches Chromium now (and loads the filter lists) instead of on the first fetch. */
  async warm(): Promise<void> {
    if (!this.available) throw missingChromiumError(this.#executable);
    const lease = await this.#pool.acquire(AbortSignal.timeout(this.#opts.launchTimeoutMs ?? 30_000));
    lease.release();
    await this.#adblocker();
  }

  async close(): Promise<void> {
    await this.#pool.close();
  }

  async fetch(req: BrowserFetchRequest): Promise<BrowserResponse> {
    const started = Date.now();
    const deadline = started + req.timeoutMs;
    const timer = timeoutSignal(req.timeoutMs);
    const timeout = timer.signal;
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    this.#fetches++;
    const upstreamProxy = req.proxy === 'enhanced' ? this.#opts.enhancedProxyUrl : this.#opts.proxyUrl;
    if (req.proxy === 'enhanced' && !upstreamProxy)
      throw new BadRequestError('proxy "enhanced" needs PROXY_ENHANCED_URL to be configured');
    const guard = await GuardProxy.start({
      ...this.#opts.ssrf,
      allowPrivateNetwork: this.#opts.allowPrivateNetwork,
      upstreamProxy,
    });
    try {
      try {
        // The same verdict the proxy will give, before any browser work: a refused URL never
        // reaches the target, and an unresolvable one fails fast.
        await guard.check(req.url);
      } catch (err) {
        throw describePreflight(err, req.url);
      }
      if (!this.available) throw missingChromiumError(this.#executable);
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.#attempt(req, guard, { started, deadline, signal, attempt });
        } catch (err) {
          if (err instanceof BrowserCrashed && attempt === 1 && !signal.aborted) {
            this.#retries++;
            continue;
          }
          throw this.#describe(err, req, signal);
        }
      }
    } finally {
      timer.clear();
      await guard.close();
    }
  }

  #adblocker(): Promise<AdBlocker> {
    this.#adblock ??= AdBlocker.load(this.#opts.filterLists ?? []);
    return this.#adblock;
  }

  async #attempt(
    req: BrowserFetchRequest,
    guard: GuardProxy,
    run: { started: number; deadline: number; signal: AbortSignal; attempt: number },
  ): Promise<BrowserResponse> {
    const { signal } = run;
    const t0 = Date.now();
    const lease = await this.#pool.acquire(signal);
    const { handle } = lease;
    const state: RenderState = { done: false };
    // On abort or timeout the context is closed (which stops whatever the page was doing) and the
    // attempt answers at once: a Playwright call on a closing context may never settle.
    let stop: (reason: unknown) => void = () => {};
    const stopped = new Promise<never>((_, reject) => (stop = reject));
    stopped.catch(() => {});
    const onAbort = () => {
      stop(signal.reason);
      void state.context?.close().catch(() => {});
    };
    signal.addEventListener('abort', onAbort, { once: true });
    // A browser that dies answers nothing more: fail the attempt at once (then it is retried).
    const onDisconnect = () => stop(new BrowserCrashed('Chromium exited during the fetch'));
    handle.browser.once('disconnected', onDisconnect);
    if (!handle.browser.isConnected()) onDisconnect();
    const work = this.#render(req, guard, handle, state, { ...run, acquireMs: Date.now() - t0 });
    work.catch(() => {}); // when the race is lost, its later failure is expected
    try {
      if (signal.aborted) onAbort();
      return await Promise.race([work, stopped]);
    } catch (err) {
      if (signal.aborted) throw signal.reason ?? err;
      if (err instanceof ScrapeError || err instanceof BadRequestError) throw err;
      if (handle.state === 'dead' || !handle.browser.isConnected() || err instanceof BrowserCrashed) {
        throw err instanceof BrowserCrashed ? err : new BrowserCrashed((err as Error).message);
      }
      throw err;
    } finally {
      state.done = true;
      signal.removeEventListener('abort', onAbort);
      handle.browser.off('disconnected', onDisconnect);
      if (state.context) await this.#closeContext(handle, state.context);
      lease.release();
    }
  }

  async #render(
    req: BrowserFetchRequest,
    guard: GuardProxy,
    handle: BrowserHandle,
    state: RenderState,
    run: { started: number; deadline: number; signal: AbortSignal; attempt: number; acquireMs: number },
  ): Promise<BrowserResponse> {
    const { deadline, signal } = run;
    const remaining = () => Math.max(1, deadline - Date.now());
    const emu = emulation({
      mobile: req.mobile,
      location: req.location,
      headers: req.headers,
      viewport: req.screenshot?.viewport,
      mobileDevice: this.#opts.mobileDevice,
      browserVersion: handle.version,
    });
    const context = await this.#newContext(
      handle,
      {
        ...emu.options,
        proxy: { server: guard.url },
        ignoreHTTPSErrors: req.skipTlsVerification,
        serviceWorkers: 'block',
        acceptDownloads: false,
        storageState: req.storageState,
      },
      Math.min(this.#opts.contextTimeoutMs ?? 10_000, remaining()),
    );
    if (state.done) {
      // The attempt ended (abort or timeout) while the context was being made.
      await context.close().catch(() => {});
      throw new Error('fetch ended');
    }
    state.context = context;
    const blocker = (req.blockAds ?? true) ? await this.#adblocker() : undefined;
    const prepared = await prepareContext(context, req.url, emu, blocker);

    const page = await context.newPage();
    const tracker = new NetworkTracker(page);
    await installSettleProbe(page); // the smart wait's count of the page's pending timers
    let main: Response | undefined;
    page.on('response', (r) => {
      if (isMainDocument(page, r.request())) main = r;
    });

    // Navigation.
    const tNav = Date.now();
    let response: Response | null;
    try {
      response = await page.goto(req.url, { waitUntil: 'domcontentloaded', timeout: remaining() });
    } catch (err) {
      throw navigationError(err, req.url, guard, signal.aborted || Date.now() >= deadline, req.timeoutMs);
    }
    main = response ?? main;
    if (main) await refuseGuardAnswer(main, guard);
    const navigationMs = Date.now() - tNav;

    // Smart wait, then the caller's wait.
    const tSettle = Date.now();
    await settle(page, tracker, this.#settle, deadline);
    if (req.waitForMs) {
      if (Date.now() + req.waitForMs > deadline) throw new ScrapeTimeoutError(req.timeoutMs, req.url);
      await page.waitForTimeout(req.waitForMs);
    }
    const settleMs = Date.now() - tSettle;

    const tActions = Date.now();
    const outputs = emptyOutputs();
    if (req.actions?.length) {
      await runActions(
        req.actions,
        {
          page,
          tracker,
          deadline,
          selectorTimeoutMs: this.#opts.selectorTimeoutMs ?? 10_000,
          settle: this.#actionSettle,
          onTimeout: () => new ScrapeTimeoutError(req.timeoutMs, req.url),
        },
        outputs,
      );
    }
    const actionsMs = Date.now() - tActions;

    const screenshot = req.screenshot ? await takeScreenshot(page, req.screenshot, deadline) : undefined;
    const branding = req.branding ? await extractBranding(page).catch(() => undefined) : undefined;
    const html = await page.content();
    if (main) await refuseGuardAnswer(main, guard);
    const headers = main ? await main.allHeaders() : {};
    const contentType = headers['content-type'] ?? '';
    // Not a web page (JSON, text, image...): the bytes as served, so the caller can use them
    // without fetching again (page.content() is then only Chromium's viewer around them). Not for
    // PDFs: Chromium hands its PDF viewer's page to Playwright instead of the file.
    const body =
      main && contentType && !HTML_TYPES.test(contentType) && !/pdf/i.test(contentType)
        ? await main.body().catch(() => undefined)
        : undefined;
    const storageState = req.saveStorageState ? await context.storageState({ indexedDB: true }) : undefined;
    tracker.dispose();
    return {
      requestedUrl: req.url,
      url: page.url(),
      status: main?.status() ?? 200,
      headers,
      contentType,
      html,
      body,
      redirects: main ? redirectChain(main.request()) : [],
      screenshot,
      actions: outputs,
      storageState,
      branding,
      blockedAds: prepared.blockedAds(),
      timings: {
        acquireMs: run.acquireMs,
        navigationMs,
        settleMs,
        actionsMs,
        totalMs: Date.now() - run.started,
        attempts: run.attempt,
      },
    };
  }

  // newContext on a hung browser never answers: bound it, and replace that browser.
  async #newContext(
    handle: BrowserHandle,
    options: Parameters<Browser['newContext']>[0],
    boundMs: number,
  ): Promise<BrowserContext> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const creating = handle.browser.newContext(options);
    const hung = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        this.#pool.kill(handle);
        reject(new BrowserCrashed(`Chromium did not create a context within ${boundMs} ms`));
      }, boundMs);
    });
    try {
      return await Promise.race([creating, hung]);
    } catch (err) {
      creating.then(
        (c) => c.close().catch(() => {}),
        () => {},
      );
      if (err instanceof BrowserCrashed) throw err;
      if (handle.state === 'dead' || !handle.browser.isConnected()) throw new BrowserCrashed((err as Error).message);
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  async #closeContext(handle: BrowserHandle, context: BrowserContext): Promise<void> {
    if (!handle.browser.isConnected()) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const closed = await Promise.race([
      context.close().then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), CONTEXT_CLOSE_BOUND_MS))),
    ]);
    clearTimeout(timer);
    if (!closed) this.#pool.kill(handle); // a browser that cannot close a context is hung
  }

  #describe(err: unknown, req: BrowserFetchRequest, signal: AbortSignal): Error {
    if (err instanceof ScrapeError || err instanceof BadRequestError) return err;
    if (signal.aborted) {
      const reason = signal.reason as Error | undefined;
      if (reason?.name === 'TimeoutError') return new ScrapeTimeoutError(req.timeoutMs, req.url);
      return reason instanceof Error ? reason : new Error(String(reason));
    }
    if (err instanceof BrowserCrashed)
      return new SiteError(
        req.url,
        `the browser crashed twice while rendering the page (${err.message.split('\n')[0]})`,
      );
    const message = (err as Error)?.message?.split('\n')[0] ?? String(err);
    if (/Timeout \d+ms exceeded/.test(message)) return new ScrapeTimeoutError(req.timeoutMs, req.url);
    return new SiteError(req.url, message);
  }
}

function describePreflight(err: unknown, url: string): Error {
  if (err instanceof InvalidTargetUrlError)
    return new BadRequestError(`Invalid request: body.url: ${err.message}`, [
      { path: 'body.url', message: err.message },
    ]);
  if (err instanceof BlockedAddressError) return new BlockedUrlError(err.message);
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || code === 'EAI_NODATA') {
    return new DnsResolutionError((err as { hostname?: string }).hostname ?? safeHost(url));
  }
  return new ConnectionError(url, (err as Error).message);
}

function fromGuardFailure(failure: GuardFailure, url: string): ScrapeError {
  if (failure.kind === 'blocked') return new BlockedUrlError(failure.message);
  if (failure.kind === 'dns') return new DnsResolutionError(failure.hostname);
  if (failure.kind === 'invalid') return new SiteError(url, failure.message);
  return new ConnectionError(failure.target, failure.message);
}

// The main document is the proxy's refusal (a redirect or script navigation to a refused address).
async function refuseGuardAnswer(main: Response, guard: GuardProxy): Promise<void> {
  const kind = await main.headerValue(GUARD_HEADER).catch(() => null);
  if (!kind) return;
  const failure = guard.failureFor(safeHost(main.url())) ?? {
    kind: kind as GuardFailure['kind'],
    target: main.url(),
    hostname: safeHost(main.url()),
    message: `Refused ${main.url()}`,
  };
  throw fromGuardFailure(failure, main.url());
}

function navigationError(err: unknown, url: string, guard: GuardProxy, timedOut: boolean, timeoutMs: number): Error {
  const message = (err as Error)?.message?.split('\n')[0] ?? String(err);
  if (timedOut || /Timeout \d+ms exceeded/.test(message)) return new ScrapeTimeoutError(timeoutMs, url);
  const net = /net::(ERR_[A-Z_]+)/.exec(message)?.[1] ?? '';
  if (net === 'ERR_TUNNEL_CONNECTION_FAILED' || net === 'ERR_PROXY_CONNECTION_FAILED') {
    const failure = guard.failureFor();
    if (failure) return fromGuardFailure(failure, url);
    return new ConnectionError(url, net);
  }
  if (/^ERR_(CERT_|SSL_|BAD_SSL)/.test(net)) return new TlsError(url, net);
  if (net === 'ERR_TOO_MANY_REDIRECTS') return new TooManyRedirectsError(url, 20);
  if (net === 'ERR_NAME_NOT_RESOLVED') return new DnsResolutionError(safeHost(url));
  if (/^ERR_(CONNECTION_|ADDRESS_|EMPTY_RESPONSE|INTERNET_DISCONNECTED|NETWORK_|TIMED_OUT)/.test(net))
    return new ConnectionError(url, net);
  if (/Download is starting/i.test(message))
    return new UnsupportedFileError('a file download (not a web page): fetch it with the HTTP engine');
  if (/Target .*closed|browser has been closed|Browser closed|has disconnected|crashed/i.test(message))
    return new BrowserCrashed(message);
  return new SiteError(url, net || message);
}

function isMainDocument(page: Page, request: Request): boolean {
  try {
    return request.isNavigationRequest() && request.frame() === page.mainFrame();
  } catch {
    return false; // service worker requests have no frame
  }
}

function redirectChain(request: Request): string[] {
  const hops: string[] = [];
  for (let r = request.redirectedFrom(); r; r = r.redirectedFrom()) hops.unshift(r.url());
  return hops;
}

// Hiding rules as a constructed stylesheet: applied to the rendering, absent from page.content().
function safeHost(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}
