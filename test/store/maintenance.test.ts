// TableVacuum (src/store/maintenance.ts): on the embedded database a busy table is vacuumed and
// analysed once its writers have counted `every` changed rows, not before; on Postgres (its
// autovacuum's work) never. Counted by the table's manual VACUUMs (pg_stat_user_tables.vacuum_count).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Db } from '../../src/store/db-types.ts';
import { TableVacuum } from '../../src/store/maintenance.ts';
import { openTestDb, storeKinds } from '../helpers/service.ts';

for (const store of storeKinds) {
  describe(`TableVacuum (${store})`, () => {
    let db: Db;
    let cleanup: () => Promise<void>;
    before(async () => {
      ({ db, cleanup } = await openTestDb(store));
      await db.exec('CREATE TABLE vacuum_probe (id int PRIMARY KEY, v int)');
      await db.query('INSERT INTO vacuum_probe SELECT g, 0 FROM generate_series(1, 500) g');
    });
    after(() => cleanup?.());

    const vacuums = async () =>
      (
        await db.query<{ n: number }>(
          `SELECT vacuum_count::int AS n FROM pg_stat_user_tables WHERE relname = 'vacuum_probe' AND schemaname = current_schema()`,
        )
      ).rows[0].n;

    test(
      store === 'pglite' ? 'vacuums every `every` changed rows, in the background' : 'leaves it to autovacuum',
      async () => {
        const errors: unknown[] = [];
        const vacuum = new TableVacuum(db, 'vacuum_probe', 300, (err) => errors.push(err));
        await db.query('UPDATE vacuum_probe SET v = v + 1 WHERE id <= 200');
        vacuum.changed(200);
        await db.query('UPDATE vacuum_probe SET v = v + 1 WHERE id <= 99');
        vacuum.changed(99);
        await sleep(100);
        assert.equal(await vacuums(), 0);
        await db.query('UPDATE vacuum_probe SET v = v + 1 WHERE id = 1');
        vacuum.changed(1);
        const expected = store === 'pglite' ? 1 : 0;
        for (const end = Date.now() + 10_000; (await vacuums()) < expected && Date.now() < end;) await sleep(50);
        await sleep(100);
        assert.equal(await vacuums(), expected);
        assert.deepEqual(errors, []);
      },
    );
  });
}
