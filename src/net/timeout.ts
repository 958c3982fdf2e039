// A timeout signal that is let go when the work ends. AbortSignal.timeout(ms) keeps its signal,
// its timer and whatever listens to it (AbortSignal.any's composites, their listener sets) alive
// until the time is up, however soon the work ended: a crawl at 700 pages a second with 30–60 s
// timeouts held some 150,000 signals and 90,000 timers, and the service's live heap grew from 90
// to 180 MB over 100,000 pages. Cleared, they go with the work.

export interface Timeout {
  /** Aborted after `ms` with a "TimeoutError" DOMException, as AbortSignal.timeout's is. */
  readonly signal: AbortSignal;
  /** The work is over: the timer goes (the signal stays as it is). */
  clear(): void;
}

export function timeoutSignal(ms: number): Timeout {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    ms,
  );
  // As AbortSignal.timeout's: a pending timeout does not keep the process alive.
  timer.unref();
  return { signal: controller.signal, clear: () => clearTimeout(timer) };
}
