// Monitor ticks across real worker processes (issue 17): an API service that runs no jobs and two
// `npm run worker` processes on one Postgres schema; several 'monitor-tick' jobs with the same `now`
// sent at once start exactly one check per monitor and scheduled time, and the next interval one more.
// The ticks do race: without both the row locks and the unique (monitor, scheduled_for) index it fails.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type FixtureSite, startFixtureSite } from '../fixtures/site/index.ts';
import { type Api, apiClient } from '../helpers/api.ts';
import { type NodeProcess, startNode } from '../helpers/process.ts';
import { type TestService, startTestService } from '../helpers/service.ts';
import '../helpers/loopback-dns.ts';

const page = (title: string) =>
  `<!DOCTYPE html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>Checked once per tick.</p></main></body></html>`;

/** Monitors in the race, and tick jobs sent at once per scheduled time (more than the two processes run together). */
const MONITORS = 6;
const TICKS = 8;
/** Yearly (Jan 1, 03:00 UTC): the processes' own every-minute ticks at the real time never find them due. */
const CRON = '0 3 1 1 *';

describe(
  'monitor ticks on two worker processes (postgres)',
  { skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL (a Postgres shared by the processes)' },
  () => {
    let site: FixtureSite;
    let svc: TestService;
    let api: Api;
    const workers: NodeProcess[] = [];

    before(async () => {
      site = await startFixtureSite();
      // The API process runs no jobs: the two workers take every tick and check.
      svc = await startTestService({ store: 'postgres', env: { GLEANER_WORKERS: '0' } });
      api = apiClient(svc);
      const env = {
        ...svc.env,
        GLEANER_WORKERS: '2',
        GLEANER_ALLOW_PRIVATE_NETWORK: 'true',
        GLEANER_MAX_CRAWL_DELAY: '0',
      };
      workers.push(startNode('src/worker.ts', [], env), startNode('src/worker.ts', [], env));
      await Promise.all(workers.map((w) => w.line('gleaner worker ready')));
    });
    after(async () => {
      for (const w of workers) await w.kill();
      await svc?.destroy();
      await site?.close();
    });

    /** Sends TICKS 'monitor-tick' jobs run at `now` in one insert and waits until every one completed. */
    async function tickRace(now: Date): Promise<void> {
      const ids = await svc.queue.sendMany(
        'monitor-tick',
        Array.from({ length: TICKS }, () => ({ data: { now: now.toISOString() } })),
      );
      assert.equal(ids.length, TICKS);
      const deadline = Date.now() + 60_000;
      for (const id of ids) {
        for (;;) {
          const job = await svc.queue.getJob('monitor-tick', id);
          assert.notEqual(job?.state, 'failed', JSON.stringify(job?.output));
          if (job?.state === 'completed') break;
          if (Date.now() > deadline) assert.fail(`tick ${id} still ${job?.state}`);
          await sleep(100);
        }
      }
    }

    /** The 'monitor tick' log lines (checks started, skips) each worker printed since `from` (per worker, lines of stdout). */
    function tickLogs(from: number[]): { started: number; skipped: number }[][] {
      return workers.map((w, i) =>
        w.stdout
          .join('')
          .split('\n')
          .slice(from[i])
          .filter((l) => l.includes('"msg":"monitor tick"'))
          .map((l) => JSON.parse(l) as { started: number; skipped: number }),
      );
    }
    const logLines = () => workers.map((w) => w.stdout.join('').split('\n').length - 1);

    const scheduledChecks = async (monitorId: string) =>
      (
        await svc.db.query<{ id: string; status: string; scheduledFor: Date }>(
          `SELECT id, status, scheduled_for AS "scheduledFor" FROM monitor_checks
           WHERE monitor_id = $1 AND trigger = 'scheduled' ORDER BY scheduled_for`,
          [monitorId],
        )
      ).rows;

    /** Fixture-site fetches of one monitor's page. */
    const fetches = (path: string) => site.requests.filter((r) => r.path === path).length;

    test('ticks raced by two processes start exactly one check per monitor and scheduled time, twice', async () => {
      const main = site.hostOrigin('localhost');
      const monitors: { id: string; path: string }[] = [];
      for (let i = 0; i < MONITORS; i++) {
        const path = `/mutable/workers-${i}`;
        site.mutable.set(path, { html: page(`Page ${i}`) });
        const m = await api.startMonitor({
          name: `workers ${i}`,
          schedule: { cron: CRON, timezone: 'UTC' },
          targets: [{ type: 'scrape', urls: [`${main}${path}`] }],
        });
        monitors.push({ id: m.id, path });
      }

      for (let round = 1; round <= 2; round++) {
        // Each monitor's due time; `now` is past all of them (round 2: one interval after round 1).
        const due = new Map<string, string>();
        for (const m of monitors) {
          const res = await api.getMonitor(m.id);
          assert.equal(res.status, 200, res.text);
          due.set(m.id, res.json.data.nextRunAt);
        }
        const now = new Date(Math.max(...[...due.values()].map(Date.parse)) + 1000);
        const from = logLines();
        await tickRace(now);

        for (const m of monitors) {
          const checks = await scheduledChecks(m.id);
          assert.equal(checks.length, round, `one scheduled check per tick: ${JSON.stringify(checks)}`);
          const check = checks[round - 1];
          assert.equal(check.scheduledFor.toISOString(), new Date(due.get(m.id)!).toISOString());
          assert.equal((await api.waitForCheck(m.id, check.id, 60_000)).status, 'completed');
          const res = await api.getMonitor(m.id);
          assert.equal(res.status, 200, res.text);
          const next = Date.parse(res.json.data.nextRunAt);
          assert.ok(next > now.getTime(), `nextRunAt ${res.json.data.nextRunAt} advanced past ${now.toISOString()}`);
          assert.equal(new Date(next).getUTCFullYear(), now.getUTCFullYear() + 1, 'the next yearly run');
          assert.equal(fetches(m.path), round, `${m.path} fetched once per check`);
        }
        // The ticks that found due monitors said so in their process's log: MONITORS started in all, no skip.
        // (Output arrives through pipes: it may trail the database a little.)
        let logs = tickLogs(from);
        const startedBy = () => logs.map((ls) => ls.reduce((n, l) => n + l.started, 0));
        for (let i = 0; i < 50 && startedBy()[0] + startedBy()[1] < MONITORS; i++) {
          await sleep(100);
          logs = tickLogs(from);
        }
        const started = startedBy();
        assert.equal(started[0] + started[1], MONITORS, JSON.stringify(logs));
        assert.equal(
          logs.flat().reduce((n, l) => n + l.skipped, 0),
          0,
          JSON.stringify(logs),
        );
        console.log(
          `# round ${round}: ${TICKS} ticks at ${now.toISOString()} on 2 worker processes: ${MONITORS} checks, ` +
            `one per monitor (started by worker 1: ${started[0]}, worker 2: ${started[1]})`,
        );
      }
    });
  },
);
