// Housekeeping that Postgres's autovacuum does by itself and embedded PGlite cannot: PGlite runs a
// single backend with no background processes, so dead row versions (every UPDATE, every upsert
// of the page cache, every expired result deleted) are never reclaimed, the visibility map that
// lets an index-only scan skip the table is never set, and planner statistics are never
// refreshed. Without this the data directory grows for as long as the service runs, and a big
// crawl slows down as it goes: at 11,000 pages a status read's pass over the done pages' index
// (OFFSET skip, the SDK's reads) cost 240 ms, at 13,000 650 ms, every index entry checked against
// the table's several dead versions of its row.
import type { Db } from './db-types.ts';

/** VACUUM (ANALYZE) of the whole embedded database; a no-op on Postgres (autovacuum's work). */
export async function vacuumEmbedded(db: Db): Promise<boolean> {
  if (db.kind !== 'pglite') return false;
  await db.exec('VACUUM (ANALYZE)');
  return true;
}

/**
 * Autovacuum's trigger for one busy table of the embedded database: its writers count the rows
 * they change, and every `every` rows the table is vacuumed and analysed, in the background (one
 * at a time; a no-op on Postgres). VACUUM skips the pages it already found all-visible, so a
 * crawl's table costs each run about what changed since the last.
 */
export class TableVacuum {
  readonly #db: Db;
  readonly #table: string;
  readonly #every: number;
  readonly #onError: (err: unknown) => void;
  #since = 0;
  #running: Promise<void> | undefined;

  constructor(db: Db, table: string, every: number, onError: (err: unknown) => void) {
    this.#db = db;
    this.#table = table;
    this.#every = every;
    this.#onError = onError;
  }

  /** `rows` rows of the table were changed. */
  changed(rows: number): void {
    if (this.#db.kind !== 'pglite') return;
    this.#since += rows;
    if (this.#since < this.#every || this.#running) return;
    this.#since = 0;
    this.#running = this.#db
      .exec(`VACUUM (ANALYZE) ${this.#table}`)
      .catch(this.#onError)
      .finally(() => (this.#running = undefined));
  }
}
