// pg-boss on the embedded database: its `db` option over our Db, so the queue runs in the one
// process that owns ./data (on Postgres pg-boss keeps a pool of its own).
import type { Db as BossDb } from 'pg-boss';
import type { Db } from '../store/db-types.ts';

/** pg-boss's db option over our Db: parameterised statements through query, parameterless (possibly several) through execRows. */
export function pgliteAdapter(db: Db): BossDb {
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
