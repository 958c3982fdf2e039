// Housekeeping that Postgres's autovacuum does by itself and embedded PGlite cannot: PGlite runs a
// single backend with no background processes, so dead row versions (every UPDATE, every upsert
// of the page cache, every expired result deleted) are never reclaimed and planner statistics
// never refreshed. Without this the data directory grows for as long as the service runs.
import type { Db } from './db-types.ts';

/** VACUUM (ANALYZE) of the whole embedded database; a no-op on Postgres (autovacuum's work). */
export async function vacuumEmbedded(db: Db): Promise<boolean> {
  if (db.kind !== 'pglite') return false;
  await db.exec('VACUUM (ANALYZE)');
  return true;
}
