// Writes a single scrape makes after its answer has gone out: the stored document, the charge and
// the job's completion (one statement), and the page-cache copy. Why, and how read-your-writes
// stays true: docs/design/scrape.md ("Writes after the answer").
export class PendingWrites {
  readonly #byTeam = new Map<string, Set<Promise<void>>>();
  readonly #byJob = new Map<string, Promise<void>>();
  readonly #byKey = new Map<string, Promise<void>>();
  readonly #all = new Set<Promise<void>>();

  /** Tracks `write` (which must not reject: failures are the writer's to log) until it settles. */
  track(write: Promise<void>, owner: { teamId: string; jobId?: string; cacheKey?: string }): void {
    const { teamId, jobId, cacheKey } = owner;
    this.#all.add(write);
    let team = this.#byTeam.get(teamId);
    if (!team) this.#byTeam.set(teamId, (team = new Set()));
    team.add(write);
    if (jobId) this.#byJob.set(jobId, write);
    if (cacheKey) this.#byKey.set(cacheKey, write);
    void write.finally(() => {
      this.#all.delete(write);
      team.delete(write);
      if (team.size === 0 && this.#byTeam.get(teamId) === team) this.#byTeam.delete(teamId);
      if (jobId && this.#byJob.get(jobId) === write) this.#byJob.delete(jobId);
      if (cacheKey && this.#byKey.get(cacheKey) === write) this.#byKey.delete(cacheKey);
    });
  }

  /** Settles once the team's writes begun so far are done; undefined when there are none. */
  forTeam(teamId: string): Promise<unknown> | undefined {
    const team = this.#byTeam.get(teamId);
    return team?.size ? Promise.all(team) : undefined;
  }

  forJob(jobId: string): Promise<void> | undefined {
    return this.#byJob.get(jobId);
  }

  forCacheKey(cacheKey: string): Promise<void> | undefined {
    return this.#byKey.get(cacheKey);
  }

  get size(): number {
    return this.#all.size;
  }

  /** Settles when every write begun so far is done (shutdown, before the database closes). */
  async drain(): Promise<void> {
    while (this.#all.size) await Promise.all(this.#all);
  }
}
