// The WebSocket form of GET /v2/crawl/{id} and GET /v2/batch/scrape/{id}: the status stream
// Firecrawl's SDK watchers open on the status path (the API key as the subprotocol, or an
// `Authorization: Bearer` header; both checked by src/api/auth.ts before the upgrade, so a wrong
// key is an HTTP 401 and no socket).
//
// Messages (JSON text frames), as Firecrawl's server and SDK watchers exchange them:
//   {type: "catchup", data: <status document>}  first: the status with the documents done so far
//                                               (about 10 MiB at most; the rest follow at once as
//                                               document messages); `next` is null
//   {type: "document", data: <document>}        each page as it is done, once
//   {type: "done", data: <status document>}     the terminal status (completed, cancelled or
//                                               failed) with `data: []`: every document was sent
//                                               before; then the socket closes with 1000
//   {type: "error", error, code}                then the socket closes: 1008 unknown id (another
//                                               team's id reads as unknown), 1011 internal error
// The server going down closes open streams with 1001.
//
// Pages are sent in admission order as far as they are done; a page that finishes after a later
// one is sent when it finishes, so the order on the stream may differ from GET's, but every done
// page is sent exactly once. Cursor: pages below the first still-queued one are final (pages are
// admitted in seq order under the crawl's lock), so `low` marks what is settled and `sent` holds
// the seqs sent above it.
import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import type { ScrapeDocument } from '../contract/scrape.ts';
import type { Crawler } from '../crawl/crawler.ts';
import type { CrawlKind } from '../crawl/crawl-row.ts';
import { type CrawlStatus, STATUS_MAX_BYTES } from '../crawl/crawl-state.ts';
import { ApiError, type ErrorCode } from '../errors.ts';
import type { Db } from '../store/db-types.ts';

export type StatusStreamMessage =
  | { type: 'catchup'; data: CrawlStatus }
  | { type: 'document'; data: ScrapeDocument }
  | { type: 'done'; data: CrawlStatus }
  | { type: 'error'; error: string; code: ErrorCode };

export interface StatusStreamOptions {
  crawler: Crawler;
  db: Db;
  kind: CrawlKind;
  /** Base of the URLs in status documents (config.publicUrl); unset: from the request. */
  publicUrl?: string;
  /** Database poll interval while the job runs. */
  pollMs?: number;
}

const POLL_MS = 500;
const BATCH = 50;
/** Stop reading documents while this much is still unsent to a slow client. */
const MAX_BUFFERED = 8 * 1024 * 1024;
const PING_MS = 30_000;

const CLOSE_NORMAL = 1000;
const CLOSE_POLICY = 1008;
const CLOSE_INTERNAL = 1011;
const OPEN = 1;

/** A route's `wsHandler`: streams the status of the crawl or batch scrape `:id` of the caller's team. */
export function statusStream(opts: StatusStreamOptions): (socket: WebSocket, request: FastifyRequest) => void {
  return (socket, request) => {
    const { id } = request.params as { id: string };
    const base = opts.publicUrl ?? `${request.protocol}://${request.host}`;
    new Stream(opts, socket, request, id, base).run();
  };
}

class Stream {
  readonly #o: StatusStreamOptions;
  readonly #ws: WebSocket;
  readonly #req: FastifyRequest;
  readonly #id: string;
  readonly #base: string;
  #stopped = false;
  #timer: NodeJS.Timeout | undefined;
  #lastPing = Date.now();
  /** Every page with seq <= low is final and, if done, sent. */
  #low = 0;
  /** Seqs above `low` already sent. */
  #sent = new Set<number>();

  constructor(o: StatusStreamOptions, ws: WebSocket, req: FastifyRequest, id: string, base: string) {
    this.#o = o;
    this.#ws = ws;
    this.#req = req;
    this.#id = id;
    this.#base = base;
    // Errors of the socket itself go to @fastify/websocket's error handler (logged, terminated).
    ws.on('close', () => this.#stop());
  }

  run(): void {
    this.#start().catch((err: unknown) => this.#fail(err));
  }

  #stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  get #open(): boolean {
    return !this.#stopped && this.#ws.readyState === OPEN;
  }

  async #start(): Promise<void> {
    const status = await this.#status();
    const { docs } = await this.#pending(STATUS_MAX_BYTES);
    if (!this.#open) return;
    this.#send({ type: 'catchup', data: { ...status, next: null, data: docs } });
    await this.#tick(status);
  }

  /** Sends what finished since the last tick; ends the stream once the job is terminal and drained. */
  async #tick(known?: CrawlStatus): Promise<void> {
    if (!this.#open) return;
    // The status first: when it is terminal, no page can become done after the drain below.
    const status = known ?? (await this.#status());
    let drained = false;
    for (;;) {
      if (!this.#open) return;
      if (this.#ws.bufferedAmount > MAX_BUFFERED) break;
      const { docs, complete } = await this.#pending(MAX_BUFFERED);
      if (!this.#open) return;
      for (const doc of docs) this.#send({ type: 'document', data: doc });
      if (complete) {
        drained = true;
        break;
      }
    }
    if (drained && status.status !== 'scraping') {
      this.#send({ type: 'done', data: { ...status, next: null, data: [] } });
      this.#close(CLOSE_NORMAL, 'done');
      return;
    }
    if (Date.now() - this.#lastPing > PING_MS) {
      this.#lastPing = Date.now();
      this.#ws.ping();
    }
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#tick().catch((err: unknown) => this.#fail(err));
    }, this.#o.pollMs ?? POLL_MS);
  }

  /** The status document without documents (another team's id: NotFoundError). */
  #status(): Promise<CrawlStatus> {
    return this.#o.crawler.status(this.#req.caller.teamId, this.#id, this.#o.kind, { skip: 0, limit: 0 }, this.#base);
  }

  /**
   * Done documents not sent yet, in seq order, up to about `maxBytes` (at least one); marks them
   * sent. `complete`: nothing else was pending at the time of the query.
   */
  async #pending(maxBytes: number): Promise<{ docs: ScrapeDocument[]; complete: boolean }> {
    const { db } = this.#o;
    // Below the first unfinished page everything is final (admission takes the crawl's lock, so
    // seqs are committed in order): once the query below has read those, `low` may advance.
    const bound = await db.query<{ queued: string | null; last: string | null }>(
      `SELECT min(seq) FILTER (WHERE status NOT IN ('done', 'failed', 'blocked')) AS queued, max(seq) AS last
       FROM crawl_pages WHERE crawl_id = $1`,
      [this.#id],
    );
    const { queued, last } = bound.rows[0] ?? { queued: null, last: null };
    const settled = queued !== null ? Number(queued) - 1 : last !== null ? Number(last) : this.#low;
    const docs: ScrapeDocument[] = [];
    let bytes = 0;
    for (;;) {
      const { rows } = await db.query<{ seq: string; document: ScrapeDocument; size: number }>(
        `SELECT seq, document, octet_length(document::text) AS size FROM crawl_pages
         WHERE crawl_id = $1 AND status = 'done' AND seq > $2 AND NOT (seq = ANY($3::bigint[]))
         ORDER BY seq LIMIT $4`,
        [this.#id, this.#low, [...this.#sent], BATCH],
      );
      for (const r of rows) {
        if (docs.length > 0 && bytes + Number(r.size) > maxBytes) return { docs, complete: false };
        docs.push(r.document);
        bytes += Number(r.size);
        this.#sent.add(Number(r.seq));
      }
      if (rows.length < BATCH) break;
    }
    if (settled > this.#low) {
      this.#low = settled;
      for (const seq of this.#sent) if (seq <= settled) this.#sent.delete(seq);
    }
    return { docs, complete: true };
  }

  #send(msg: StatusStreamMessage): void {
    if (this.#open) this.#ws.send(JSON.stringify(msg));
  }

  #close(code: number, reason: string): void {
    this.#stop();
    if (this.#ws.readyState === OPEN) this.#ws.close(code, reason.slice(0, 120));
  }

  #fail(err: unknown): void {
    if (this.#stopped) return; // the client left or the server is closing: nothing to tell
    const known = err instanceof ApiError && err.statusCode < 500;
    if (!known) this.#req.log.error({ err, id: this.#id }, 'status stream failed');
    const code: ErrorCode = known ? err.code : 'INTERNAL_ERROR';
    const message = known ? err.message : 'Internal error while streaming the status; GET the same path for the status';
    try {
      this.#send({ type: 'error', error: message, code });
      this.#close(known ? CLOSE_POLICY : CLOSE_INTERNAL, code);
    } catch (closeErr) {
      this.#req.log.warn({ err: closeErr }, 'status stream: could not close');
      this.#ws.terminate();
    }
  }
}
