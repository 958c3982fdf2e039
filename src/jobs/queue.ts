// The durable job queue (pg-boss 12 on the same database as everything else): queues, sends,
// handlers, schedules, a bounded stop. Handlers must be idempotent (at least once); the contract
// and the liveness figures: docs/design/jobs.md.
import { createHash } from 'node:crypto';
import { PgBoss, type ConstructorOptions, type JobInsert, type QueuePolicy } from 'pg-boss';
import type { Config } from '../config.ts';
import { type Handler, Pump } from './job-runner.ts';
import type { Log } from './log.ts';
import { pgliteAdapter } from './pglite-boss.ts';
import type { Db } from '../store/db-types.ts';

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
        : new PgBoss({
            ...common,
            connectionString: o.databaseUrl,
            max: o.maxConnections ?? 5,
            application_name: `gleaner-${o.instanceName ?? 'jobs'}`,
          });
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
    await this.boss.createQueue(name, {
      ...options,
      ...(max === undefined ? {} : { retryDelayMax: max }),
      policy: policy ?? 'standard',
      notify,
    });
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
  async schedule(
    name: string,
    cron: string,
    data: object = {},
    options: { tz?: string; key?: string } = {},
  ): Promise<void> {
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
      ...this.#beforeStop.map((fn) =>
        fn(graceful, deadline).catch((err: unknown) => this.#opts.log.warn({ err }, 'job queue: stop hook failed')),
      ),
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
      this.#opts.log.info(
        { queue: q.name, jobs: rows.length },
        'job queue: retrying jobs the previous process left running',
      );
    }
  }
}
