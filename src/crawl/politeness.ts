// Per-host politeness for crawl pages: the crawler asks for a turn just before it fetches a page
// (Crawler #runPage, after the robots.txt check) and releases it when the fetch is over.
//
// Two limits, per host (URL host: name and non-default port; http and https share it):
// - Start interval, across every process and every crawl: request starts to a host are at least
//   max(GLEANER_HOST_MIN_INTERVAL_MS, robots.txt Crawl-delay) apart. Crawl-delay is read from the
//   group of the crawl's robotsUserAgent (default "Gleaner", which falls back to `User-agent: *`),
//   capped at GLEANER_MAX_CRAWL_DELAY seconds (0: ignored), and not applied when the crawl has
//   ignoreRobotsTxt. The shared state is one row per host in `host_politeness` (next_at: the
//   earliest time the next request may start), and a start is reserved by one atomic upsert:
//     INSERT … ON CONFLICT (host) DO UPDATE SET next_at = GREATEST(next_at, now) + interval
//   so two processes never get the same slot. A crawl's own `delay` is applied separately, at
//   admission (crawls.next_start_at → crawl_pages.available_at), so a crawl's pages are max(delay, interval) apart
//   while another crawl's `delay` never slows this one.
// - Requests at once (GLEANER_HOST_MAX_CONCURRENCY, default 8; 0: no cap): a counting semaphore
//   per host in each process and, on Postgres, across every process (src/store/shared-slots.ts:
//   a round trip to take and one to give per page; a dead process's slots free within its lease).
//   A page that gets neither within maxSleepMs goes back to the queue.
//
// Waiting never pins a frontier slot for long: a turn whose start is at most maxSleepMs (3 s) away
// is slept (holding the host's concurrency slot, so the request starts on time); a later one is
// handed back to the frontier (src/crawl/frontier.ts): the page's lease is released, the page is
// available again (`startAfter`) a little before the reserved start and keeps the reservation
// (crawl_pages.slot), and the run that claims it then sleeps the rest and goes (a run that comes too late reserves again: a lost slot only spaces
// requests further). Starts are reserved at most horizonMs (30 s) ahead; a page whose host is
// booked beyond that is sent back without a reservation, to a random time within the next
// horizon, so a cancelled crawl leaves at most horizonMs of reserved time behind it and waiting
// pages do not all wake at once. A page that cannot get a concurrency slot within maxSleepMs is
// sent back too (1–2 s later). The crawler re-reads the crawl's status after any wait, so a cancel
// still stops new pages at once.
//
// Times of reservations are the database's clock (clock_timestamp()), as are the frontier's
// available_at comparisons; local sleeps use the difference the same statement reported.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Queryable } from '../store/db-types.ts';
import type { SharedSlots } from '../store/shared-slots.ts';
import type { RobotsTxt } from './robots.ts';

export interface PolitenessOptions {
  db: Queryable;
  /** robots.txt lookups (the process's RobotsCache: the crawler has just read the same origin). */
  robots: { get(url: string, opts?: { signal?: AbortSignal }): Promise<Pick<RobotsTxt, 'crawlDelay'>> };
  /** Requests to one host at once in this process; 0: no cap. */
  hostMaxConcurrency: number;
  /** Least time between two request starts to one host, in every process. */
  hostMinIntervalMs: number;
  /** Largest Crawl-delay applied, in seconds; 0: Crawl-delay ignored. */
  maxCrawlDelaySeconds: number;
  /** Waits up to this are slept; longer ones go back to the queue. Default 3000. */
  maxSleepMs?: number;
  /** How far ahead a start may be reserved. Default 30000. */
  horizonMs?: number;
  /** A page put back with a reservation is due this long before it (pick-up latency). Default 2000. */
  leadMs?: number;
  /** Host slots shared by every process of the deployment (Postgres); none: per process only. */
  shared?: SharedSlots;
}

export interface TurnRequest {
  url: string;
  /** Apply robots.txt Crawl-delay (false when the crawl ignores robots.txt). */
  robots: boolean;
  /** The crawl's robotsUserAgent. */
  userAgent?: string;
  /** A start reserved by an earlier run of this page (`Later.slot`), ISO 8601. */
  slot?: string;
  signal: AbortSignal;
}

/** Fetch now; release() when the request is over (idempotent). `waited`: the turn was not immediate. */
export interface Go {
  go: true;
  waited: boolean;
  release(): void;
}

/** Not now: put the page back until `startAfter`, keeping `slot` (if any) for its next run. */
export interface Later {
  go: false;
  startAfter: Date;
  slot?: string;
}

export type Turn = Go | Later;

/** How late (ms) a run may come to a start reserved earlier and still use it. */
const LATE_TOLERANCE_MS = 50;
/** Rows of hosts idle this long are deleted (at most once per SWEEP_EVERY_MS per process). */
const SWEEP_IDLE = '1 hour';
const SWEEP_EVERY_MS = 10 * 60_000;

export class Politeness {
  readonly #o: Required<Omit<PolitenessOptions, 'shared'>>;
  readonly #shared: SharedSlots | undefined;
  readonly #hosts = new HostSlots();
  #lastSweep = Date.now();

  constructor(opts: PolitenessOptions) {
    this.#o = { maxSleepMs: 3000, horizonMs: 30_000, leadMs: 2000, ...opts };
    this.#shared = opts.shared;
  }

  /** The least interval between request starts for `url`'s host, in ms (0: none). */
  async intervalMs(url: string, opts: { robots: boolean; userAgent?: string; signal?: AbortSignal }): Promise<number> {
    let ms = this.#o.hostMinIntervalMs;
    if (opts.robots && this.#o.maxCrawlDelaySeconds > 0) {
      const delay = (await this.#o.robots.get(url, { signal: opts.signal })).crawlDelay(opts.userAgent);
      if (delay !== undefined) ms = Math.max(ms, Math.min(delay, this.#o.maxCrawlDelaySeconds) * 1000);
    }
    return Math.round(ms);
  }

  /** A turn to fetch `url` (file comment). Rejects only when `signal` aborts. */
  async take(req: TurnRequest): Promise<Turn> {
    const { maxSleepMs, horizonMs, leadMs } = this.#o;
    const host = new URL(req.url).host.toLowerCase();
    const interval = await this.intervalMs(req.url, req);
    const t0 = Date.now();
    const release = await this.#hostSlot(host, req.signal);
    if (!release) return { go: false, startAfter: new Date(Date.now() + 1000 + Math.random() * 1000) };
    let waited = Date.now() - t0 > 5;
    try {
      if (interval <= 0) return { go: true, waited, release };
      let wait: number | undefined;
      if (req.slot) {
        // Reserved by an earlier run: use it unless this run came too late for it.
        const { rows } = await this.#o.db.query<{ now: Date }>('SELECT clock_timestamp() AS now');
        const left = Date.parse(req.slot) - new Date(rows[0].now).getTime();
        if (left >= -LATE_TOLERANCE_MS) wait = Math.max(0, left);
      }
      if (wait === undefined) {
        const r = await this.#reserve(host, interval, horizonMs);
        if (!r.reserved) {
          release();
          // Booked beyond the horizon: come back (unreserved) at a random time within the next one.
          const at = r.nextAt - horizonMs + Math.random() * horizonMs;
          return { go: false, startAfter: new Date(Math.max(at, r.now + 1000)) };
        }
        wait = r.slot - r.now;
        if (wait > maxSleepMs) {
          release();
          return { go: false, startAfter: new Date(r.slot - leadMs), slot: new Date(r.slot).toISOString() };
        }
      }
      if (wait > 0) {
        waited = true;
        await sleep(wait, undefined, { signal: req.signal });
      }
      return { go: true, waited, release };
    } catch (err) {
      release();
      throw err;
    }
  }

  /** The host's concurrency slot, in this process and then in the deployment; undefined if none within maxSleepMs. */
  async #hostSlot(host: string, signal: AbortSignal): Promise<(() => void) | undefined> {
    const { hostMaxConcurrency: cap, maxSleepMs } = this.#o;
    const t0 = Date.now();
    const local = await this.#hosts.take(host, cap, maxSleepMs, signal);
    const shared = this.#shared;
    if (!local || !shared || cap <= 0) return local;
    try {
      for (let pause = 10; ; pause = Math.min(200, pause * 2)) {
        const id = await shared.tryTake(`host:${host}`, cap);
        if (id)
          return () => {
            local();
            void shared.give(id);
          };
        if (Date.now() - t0 + pause > maxSleepMs) {
          local();
          return undefined;
        }
        await sleep(pause, undefined, { signal });
      }
    } catch (err) {
      local();
      throw err;
    }
  }

  /** Reserves the next start for `host` `interval` ms after the last one, unless that is beyond the horizon. */
  async #reserve(
    host: string,
    interval: number,
    horizonMs: number,
  ): Promise<{ reserved: true; slot: number; now: number } | { reserved: false; nextAt: number; now: number }> {
    const { db } = this.#o;
    this.#sweep();
    const { rows } = await db.query<{ next: Date; now: Date }>(
      `INSERT INTO host_politeness AS h (host, next_at) VALUES ($1, clock_timestamp() + $2 * interval '1 millisecond')
       ON CONFLICT (host) DO UPDATE SET next_at = GREATEST(h.next_at, clock_timestamp()) + $2 * interval '1 millisecond'
         WHERE h.next_at <= clock_timestamp() + $3 * interval '1 millisecond'
       RETURNING next_at AS next, clock_timestamp() AS now`,
      [host, interval, horizonMs],
    );
    if (rows[0]) {
      const now = new Date(rows[0].now).getTime();
      return { reserved: true, slot: new Date(rows[0].next).getTime() - interval, now };
    }
    const { rows: cur } = await db.query<{ next: Date; now: Date }>(
      'SELECT next_at AS next, clock_timestamp() AS now FROM host_politeness WHERE host = $1',
      [host],
    );
    const now = new Date(cur[0]?.now ?? Date.now()).getTime();
    return { reserved: false, nextAt: cur[0] ? new Date(cur[0].next).getTime() : now, now };
  }

  #sweep(): void {
    if (Date.now() - this.#lastSweep < SWEEP_EVERY_MS) return;
    this.#lastSweep = Date.now();
    this.#o.db
      .query(`DELETE FROM host_politeness WHERE next_at < clock_timestamp() - interval '${SWEEP_IDLE}'`)
      .catch(() => undefined);
  }

  /** Requests to `host` running in this process now (tests, diagnostics). */
  running(host: string): number {
    return this.#hosts.running(host);
  }
}

/** Per-process counting semaphores per host. */
class HostSlots {
  readonly #hosts = new Map<string, { n: number; waiting: (() => void)[] }>();

  running(host: string): number {
    return this.#hosts.get(host)?.n ?? 0;
  }

  /** A release function, or undefined when no slot freed within `timeoutMs`; rejects when `signal` aborts. */
  async take(host: string, max: number, timeoutMs: number, signal: AbortSignal): Promise<(() => void) | undefined> {
    signal.throwIfAborted();
    let h = this.#hosts.get(host);
    if (!h) this.#hosts.set(host, (h = { n: 0, waiting: [] }));
    const slot = h;
    if (max <= 0 || slot.n < max) {
      slot.n++;
    } else {
      const granted = await new Promise<boolean>((resolve, reject) => {
        let done = false;
        const finish = (ok: boolean, err?: unknown) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          const i = slot.waiting.indexOf(grant);
          if (i >= 0) slot.waiting.splice(i, 1);
          if (err) reject(err);
          else resolve(ok);
        };
        // A release hands its slot over (n unchanged); a waiter that gave up has left the list.
        const grant = () => finish(true);
        const onAbort = () => finish(false, signal.reason);
        const timer = setTimeout(() => finish(false), timeoutMs);
        signal.addEventListener('abort', onAbort, { once: true });
        slot.waiting.push(grant);
      });
      if (!granted) {
        signal.throwIfAborted();
        return undefined;
      }
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = slot.waiting.shift();
      if (next) next();
      else if (--slot.n === 0 && slot.waiting.length === 0) this.#hosts.delete(host);
    };
  }
}
