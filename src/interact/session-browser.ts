// One Chromium per browser session. A session's CDP URL hands its caller the whole browser, so a
// browser is never shared between sessions: each runs jailed (sandbox/chromium-jail.ts: no view of
// the server's files or environment), a persistent context in a fresh user data directory, started with a DevTools port on 127.0.0.1 (for the sandbox and the CDP proxy) and
// every connection going through its own SSRF guard proxy (src/scrape/engines/browser/guard-proxy.ts),
// like a scrape's context.
//
// Launching Chromium costs ~0.3-0.6 s, most of a new session's first answer. `SessionLauncher`
// keeps `spares` browsers launched ahead with the default device (desktop, US, no custom
// User-Agent), from the first session on, so the common session starts on a warm one; other
// devices launch cold.
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { type AddressInfo, type Socket, connect, createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { BrowserContext, Page } from 'playwright-core';
import type { GuardedLookupOptions } from '../net/ssrf.ts';
import { CHROMIUM_ARGS, chromiumAvailable } from '../scrape/engines/browser.ts';
import { type BrowserLocation, type Emulation, emulation } from '../scrape/engines/browser/emulation.ts';
import { GuardProxy } from '../scrape/engines/browser/guard-proxy.ts';
import { BrowserUnavailableError } from '../errors.ts';
import type { LiveBrowser } from './live-browser.ts';
import { jailedChromium } from './sandbox/chromium-jail.ts';

export interface SessionBrowserOptions {
  executablePath: string;
  /** Allow private/loopback targets (metadata addresses stay blocked). */
  allowPrivateNetwork: boolean;
  /** Resolver and exception hook for the SSRF guard (tests). */
  ssrf?: Pick<GuardedLookupOptions, 'resolver' | 'isAllowed'>;
  /** Longest Chromium start-up. Default 30 s. */
  launchTimeoutMs?: number;
  /** Upstream proxy of the session's connections (PROXY_URL; none: direct). */
  proxyUrl?: string;
}

/** The device a session's browser emulates: fixed at launch (viewport, User-Agent, locale, timezone). */
export interface SessionDevice {
  mobile: boolean;
  location?: BrowserLocation;
  /** Caller headers: `user-agent` is a launch option, the rest are set on the context after launch. */
  headers?: Record<string, string>;
  skipTlsVerification: boolean;
}

export const DEFAULT_DEVICE: SessionDevice = { mobile: false, skipTlsVerification: true };

export class SessionBrowser implements LiveBrowser {
  readonly context: BrowserContext;
  readonly cdpEndpoint: string;
  /** Chromium's version ("156.0.8078.73"), for truthful User-Agent strings. */
  readonly version: string;
  readonly #guard: GuardProxy;
  readonly #userDataDir: string;
  /** Loopback port relayed to the jailed DevTools port. */
  readonly #devtools: Relay;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Settles when Chromium or its context went away (closed by us, crashed, or closed by a caller over CDP). */
  readonly whenClosed: Promise<void>;

  private constructor(
    context: BrowserContext,
    cdpEndpoint: string,
    version: string,
    guard: GuardProxy,
    dir: string,
    devtools: Relay,
  ) {
    this.#devtools = devtools;
    this.context = context;
    this.cdpEndpoint = cdpEndpoint;
    this.version = version;
    this.#guard = guard;
    this.#userDataDir = dir;
    this.whenClosed = new Promise((resolve) =>
      context.on('close', () => {
        this.#closed = true;
        resolve();
      }),
    );
  }

  static async launch(opts: SessionBrowserOptions, device: SessionDevice): Promise<SessionBrowser> {
    if (!chromiumAvailable(opts.executablePath))
      throw new BrowserUnavailableError(
        `Browser sessions need Chromium, and it was not found at ${opts.executablePath}. ` +
          'Install it (Debian/Ubuntu: apt-get install chromium) or set CHROMIUM_PATH to its executable.',
      );
    const version = await chromiumVersion(opts.executablePath);
    const jailed = await jailedChromium(opts.executablePath);
    const emu = deviceEmulation(device, version);
    // The session directory (sandbox/chromium-jail.ts): the profile, and the Unix sockets by which
    // the jailed browser reaches its guard proxy and the server reaches its DevTools port.
    const dir = await mkdtemp(join(tmpdir(), 'gleaner-session-'));
    const profile = join(dir, 'profile');
    const guard = await GuardProxy.start({
      ...opts.ssrf,
      allowPrivateNetwork: opts.allowPrivateNetwork,
      upstreamProxy: opts.proxyUrl,
      socketPath: join(dir, 'guard.sock'),
    });
    let context: BrowserContext;
    try {
      const { chromium } = await import('playwright-core');
      const { extraHTTPHeaders, ...launchOptions } = emu.options;
      context = await chromium.launchPersistentContext(profile, {
        ...launchOptions,
        executablePath: jailed,
        headless: true,
        args: [...CHROMIUM_ARGS, '--remote-debugging-port=0'],
        timeout: opts.launchTimeoutMs ?? 30_000,
        proxy: { server: guard.url },
        ignoreHTTPSErrors: device.skipTlsVerification,
        serviceWorkers: 'block',
        acceptDownloads: false,
      });
      if (extraHTTPHeaders && Object.keys(extraHTTPHeaders).length) await context.setExtraHTTPHeaders(extraHTTPHeaders);
    } catch (err) {
      await guard.close();
      await rm(dir, { recursive: true, force: true });
      throw new BrowserUnavailableError(
        `Chromium could not be started for a browser session: ${(err as Error).message}`,
      );
    }
    // Chromium writes its DevTools target path once it listens; its port is in its own network
    // namespace, reached through SESSION/cdp.sock, which this process offers on a loopback port.
    const path = (await readFile(join(profile, 'DevToolsActivePort'), 'utf8')).trim().split('\n')[1];
    const devtools = await relayToSocket(join(dir, 'cdp.sock'));
    return new SessionBrowser(context, `ws://127.0.0.1:${devtools.port}${path}`, version, guard, dir, devtools);
  }

  get closed(): boolean {
    return this.#closed;
  }

  async page(): Promise<Page> {
    const pages = this.context.pages().filter((p) => !p.isClosed());
    return pages.at(-1) ?? this.context.newPage();
  }

  /** Closes Chromium, its guard proxy and its user data directory; safe to call twice. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      await this.context.close().catch(() => undefined);
      await this.#guard.close().catch(() => undefined);
      this.#devtools.close();
      await rm(this.#userDataDir, { recursive: true, force: true }).catch(() => undefined);
    })();
    return this.#closing;
  }
}

/** The context options, init scripts and cookies that realise a device on this Chromium. */
export function deviceEmulation(device: SessionDevice, browserVersion: string): Emulation {
  return emulation({ mobile: device.mobile, location: device.location, headers: device.headers, browserVersion });
}

interface Relay {
  port: number;
  /** Stops listening and cuts the open connections. */
  close(): void;
}

/** A loopback TCP port whose connections are piped to the Unix socket at `path`. */
async function relayToSocket(path: string): Promise<Relay> {
  const open = new Set<Socket>();
  const server = createServer((socket) => {
    const upstream = connect(path);
    for (const s of [socket, upstream]) {
      open.add(s);
      s.on('close', () => open.delete(s));
    }
    socket.pipe(upstream).pipe(socket);
    socket.on('error', () => upstream.destroy());
    upstream.on('error', () => socket.destroy());
    socket.on('close', () => upstream.destroy());
    upstream.on('close', () => socket.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  return {
    port: (server.address() as AddressInfo).port,
    close() {
      server.close();
      for (const s of open) s.destroy();
    },
  };
}

const versions = new Map<string, Promise<string>>();

/** "156.0.8078.73" from `chromium --version`, once per executable per process. */
function chromiumVersion(executablePath: string): Promise<string> {
  let v = versions.get(executablePath);
  if (!v) {
    v = promisify(execFile)(executablePath, ['--version'], { timeout: 10_000 }).then(
      ({ stdout }) => /(\d+\.\d+\.\d+\.\d+)/.exec(stdout)?.[1] ?? '140.0.0.0',
      () => '140.0.0.0',
    );
    versions.set(executablePath, v);
  }
  return v;
}

/** Whether a session with this device can take a spare launched with DEFAULT_DEVICE. */
function fitsSpare(device: SessionDevice): boolean {
  const ua = Object.keys(device.headers ?? {}).some((h) => h.toLowerCase() === 'user-agent');
  const lang = Object.keys(device.headers ?? {}).some((h) => h.toLowerCase() === 'accept-language');
  const loc = device.location;
  const defaultLocation = !loc || ((loc.country ?? 'US').toUpperCase() === 'US' && !loc.languages?.length);
  return !device.mobile && device.skipTlsVerification && !ua && !lang && defaultLocation;
}

/** A launched browser, and what `prepare` started for it when it was a spare (its code sandbox). */
export interface Launched<R> {
  browser: SessionBrowser;
  prepared?: Promise<R>;
}

export interface SessionLauncherOptions<R> extends SessionBrowserOptions {
  /** Default-device browsers kept launched ahead. Default 1. */
  spares?: number;
  /** Started for each spare once it is up (the session's code sandbox), so a session taking it finds it ready. */
  prepare?: (browser: SessionBrowser) => Promise<R>;
  /** Closes what `prepare` made, for a spare closed unused. */
  dispose?: (prepared: R) => Promise<void>;
}

/**
 * Launches session browsers, keeping `spares` default-device browsers launched (and prepared)
 * ahead. A spare given out is replaced in the background; `close()` closes the spares.
 */
export class SessionLauncher<R = never> {
  readonly #opts: SessionLauncherOptions<R>;
  readonly #spares: Promise<Launched<R> | undefined>[] = [];
  readonly #wanted: number;
  #closed = false;

  constructor(opts: SessionLauncherOptions<R>) {
    this.#opts = opts;
    this.#wanted = chromiumAvailable(opts.executablePath) ? (opts.spares ?? 1) : 0;
  }

  /** Starts the spares that are missing. */
  warm(): void {
    while (!this.#closed && this.#spares.length < this.#wanted) this.#spares.push(this.#launchSpare());
  }

  async launch(device: SessionDevice): Promise<Launched<R>> {
    // Spares start with the first session, not with the process: a service that never opens a
    // session never runs a Chromium for them.
    this.warm();
    if (fitsSpare(device)) {
      while (this.#spares.length) {
        const spare = await this.#spares.shift();
        this.warm();
        if (spare && !spare.browser.closed) {
          const headers = deviceEmulation(device, spare.browser.version).options.extraHTTPHeaders;
          if (headers && Object.keys(headers).length) await spare.browser.context.setExtraHTTPHeaders(headers);
          return spare;
        }
        if (spare) await this.#discard(spare);
      }
    }
    return { browser: await SessionBrowser.launch(this.#opts, device) };
  }

  async close(): Promise<void> {
    this.#closed = true;
    const spares = this.#spares.splice(0);
    await Promise.all(spares.map(async (s) => this.#discard(await s)));
  }

  async #discard(spare: Launched<R> | undefined): Promise<void> {
    if (!spare) return;
    const prepared = await spare.prepared?.catch(() => undefined);
    if (prepared !== undefined) await this.#opts.dispose?.(prepared).catch(() => undefined);
    await spare.browser.close();
  }

  #launchSpare(): Promise<Launched<R> | undefined> {
    const p = SessionBrowser.launch(this.#opts, DEFAULT_DEVICE).then(
      (browser): Launched<R> => {
        const prepared = this.#opts.prepare?.(browser);
        prepared?.catch(() => undefined);
        return { browser, prepared };
      },
      () => undefined,
    );
    // A spare that was still launching when close() ran closes itself.
    void p.then((s) => (this.#closed ? this.#discard(s) : undefined));
    return p;
  }
}
