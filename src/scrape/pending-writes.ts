// Writes a single scrape makes after its answer has gone out: the stored document, the charge and
// the job's completion (one statement), and the page-cache copy. The caller has the document
// already; making it wait for ~2 ms of storage per 200 KB page bought nothing but latency.
//
// Read-your-writes stays true within the process: a request of the same team waits for that
// team's writes before it runs (src/app.ts), GET /v2/scrape/{id} for its job's, and a scrape that
// may read the cache for the page's key. Another process sees them a few ms later (GET
// /v2/scrape/{id} there waits while the job is still active). Shutdown drains them before the
// database closes; only a crash inside those ms loses them (the caller still has the document;
// the charge and the stored copy are what is lost).
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
