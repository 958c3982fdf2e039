// The durable job queue that crawls, batch scrapes and webhook deliveries run on: pg-boss 12 on
// the same database as everything else. On Postgres pg-boss keeps its own small pool (same
// DATABASE_URL, tables in a schema of their own, GLEANER_QUEUE_SCHEMA) so any number of API and
// worker processes share the queues; on PGlite it runs through our Db, in the one process that
// owns ./data.
//
// Contract for handlers (read this before writing one):
// - At least once. A job runs again when its handler throws (after a backoff), when its attempt
//   outlives expireInSeconds, when the process running it dies (no heartbeat for
//   heartbeatSeconds), or when the process stops before the handler returns. A handler may even
//   have finished its work when the process dies before the completion is recorded. So handlers
//   must be idempotent: write results keyed by something stable (the job's id or a natural key,
//   INSERT … ON CONFLICT DO NOTHING) so that a second run changes nothing.
// - Each of those re-runs counts as an attempt: after retryLimit retries the job is `failed` for good.
// - job.signal aborts when the attempt expires, when the job is cancelled, when another process's
//   supervisor has failed it over (its heartbeat was lost), or at shutdown past the grace period.
//   Handlers should pass it to fetches and stop promptly; their result is ignored from then on.
//
// Liveness, in figures (defaults): an active job's process refreshes its heartbeat every
// heartbeatSeconds/2 (5 s); every process supervises the queues every heartbeatSeconds/2 (5 s,
// one process per pass through a claim in the database) and fails the jobs whose heartbeat is
// older than heartbeatSeconds (10 s), which puts them back to `retry` after the queue's retry
// delay. A killed worker's jobs are therefore running again elsewhere within about
// heartbeatSeconds + heartbeatSeconds/2 + retry delay + one poll: ≈ 17 s at the defaults
// (measured in test/jobs/queue.test.ts). On PGlite, start-up fails over whatever the previous
// process left active at once, since nothing else can be running it.
//
// Why not pg-boss's own work(): its workers wait out the polling interval after every fetch
// unless they fetch full batches, and a batch is held until its slowest job ends. Here each queue
// keeps `concurrency` jobs in flight and refills a slot as soon as one frees, batches the
// completions into one statement (waiting up to 20 ms for company; when more than half the slots
// are busy a refill also waits up to 20 ms so one fetch fills several: on PGlite every statement
// takes the event loop), and a send() wakes idle workers at once (in this process
// directly, in others through pg-boss's NOTIFY on Postgres); pg-boss still does the claiming (FOR UPDATE SKIP LOCKED), retries, expiry, heartbeats,
// supervision, schedules and retention.
import { createHash } from 'node:crypto';
import { PgBoss, type ConstructorOptions, type Db as BossDb, type JobAttempt, type JobInsert, type QueuePolicy } from 'pg-boss';
import type { Config } from '../config.ts';
import type { Db } from '../store/db-types.ts';

/** The logger methods the queue uses (pino's and Fastify's loggers fit). */
export interface Log {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface QueueSettings {
  /** Retries after the first attempt before the job is `failed` for good. Default 3. */
  retryLimit?: number;
  /** Seconds before a retry. Default 2. With retryBackoff: the base of the exponential backoff. */
  retryDelay?: number;
  /**
   * Exponential backoff with jitter (default true): the n-th retry waits
   * retryDelay × 2^(n-1) × (1 … 2) seconds, at most retryDelayMax. Without: retryDelay each time.
   */
  retryBackoff?: boolean;
  /** Longest wait between retries, in seconds. Default 300. */
  retryDelayMax?: number;
  /** Seconds one attempt may run: then job.signal aborts and the attempt counts as failed. Default 900. */
  expireInSeconds?: number;
  /** Seconds without a heartbeat after which an active job is failed over. >= 10; default GLEANER_JOB_HEARTBEAT_SECONDS. */
  heartbeatSeconds?: number;
  /**
   * What singletonKey deduplicates (pg-boss policies): `standard` (default) only with
   * singletonSeconds; `short`: one queued job per key; `singleton`: one active job per key;
   * `stately`: one queued and one active; `exclusive`: one queued-or-active job per key.
   * Fixed when the queue is first created.
   */
  policy?: Extract<QueuePolicy, 'standard' | 'short' | 'singleton' | 'stately' | 'exclusive'>;
  /** Seconds completed, failed and cancelled jobs are kept. Default 86400 (a day). */
  deleteAfterSeconds?: number;
  /** Seconds a job may wait in the queue before it is dropped. Default 14 days. */
  retentionSeconds?: number;
}

export interface SendOptions {
  /** A UUID of your own: a second job with the same id in the same queue is not created (while the first is kept). */
  id?: string;
  /** Deduplication key; what it deduplicates depends on the queue's policy (and singletonSeconds). */
  singletonKey?: string;
  /** One job per key (or per queue without a key) per time slot of this many seconds, on any policy. */
  singletonSeconds?: number;
  /** Not before: a Date, seconds from now, or an ISO 8601 string. */
  startAfter?: Date | number | string;
  /** Higher runs first. Default 0. */
  priority?: number;
  retryLimit?: number;
  retryDelay?: number;
  retryBackoff?: boolean;
  expireInSeconds?: number;
}

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

export interface WorkOptions {
  /** Jobs of this queue this process runs at once. Default: the queue's `workers` (GLEANER_WORKERS). */
  concurrency?: number;
  /** How often an idle worker looks for jobs sent by other processes, scheduled or retried. */
  pollIntervalMs?: number;
}

export interface JobInfo<T = unknown> {
  id: string;
  name: string;
  data: T;
  state: 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';
  retryCount: number;
  singletonKey: string | null;
  startAfter: Date;
  /** The last error of a failed attempt ({message, name, …}), or null. */
  output: unknown;
}

export interface JobQueueOptions {
  /** The store. On PGlite pg-boss runs through it; on Postgres pg-boss keeps a pool of its own (databaseUrl). */
  db: Db;
  /** Postgres: pg-boss's own pool connects here (required when db.kind is 'postgres'). */
  databaseUrl?: string;
  /** Schema of pg-boss's tables. */
  schema: string;
  /** Default concurrency of each queue's workers in this process; 0: this process runs no jobs. */
  workers: number;
  /** Default heartbeatSeconds of queues (>= 10). */
  heartbeatSeconds: number;
  log: Log;
  /** Default WorkOptions.pollIntervalMs. Default 1000. */
  pollIntervalMs?: number;
  /** Seconds between supervision passes (expiry, lost heartbeats, retention). Default heartbeatSeconds/2. */
  superviseIntervalSeconds?: number;
  /** Seconds between checks for due schedules (so a schedule fires up to this late). Default 30. */
  cronIntervalSeconds?: number;
  /** Shown in pg-boss's instance registry, e.g. "api" or "worker". */
  instanceName?: string;
  /** Size of pg-boss's own Postgres pool. Default 5. */
  maxConnections?: number;
}

export interface StopOptions {
  /** Wait for running handlers (up to timeoutMs) before failing them over. Default true. */
  graceful?: boolean;
  /** Default 10000. */
  timeoutMs?: number;
}

const QUEUE_DEFAULTS = {
  retryLimit: 3,
  retryDelay: 2,
  retryBackoff: true,
  retryDelayMax: 300,
  expireInSeconds: 900,
  deleteAfterSeconds: 86400,
};

/** The queue as the service and `npm run worker` configure it. */
export function jobQueueFromConfig(config: Config, db: Db, log: Log, instanceName?: string): JobQueue {
  return new JobQueue({
    db,
    databaseUrl: config.databaseUrl,
    schema: config.queueSchema,
    workers: config.workers,
    heartbeatSeconds: config.jobHeartbeatSeconds,
    log,
    instanceName,
  });
}

export class JobQueue {
  readonly #opts: JobQueueOptions;
  readonly #pumps = new Map<string, Pump>();
  #boss: PgBoss | undefined;
  #listener: { close(): Promise<void> } | undefined;
  #stopping: Promise<void> | undefined;
  readonly #beforeStop: ((graceful: boolean, deadline: number) => Promise<void>)[] = [];

  constructor(opts: JobQueueOptions) {
    if (opts.db.kind === 'postgres' && !opts.databaseUrl) throw new Error('JobQueue on Postgres needs databaseUrl');
    this.#opts = opts;
  }

  /** Default concurrency of this process's workers (0: it runs no jobs). */
  get workers(): number {
    return this.#opts.workers;
  }

  /** pg-boss itself, for what this wrapper does not cover (findJobs, getQueues…). */
  get boss(): PgBoss {
    if (!this.#boss) throw new Error('JobQueue is not started');
    return this.#boss;
  }

  /** Creates or migrates pg-boss's schema (under an advisory lock, so processes may start together) and starts supervision and schedules. */
  async start(): Promise<void> {
    const o = this.#opts;
    const supervise = o.superviseIntervalSeconds ?? Math.max(1, Math.floor(o.heartbeatSeconds / 2));
    const common: ConstructorOptions = {
      schema: o.schema,
      supervise: true,
      superviseIntervalSeconds: supervise,
      monitorIntervalSeconds: supervise,
      // Completed jobs are deleted after deleteAfterSeconds by this pass.
      maintenanceIntervalSeconds: 3600,
      schedule: true,
      cronMonitorIntervalSeconds: o.cronIntervalSeconds ?? 30,
      cronWorkerIntervalSeconds: Math.min(5, o.cronIntervalSeconds ?? 5),
      instanceName: o.instanceName,
      openTelemetry: { enabled: false },
    };
    const boss =
      o.db.kind === 'pglite'
        ? new PgBoss({ ...common, backend: 'pglite', db: pgliteAdapter(o.db) })
        : new PgBoss({ ...common, connectionString: o.databaseUrl, max: o.maxConnections ?? 5, application_name: `gleaner-${o.instanceName ?? 'jobs'}` });
    boss.on('error', (err) => o.log.error({ err }, 'job queue error'));
    boss.on('warning', (w) => o.log.warn({ data: w.data }, `job queue: ${w.message}`));
    await boss.start();
    this.#boss = boss;
    if (o.db.kind === 'pglite') await this.#failOverOrphans();
    else await this.#listen();
  }

  // Postgres: a job sent by another process wakes this one's idle workers through pg-boss's
  // NOTIFY (queues are created with notify), instead of at their next poll. Only a latency hint:
  // polling stays the floor. (On PGlite every send is in this process and wakes workers itself.)
  async #listen(): Promise<void> {
    const db = this.boss.getDb();
    if (!db.listen) return;
    // pg-boss's channel for a schema (plans.notifyChannelSql).
    const channel = `pgboss_${createHash('sha224').update(this.#opts.schema).digest('hex').slice(0, 24)}`;
    const wakeAll = () => {
      for (const p of this.#pumps.values()) p.wake();
    };
    try {
      this.#listener = await db.listen(channel, (name) => this.#pumps.get(name)?.wake(), wakeAll);
    } catch (err) {
      this.#opts.log.warn({ err }, 'job queue: LISTEN failed; workers poll only');
    }
  }

  /**
   * Creates the queue if it does not exist and applies these settings to it (jobs sent later
   * inherit them; `policy` is fixed at creation). Idempotent: every process calls it at start.
   */
  async createQueue(name: string, settings: QueueSettings = {}): Promise<void> {
    const { policy, ...rest } = settings;
    const { retryDelayMax, ...options } = { ...QUEUE_DEFAULTS, heartbeatSeconds: this.#opts.heartbeatSeconds, ...rest };
    // pg-boss takes a maximum only with backoff (and null clears one set before).
    const max = options.retryBackoff ? retryDelayMax : undefined;
    const notify = this.#opts.db.kind === 'postgres';
    await this.boss.createQueue(name, { ...options, ...(max === undefined ? {} : { retryDelayMax: max }), policy: policy ?? 'standard', notify });
    await this.boss.updateQueue(name, { ...options, retryDelayMax: max ?? null, notify });
  }

  /** Adds a job; resolves to its id, or null when a singleton key or id deduplicated it. */
  async send<T extends object>(name: string, data: T, options: SendOptions = {}): Promise<string | null> {
    const id = await this.boss.send(name, data, options);
    this.#pumps.get(name)?.wake();
    return id;
  }

  /** Adds many jobs in one statement; resolves to the ids of those created (deduplicated ones are left out). */
  async sendMany<T extends object>(name: string, jobs: { data: T; options?: SendOptions }[]): Promise<string[]> {
    if (jobs.length === 0) return [];
    const rows: JobInsert[] = jobs.map(({ data, options }) => ({ data, ...options }));
    const ids = (await this.boss.insert(name, rows, { returnId: true })) ?? [];
    this.#pumps.get(name)?.wake();
    return ids;
  }

  /**
   * Runs `handler` for the queue's jobs in this process, `concurrency` at once (nothing when this
   * process has workers = 0). A handler that resolves completes its job; one that throws fails
   * the attempt, and the job is retried per the queue's settings. One handler per queue per process.
   */
  async work<T = unknown>(name: string, options: WorkOptions, handler: Handler<T>): Promise<void>;
  async work<T = unknown>(name: string, handler: Handler<T>): Promise<void>;
  async work<T = unknown>(name: string, a: WorkOptions | Handler<T>, b?: Handler<T>): Promise<void> {
    const options = typeof a === 'function' ? {} : a;
    const handler = (typeof a === 'function' ? a : b) as Handler<unknown>;
    if (this.#pumps.has(name)) throw new Error(`a handler for queue ${name} is already registered`);
    if (this.#stopping) throw new Error('JobQueue is stopping');
    const concurrency = options.concurrency ?? this.#opts.workers;
    if (concurrency <= 0 || this.#opts.workers <= 0) return;
    const queue = await this.boss.getQueue(name);
    if (!queue) throw new Error(`queue ${name} does not exist: createQueue first`);
    const pump = new Pump({
      boss: this.boss,
      name,
      handler,
      concurrency,
      pollIntervalMs: options.pollIntervalMs ?? this.#opts.pollIntervalMs ?? 1000,
      heartbeatSeconds: queue.heartbeatSeconds ?? this.#opts.heartbeatSeconds,
      log: this.#opts.log,
    });
    this.#pumps.set(name, pump);
    pump.start();
  }

  /** Cancels jobs (queued or active: a running handler's signal aborts at its next heartbeat). */
  async cancel(name: string, ids: string | string[]): Promise<void> {
    await this.boss.cancel(name, ids);
  }

  /**
   * Sends `data` to queue `name` on a cron schedule (UTC unless `tz`): at most one job a minute
   * per schedule, sent up to cronIntervalSeconds (30 s) after it is due; occurrences missed while
   * no process ran are skipped. Every process may call it: one schedule per name (and key), each
   * occurrence sent once.
   */
  async schedule(name: string, cron: string, data: object = {}, options: { tz?: string; key?: string } = {}): Promise<void> {
    await this.boss.schedule(name, cron, data, options);
  }

  async unschedule(name: string, key?: string): Promise<void> {
    await this.boss.unschedule(name, key);
  }

  /** One job's state, or null when it does not exist (any more). */
  async getJob<T = unknown>(name: string, id: string): Promise<JobInfo<T> | null> {
    const [job] = await this.boss.findJobs<T>(name, { id });
    if (!job) return null;
    const { state, retryCount, singletonKey, startAfter, output, data } = job;
    return { id: job.id, name: job.name, data: data as T, state, retryCount, singletonKey, startAfter, output };
  }

  /** Jobs running in this process now, per queue. */
  running(): Record<string, number> {
    return Object.fromEntries([...this.#pumps].map(([name, p]) => [name, p.running]));
  }

  /**
   * Stops fetching, lets running handlers finish within timeoutMs (graceful), then fails over the
   * ones still running (they are retried by whichever process takes them next), records pending
   * completions and closes pg-boss. The Db itself stays open (its owner closes it).
   */
  stop(options: StopOptions = {}): Promise<void> {
    this.#stopping ??= this.#stop(options.graceful ?? true, options.timeoutMs ?? 10_000);
    return this.#stopping;
  }

  /** Runs `fn` when the queue starts stopping, beside its own workers (work outside pg-boss that sends jobs: the crawl frontier). */
  beforeStop(fn: (graceful: boolean, deadline: number) => Promise<void>): void {
    this.#beforeStop.push(fn);
  }

  async #stop(graceful: boolean, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await Promise.all([
      ...[...this.#pumps.values()].map((p) => p.stop(graceful, deadline)),
      ...this.#beforeStop.map((fn) => fn(graceful, deadline).catch((err: unknown) => this.#opts.log.warn({ err }, 'job queue: stop hook failed'))),
    ]);
    await this.#listener?.close().catch(() => undefined);
    await this.#boss?.stop({ graceful, close: true, timeout: Math.max(1000, deadline - Date.now()) });
  }

  // PGlite: this process is the only one on the data, so jobs left active by the previous one
  // (killed, crashed) are running nowhere. Fail them over now rather than after a heartbeat.
  async #failOverOrphans(): Promise<void> {
    const boss = this.boss;
    for (const q of await boss.getQueues()) {
      const { rows } = await this.#opts.db.query<{ id: string; retry_count: number }>(
        `SELECT id, retry_count FROM ${this.#opts.schema}.${q.table} WHERE name = $1 AND state = 'active'`,
        [q.name],
      );
      if (rows.length === 0) continue;
      const attempts = rows.map((r) => ({ id: r.id, retryCount: r.retry_count }));
      await boss.fail(q.name, attempts, { message: 'the process running this job stopped' });
      this.#opts.log.info({ queue: q.name, jobs: rows.length }, 'job queue: retrying jobs the previous process left running');
    }
  }
}

/** pg-boss's db option over our Db: parameterised statements through query, parameterless (possibly several) through execRows. */
function pgliteAdapter(db: Db): BossDb {
  return {
    async executeSql(text: string, values?: unknown[]) {
      if (values?.length) return db.query(text, values);
      try {
        return { rows: (await db.execRows(text)).flat() };
      } catch (err) {
        // A failed statement inside pg-boss's BEGIN … COMMIT would leave the single PGlite session
        // in an aborted transaction for everyone; end it (a no-op outside a transaction).
        await db.exec('ROLLBACK').catch(() => undefined);
        throw err;
      }
    },
  };
}

interface Running {
  attempt: JobAttempt;
  controller: AbortController;
  /** Failed over (expired, claim lost, shutdown): the handler's outcome no longer counts. */
  settled: boolean;
  done: Promise<void>;
}

interface PumpOptions {
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
class Pump {
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
            this.#o.log.error({ err, queue: this.#o.name, jobs: batch.length }, 'job queue: could not record completions');
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
    this.#o.log.warn({ queue: this.#o.name, jobId: attempt.id, retryCount: attempt.retryCount, err: e }, 'job attempt failed');
    try {
      await this.#o.boss.fail(this.#o.name, attempt, { name: e.name, message: e.message });
    } catch (failErr) {
      // Left active: the supervisor fails it over after heartbeatSeconds.
      this.#o.log.error({ err: failErr, queue: this.#o.name, jobId: attempt.id }, 'job queue: could not record a failure');
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
      this.#o.log.warn({ queue: this.#o.name, jobs: left.length }, 'job queue: stopping with jobs running; they will be retried');
      try {
        await this.#o.boss.fail(
          this.#o.name,
          left.map((e) => e.attempt),
          { name: 'JobShutdownError', message: 'the process stopped before the job finished' },
        );
      } catch (err) {
        this.#o.log.error({ err, queue: this.#o.name }, 'job queue: could not release running jobs; they are retried after their heartbeat lapses');
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
