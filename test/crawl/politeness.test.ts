// Per-host politeness (src/crawl/politeness.ts) on every store: the start interval (Crawl-delay,
// GLEANER_HOST_MIN_INTERVAL_MS) shared by two instances as by two processes, far turns handed back
// with their reservation, the reservation horizon, and the per-process concurrency cap.
// End to end through crawls: test/api/crawl-politeness.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.ts';
import { type Go, type Later, Politeness, type PolitenessOptions, type Turn } from '../../src/crawl/politeness.ts';
import { storeKinds, testEnv } from '../helpers/service.ts';
import { openStore } from '../../src/runtime.ts';
import type { Db } from '../../src/store/db-types.ts';

/** robots.txt stub: Crawl-delay per host (seconds) for the default agent, another for "Other". */
function robotsStub(delays: Record<string, number>) {
  return {
    async get(url: string) {
      const d = delays[new URL(url).host];
      return { crawlDelay: (ua?: string) => (ua === 'Other' ? 7 : d) };
    },
  };
}

const never = new AbortController().signal;

function isGo(t: Turn): asserts t is Go {
  assert.equal(t.go, true, `expected a turn now, got ${JSON.stringify(t)}`);
}
function isLater(t: Turn): asserts t is Later {
  assert.equal(t.go, false, 'expected a turn later');
}

for (const store of storeKinds) {
  describe(`politeness (${store})`, () => {
    let db: Db;
    let cleanup: () => Promise<void>;
    let n = 0;
    /** A host name of its own per test: the database keeps state per host. */
    const host = () => `h${++n}-${Date.now()}.test:8080`;

    before(async () => {
      const t = await testEnv(store);
      cleanup = t.cleanup;
      db = await openStore(loadConfig(t.env));
    });
    after(async () => {
      await db?.close();
      await cleanup?.();
    });

    const make = (o: Partial<PolitenessOptions> = {}) =>
      new Politeness({
        db,
        robots: robotsStub({}),
        hostMaxConcurrency: 8,
        hostMinIntervalMs: 0,
        maxCrawlDelaySeconds: 60,
        ...o,
      });

    test('interval: max(host minimum, Crawl-delay of the agent), capped; robots off or cap 0 ignore Crawl-delay', async () => {
      const robots = robotsStub({ 'a.test': 2, 'b.test': 0.25, 'c.test': 120 });
      const p = make({ robots, hostMinIntervalMs: 500 });
      assert.equal(await p.intervalMs('http://a.test/x', { robots: true }), 2000);
      assert.equal(await p.intervalMs('http://b.test/x', { robots: true }), 500);
      assert.equal(
        await p.intervalMs('http://c.test/x', { robots: true }),
        60_000,
        'capped at GLEANER_MAX_CRAWL_DELAY',
      );
      assert.equal(
        await p.intervalMs('http://a.test/x', { robots: true, userAgent: 'Other' }),
        7000,
        "the crawl's robotsUserAgent group",
      );
      assert.equal(await p.intervalMs('http://a.test/x', { robots: false }), 500, 'ignoreRobotsTxt');
      assert.equal(
        await make({ robots, maxCrawlDelaySeconds: 0 }).intervalMs('http://a.test/x', { robots: true }),
        0,
        'cap 0: Crawl-delay off',
      );
      assert.equal(await make({ robots }).intervalMs('http://none.test/x', { robots: true }), 0);
    });

    test('two instances (as two processes) taking turns for one host: starts at least the interval apart', async () => {
      const h = host();
      const a = make({ hostMinIntervalMs: 250 });
      const b = make({ hostMinIntervalMs: 250 });
      const starts: number[] = [];
      const t0 = Date.now();
      await Promise.all(
        Array.from({ length: 8 }, async (_, i) => {
          const turn = await (i % 2 ? a : b).take({ url: `http://${h}/p${i}`, robots: true, signal: never });
          isGo(turn);
          starts.push(Date.now());
          await sleep(10);
          turn.release();
        }),
      );
      starts.sort((x, y) => x - y);
      // Starts are reserved 250 ms apart from the first take on; one woken late (a busy machine) may
      // come close to the next, so the schedule is checked from the start of the run: the i-th start
      // never runs ahead of it.
      const since = starts.map((s) => s - t0);
      assert.ok(
        since.every((x, i) => x >= i * 250 - 15),
        `starts at ${since.join(', ')} ms after the first take`,
      );
      assert.ok(Date.now() - t0 >= 7 * 240);
      // Another host is not held up by this one.
      const t1 = Date.now();
      const other = await a.take({ url: `http://${host()}/`, robots: true, signal: never });
      isGo(other);
      other.release();
      assert.ok(Date.now() - t1 < 200);
    });

    test('a far turn is handed back with its reservation; the next run sleeps the rest and goes', async () => {
      const h = host();
      const p = make({ hostMinIntervalMs: 1000, maxSleepMs: 300, leadMs: 400, horizonMs: 10_000 });
      const first = await p.take({ url: `http://${h}/1`, robots: false, signal: never });
      isGo(first);
      assert.equal(first.waited, false);
      first.release();
      const second = await p.take({ url: `http://${h}/2`, robots: false, signal: never });
      isLater(second);
      assert.ok(second.slot, 'the reservation travels with the page');
      const slot = Date.parse(second.slot);
      assert.equal(slot - second.startAfter.getTime(), 400, 'due a lead before its start');
      assert.equal(p.running(h.toLowerCase()), 0, 'no concurrency slot held while handed back');
      const third = await p.take({ url: `http://${h}/3`, robots: false, signal: never });
      isLater(third);
      assert.ok(Date.parse(third.slot!) - slot >= 999, 'the next reservation is an interval later');
      // The queue runs the page again at startAfter: it sleeps until its start and goes.
      await sleep(Math.max(0, second.startAfter.getTime() - Date.now()));
      const again = await p.take({ url: `http://${h}/2`, robots: false, slot: second.slot, signal: never });
      isGo(again);
      assert.equal(again.waited, true);
      assert.ok(Date.now() >= slot - 30, 'not before its start');
      assert.ok(Date.now() < slot + 200, 'on time');
      again.release();
      // A run that comes too late for its reservation reserves again (a later one).
      await sleep(1200);
      const late = await p.take({
        url: `http://${h}/3`,
        robots: false,
        slot: new Date(Date.now() - 1000).toISOString(),
        signal: never,
      });
      isLater(late);
      assert.ok(Date.parse(late.slot!) >= Date.parse(third.slot!) + 999);
    });

    test('starts are reserved within the horizon only: beyond it, back to the queue without a reservation', async () => {
      const h = host();
      const p = make({ hostMinIntervalMs: 1000, maxSleepMs: 100, horizonMs: 1500 });
      isGo(await p.take({ url: `http://${h}/1`, robots: false, signal: never }));
      const second = await p.take({ url: `http://${h}/2`, robots: false, signal: never });
      isLater(second);
      assert.ok(second.slot);
      const third = await p.take({ url: `http://${h}/3`, robots: false, signal: never });
      isLater(third);
      assert.equal(third.slot, undefined, 'not reserved');
      const { rows } = await db.query<{ next: Date }>('SELECT next_at AS next FROM host_politeness WHERE host = $1', [
        h.toLowerCase(),
      ]);
      const next = new Date(rows[0].next).getTime();
      assert.equal(next, Date.parse(second.slot) + 1000, 'the unreserved page moved nothing');
      assert.ok(
        third.startAfter.getTime() >= next - 1500 && third.startAfter.getTime() <= next,
        'due within the next horizon',
      );
    });

    test('without an interval no row is written', async () => {
      const h = host();
      const turn = await make().take({ url: `http://${h}/`, robots: true, signal: never });
      isGo(turn);
      turn.release();
      const { rows } = await db.query('SELECT 1 FROM host_politeness WHERE host = $1', [h]);
      assert.equal(rows.length, 0);
    });

    test('concurrency cap per host: the next waits for a release; a long wait goes back to the queue; abort rejects', async () => {
      const h = host();
      const p = make({ hostMaxConcurrency: 2, maxSleepMs: 300 });
      const url = `http://${h}/`;
      const a = await p.take({ url, robots: false, signal: never });
      const b = await p.take({ url, robots: false, signal: never });
      isGo(a);
      isGo(b);
      assert.equal(p.running(h), 2);
      const waiting = p.take({ url, robots: false, signal: never });
      await sleep(50);
      a.release();
      a.release(); // idempotent
      const c = await waiting;
      isGo(c);
      assert.equal(c.waited, true);
      assert.equal(p.running(h), 2);
      // Other hosts are not capped by this one.
      const other = await p.take({ url: `http://${host()}/`, robots: false, signal: never });
      isGo(other);
      other.release();
      const t0 = Date.now();
      const timedOut = await p.take({ url, robots: false, signal: never });
      isLater(timedOut);
      assert.ok(Date.now() - t0 >= 290);
      assert.equal(timedOut.slot, undefined);
      assert.ok(timedOut.startAfter.getTime() >= Date.now() + 500);
      const ac = new AbortController();
      const aborted = p.take({ url, robots: false, signal: ac.signal });
      ac.abort(new Error('stop'));
      await assert.rejects(aborted, /stop/);
      b.release();
      c.release();
      assert.equal(p.running(h), 0);
      // Cap 0: no cap.
      const free = make({ hostMaxConcurrency: 0 });
      const turns = await Promise.all(
        Array.from({ length: 20 }, () => free.take({ url, robots: false, signal: never })),
      );
      assert.ok(turns.every((t) => t.go && !t.waited));
      for (const t of turns) if (t.go) t.release();
    });
  });
}
