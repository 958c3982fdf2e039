// One queue's workers in this process (JobQueue.work): up to `concurrency` jobs in flight, a slot
// refilled as soon as one frees, completions batched, heartbeats, failover and a bounded stop.
// Why not pg-boss's own work(): docs/design/jobs.md.
import type { JobAttempt, PgBoss } from 'pg-boss';
import type { Log } from './log.ts';

export interface Job<T> {
  id: string;
  name: string;
  data: T;
  /** 0 on the first attempt, n on the n-th retry. */
  retryCount: number;
  /** Aborted when this attempt should stop (expired, cancelled, failed over, shutdown past grace). */
  signal: AbortSignal;
}

export type Handler<T> = (job: Job<T>) => Promise<unknown> | unknown;

interface Running {
  attempt: JobAttempt;
  controller: AbortController;
  /** Failed over (expired, claim lost, shutdown): the handler's outcome no longer counts. */
  settled: boolean;
  done: Promise<void>;
}

export interface PumpOptions {
  boss: PgBoss;
  name: string;
  handler: Handler<unknown>;
  concurrency: number;
  pollIntervalMs: number;
  heartbeatSeconds: number;
  log: Log;
}

/** How long a fetch waits for more free slots, and a completion for others to record with it (ms). */
const GATHER_MS = 20;

/** One queue's workers in this process: keeps up to `concurrency` jobs running. */
export class Pump {
  readonly #o: PumpOptions;
  readonly #active = new Map<string, Running>();
  #loop: Promise<void> | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  #stopping = false;
  #wakeUp: (() => void) | undefined;
  #woken = false;
  #completions: JobAttempt[] = [];
  #flushing: Promise<void> | undefined;
  #flushTimer: NodeJS.Timeout | undefined;
  /** When the loop began waiting for more free slots before a fetch. */
  #gatherSince: number | undefined;

  constructor(o: PumpOptions) {
    this.#o = o;
  }

  get running(): number {
    return this.#active.size;
  }

  start(): void {
    this.#loop = this.#run();
    // Touch running jobs at half their heartbeat, in one statement; a job the touch no longer
    // finds active under our claim was cancelled or failed over: abort its handler.
    this.#heartbeat = setInterval(() => void this.#touch(), Math.max(1000, (this.#o.heartbeatSeconds * 1000) / 2));
  }

  wake(): void {
    this.#woken = true;
    this.#wakeUp?.();
  }

  async #run(): Promise<void> {
    const { boss, name, concurrency, pollIntervalMs, log } = this.#o;
    while (!this.#stopping) {
      const free = concurrency - this.#active.size;
      if (free <= 0) {
        await this.#sleep(); // a finishing job wakes us
        continue;
      }
      // More than half the slots busy: let a few more free up (at most GATHER_MS) so one fetch
      // fills several; every fetch is a statement, and on PGlite statements take the event loop.
      if (free < Math.ceil(concurrency / 2)) {
        const waited = Date.now() - (this.#gatherSince ??= Date.now());
        if (waited < GATHER_MS) {
          await this.#sleep(GATHER_MS - waited);
          continue;
        }
      }
      this.#gatherSince = undefined;
      this.#woken = false;
      let jobs;
      try {
        jobs = await boss.fetch<unknown>(name, { batchSize: free });
      } catch (err) {
        if (this.#stopping) break;
        log.error({ err, queue: name }, 'job queue: fetch failed');
        await this.#sleep(pollIntervalMs);
        continue;
      }
      for (const job of jobs) this.#begin(job.id, job.name, job.data, job.retryCount, job.expireInSeconds);
      if (jobs.length === 0) await this.#sleep(pollIntervalMs);
    }
  }

  #sleep(ms?: number): Promise<void> {
    if (this.#woken || this.#stopping) {
      this.#woken = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const done = () => {
        clearTimeout(timer);
        this.#wakeUp = undefined;
        this.#woken = false;
        resolve();
      };
      if (ms !== undefined) timer = setTimeout(done, ms);
      this.#wakeUp = done;
    });
  }

  #begin(id: string, name: string, data: unknown, retryCount: number, expireInSeconds: number): void {
    const controller = new AbortController();
    const attempt = { id, retryCount };
    const entry: Running = { attempt, controller, settled: false, done: Promise.resolve() };
    this.#active.set(id, entry);
    const expiry = setTimeout(() => {
      this.#failOver(entry, new JobExpiredError(`job ${id} expired after ${expireInSeconds} s`));
    }, expireInSeconds * 1000);
    entry.done = (async () => {
      let failure: unknown;
      let failed = false;
      try {
        await this.#o.handler({ id, name, data, retryCount, signal: controller.signal });
      } catch (err) {
        failed = true;
        failure = err;
      }
      clearTimeout(expiry);
      this.#active.delete(id);
      this.wake();
      if (entry.settled) return;
      entry.settled = true;
      if (!failed) this.#complete(attempt);
      else await this.#fail(attempt, failure);
    })();
  }

  // Completions wait up to GATHER_MS for company (one statement records them all), unless a
  // statement is already in flight (what arrives meanwhile goes in the next) or the pump stops.
  #complete(attempt: JobAttempt): void {
    this.#completions.push(attempt);
    if (this.#flushing || this.#flushTimer) return;
    if (this.#stopping || this.#completions.length >= this.#o.concurrency) this.#flushing = this.#flush();
    else this.#flushTimer = setTimeout(() => this.#flushNow(), GATHER_MS);
  }

  #flushNow(): void {
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    if (this.#completions.length) this.#flushing ??= this.#flush();
  }

  // Completions that arrive while one statement is in flight go together in the next.
  async #flush(): Promise<void> {
    while (this.#completions.length) {
      const batch = this.#completions.splice(0, 1000);
      for (let attempt = 1; ; attempt++) {
        try {
          await this.#o.boss.complete(this.#o.name, batch);
          break;
        } catch (err) {
          if (attempt >= 3) {
            // The jobs stay active without heartbeats and are retried after heartbeatSeconds.
            this.#o.log.error(
              { err, queue: this.#o.name, jobs: batch.length },
              'job queue: could not record completions',
            );
            break;
          }
          await new Promise((r) => setTimeout(r, 200 * attempt));
        }
      }
    }
    this.#flushing = undefined;
  }

  async #fail(attempt: JobAttempt, err: unknown): Promise<void> {
    const e = err instanceof Error ? err : new Error(String(err));
    this.#o.log.warn(
      { queue: this.#o.name, jobId: attempt.id, retryCount: attempt.retryCount, err: e },
      'job attempt failed',
    );
    try {
      await this.#o.boss.fail(this.#o.name, attempt, { name: e.name, message: e.message });
    } catch (failErr) {
      // Left active: the supervisor fails it over after heartbeatSeconds.
      this.#o.log.error(
        { err: failErr, queue: this.#o.name, jobId: attempt.id },
        'job queue: could not record a failure',
      );
    }
  }

  #failOver(entry: Running, reason: Error): void {
    if (entry.settled) return;
    entry.settled = true;
    entry.controller.abort(reason);
    void this.#fail(entry.attempt, reason);
  }

  async #touch(): Promise<void> {
    const entries = [...this.#active.values()].filter((e) => !e.settled);
    if (entries.length === 0) return;
    try {
      const res = (await this.#o.boss.touch(
        this.#o.name,
        entries.map((e) => e.attempt),
      )) as { settled?: string[] };
      if (!res.settled) return;
      const held = new Set(res.settled);
      for (const e of entries) {
        if (!held.has(e.attempt.id) && !e.settled) {
          // Cancelled, or failed over by a supervisor: someone else owns its fate now.
          e.settled = true;
          e.controller.abort(new JobClaimLostError(`job ${e.attempt.id} is no longer active under this worker`));
        }
      }
    } catch (err) {
      this.#o.log.warn({ err, queue: this.#o.name }, 'job queue: heartbeat failed');
    }
  }

  async stop(graceful: boolean, deadline: number): Promise<void> {
    this.#stopping = true;
    this.wake();
    await this.#loop;
    if (graceful && this.#active.size) {
      let timer: NodeJS.Timeout | undefined;
      const bound = new Promise<void>((r) => (timer = setTimeout(r, Math.max(0, deadline - Date.now()))));
      await Promise.race([Promise.all([...this.#active.values()].map((e) => e.done)), bound]);
      clearTimeout(timer);
    }
    clearInterval(this.#heartbeat);
    const left = [...this.#active.values()].filter((e) => !e.settled);
    for (const e of left) {
      e.settled = true;
      e.controller.abort(new JobShutdownError('the process stopped before the job finished'));
    }
    if (left.length) {
      this.#o.log.warn(
        { queue: this.#o.name, jobs: left.length },
        'job queue: stopping with jobs running; they will be retried',
      );
      try {
        await this.#o.boss.fail(
          this.#o.name,
          left.map((e) => e.attempt),
          { name: 'JobShutdownError', message: 'the process stopped before the job finished' },
        );
      } catch (err) {
        this.#o.log.error(
          { err, queue: this.#o.name },
          'job queue: could not release running jobs; they are retried after their heartbeat lapses',
        );
      }
    }
    this.#flushNow();
    await this.#flushing;
  }
}

export class JobExpiredError extends Error {
  override name = 'JobExpiredError';
}
export class JobClaimLostError extends Error {
  override name = 'JobClaimLostError';
}
export class JobShutdownError extends Error {
  override name = 'JobShutdownError';
}
