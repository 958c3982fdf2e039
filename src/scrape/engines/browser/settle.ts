// The smart wait: after the document is parsed (and after each action that may change the page),
// wait until the page has settled: no request of the page in flight and none started for
// `quietMs`, and no node added, removed or text changed in the DOM for `quietMs` (attribute
// changes, e.g. animations, do not count). Pages that never settle (polling, streams, tickers)
// stop waiting at `maxMs`; the whole wait is always capped by the fetch's deadline.
import type { Page, Request } from 'playwright-core';

export interface SettleOptions {
  /** Quiet period for both network and DOM (ms). */
  quietMs: number;
  /** Longest settle wait (ms), deadline permitting. */
  maxMs: number;
}

/** Counts the page's requests in flight and remembers when the network last changed. */
export class NetworkTracker {
  readonly #inFlight = new Set<Request>();
  #lastActivity = Date.now();
  readonly #page: Page;
  readonly #onRequest = (r: Request) => {
    this.#inFlight.add(r);
    this.#lastActivity = Date.now();
  };
  readonly #onDone = (r: Request) => {
    this.#inFlight.delete(r);
    this.#lastActivity = Date.now();
  };

  constructor(page: Page) {
    this.#page = page;
    page.on('request', this.#onRequest);
    page.on('requestfinished', this.#onDone);
    page.on('requestfailed', this.#onDone);
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  get lastActivity(): number {
    return this.#lastActivity;
  }

  /** Resolves true once nothing has been in flight for quietMs, false at `until` (epoch ms). */
  async waitQuiet(quietMs: number, until: number): Promise<boolean> {
    for (;;) {
      const now = Date.now();
      if (this.#inFlight.size === 0 && now - this.#lastActivity >= quietMs) return true;
      if (now >= until || this.#page.isClosed()) return false;
      const due = this.#inFlight.size === 0 ? this.#lastActivity + quietMs - now : 25;
      await sleep(Math.max(5, Math.min(due, until - now, 50)));
    }
  }

  dispose(): void {
    this.#page.off('request', this.#onRequest);
    this.#page.off('requestfinished', this.#onDone);
    this.#page.off('requestfailed', this.#onDone);
  }
}

// Runs in the page: resolves true after `quiet` ms without a content mutation, false at `max`.
const DOM_QUIET = `([quiet, max]) => new Promise((resolve) => {
  let timer;
  const obs = new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(() => end(true), quiet); });
  const cap = setTimeout(() => end(false), max);
  function end(v) { obs.disconnect(); clearTimeout(timer); clearTimeout(cap); resolve(v); }
  obs.observe(document, { subtree: true, childList: true, characterData: true });
  timer = setTimeout(() => end(true), quiet);
})`;

async function domQuiet(page: Page, quietMs: number, maxMs: number): Promise<boolean> {
  if (maxMs <= 0) return false;
  try {
    return (await page.evaluate(`(${DOM_QUIET})(${JSON.stringify([quietMs, Math.ceil(maxMs)])})`)) as boolean;
  } catch (err) {
    if (page.isClosed()) throw err;
    // The document was replaced (navigation) while waiting: not settled yet.
    await sleep(25);
    return false;
  }
}

/** Waits for the page to settle (see the file comment); returns the time spent (ms). */
export async function settle(
  page: Page,
  tracker: NetworkTracker,
  opts: SettleOptions,
  deadline: number,
): Promise<number> {
  const started = Date.now();
  const until = Math.min(deadline, started + opts.maxMs);
  while (Date.now() < until) {
    const [netQuiet, dom] = await Promise.all([
      tracker.waitQuiet(opts.quietMs, until),
      domQuiet(page, opts.quietMs, until - Date.now()),
    ]);
    if (page.isClosed()) break;
    if (netQuiet && dom && tracker.inFlight === 0 && Date.now() - tracker.lastActivity >= opts.quietMs) break;
  }
  return Date.now() - started;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
