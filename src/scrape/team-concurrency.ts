// How many jobs of one team run at once. Work beyond the limit waits its turn (first come, first
// served within a process); the wait is reported so responses can say they were queued. On Postgres
// the limit holds across every process sharing the database: a job that has its process's slot then
// takes one of the team's shared slots (src/store/shared-slots.ts), polling while all are held.
import { setTimeout as sleep } from 'node:timers/promises';
import type { SharedSlots } from '../store/shared-slots.ts';

export interface Slot {
  /** Milliseconds spent waiting for the slot (0 when one was free). */
  waitedMs: number;
  release(): void;
}

/** Longest pause between two tries for a shared slot (the first pauses are shorter). */
const SHARED_POLL_MAX_MS = 200;

export class TeamConcurrency {
  readonly #running = new Map<string, number>();
  readonly #waiting = new Map<string, (() => void)[]>();
  readonly #shared: SharedSlots | undefined;

  /** `shared`: the slots every process of the deployment counts against (Postgres); none: this process only. */
  constructor(shared?: SharedSlots) {
    this.#shared = shared;
  }

  async acquire(teamId: string, max: number, signal?: AbortSignal): Promise<Slot> {
    const local = await this.#acquireLocal(teamId, max, signal);
    if (!this.#shared) return local;
    const started = Date.now();
    let id: string | null = null;
    let polled = false;
    try {
      for (let pause = 10; (id = await this.#shared.tryTake(`team:${teamId}`, max)) === null;) {
        polled = true;
        await sleep(pause, undefined, { signal });
        pause = Math.min(SHARED_POLL_MAX_MS, pause * 2);
      }
    } catch (err) {
      local.release();
      throw err;
    }
    const shared = this.#shared;
    return {
      waitedMs: local.waitedMs + (polled ? Math.max(1, Date.now() - started) : 0),
      release: () => {
        local.release();
        void shared.give(id);
      },
    };
  }

  async #acquireLocal(teamId: string, max: number, signal?: AbortSignal): Promise<Slot> {
    const started = Date.now();
    // Only a real wait counts: two clock reads around no wait at all can still differ (a GC pause,
    // a millisecond boundary), and that must not report the request as queued.
    const mustWait = (this.#running.get(teamId) ?? 0) >= max;
    if (mustWait) {
      await new Promise<void>((resolve, reject) => {
        const queue = this.#waiting.get(teamId) ?? [];
        this.#waiting.set(teamId, queue);
        const wake = () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          queue.splice(queue.indexOf(wake), 1);
          reject(signal!.reason);
        };
        queue.push(wake);
        signal?.addEventListener('abort', onAbort, { once: true });
      });
    } else {
      this.#running.set(teamId, (this.#running.get(teamId) ?? 0) + 1);
    }
    let released = false;
    return {
      waitedMs: mustWait ? Math.max(1, Date.now() - started) : 0,
      release: () => {
        if (released) return;
        released = true;
        const next = this.#waiting.get(teamId)?.shift();
        // The slot passes straight to the next waiter; otherwise it is freed.
        if (next) next();
        else this.#running.set(teamId, (this.#running.get(teamId) ?? 1) - 1);
      },
    };
  }

  running(teamId: string): number {
    return this.#running.get(teamId) ?? 0;
  }
}
