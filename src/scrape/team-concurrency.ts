// How many jobs of one team run at once in this process. Work beyond the limit waits its turn
// (first come, first served); the wait is reported so responses can say they were queued.
export interface Slot {
  /** Milliseconds spent waiting for the slot (0 when one was free). */
  waitedMs: number;
  release(): void;
}

export class TeamConcurrency {
  readonly #running = new Map<string, number>();
  readonly #waiting = new Map<string, (() => void)[]>();

  async acquire(teamId: string, max: number, signal?: AbortSignal): Promise<Slot> {
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
