// The embedded database's client side: the Db interface over messages to the worker thread that
// owns PGlite (src/store/pglite/thread.ts). Statements in WASM cost CPU on whichever thread runs
// them (~0.3 ms each at least, ~2 ms per 200 KB value); on the service's own thread that was a
// third of a scrape and half of a crawl's event loop. Here the event loop only posts messages.
import { Worker } from 'node:worker_threads';
import type { Db, Queryable, QueryResult } from '../db-types.ts';
import { PgliteThreadError } from '../../errors.ts';

export type DbRequest =
  /** `utf8`: indexes of params sent as UTF-8 bytes instead of a large string (see toThread). */
  | { id: number; op: 'query'; text: string; params?: unknown[]; utf8?: number[]; tx?: number }
  | { id: number; op: 'exec'; sql: string; tx?: number }
  | { id: number; op: 'execRows'; sql: string }
  /** Answered once the transaction holds the database; its id is this message's id. */
  | { id: number; op: 'begin' }
  | { id: number; op: 'end'; tx: number; commit: boolean }
  | { id: number; op: 'close' };

export interface SerializedDbError {
  message: string;
  [field: string]: string | number | undefined;
}

/** Id 0 is the start-up answer ('ready' or the error that stopped PGlite from opening). */
export type DbReply = { id: number; result?: unknown; error?: SerializedDbError };

type Call = { [K in DbRequest['op']]: Omit<Extract<DbRequest, { op: K }>, 'id'> }[DbRequest['op']];

const WORKER_URL = new URL('./thread.ts', import.meta.url);

/** Opens the PGlite data directory `path` in a worker thread; `onClose` runs after it is closed. */
export async function openPgliteThread(path: string, onClose: () => Promise<void>): Promise<Db> {
  const worker = new Worker(WORKER_URL, { workerData: { path }, execArgv: workerExecArgv() });
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let stopped: Error | undefined;

  const ready = new Promise<void>((resolve, reject) => pending.set(0, { resolve: () => resolve(), reject }));
  worker.on('message', (m: DbReply) => {
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    // The thread keeps the process alive only while a statement is waiting for it, as a
    // statement on this thread would.
    if (pending.size === 0) worker.unref();
    if (m.error) p.reject(toError(m.error));
    else p.resolve(m.result);
  });
  const stop = (err: Error) => {
    stopped ??= err;
    for (const p of pending.values()) p.reject(stopped);
    pending.clear();
  };
  worker.on('error', (err) => stop(new PgliteThreadError(err.message)));
  worker.on('exit', (code) => stop(new PgliteThreadError(`exited with code ${code}`)));

  const call = (msg: Call, id = nextId++, transfer: ArrayBuffer[] = []): Promise<unknown> => {
    if (stopped) return Promise.reject(stopped);
    return new Promise((resolve, reject) => {
      if (pending.size === 0) worker.ref();
      pending.set(id, { resolve, reject });
      try {
        worker.postMessage({ ...msg, id }, transfer);
      } catch (err) {
        // A parameter that cannot be copied to the thread (a function, a class instance).
        pending.delete(id);
        reject(err as Error);
      }
    });
  };

  try {
    await ready;
  } catch (err) {
    await worker.terminate();
    throw err;
  }

  const on = (tx?: number): Queryable => ({
    async query<T>(text: string, params?: unknown[]) {
      const { values, utf8, transfer } = toThread(params);
      const r = (await call({ op: 'query', text, params: values, utf8, tx }, undefined, transfer)) as QueryResult<T>;
      for (const row of r.rows) asBuffers(row as Record<string, unknown>);
      return r;
    },
    async exec(sql: string) {
      await call({ op: 'exec', sql, tx });
    },
  });
  return {
    kind: 'pglite',
    ...on(),
    async execRows(sql: string) {
      const results = (await call({ op: 'execRows', sql })) as Record<string, unknown>[][];
      for (const rows of results) for (const row of rows) asBuffers(row);
      return results;
    },
    async transaction<T>(fn: (tx: Queryable) => Promise<T>) {
      const id = nextId++;
      await call({ op: 'begin' }, id);
      let out: T;
      try {
        out = await fn(on(id));
      } catch (err) {
        await call({ op: 'end', tx: id, commit: false }).catch(() => undefined);
        throw err;
      }
      await call({ op: 'end', tx: id, commit: true });
      return out;
    },
    async close() {
      try {
        if (!stopped) await call({ op: 'close' });
      } finally {
        await worker.terminate();
        await onClose();
      }
    },
  };
}

// The thread inherits the process's Node options, unless one of them only means something for
// the main script (`node --input-type=module -e …`), which would stop it from loading its file:
// then it gets none (V8's flags are the process's anyway, and a worker refuses them in execArgv).
function workerExecArgv(): string[] | undefined {
  const mainOnly = (a: string) => a.startsWith('--input-type') || /^(-e|--eval|-p|--print)(=|$)/.test(a);
  return process.execArgv.some(mainOnly) ? [] : undefined;
}

// Copying a parameter to the thread: structured clone takes ~0.6 ms for a 200 KB Buffer and
// ~1.2 ms for a 200 KB string with any non-Latin-1 character (V8 stores it two bytes a char); a
// copy into a fresh ArrayBuffer that is then transferred costs ~0.05 ms, UTF-8 encoding ~0.05–0.5.
// The thread's codecs send such bytes to Postgres as they are (src/store/pglite/codecs.ts).
const LARGE = 4096;
function toThread(params: unknown[] | undefined): { values?: unknown[]; utf8?: number[]; transfer: ArrayBuffer[] } {
  const transfer: ArrayBuffer[] = [];
  if (!params) return { transfer };
  let utf8: number[] | undefined;
  const values = params.map((v, i) => {
    if (typeof v === 'string' && v.length > LARGE) {
      const bytes = Buffer.from(v);
      const own = bytes.byteLength === bytes.buffer.byteLength ? bytes : new Uint8Array(bytes);
      transfer.push(own.buffer as ArrayBuffer);
      (utf8 ??= []).push(i);
      return own;
    }
    if (v instanceof Uint8Array && v.byteLength > LARGE) {
      const copy = new Uint8Array(v);
      transfer.push(copy.buffer);
      return copy;
    }
    return v;
  });
  return { values, utf8, transfer };
}

// bytea arrives as a Uint8Array (a Buffer loses its class on the way); callers expect a Buffer,
// as node-postgres gives them. Same memory, no copy.
function asBuffers(row: Record<string, unknown>): void {
  for (const k in row) {
    const v = row[k];
    if (v instanceof Uint8Array && !Buffer.isBuffer(v)) row[k] = Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  }
}

function toError(e: SerializedDbError): Error {
  const { message, name, ...fields } = e;
  const err = Object.assign(new Error(message), fields);
  if (typeof name === 'string') err.name = name;
  return err;
}
