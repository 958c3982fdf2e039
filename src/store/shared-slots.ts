// Counting semaphores across every process sharing one Postgres: a team's jobs at once and requests
// to a host at once are limits of the deployment, not of each process (migration 19, shared_slots).
//
// A slot is a row. Taking one is a short transaction serialised per key by an advisory lock: expired
// rows of the key are deleted, the live ones counted, and a row inserted when fewer than `max` are
// held. A holder renews its rows every leaseMs / 3 while it holds them, so a process that dies (kill
// -9, a lost host) frees its slots within leaseMs, and a slot never outlives its holder by more.
// Waiting is the caller's (it polls tryTake with a backoff): the embedded PGlite database belongs to
// one process, so there the in-process limits are already the deployment's and this is not used.
import { randomUUID } from 'node:crypto';
import type { Db } from './db-types.ts';

export interface SharedSlotsOptions {
  /** How long a slot stays held without renewal (a dead holder's slots free after this). Default 30 s. */
  leaseMs?: number;
}

export class SharedSlots {
  readonly #db: Db;
  readonly #holder = randomUUID();
  readonly #leaseMs: number;
  readonly #held = new Set<string>();
  readonly #renewal: NodeJS.Timeout;

  constructor(db: Db, opts: SharedSlotsOptions = {}) {
    this.#db = db;
    this.#leaseMs = opts.leaseMs ?? 30_000;
    this.#renewal = setInterval(() => void this.#renew(), Math.max(100, this.#leaseMs / 3));
    this.#renewal.unref();
  }

  /** A slot of `key` if fewer than `max` are held (its id, for give), else null. */
  async tryTake(key: string, max: number): Promise<string | null> {
    const id = randomUUID();
    const taken = await this.#db.transaction(async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 727002))', [key]);
      await tx.query('DELETE FROM shared_slots WHERE key = $1 AND expires_at < clock_timestamp()', [key]);
      const { rowCount } = await tx.query(
        `INSERT INTO shared_slots (id, key, holder, expires_at)
         SELECT $2, $1, $3, clock_timestamp() + $4 * interval '1 millisecond'
         WHERE (SELECT count(*) FROM shared_slots WHERE key = $1) < $5`,
        [key, id, this.#holder, this.#leaseMs, max],
      );
      return rowCount === 1;
    });
    if (!taken) return null;
    this.#held.add(id);
    return id;
  }

  /** Frees a slot (idempotent; a failed delete leaves it to expire). */
  async give(id: string): Promise<void> {
    if (!this.#held.delete(id)) return;
    await this.#db.query('DELETE FROM shared_slots WHERE id = $1', [id]).catch(() => undefined);
  }

  /** Slots of `key` held now, in every process. */
  async count(key: string): Promise<number> {
    const { rows } = await this.#db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM shared_slots WHERE key = $1 AND expires_at >= clock_timestamp()',
      [key],
    );
    return rows[0].n;
  }

  /** Stops renewing and frees this process's slots. */
  async close(): Promise<void> {
    clearInterval(this.#renewal);
    const ids = [...this.#held];
    this.#held.clear();
    if (ids.length)
      await this.#db.query('DELETE FROM shared_slots WHERE id = ANY($1::uuid[])', [ids]).catch(() => undefined);
  }

  async #renew(): Promise<void> {
    if (this.#held.size === 0) return;
    await this.#db
      .query(
        `UPDATE shared_slots SET expires_at = clock_timestamp() + $2 * interval '1 millisecond' WHERE id = ANY($1::uuid[])`,
        [[...this.#held], this.#leaseMs],
      )
      .catch(() => undefined); // the next renewal tries again; the lease is 3 renewals long
  }
}
