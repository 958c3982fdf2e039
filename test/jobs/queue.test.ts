// The durable job queue (src/jobs/queue.ts) on every store: round trip, retries with backoff,
// deduplication, cancel, schedules, graceful stop, the service's embedded workers and a PGlite
// restart; on Postgres, worker processes sharing a queue, one of them killed mid-run. Prints
// jobs/s per store (measured, not asserted).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { JobQueue, type JobQueueOptions } from '../../src/jobs/queue.ts';
import { type NodeProcess, startNode } from '../helpers/process.ts';
import { startTestService, storeKinds, testEnv, type StoreKind } from '../helpers/service.ts';
import { openStore } from '../../src/runtime.ts';
import type { Job } from '../../src/jobs/job-runner.ts';
import type { Db } from '../../src/store/db-types.ts';

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

interface Store {
  db: Db;
  env: Record<string, string>;
  queueSchema: string;
  queue(opts?: Partial<JobQueueOptions>): Promise<JobQueue>;
}

/** A fresh store (PGlite directory or Postgres schemas) and started queues on it, all cleaned up after the file. */
async function openTestStore(kind: StoreKind): Promise<Store> {
  const { env, cleanup } = await testEnv(kind);
  const config = loadConfig(env);
  const db = await openStore(config);
  const queues: JobQueue[] = [];
  cleanups.push(async () => {
    for (const q of queues) await q.stop({ graceful: false }).catch(() => undefined);
    await db.close();
    await cleanup();
  });
  return {
    db,
    env,
    queueSchema: config.queueSchema,
    async queue(opts = {}) {
      const q = new JobQueue({
        db,
        databaseUrl: config.databaseUrl,
        schema: config.queueSchema,
        workers: 8,
        heartbeatSeconds: 10,
        log,
        pollIntervalMs: 100,
        superviseIntervalSeconds: 1,
        cronIntervalSeconds: 1,
        ...opts,
      });
      queues.push(q);
      await q.start();
      return q;
    },
  };
}

async function waitFor<T>(what: string, fn: () => Promise<T | undefined> | T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

async function stateOf(store: Store, id: string): Promise<string | undefined> {
  const { rows } = await store.db.query<{ state: string }>(
    `SELECT state::text AS state FROM ${store.queueSchema}.job WHERE id = $1`,
    [id],
  );
  return rows[0]?.state;
}

for (const kind of storeKinds) {
  describe(`job queue on ${kind}`, () => {
    let store: Store;
    let queue: JobQueue;

    test('start: a queue over the store', async () => {
      store = await openTestStore(kind);
      queue = await store.queue();
    });

    test('send → work round trip; a send wakes an idle worker at once; sendMany', async () => {
      await queue.createQueue('echo');
      const seen: Job<{ n: number }>[] = [];
      let gotAt = 0;
      await queue.work<{ n: number }>('echo', { pollIntervalMs: 5000 }, async (job) => {
        gotAt ||= Date.now();
        seen.push(job);
      });
      await sleep(150); // the worker's first fetch found nothing: it now sleeps up to 5 s
      const sentAt = Date.now();
      const id = await queue.send('echo', { n: 1 });
      assert.ok(id);
      await waitFor('the job', () => seen.length === 1);
      assert.ok(gotAt - sentAt < 1000, `picked up after ${gotAt - sentAt} ms, not at the next poll`);
      assert.equal(seen[0].id, id);
      assert.deepEqual(seen[0].data, { n: 1 });
      assert.equal(seen[0].retryCount, 0);
      assert.equal(seen[0].signal.aborted, false);
      await waitFor('completed', async () => (await queue.getJob('echo', id))?.state === 'completed');

      const ids = await queue.sendMany(
        'echo',
        [2, 3, 4].map((n) => ({ data: { n } })),
      );
      assert.equal(ids.length, 3);
      await waitFor('three more', () => seen.length === 4);
      assert.deepEqual(seen.map((j) => j.data.n).sort(), [1, 2, 3, 4]);
    });

    test('a failing handler is retried with exponential backoff, then marked failed', async () => {
      await queue.createQueue('flaky', { retryLimit: 2, retryDelay: 1, retryBackoff: true });
      const attempts: { at: number; retryCount: number; key: string }[] = [];
      await queue.work<{ key: string }>('flaky', async (job) => {
        attempts.push({ at: Date.now(), retryCount: job.retryCount, key: job.data.key });
        if (job.data.key === 'always' || job.retryCount === 0) throw new Error(`boom ${job.retryCount}`);
      });
      const always = (await queue.send('flaky', { key: 'always' }))!;
      const once = (await queue.send('flaky', { key: 'once' }))!;
      const failed = await waitFor('failed for good', async () => {
        const j = await queue.getJob('flaky', always);
        return j?.state === 'failed' ? j : undefined;
      });
      assert.equal(failed.retryCount, 2);
      assert.match(JSON.stringify(failed.output), /boom 2/);
      const runs = attempts.filter((a) => a.key === 'always');
      assert.deepEqual(
        runs.map((a) => a.retryCount),
        [0, 1, 2],
        'one attempt plus retryLimit retries',
      );
      // Backoff with jitter: retry n waits retryDelay × 2^(n-1) × (1 … 2): 1–2 s, then 2–4 s.
      const gaps = [runs[1].at - runs[0].at, runs[2].at - runs[1].at];
      assert.ok(gaps[0] >= 900 && gaps[0] < 3000, `first retry after ${gaps[0]} ms`);
      assert.ok(gaps[1] >= 1900 && gaps[1] < 5500, `second retry after ${gaps[1]} ms`);
      assert.equal((await queue.getJob('flaky', once))?.state, 'completed', 'a retry that succeeds completes the job');
    });

    test('singletonKey deduplicates per the queue policy; ids deduplicate too', async () => {
      await queue.createQueue('single', { policy: 'exclusive' });
      const first = await queue.send('single', { v: 1 }, { singletonKey: 'https://a.example/', startAfter: 60 });
      assert.ok(first);
      assert.equal(
        await queue.send('single', { v: 2 }, { singletonKey: 'https://a.example/' }),
        null,
        'same key while queued',
      );
      assert.ok(
        await queue.send('single', { v: 3 }, { singletonKey: 'https://b.example/', startAfter: 60 }),
        'another key',
      );
      const many = await queue.sendMany('single', [
        { data: { v: 4 }, options: { singletonKey: 'https://a.example/' } },
        { data: { v: 5 }, options: { singletonKey: 'https://c.example/', startAfter: 60 } },
      ]);
      assert.equal(many.length, 1, 'sendMany leaves the duplicate out');

      await queue.createQueue('throttled');
      assert.ok(await queue.send('throttled', {}, { singletonKey: 'k', singletonSeconds: 60, startAfter: 60 }));
      assert.equal(
        await queue.send('throttled', {}, { singletonKey: 'k', singletonSeconds: 60 }),
        null,
        'one per key per slot on a standard queue',
      );

      const id = '5b0b3c7e-2f5c-4a47-9c1e-0e6f4f5d9a01';
      assert.equal(await queue.send('throttled', { a: 1 }, { id, startAfter: 60 }), id);
      assert.equal(await queue.send('throttled', { a: 2 }, { id }), null, 'a job id exists once');
    });

    test('cancel: a queued job never runs', async () => {
      await queue.createQueue('later');
      let ran = 0;
      await queue.work('later', async () => void ran++);
      const id = (await queue.send('later', {}, { startAfter: 1 }))!;
      await queue.cancel('later', id);
      await sleep(1500);
      assert.equal(ran, 0);
      assert.equal((await queue.getJob('later', id))?.state, 'cancelled');
    });

    test('schedule: a cron sends a job when due (at most one a minute per schedule)', async () => {
      await queue.createQueue('sweep');
      const got: unknown[] = [];
      await queue.work('sweep', async (job) => void got.push(job.data));
      await queue.schedule('sweep', '* * * * *', { sweep: true });
      await waitFor('a scheduled run', () => got.length >= 1, 15_000);
      assert.deepEqual(got[0], { sweep: true });
      await queue.unschedule('sweep');
    });

    test(`throughput on ${kind} (printed)`, async () => {
      await queue.createQueue('bench', { retryLimit: 0 });
      const n = 2000;
      let done = 0;
      const t0 = performance.now();
      await queue.sendMany(
        'bench',
        Array.from({ length: n }, (_, i) => ({ data: { i } })),
      );
      const sent = performance.now();
      await queue.work('bench', { concurrency: 16 }, async () => void done++);
      await waitFor('all jobs', () => done === n, 40_000);
      const ran = performance.now();
      await waitFor('all completions recorded', async () => {
        const { rows } = await store.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM ${store.queueSchema}.job WHERE name = 'bench' AND state = 'completed'`,
        );
        return rows[0].n === n;
      });
      const recorded = performance.now();
      const rate = (ms: number) => Math.round((n / ms) * 1000);
      console.log(
        `# job queue on ${kind}: sendMany ${n} jobs ${Math.round(sent - t0)} ms (${rate(sent - t0)} jobs/s); ` +
          `no-op handlers, concurrency 16: ${rate(ran - sent)} jobs/s run, ${rate(recorded - sent)} jobs/s completed and recorded`,
      );
    });

    test('graceful stop lets the running job finish; past the bound it is failed over and retried', async () => {
      const q = await store.queue();
      await q.createQueue('slow', { retryLimit: 3, retryDelay: 1 });
      const events: string[] = [];
      let release: (() => void) | undefined;
      await q.work<{ ms: number }>('slow', async (job) => {
        events.push(`start ${job.data.ms}`);
        await sleep(job.data.ms, undefined, { signal: job.signal }).catch((err) => {
          events.push(`aborted ${job.data.ms}`);
          throw err;
        });
        events.push(`end ${job.data.ms}`);
        release?.();
      });
      const short = (await q.send('slow', { ms: 600 }))!;
      await waitFor('the job to start', () => events.includes('start 600'));
      const t0 = Date.now();
      await q.stop({ graceful: true, timeoutMs: 5000 });
      assert.ok(Date.now() - t0 >= 300, 'stop waited for the handler');
      assert.deepEqual(events, ['start 600', 'end 600']);
      assert.equal(await stateOf(store, short), 'completed');

      const q2 = await store.queue();
      await q2.work<{ ms: number }>('slow', async (job) => {
        events.push(`start ${job.data.ms}`);
        await sleep(job.data.ms, undefined, { signal: job.signal }).catch((err) => {
          events.push(`aborted ${job.data.ms}`);
          throw err;
        });
      });
      const long = (await q2.send('slow', { ms: 60_000 }))!;
      await waitFor('the long job to start', () => events.includes('start 60000'));
      const t1 = Date.now();
      await q2.stop({ graceful: true, timeoutMs: 300 });
      assert.ok(Date.now() - t1 < 3000, 'stop kept its bound');
      assert.ok(events.includes('aborted 60000'), 'the handler’s signal was aborted');
      assert.equal(await stateOf(store, long), 'retry', 'the job waits for another worker');
    });

    if (kind === 'pglite') {
      test('PGlite restart: jobs the previous process left active run again at once', async () => {
        const q = await store.queue();
        await q.createQueue('orphan', { retryDelay: 0, retryBackoff: false });
        const id = (await q.send('orphan', { x: 1 }))!;
        // Claimed by a "process" that then vanished without finishing it.
        const [claimed] = await q.boss.fetch('orphan');
        assert.equal(claimed.id, id);
        await q.stop({ graceful: false });
        assert.equal(await stateOf(store, id), 'active');

        const t0 = Date.now();
        const q2 = await store.queue();
        const ran: number[] = [];
        await q2.work('orphan', async (job) => void ran.push(job.retryCount));
        await waitFor('the orphan to run', () => ran.length === 1, 5000);
        assert.deepEqual(ran, [1]);
        assert.ok(Date.now() - t0 < 5000);
        await q2.stop();
      });
    }

    test('the service runs registered handlers (embedded workers) and exposes its queue', async () => {
      const results: string[] = [];
      const svc = await startTestService({
        store: kind,
        jobs: [
          async ({ queue }) => {
            await queue.createQueue('registered');
            await queue.work<{ s: string }>('registered', async (job) => {
              await sleep(300);
              results.push(job.data.s);
            });
          },
        ],
      });
      try {
        assert.equal(svc.queue.workers, 8, 'GLEANER_WORKERS default');
        await svc.queue.send('registered', { s: 'hello' });
        await sleep(100);
      } finally {
        await svc.destroy(); // graceful: the running job finishes first
      }
      assert.deepEqual(results, ['hello']);
      if (kind === 'pglite') return; // one process owns PGlite: API-only makes sense beside workers on Postgres

      const apiOnly = await startTestService({
        store: kind,
        env: { GLEANER_WORKERS: '0' },
        jobs: [
          async ({ queue }) => {
            await queue.createQueue('registered');
            await queue.work('registered', async () => void results.push('ran'));
          },
        ],
      });
      try {
        assert.ok(await apiOnly.queue.send('registered', { s: 'queued' }), 'an API-only process still sends');
        assert.deepEqual(apiOnly.queue.running(), {}, 'but runs nothing');
      } finally {
        await apiOnly.destroy();
      }
    });
  });
}

test('npm run worker refuses the embedded database', async () => {
  const { env, cleanup } = await testEnv('pglite');
  cleanups.push(cleanup);
  const proc = spawnWorker('src/worker.ts', env);
  assert.equal(await proc.exit, 2);
  assert.match(proc.stderr.join(''), /needs DATABASE_URL/);
});

/** `node <script>`, killed at the end of the file if still running. */
function spawnWorker(script: string, env: Record<string, string>): NodeProcess {
  const p = startNode(script, [], env);
  cleanups.push(() => p.kill());
  return p;
}

async function startWorkers(store: Store, count: number, extra: Record<string, string>): Promise<NodeProcess[]> {
  const procs = Array.from({ length: count }, () =>
    spawnWorker('test/jobs/fixtures/worker.ts', { ...store.env, ...extra }),
  );
  for (const p of procs) await p.line('gleaner worker ready');
  return procs;
}

if (storeKinds.includes('postgres')) {
  describe('worker processes on one Postgres', () => {
    let store: Store;
    let producer: JobQueue;
    const n = 200;

    async function counts() {
      const { rows } = await store.db.query<{ runs: number; done: number; distinct_done: number }>(
        'SELECT (SELECT count(*)::int FROM job_runs) AS runs, (SELECT count(*)::int FROM job_done) AS done, (SELECT count(DISTINCT key)::int FROM job_done) AS distinct_done',
      );
      return rows[0];
    }

    async function completed(): Promise<number> {
      const { rows } = await store.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM ${store.queueSchema}.job WHERE name = 'exactly-once' AND state = 'completed'`,
      );
      return rows[0].n;
    }

    async function reset() {
      await store.db.exec('TRUNCATE job_runs, job_done');
      await store.db.exec(`DELETE FROM ${store.queueSchema}.job WHERE name = 'exactly-once'`);
    }

    test('start: tables for the handlers’ effects, a producer that runs no jobs', async () => {
      store = await openTestStore('postgres');
      await store.db.exec(`
        CREATE TABLE job_runs (key text NOT NULL, pid int NOT NULL, at timestamptz NOT NULL DEFAULT now());
        CREATE TABLE job_done (key text PRIMARY KEY, pid int NOT NULL, at timestamptz NOT NULL DEFAULT now());
      `);
      // Default supervision (every 5 s), as a deployment's API process would run it.
      producer = await store.queue({ workers: 0, superviseIntervalSeconds: undefined });
      await producer.createQueue('exactly-once', { retryLimit: 5, retryDelay: 1 });
    });

    test(`two worker processes share ${n} jobs: each runs exactly once`, async () => {
      const workers = await startWorkers(store, 2, { GLEANER_WORKERS: '4', TEST_JOB_DELAY_MS: '20' });
      const t0 = performance.now();
      await producer.sendMany(
        'exactly-once',
        Array.from({ length: n }, (_, i) => ({ data: { key: `k${i}` } })),
      );
      await waitFor('all done and completed', async () => (await completed()) === n || undefined, 30_000);
      // (The first fetch may wait for the workers' next poll or NOTIFY; the rest refill as slots free.)
      const ms = performance.now() - t0;
      const c = await counts();
      assert.deepEqual(c, { runs: n, done: n, distinct_done: n });
      const { rows: byPid } = await store.db.query<{ pid: number; n: number }>(
        'SELECT pid, count(*)::int AS n FROM job_runs GROUP BY pid',
      );
      assert.equal(byPid.length, 2, `both processes took jobs: ${JSON.stringify(byPid)}`);
      console.log(
        `# job queue on postgres, 2 worker processes × 4 concurrent, 20 ms jobs: ${Math.round((n / ms) * 1000)} jobs/s ` +
          `(split ${byPid.map((r) => r.n).join('/')})`,
      );

      // Idle workers in other processes hear of a new job through NOTIFY, not at their next poll (1 s).
      const lags: number[] = [];
      for (let i = 0; i < 5; i++) {
        await sleep(150);
        const sentAt = Date.now();
        await producer.send('exactly-once', { key: `lag${i}` });
        const at = await waitFor('the job to start', async () => {
          const { rows } = await store.db.query<{ at: Date }>('SELECT at FROM job_runs WHERE key = $1', [`lag${i}`]);
          return rows[0]?.at;
        });
        lags.push(at.getTime() - sentAt);
      }
      console.log(`# job queue on postgres: send in one process → handler start in another: ${lags.join(', ')} ms`);
      const median = [...lags].sort((a, b) => a - b)[2];
      assert.ok(median < 500, `pickup lags ${lags.join(', ')} ms: the median is not below the 1 s poll`);

      for (const w of workers) w.child.kill('SIGTERM');
      assert.deepEqual(await Promise.all(workers.map((w) => w.exit)), [0, 0], 'SIGTERM stops a worker cleanly');
    });

    test(`a worker killed (SIGKILL) mid-run: every one of ${n} jobs still done exactly once`, async () => {
      await reset();
      const [victim, survivor] = await startWorkers(store, 2, { GLEANER_WORKERS: '4', TEST_JOB_DELAY_MS: '60' });
      await producer.sendMany(
        'exactly-once',
        Array.from({ length: n }, (_, i) => ({ data: { key: `k${i}` } })),
      );
      const victimPid = victim.child.pid!;
      await waitFor('the victim to be mid-run', async () => {
        const { rows } = await store.db.query<{ n: number }>('SELECT count(*)::int AS n FROM job_done WHERE pid = $1', [
          victimPid,
        ]);
        return rows[0].n >= 15 || undefined;
      });
      victim.child.kill('SIGKILL');
      const killedAt = Date.now();
      await victim.exit;
      // What the victim held: runs started without a recorded completion.
      const { rows: held } = await store.db.query<{ key: string }>(
        `SELECT r.key FROM job_runs r WHERE r.pid = $1 AND NOT EXISTS (SELECT 1 FROM job_done d WHERE d.key = r.key)`,
        [victimPid],
      );
      await waitFor('every job completed', async () => (await completed()) === n || undefined, 45_000);
      const recoveredMs = Date.now() - killedAt;
      const c = await counts();
      assert.ok(held.length > 0, 'the victim was running jobs when killed');
      assert.equal(c.done, n, 'every job’s effect exists');
      assert.equal(c.distinct_done, n, 'once');
      assert.ok(c.runs >= n, 'runs include the re-runs');
      const { rows: rerun } = await store.db.query<{ key: string; pid: number }>(
        'SELECT key, pid FROM job_done WHERE key = ANY($1::text[])',
        [held.map((h) => h.key)],
      );
      assert.ok(
        rerun.every((r) => r.pid === survivor.child.pid),
        'the killed worker’s unfinished jobs were finished by the survivor',
      );
      console.log(
        `# job queue on postgres: SIGKILL of a worker holding ${held.length} jobs; all ${n} done exactly once ` +
          `${(recoveredMs / 1000).toFixed(1)} s after the kill (${c.runs - n} re-runs; heartbeat 10 s, supervision every 5 s)`,
      );
      survivor.child.kill('SIGTERM');
      assert.equal(await survivor.exit, 0);
    });
  });
}
