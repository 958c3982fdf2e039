// Limits across processes sharing one Postgres (issue 22): the shared slots themselves (at most `max`
// held per key whatever the number of takers, freed by give, by close, and by the lease when a holder
// is killed), and a team's concurrency enforced across two services on one database: the fixture
// site never sees more of the team's requests in flight than the limit. Postgres only
// (TEST_DATABASE_URL): the embedded PGlite database belongs to one process.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SharedSlots } from '../../src/store/shared-slots.ts';
import type { Db } from '../../src/store/db-types.ts';
import { type FixtureSite, startFixtureSite } from '../fixtures/site/index.ts';
import { apiClient } from '../helpers/api.ts';
import { startNode } from '../helpers/process.ts';
import { type TestService, startTestService, testEnv } from '../helpers/service.ts';
import { openDb } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations.ts';
import { maxInFlight } from '../helpers/polling.ts';

const postgres = Boolean(process.env.TEST_DATABASE_URL);

describe('shared slots (Postgres)', { skip: !postgres && 'TEST_DATABASE_URL not set' }, () => {
  let db: Db;
  let env: Record<string, string>;
  let cleanup: () => Promise<void>;

  before(async () => {
    ({ env, cleanup } = await testEnv('postgres'));
    db = await openDb({ dataDir: '', databaseUrl: env.DATABASE_URL, schema: env.DATABASE_SCHEMA });
    await migrate(db);
  });
  after(async () => {
    await db?.close();
    await cleanup?.();
  });

  test('at most max held per key, however many take at once; give and close free them', async () => {
    const holders = [new SharedSlots(db), new SharedSlots(db), new SharedSlots(db)];
    try {
      const tries = await Promise.all(Array.from({ length: 12 }, (_, i) => holders[i % 3].tryTake('team:a', 3)));
      const got = tries.filter((id): id is string => id !== null);
      assert.equal(got.length, 3);
      assert.equal(await holders[0].count('team:a'), 3);
      assert.ok(await holders[1].tryTake('team:b', 1), 'another key is counted apart');
      const owner = holders[tries.findIndex((id) => id === got[0]) % 3];
      await owner.give(got[0]);
      assert.equal(await holders[2].count('team:a'), 2);
      assert.ok(await holders[2].tryTake('team:a', 3), 'a freed slot can be taken');
    } finally {
      await Promise.all(holders.map((h) => h.close()));
    }
    assert.equal(await new SharedSlots(db).count('team:a'), 0, 'close freed every slot');
  });

  test("a killed holder's slots free themselves after the lease; a live holder's do not", async () => {
    const child = startNode('test/helpers/hold-shared-slots.ts', ['team:k', '2', '2'], { ...env, LEASE_MS: '1500' });
    const mine = new SharedSlots(db, { leaseMs: 1500 });
    try {
      await child.line('held 2');
      assert.equal(await mine.tryTake('team:k', 2), null);
      await sleep(2500); // past the lease: the live holder renewed
      assert.equal(await mine.tryTake('team:k', 2), null, 'renewed while its holder lives');
      await child.kill();
      let freed: string | null = null;
      const end = Date.now() + 5000;
      while (!freed && Date.now() < end) {
        freed = await mine.tryTake('team:k', 2);
        if (!freed) await sleep(100);
      }
      assert.ok(freed, "taken once the killed holder's lease ran out");
    } finally {
      await child.kill();
      await mine.close();
    }
  });
});

describe('a team limit across two services on one Postgres', { skip: !postgres && 'TEST_DATABASE_URL not set' }, () => {
  let site: FixtureSite;
  let a: TestService;
  let b: TestService;

  before(async () => {
    site = await startFixtureSite();
    const env = { GLEANER_TEAM_MAX_CONCURRENCY: '2' };
    a = await startTestService({ store: 'postgres', env });
    b = await startTestService({ store: 'postgres', env, shareWith: a });
  });
  after(async () => {
    await b?.destroy();
    await a?.destroy();
    await site?.close();
  });

  test('8 slow scrapes, 4 through each service: never more than 2 at the target, all succeed', async () => {
    const from = site.requests.length;
    const apis = [apiClient(a), apiClient(b)];
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        apis[i % 2].scrape({ url: site.url(`/slow?ms=400&n=${i}`), maxAge: 0, timeout: 30_000 }),
      ),
    );
    assert.deepEqual(
      answers.map((r) => r.status),
      Array(8).fill(200),
    );
    const seen = site.requests.slice(from).filter((r) => r.path.startsWith('/slow'));
    assert.equal(seen.length, 8);
    assert.equal(maxInFlight(seen), 2, 'the team limit held across both services');
  });
});

describe('a host limit across two services on one Postgres', { skip: !postgres && 'TEST_DATABASE_URL not set' }, () => {
  let site: FixtureSite;
  let a: TestService;
  let b: TestService;

  before(async () => {
    site = await startFixtureSite();
    // The team may run 10 at once: only the host limit holds the pages back.
    const env = { GLEANER_TEAM_MAX_CONCURRENCY: '10', GLEANER_HOST_MAX_CONCURRENCY: '2' };
    a = await startTestService({ store: 'postgres', env });
    b = await startTestService({ store: 'postgres', env, shareWith: a });
  });
  after(async () => {
    await b?.destroy();
    await a?.destroy();
    await site?.close();
  });

  test("two crawls' pages, taken by both services' workers: never more than 2 at the host", async () => {
    const from = site.requests.length;
    const apis = [apiClient(a), apiClient(b)];
    const ids = await Promise.all(
      apis.map((api, i) =>
        api.startCrawl({
          url: site.url(`/generated/1?total=8&ms=300&c=${i}`),
          limit: 8,
          sitemap: 'skip',
          crawlEntireDomain: true,
        }),
      ),
    );
    for (const [i, id] of ids.entries()) assert.equal((await apis[i].waitForCrawl(id, 60_000)).status, 'completed');
    const seen = site.requests.slice(from).filter((r) => r.path.startsWith('/generated/'));
    assert.equal(seen.length, 16);
    assert.equal(maxInFlight(seen), 2, 'the host limit held across both services');
  });
});
