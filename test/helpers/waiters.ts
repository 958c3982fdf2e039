// Waiting for a condition on things that arrive (requests, deliveries, output, messages): the
// condition is checked when it is asked and after each arrival (notify), never on a timer.

export class Waiters {
  readonly #checks = new Set<() => void>();

  /** Re-checks every pending condition (call after each arrival). */
  notify(): void {
    for (const check of this.#checks) check();
  }

  /**
   * Resolves with fn's first value other than undefined and false; rejects when fn throws, or after
   * `timeoutMs` with the error of `timedOut`.
   */
  until<T>(fn: () => T | undefined | false, timeoutMs: number, timedOut: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const settle = (err: unknown, value?: T) => {
        this.#checks.delete(check);
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value as T);
      };
      const check = () => {
        let value: T | undefined | false;
        try {
          value = fn();
        } catch (err) {
          return settle(err);
        }
        if (value !== undefined && value !== false) settle(undefined, value);
      };
      const timer = setTimeout(() => settle(timedOut()), timeoutMs);
      this.#checks.add(check);
      check();
    });
  }
}
