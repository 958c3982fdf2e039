// The Db interface behaves the same on both stores: PGlite (in its own worker thread, reached by
// messages) and Postgres (a node-postgres pool). What crosses the thread boundary must come back
// as it would from node-postgres: errors with their SQLSTATE code, bytea as a Buffer, dates as
// Dates, and a transaction that holds the database until it ends.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDb } from '../../src/store/db.ts';
import type { Db } from '../../src/store/db-types.ts';
import { vacuumEmbedded } from '../../src/store/maintenance.ts';
import { openTestDb, storeKinds, testEnv } from '../helpers/service.ts';

for (const store of storeKinds) {
  describe(`Db on ${store}`, () => {
    let db: Db;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ db, cleanup } = await openTestDb(store, { migrated: false }));
      await db.exec('CREATE TABLE things (id int PRIMARY KEY, body bytea, at timestamptz, doc jsonb)');
    });
    after(() => cleanup?.());

    test('values round-trip with their types: bytea as a Buffer, timestamptz as a Date, jsonb as an object', async () => {
      const body = Buffer.alloc(300_000, 7); // large: the binary-parameter path
      const at = new Date('2026-01-02T03:04:05.678Z');
      await db.query('INSERT INTO things VALUES ($1, $2, $3, $4)', [
        1,
        body,
        at,
        { a: [1, 'x'], big: 'y'.repeat(10_000) },
      ]);
      const { rows, rowCount } = await db.query<{ body: Buffer; at: Date; doc: { a: unknown[]; big: string } }>(
        'SELECT body, at, doc FROM things WHERE id = 1',
      );
      assert.equal(rowCount, 1);
      assert.ok(Buffer.isBuffer(rows[0].body), 'bytea is a Buffer');
      assert.ok(rows[0].body.equals(body));
      assert.ok(rows[0].at instanceof Date);
      assert.equal(rows[0].at.toISOString(), at.toISOString());
      assert.deepEqual(rows[0].doc.a, [1, 'x']);
      assert.equal(rows[0].doc.big.length, 10_000);
    });

    test('large strings (sent to the PGlite thread as UTF-8 bytes) keep their meaning for text, json, jsonb and bytea', async () => {
      const text = 'naïve “quotes” — ✓ '.repeat(1000); // non-Latin-1: V8 keeps it two bytes a char
      const json = JSON.stringify({ text, n: 1 });
      const hex = '\\x' + 'ab'.repeat(5000); // bytea given as escaped text, as node-postgres sends it
      const { rows } = await db.query<{ t: string; j: { text: string }; jb: { n: number }; b: Buffer }>(
        'SELECT $1::text AS t, $2::json AS j, $3::jsonb AS jb, $4::bytea AS b',
        [text, json, json, hex],
      );
      assert.equal(rows[0].t, text);
      assert.equal(rows[0].j.text, text);
      assert.equal(rows[0].jb.n, 1);
      assert.ok(Buffer.isBuffer(rows[0].b));
      assert.equal(rows[0].b.length, 5000);
      assert.equal(rows[0].b[0], 0xab);
      // The caller's Buffer is still its own after the statement (the thread got a copy).
      const body = Buffer.alloc(10_000, 3);
      await db.query('INSERT INTO things (id, body) VALUES (3, $1)', [body]);
      assert.equal(body.length, 10_000);
      assert.equal(body[9_999], 3);
    });

    test('a failed statement rejects with the SQLSTATE code and keeps the database usable', async () => {
      await db.query('INSERT INTO things (id) VALUES (2)');
      await assert.rejects(
        db.query('INSERT INTO things (id) VALUES (2)'),
        (err: Error & { code?: string; constraint?: string }) => {
          assert.equal(err.code, '23505');
          assert.equal(err.constraint, 'things_pkey');
          assert.match(err.message, /duplicate key/);
          return true;
        },
      );
      await assert.rejects(db.query('SELECT * FROM no_such_table'), { code: '42P01' });
      assert.equal((await db.query('SELECT count(*)::int AS n FROM things WHERE id = 2')).rows[0].n, 1);
    });

    test('a transaction commits, rolls back when its function throws, and isolates its writes until it ends', async () => {
      await db.transaction(async (tx) => {
        await tx.query('INSERT INTO things (id) VALUES (10)');
        await tx.query('INSERT INTO things (id) VALUES (11)');
      });
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO things (id) VALUES (12)');
          throw new Error('changed my mind');
        }),
        /changed my mind/,
      );
      // A statement error inside the transaction rolls it back too.
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.query('INSERT INTO things (id) VALUES (13)');
          await tx.query('INSERT INTO things (id) VALUES (10)');
        }),
        { code: '23505' },
      );
      const ids = (await db.query<{ id: number }>('SELECT id FROM things WHERE id >= 10 ORDER BY id')).rows.map(
        (r) => r.id,
      );
      assert.deepEqual(ids, [10, 11]);

      // While a transaction is open, its uncommitted row is not seen from outside it.
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let inside!: () => void;
      const entered = new Promise<void>((r) => (inside = r));
      const tx = db.transaction(async (t) => {
        await t.query('INSERT INTO things (id) VALUES (20)');
        inside();
        await held;
      });
      await entered;
      const outside = db.query<{ n: number }>('SELECT count(*)::int AS n FROM things WHERE id = 20');
      const early = await Promise.race([
        outside.then((r) => r.rows[0].n),
        new Promise<'waiting'>((r) => setTimeout(() => r('waiting'), 100)),
      ]);
      // PGlite has one session, so the outside statement waits for the transaction; Postgres answers at once without the row.
      assert.ok(early === 'waiting' || early === 0, `outside saw ${early}`);
      release();
      await tx;
      const seen = (await outside).rows[0].n;
      assert.equal(seen, store === 'pglite' ? 1 : 0, 'PGlite runs the waiting statement after the commit');
      assert.equal((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM things WHERE id = 20')).rows[0].n, 1);
    });

    test('dead row versions are reclaimed: by the hourly vacuum on PGlite (no autovacuum there), by autovacuum on Postgres', async () => {
      await db.exec(
        "CREATE TABLE churn (id int PRIMARY KEY, v text); INSERT INTO churn SELECT g, repeat('a', 400) FROM generate_series(1, 500) g",
      );
      const size = async () =>
        (await db.query<{ n: number }>("SELECT pg_total_relation_size('churn')::int AS n")).rows[0].n;
      const rewrite = async (rounds: number) => {
        for (let i = 0; i < rounds; i++) await db.query("UPDATE churn SET v = repeat('b', 400) || $1", [String(i)]);
      };
      await rewrite(10);
      const grown = await size();
      assert.equal(await vacuumEmbedded(db), store === 'pglite', 'runs on PGlite only');
      if (store === 'postgres') return;
      assert.ok(grown > 10 * 500 * 400, `every update left a dead copy before the vacuum (${grown} bytes)`);
      await rewrite(10);
      // The next rounds reuse the reclaimed space instead of growing the table by as much again.
      assert.ok((await size()) < grown * 1.5, `after VACUUM the table stays near ${grown} bytes (${await size()})`);
    });

    test('execRows returns the rows of every statement', async () => {
      const out = await db.execRows('SELECT 1 AS a; SELECT 2 AS b UNION ALL SELECT 3');
      assert.deepEqual(out, [[{ a: 1 }], [{ b: 2 }, { b: 3 }]]);
    });
  });
}

test('PGlite: a closed database rejects statements instead of hanging', async () => {
  const t = await testEnv('pglite');
  try {
    const db = await openDb({ dataDir: t.env.DATA_DIR ?? '' });
    assert.equal((await db.query<{ x: number }>('SELECT 1 AS x')).rows[0].x, 1);
    await db.close();
    await assert.rejects(db.query('SELECT 1'));
  } finally {
    await t.cleanup();
  }
});
