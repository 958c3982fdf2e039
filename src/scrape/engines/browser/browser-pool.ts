// One Chromium for many fetches: launched lazily once (start-up is paid by the first fetch, not
// by each), a bounded number of pages at a time (extra callers queue, honouring their
// AbortSignal), replaced after `recycleAfterPages` pages (the old one finishes its in-flight
// pages, then closes) and whenever it dies (the `disconnected` event) or hangs (the caller kills
// it through `kill`).
import { accessSync, constants, readFileSync, readdirSync } from 'node:fs';
import type { Browser } from 'playwright-core';
import { playwright } from './playwright.ts';
import { BrowserUnavailableError } from '../../../errors.ts';

/** Exactly the flags Gleaner runs Chromium with (besides Playwright's own automation flags). */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  // WebRTC may only use UDP through the proxy, which has none: no STUN/TURN packet bypasses the guard.
  '--webrtc-ip-handling-policy=disable_non_proxied_udp',
];

/** CHROMIUM_PATH, or Debian's /usr/bin/chromium. */
export function chromiumExecutable(env: NodeJS.ProcessEnv = process.env): string {
  return env.CHROMIUM_PATH || '/usr/bin/chromium';
}

/** Whether an executable exists at the path (default: chromiumExecutable()). Cheap and synchronous. */
export function chromiumAvailable(path: string = chromiumExecutable()): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function missingChromiumError(path: string): BrowserUnavailableError {
  return new BrowserUnavailableError(
    `This request needs the browser engine, and Chromium was not found at ${path}. ` +
      'Install it (Debian/Ubuntu: apt-get install chromium) or set CHROMIUM_PATH to its executable.',
  );
}

export interface PoolOptions {
  executablePath: string;
  maxPages: number;
  recycleAfterPages: number;
  /** Resident MB of a browser's process group above which it is retired (0: never). */
  recycleAboveMb: number;
  launchTimeoutMs: number;
}

/** A launched browser and its bookkeeping. */
export interface BrowserHandle {
  readonly browser: Browser;
  readonly version: string;
  /** Chromium's main process id (Linux /proc lookup; undefined elsewhere). */
  readonly pid: number | undefined;
  /** Pages handed out so far. */
  served: number;
  /** Pages in use now. */
  active: number;
  state: 'live' | 'retiring' | 'dead';
  /** When its memory was last measured (epoch ms). */
  memoryCheckedAt?: number;
}

export interface Lease {
  readonly handle: BrowserHandle;
  /** Gives the page slot back (idempotent). */
  release(): void;
}

export interface PoolStats {
  launches: number;
  /** Browsers that died on their own (crash, killed from outside). */
  crashes: number;
  /** Browsers killed by the engine because they hung. */
  hangs: number;
  recycles: number;
  /** Of the recycles, those for memory (recycleAboveMb). */
  memoryRecycles: number;
  activePages: number;
  waiting: number;
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

export class BrowserPool {
  readonly #opts: PoolOptions;
  #current: BrowserHandle | undefined;
  #launching: Promise<BrowserHandle> | undefined;
  readonly #all = new Set<BrowserHandle>();
  #freeSlots: number;
  readonly #waiters: Waiter[] = [];
  #closed = false;
  readonly stats: PoolStats = {
    launches: 0,
    crashes: 0,
    hangs: 0,
    recycles: 0,
    memoryRecycles: 0,
    activePages: 0,
    waiting: 0,
  };

  constructor(opts: PoolOptions) {
    this.#opts = opts;
    this.#freeSlots = opts.maxPages;
  }

  /** The pid of the browser new pages go to (undefined before the first launch). */
  get currentPid(): number | undefined {
    return this.#current?.pid;
  }

  /** Contexts open in this pool's browsers. */
  get openContexts(): number {
    let n = 0;
    for (const h of this.#all) if (h.browser.isConnected()) n += h.browser.contexts().length;
    return n;
  }

  /** Pids of every Chromium this pool has running (current and retiring). */
  get pids(): number[] {
    return [...this.#all].map((h) => h.pid).filter((p): p is number => p !== undefined);
  }

  /**
   * Waits for a page slot (rejecting with the signal's reason if it aborts first), then returns a
   * live browser for it, launching one if needed.
   */
  async acquire(signal: AbortSignal): Promise<Lease> {
    if (this.#closed) throw new BrowserUnavailableError('The browser engine is shutting down');
    await this.#slot(signal);
    let released = false;
    const releaseSlot = () => {
      if (released) return;
      released = true;
      this.stats.activePages--;
      const next = this.#waiters.shift();
      if (next) {
        this.stats.waiting = this.#waiters.length;
        next.resolve();
      } else this.#freeSlots++;
    };
    this.stats.activePages++;
    let handle: BrowserHandle;
    try {
      handle = await this.#browser(signal);
    } catch (err) {
      releaseSlot();
      throw err;
    }
    handle.served++;
    handle.active++;
    if (handle.served >= this.#opts.recycleAfterPages && handle.state === 'live') this.#retire(handle);
    let done = false;
    return {
      handle,
      release: () => {
        if (done) return;
        done = true;
        handle.active--;
        this.#checkMemory(handle);
        if (handle.state === 'retiring' && handle.active === 0) void this.#dispose(handle);
        releaseSlot();
      },
    };
  }

  /** Kills a browser that hangs or misbehaves; its in-flight pages fail, new pages get a new one. */
  kill(handle: BrowserHandle): void {
    if (handle.state !== 'dead') this.stats.hangs++;
    this.#markDead(handle);
    if (handle.pid) {
      try {
        process.kill(-handle.pid, 'SIGKILL'); // Playwright starts Chromium in its own process group
      } catch {
        try {
          process.kill(handle.pid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      }
    }
    void handle.browser.close().catch(() => {});
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const w of this.#waiters.splice(0))
      w.reject(new BrowserUnavailableError('The browser engine is shutting down'));
    const launching = this.#launching;
    if (launching) await launching.catch(() => {});
    await Promise.all([...this.#all].map((h) => this.#dispose(h)));
    this.#current = undefined;
  }

  #slot(signal: AbortSignal): Promise<void> {
    signal.throwIfAborted();
    if (this.#freeSlots > 0) {
      this.#freeSlots--;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve: () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        },
        reject: (err) => {
          signal.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      const onAbort = () => {
        const i = this.#waiters.indexOf(waiter);
        if (i >= 0) this.#waiters.splice(i, 1);
        this.stats.waiting = this.#waiters.length;
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(waiter);
      this.stats.waiting = this.#waiters.length;
    });
  }

  async #browser(signal: AbortSignal): Promise<BrowserHandle> {
    const current = this.#current;
    if (current && current.state === 'live' && current.browser.isConnected()) return current;
    if (current && current.state === 'live') this.#markDead(current);
    this.#launching ??= this.#launch().finally(() => (this.#launching = undefined));
    const launching = this.#launching;
    // The launch goes on for the next caller even if this one gives up.
    return await new Promise<BrowserHandle>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      launching.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  async #launch(): Promise<BrowserHandle> {
    const path = this.#opts.executablePath;
    if (!chromiumAvailable(path)) throw missingChromiumError(path);
    const before = chromiumPids(path);
    let browser: Browser;
    try {
      browser = await playwright().chromium.launch({
        executablePath: path,
        headless: true,
        args: CHROMIUM_ARGS,
        timeout: this.#opts.launchTimeoutMs,
        handleSIGINT: false,
        handleSIGTERM: false,
        handleSIGHUP: false,
      });
    } catch (err) {
      throw new BrowserUnavailableError(`Chromium at ${path} did not start: ${(err as Error).message.split('\n')[0]}`);
    }
    const pid = chromiumPids(path).find((p) => !before.includes(p));
    const handle: BrowserHandle = { browser, version: browser.version(), pid, served: 0, active: 0, state: 'live' };
    this.stats.launches++;
    this.#all.add(handle);
    browser.on('disconnected', () => {
      if (handle.state !== 'dead') {
        if (handle.state === 'live') this.stats.crashes++;
        this.#markDead(handle);
      }
    });
    if (this.#closed) {
      await this.#dispose(handle);
      throw new BrowserUnavailableError('The browser engine is shutting down');
    }
    this.#current = handle;
    return handle;
  }

  #retire(handle: BrowserHandle): void {
    handle.state = 'retiring';
    this.stats.recycles++;
    if (this.#current === handle) this.#current = undefined;
    if (handle.active === 0) void this.#dispose(handle);
  }

  // Retires a browser whose processes hold more than recycleAboveMb (measured at most every 2 s).
  #checkMemory(handle: BrowserHandle): void {
    const limit = this.#opts.recycleAboveMb;
    if (!limit || handle.state !== 'live' || !handle.pid) return;
    const now = Date.now();
    if (handle.memoryCheckedAt !== undefined && now - handle.memoryCheckedAt < MEMORY_CHECK_EVERY_MS) return;
    handle.memoryCheckedAt = now;
    if (processGroupRssMb(handle.pid) > limit) {
      this.stats.memoryRecycles++;
      this.#retire(handle);
    }
  }

  #markDead(handle: BrowserHandle): void {
    handle.state = 'dead';
    this.#all.delete(handle);
    if (this.#current === handle) this.#current = undefined;
  }

  async #dispose(handle: BrowserHandle): Promise<void> {
    const wasDead = handle.state === 'dead';
    handle.state = 'dead';
    this.#all.delete(handle);
    if (this.#current === handle) this.#current = undefined;
    if (wasDead && !handle.browser.isConnected()) {
      // It died (crashed or killed): its renderers and zygotes may outlive it; end the whole group.
      if (handle.pid) tryKill(-handle.pid);
      return;
    }
    // A polite close, then the process group if it does not go within 5 s.
    const timer = setTimeout(() => handle.pid && tryKill(-handle.pid), 5000);
    await handle.browser.close().catch(() => {});
    clearTimeout(timer);
  }
}

const MEMORY_CHECK_EVERY_MS = 2000;
const PAGE_BYTES = 4096;

/** Resident memory (MB) of every process in process group `pgid` (Linux /proc; 0 elsewhere). */
export function processGroupRssMb(pgid: number): number {
  let pages = 0;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Fields after the command: state ppid pgrp …
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pgid) continue;
      pages += Number(readFileSync(`/proc/${entry}/statm`, 'utf8').split(' ')[1]);
    } catch {
      /* exited meanwhile */
    }
  }
  return (pages * PAGE_BYTES) / 1024 / 1024;
}

function tryKill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
}

/** Pids of this process's direct children running the given executable (Linux; [] elsewhere). */
function chromiumPids(executablePath: string): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return out;
  }
  const name = executablePath.split('/').pop() ?? 'chromium';
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== process.pid) continue;
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0')[0];
      if (cmd === executablePath || cmd.endsWith(`/${name}`) || cmd.includes('chrom')) out.push(Number(entry));
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}
