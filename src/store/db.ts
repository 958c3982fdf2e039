// One small database interface over two engines: PGlite (embedded, WASM Postgres, data on disk)
// and real Postgres (node-postgres pool). Both speak the same SQL, so every query in src/store
// runs unchanged on either.
import { existsSync } from 'node:fs';
import { mkdir, open, readFile, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Pool, PoolClient } from 'pg';
import type { Db, Queryable } from './db-types.ts';
import { openPgliteThread } from './pglite/client.ts';
import { createPgliteDir } from './pglite/template.ts';
import { DataDirLockedError } from '../errors.ts';

export interface OpenDbOptions {
  dataDir: string;
  databaseUrl?: string;
  /** Postgres schema holding our tables (created if missing). */
  schema?: string;
  /** Pool size for Postgres. */
  maxConnections?: number;
}

export async function openDb(opts: OpenDbOptions): Promise<Db> {
  return opts.databaseUrl
    ? openPostgres(opts.databaseUrl, opts.schema ?? 'public', opts.maxConnections ?? 10)
    : openPglite(opts.dataDir);
}

async function openPostgres(url: string, schema: string, max: number): Promise<Db> {
  const { default: pg } = await import('pg');
  const pool: Pool = new pg.Pool({
    connectionString: url,
    max,
    // int8 (counts, sums) as numbers, as PGlite returns them: our counts stay far below 2^53.
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? Number : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
    },
    options: `-c search_path=${schema}`,
  });
  pool.on('error', () => {
    // An idle client lost its connection; the pool replaces it. Queries report their own errors.
  });
  await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`).catch((err: { code?: string }) => {
    // Two processes creating it at once: the loser sees a unique violation; the schema exists.
    if (err.code !== '23505') throw err;
  });
  const wrap = (c: Pool | PoolClient): Queryable => ({
    async query<T>(text: string, params?: unknown[]) {
      const r = await c.query(text, params as unknown[]);
      return { rows: r.rows as T[], rowCount: r.rowCount ?? 0 };
    },
    async exec(sql: string) {
      await c.query(sql);
    },
  });
  return {
    kind: 'postgres',
    ...wrap(pool),
    async execRows(sql: string) {
      // node-postgres answers a multi-statement text with one result per statement.
      const r = (await pool.query(sql)) as unknown as
        { rows: Record<string, unknown>[] } | { rows: Record<string, unknown>[] }[];
      return (Array.isArray(r) ? r : [r]).map((x) => x.rows ?? []);
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const client = await pool.connect();
      // pg-pool takes its error listener off a client it hands out: a connection lost mid-transaction
      // (a Postgres restart, a terminated backend) would be an unhandled 'error' event and end the
      // process. Kept here instead: the failing query reports it, and the client is discarded.
      let lost: Error | undefined;
      const onError = (err: Error) => {
        lost = err;
      };
      client.on('error', onError);
      try {
        await client.query('BEGIN');
        const out = await fn(wrap(client));
        await client.query('COMMIT');
        return out;
      } catch (err) {
        if (!lost) await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.off('error', onError);
        client.release(lost);
      }
    },
    async close() {
      await pool.end();
    },
  };
}

/**
 * Creates the embedded database's directory if it does not exist yet, under the data directory's
 * lock (openDb does the same when it opens a missing one). src/server.ts calls it before loading
 * the rest of the service, so that the child doing it overlaps a process that is still small.
 */
export async function preparePgliteDataDir(dataDir: string): Promise<void> {
  const { releaseLock } = await lockedPgliteDir(dataDir);
  await releaseLock();
}

async function openPglite(dataDir: string): Promise<Db> {
  const { path, releaseLock } = await lockedPgliteDir(dataDir);
  try {
    return await openPgliteThread(path, releaseLock);
  } catch (err) {
    await releaseLock();
    throw err;
  }
}

/** The data directory locked to this process, its database created if missing; the lock is the caller's to release. */
async function lockedPgliteDir(dataDir: string): Promise<{ path: string; releaseLock: () => Promise<void> }> {
  const dir = resolve(dataDir);
  await mkdir(dir, { recursive: true });
  const releaseLock = await lockDataDir(dir);
  const path = join(dir, 'pglite');
  try {
    if (!existsSync(join(path, 'PG_VERSION'))) {
      // A half-made directory (a start killed while it was being made) is made again.
      await rm(path, { recursive: true, force: true });
      await createPgliteDir(path);
    }
  } catch (err) {
    await releaseLock();
    throw err;
  }
  return { path, releaseLock };
}

// PGlite keeps the whole database in one process; a second process opening the same directory
// would corrupt it. A pid file guards it, and a stale file from a crashed process is taken over.
async function lockDataDir(dir: string): Promise<() => Promise<void>> {
  const lockPath = join(dir, 'gleaner.pid');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const handle = await open(lockPath, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      return () => rm(lockPath, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim());
      if (pid && pid !== process.pid && isAlive(pid)) throw new DataDirLockedError(dir, pid);
      await rm(lockPath, { force: true });
    }
  }
  throw new Error(`Could not lock ${dir}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
