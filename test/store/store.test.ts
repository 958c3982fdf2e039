// Storage on every store: migrations are idempotent and safe to run from several processes at
// once; the same queries give the same results on PGlite and Postgres.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { openDb } from '../../src/store/db.ts';
import { createJob, updateJob, getTeamJob } from '../../src/store/jobs.ts';
import { migrate, migrations } from '../../src/store/migrations.ts';
import { createApiKey, ensureTeam, findCallerByKey, hashKey } from '../../src/store/teams.ts';
import { monthlyUsage, recordUsage } from '../../src/store/usage.ts';
import { type CachedPage, PageCacheBatcher, readCachedPage } from '../../src/store/pages.ts';
import { openTestDb, storeKinds, testEnv } from '../helpers/service.ts';

for (const store of storeKinds) {
  describe(`store on ${store}`, () => {
    test('migrations apply once, also when several openers race', async () => {
      const { env, cleanup } = await testEnv(store);
      const open = () =>
        openDb({ dataDir: env.DATA_DIR ?? '', databaseUrl: env.DATABASE_URL, schema: env.DATABASE_SCHEMA });
      try {
        if (store === 'postgres') {
          const dbs = await Promise.all([open(), open(), open()]);
          const applied = await Promise.all(dbs.map((d) => migrate(d)));
          assert.deepEqual(
            applied.flat().sort((a, b) => a - b),
            migrations.map((m) => m.id).sort((a, b) => a - b),
            'each migration applied by exactly one process',
          );
          await Promise.all(dbs.map((d) => d.close()));
        } else {
          const db = await open();
          assert.deepEqual(
            await migrate(db),
            migrations.map((m) => m.id),
          );
          assert.deepEqual(await migrate(db), []);
          await db.close();
        }
        const db = await open();
        assert.deepEqual(await migrate(db), [], 'nothing left after reopening');
        await db.close();
      } finally {
        await cleanup();
      }
    });

    test('teams, keys, jobs and usage round-trip with the same types', async () => {
      const { db, cleanup } = await openTestDb(store);
      try {
        const team = await ensureTeam(db, 't');
        assert.equal((await ensureTeam(db, 't')).id, team.id, 'ensureTeam is idempotent');
        const { key, id } = await createApiKey(db, team.id);
        const caller = await findCallerByKey(db, key);
        assert.deepEqual(caller, { keyId: id, teamId: team.id, teamName: 't', creditQuota: null });
        const { rows } = await db.query<{ n: number }>('SELECT count(*) AS n FROM api_keys WHERE key_hash = $1', [
          hashKey(key),
        ]);
        assert.equal(rows[0].n, 1, 'count(*) comes back as a number on both stores');

        const job = await createJob(db, {
          teamId: team.id,
          apiKeyId: id,
          endpoint: 'scrape',
          target: 'https://a.example/',
        });
        assert.ok(job.createdAt instanceof Date);
        assert.equal(typeof job.seq, 'number');
        assert.equal(job.status, 'queued');
        await updateJob(db, job.id, { status: 'completed' });
        const done = await getTeamJob(db, team.id, job.id);
        assert.equal(done?.status, 'completed');
        assert.ok(done?.completedAt instanceof Date);

        await db.transaction(async (tx) => {
          await recordUsage(tx, 'credits', { teamId: team.id, apiKeyId: id, jobId: job.id, amount: 3 });
        });
        await assert.rejects(
          db.transaction(async (tx) => {
            await recordUsage(tx, 'credits', { teamId: team.id, apiKeyId: id, jobId: job.id, amount: 100 });
            throw new Error('rolled back');
          }),
          /rolled back/,
        );
        const months = await monthlyUsage(db, 'credits', team.id, true);
        assert.equal(months.length, 1);
        assert.equal(months[0].total, 3, 'the failed transaction left nothing');
        assert.ok(months[0].month instanceof Date);
        assert.equal(months[0].month.getUTCDate(), 1);
      } finally {
        await cleanup();
      }
    });
    test('the page cache batcher: gathered reads and writes, same windows as single reads', async () => {
      const { db, cleanup } = await openTestDb(store);
      try {
        const cache = new PageCacheBatcher(db);
        const page = (n: number, fetchedAt: Date): CachedPage => ({
          url: `https://a.example/${n}`,
          finalUrl: `https://a.example/${n}`,
          statusCode: 200,
          contentType: 'text/html',
          headers: { 'x-n': String(n) },
          body: Buffer.from(`<p>page ${n}</p>\0\xff`, 'latin1'),
          fetchedAt,
          engine: 'http',
        });
        const old = new Date(Date.now() - 60_000);
        const now = new Date();
        // Two writes of one key in a batch: the newer copy wins.
        await Promise.all([
          cache.write('k1', page(1, old)),
          cache.write('k2', page(2, now)),
          cache.write('k1', page(11, now)),
        ]);
        assert.equal((await readCachedPage(db, 'k1'))?.url, 'https://a.example/11');
        const [a, b, c, d] = await Promise.all([
          cache.read('k1', { maxAgeMs: 10_000, minAgeMs: 0 }),
          cache.read('k2', { maxAgeMs: 10_000, minAgeMs: 0 }),
          cache.read('missing', { maxAgeMs: 10_000, minAgeMs: 0 }),
          cache.read('k2', { maxAgeMs: 10_000, minAgeMs: 5_000 }),
        ]);
        assert.deepEqual(a, await readCachedPage(db, 'k1', { maxAgeMs: 10_000, minAgeMs: 0 }));
        assert.equal(b?.headers['x-n'], '2');
        assert.ok(Buffer.isBuffer(b?.body));
        assert.equal(b?.body.toString('latin1'), '<p>page 2</p>\0\xff');
        assert.equal(c, undefined);
        assert.equal(d, undefined, 'younger than minAge');
        assert.equal(await cache.read('k2', { maxAgeMs: 0, minAgeMs: 0 }), undefined, 'maxAge 0 reads nothing');
        // An older copy does not replace a newer one.
        await cache.write('k2', page(22, old));
        assert.equal((await readCachedPage(db, 'k2'))?.url, 'https://a.example/2');
      } finally {
        await cleanup();
      }
    });
  });
}
