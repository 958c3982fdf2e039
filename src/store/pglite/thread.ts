// The worker thread that owns the embedded PGlite database (started by src/store/pglite/client.ts).
// PGlite is Postgres compiled to WASM: every statement runs synchronously on the thread that calls
// it. Here that is this thread, so the service's event loop only posts messages and keeps serving
// while a statement runs (on a second core when there is one).
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, type Transaction } from '@electric-sql/pglite';
import { pgliteCodecs, Utf8Text } from './codecs.ts';
import { pgliteOptions } from './wasm.ts';
import type { DbReply, DbRequest, SerializedDbError } from './client.ts';

const port = parentPort;
if (!port) throw new Error('src/store/pglite/thread.ts runs as a worker thread (src/store/pglite/client.ts)');

const { path } = workerData as { path: string };
let db: PGlite;
try {
  db = await PGlite.create(path, { ...pgliteCodecs, ...pgliteOptions(PGlite.defaultStartParams) });
} catch (err) {
  port.postMessage({ id: 0, error: serializeError(err) } satisfies DbReply);
  process.exit(1);
}

/** An open transaction: PGlite holds its lock (other statements wait) until `end` decides. */
interface OpenTransaction {
  tx: Transaction;
  end: (commit: boolean) => void;
  finished: Promise<void>;
}
const transactions = new Map<number, OpenTransaction>();
const ROLLBACK = Symbol('rollback');

port.on('message', (m: DbRequest) => {
  handle(m).then(
    (result) => port.postMessage({ id: m.id, result } satisfies DbReply, ownBuffers(result)),
    (err: unknown) => port.postMessage({ id: m.id, error: serializeError(err) } satisfies DbReply),
  );
});
port.postMessage({ id: 0, result: 'ready' } satisfies DbReply);

async function handle(m: DbRequest): Promise<unknown> {
  switch (m.op) {
    case 'query': {
      if (m.utf8) for (const i of m.utf8) m.params![i] = new Utf8Text(m.params![i] as Uint8Array);
      const r = await on(m.tx).query(m.text, m.params);
      // As node-postgres counts: rows changed, or rows returned by a SELECT (affectedRows is 0 there).
      return { rows: r.rows, rowCount: r.affectedRows || r.rows.length };
    }
    case 'exec':
      await on(m.tx).exec(m.sql);
      return undefined;
    case 'execRows':
      return (await db.exec(m.sql)).map((r) => r.rows ?? []);
    case 'begin':
      return begin(m.id);
    case 'end': {
      const t = transactions.get(m.tx);
      if (!t) throw new Error(`no open transaction ${m.tx}`);
      transactions.delete(m.tx);
      t.end(m.commit);
      await t.finished;
      return undefined;
    }
    case 'close':
      await db.close();
      return undefined;
  }
}

function on(tx: number | undefined): Pick<Transaction, 'query' | 'exec'> {
  if (tx === undefined) return db;
  const t = transactions.get(tx);
  if (!t) throw new Error(`no open transaction ${tx}`);
  return t.tx;
}

/** Opens a transaction and answers once it holds the database; it ends at the `end` message. */
function begin(id: number): Promise<void> {
  return new Promise((opened, failed) => {
    let decide!: (commit: boolean) => void;
    const decided = new Promise<boolean>((r) => (decide = r));
    const finished = db
      .transaction(async (tx) => {
        transactions.set(id, { tx, end: decide, finished });
        opened();
        if (!(await decided)) throw ROLLBACK;
      })
      .then(
        () => undefined,
        (err: unknown) => {
          if (err !== ROLLBACK) throw err;
        },
      );
    // BEGIN itself failed: the caller hears it from `begin`; a failed COMMIT is `end`'s to report.
    finished.catch((err: unknown) => {
      if (!transactions.has(id)) failed(err);
    });
  });
}

// Large bytea values (a cached page's body) move to the caller instead of being copied: each has
// an ArrayBuffer of its own (Buffers from the pool, under 4 KB, share one and are copied).
function ownBuffers(result: unknown): ArrayBuffer[] {
  const rows = (result as { rows?: Record<string, unknown>[] } | undefined)?.rows;
  const out: ArrayBuffer[] = [];
  if (!Array.isArray(rows)) return out;
  for (const row of rows) {
    for (const k in row) {
      const v = row[k];
      if (
        v instanceof Uint8Array &&
        v.byteLength > 4096 &&
        v.byteLength === v.buffer.byteLength &&
        !out.includes(v.buffer as ArrayBuffer)
      )
        out.push(v.buffer as ArrayBuffer);
    }
  }
  return out;
}

function serializeError(err: unknown): SerializedDbError {
  if (!(err instanceof Error)) return { message: String(err) };
  const out: SerializedDbError = { message: err.message, name: err.name };
  // DatabaseError's fields (code, detail, constraint…): the callers test `code` (e.g. 23505).
  for (const [k, v] of Object.entries(err)) if (typeof v === 'string' || typeof v === 'number') out[k] = v;
  return out;
}
