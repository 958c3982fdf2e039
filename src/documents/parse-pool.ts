// A small pool of worker threads that run parseDocument() off the event loop, so that a large or
// hostile document (a 300-page PDF, a hung pdf.js) never blocks the API.
//
// - Workers start lazily (the first job starts one), up to `size`; idle ones stay for the next job.
// - Jobs beyond the busy workers wait in a bounded queue; a full queue rejects at once
//   (ParsePoolBusyError, the route answers 503).
// - The bytes are transferred (the ArrayBuffer moves to the worker; the caller's copy is detached).
// - Each job has a deadline: the worker aborts cooperatively at `timeoutMs`; a worker still busy
//   `graceMs` later is terminated and replaced, and the job fails with DOCUMENT_TIMEOUT.
// - A worker that dies (out of memory under resourceLimits, a native crash) fails only its own job
//   (DOCUMENT_CORRUPT naming the cause); the next job gets a fresh worker.
// HTML is not parsed here: it goes through the web pipeline in the main thread (src/scrape/parse-upload.ts).
import { Worker } from 'node:worker_threads';
import type { DocumentKind, ParsedDocument, ParseOptions } from './types.ts';
import { DocumentError, ParsePoolBusyError } from '../errors.ts';

export interface ParsePoolOptions {
  /** Worker threads at most. */
  size: number;
  /** Jobs waiting for a worker at most (default 64). */
  maxQueue?: number;
  /** V8 old-generation heap of each worker, MB (default 1024). */
  maxOldGenerationSizeMb?: number;
  /** After the cooperative abort, how long a worker may take to give up before it is terminated (default 2000 ms). */
  graceMs?: number;
}

/** What a job sends: ParseOptions without the signal (it cannot cross threads). */
export type PoolParseOptions = Omit<ParseOptions, 'signal'>;

/** ParsedDocument plus what the worker saw while parsing (for billing and metadata). */
export interface PoolResult {
  document: ParsedDocument;
  /** Pages recognised by OCR (PDF). */
  ocrPages: number;
}

interface Job {
  bytes: Uint8Array;
  kind: DocumentKind;
  options: PoolParseOptions;
  timeoutMs: number;
  signal?: AbortSignal;
  resolve: (r: PoolResult) => void;
  reject: (err: Error) => void;
  onAbort?: () => void;
}

interface Slot {
  worker: Worker;
  job?: Job;
  timer?: NodeJS.Timeout;
}

/** Worker → main messages. */
export type WorkerReply =
  { ok: true; document: ParsedDocument; ocrPages: number } | { ok: false; code: string; message: string };

const WORKER_URL = new URL('./parse-thread.ts', import.meta.url);

export class ParsePool {
  readonly size: number;
  readonly #maxQueue: number;
  readonly #heapMb: number;
  readonly #graceMs: number;
  readonly #slots = new Set<Slot>();
  readonly #queue: Job[] = [];
  #closed = false;

  constructor(opts: ParsePoolOptions) {
    this.size = Math.max(1, Math.floor(opts.size));
    this.#maxQueue = opts.maxQueue ?? 64;
    this.#heapMb = opts.maxOldGenerationSizeMb ?? 1024;
    this.#graceMs = opts.graceMs ?? 2000;
  }

  /** Workers running now (started lazily). */
  get threads(): number {
    return this.#slots.size;
  }

  /**
   * Parses `bytes` (transferred: the caller must not use them afterwards) in a worker. Rejects
   * with DocumentError (every parser failure, DOCUMENT_TIMEOUT after `timeoutMs`), or
   * ParsePoolBusyError when the queue is full.
   */
  parse(
    bytes: Uint8Array,
    kind: DocumentKind,
    options: PoolParseOptions,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<PoolResult> {
    if (this.#closed) return Promise.reject(new DocumentError('DOCUMENT_TIMEOUT', 'The parser pool is shutting down'));
    if (signal?.aborted) return Promise.reject(new DocumentError('DOCUMENT_TIMEOUT', 'Document parsing was aborted'));
    return new Promise<PoolResult>((resolve, reject) => {
      const job: Job = { bytes, kind, options, timeoutMs, signal, resolve, reject };
      const idle = [...this.#slots].find((s) => !s.job);
      if (idle) return this.#run(idle, job);
      if (this.#slots.size < this.size) return this.#run(this.#spawn(), job);
      if (this.#queue.length >= this.#maxQueue) {
        reject(
          new ParsePoolBusyError(
            `All ${this.size} parser threads are busy and ${this.#queue.length} documents are waiting; retry later`,
          ),
        );
        return;
      }
      if (signal) {
        job.onAbort = () => {
          const i = this.#queue.indexOf(job);
          if (i >= 0) this.#queue.splice(i, 1);
          reject(
            new DocumentError('DOCUMENT_TIMEOUT', 'Document parsing was aborted while waiting for a parser thread'),
          );
        };
        signal.addEventListener('abort', job.onAbort, { once: true });
      }
      this.#queue.push(job);
    });
  }

  /** Terminates every worker; queued and running jobs fail. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const job of this.#queue.splice(0))
      job.reject(new DocumentError('DOCUMENT_TIMEOUT', 'The parser pool was closed'));
    const slots = [...this.#slots];
    this.#slots.clear();
    await Promise.all(
      slots.map(async (s) => {
        if (s.timer) clearTimeout(s.timer);
        s.job?.reject(new DocumentError('DOCUMENT_TIMEOUT', 'The parser pool was closed'));
        s.job = undefined;
        await s.worker.terminate().catch(() => undefined);
      }),
    );
  }

  #spawn(): Slot {
    const worker = new Worker(WORKER_URL, { resourceLimits: { maxOldGenerationSizeMb: this.#heapMb } });
    // Idle workers must not keep the process alive; a running job is awaited by its caller.
    worker.unref();
    const slot: Slot = { worker };
    worker.on('message', (reply: WorkerReply) => this.#settle(slot, reply));
    worker.on('error', (err: Error) => this.#crashed(slot, err));
    worker.on('exit', (code) => this.#crashed(slot, new Error(`the parser thread exited with code ${code}`)));
    this.#slots.add(slot);
    return slot;
  }

  #run(slot: Slot, job: Job): void {
    if (job.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    slot.job = job;
    // Transfer, not copy: a view on part of a larger buffer (Buffer's pool) is copied once first.
    const b = job.bytes;
    const owned =
      b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer
        ? b
        : new Uint8Array(b);
    const buffer = owned.buffer as ArrayBuffer;
    slot.timer = setTimeout(() => this.#timedOut(slot), job.timeoutMs + this.#graceMs);
    job.onAbort = () => this.#kill(slot, new DocumentError('DOCUMENT_TIMEOUT', 'Document parsing was aborted'));
    job.signal?.addEventListener('abort', job.onAbort, { once: true });
    slot.worker.postMessage({ buffer, kind: job.kind, options: job.options, timeoutMs: job.timeoutMs }, [buffer]);
  }

  #settle(slot: Slot, reply: WorkerReply): void {
    const job = this.#finish(slot);
    if (!job) return;
    if (reply.ok) job.resolve({ document: reply.document, ocrPages: reply.ocrPages });
    else job.reject(new DocumentError(reply.code as DocumentError['code'], reply.message));
    this.#next(slot);
  }

  #timedOut(slot: Slot): void {
    const job = slot.job;
    if (!job) return;
    this.#kill(slot, new DocumentError('DOCUMENT_TIMEOUT', `Document parsing took longer than ${job.timeoutMs} ms`));
  }

  /** Fails the slot's job and replaces its worker (a parser that does not answer cannot be trusted). */
  #kill(slot: Slot, err: Error): void {
    const job = this.#finish(slot);
    this.#slots.delete(slot);
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => undefined);
    void slot.worker.terminate().catch(() => undefined);
    job?.reject(err);
    this.#drain();
  }

  #crashed(slot: Slot, err: Error): void {
    if (!this.#slots.has(slot)) return;
    const job = this.#finish(slot);
    this.#slots.delete(slot);
    slot.worker.removeAllListeners();
    slot.worker.on('error', () => undefined);
    void slot.worker.terminate().catch(() => undefined);
    if (job) {
      const oom = /ERR_WORKER_OUT_OF_MEMORY|out of memory|heap/i.test(
        `${(err as { code?: string }).code ?? ''} ${err.message}`,
      );
      const why = oom ? `ran out of memory (limit ${this.#heapMb} MB)` : `crashed (${err.message})`;
      job.reject(
        new DocumentError('DOCUMENT_CORRUPT', `The ${job.kind} parser ${why}; the document could not be parsed`, {
          cause: err,
        }),
      );
    }
    this.#drain();
  }

  #finish(slot: Slot): Job | undefined {
    const job = slot.job;
    slot.job = undefined;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
    if (job?.onAbort) job.signal?.removeEventListener('abort', job.onAbort);
    return job;
  }

  #next(slot: Slot): void {
    const job = this.#queue.shift();
    if (job) this.#run(slot, job);
  }

  /** After a worker left: start a fresh one for the next queued job. */
  #drain(): void {
    if (this.#closed) return;
    while (this.#queue.length && this.#slots.size < this.size) this.#run(this.#spawn(), this.#queue.shift() as Job);
  }
}
