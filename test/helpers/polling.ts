// Conditions on state the test can only ask about (a status route, a table), checked every 100 ms,
// and what a fixture's request log says about concurrency. (Conditions on arrivals: waiters.ts.)
import { setTimeout as sleep } from 'node:timers/promises';
import type { RecordedRequest } from '../fixtures/site/index.ts';

/** Resolves with fn's first value other than undefined; fails naming `what` after `timeoutMs`. */
export async function waitUntil<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

/** Most requests in flight at once, from arrival and completion times. */
export function maxInFlight(reqs: RecordedRequest[]): number {
  const events = reqs.flatMap((r) => [
    [r.at, 1],
    [r.doneAt ?? Number.MAX_SAFE_INTEGER, -1],
  ]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let n = 0;
  let max = 0;
  for (const [, d] of events) max = Math.max(max, (n += d));
  return max;
}
