// Crawl webhooks (wire-names.md, "Crawl request"): events are queued by the crawler and delivered
// by the 'webhook-delivery' queue, so a slow or dead receiver never holds up a crawl.
//
// Enqueueing an event is one job insert; its data names what to send (crawl, event, page key),
// and the payload is built when the attempt runs: `{success, type: "crawl.<event>", id,
// webhookId, data: [documents], metadata, error?}`. webhookId is stable per event (a UUID derived
// from crawl, event and page), the same on every attempt, so a receiver can drop duplicates: the
// queue is at-least-once and so is delivery. The job id is derived from webhookId and the attempt
// number, so an event re-sent by a re-run of a crawl job is not queued twice.
//
// An attempt POSTs the JSON body with the webhook's headers, `Content-Type: application/json` and
// `X-Firecrawl-Signature: sha256=<hex HMAC-SHA256 of the raw body under the team's webhook secret>`
// (teams.webhook_secret; `npm run gleaner -- teams secret --team NAME` prints it), through the
// SSRF guard (GLEANER_ALLOW_PRIVATE_NETWORK), with a 10 s timeout and no redirects followed. Every
// attempt is recorded in webhook_deliveries. A 2xx answer ends the event; anything else (other
// status, network error, timeout) schedules the next attempt after the next of
// GLEANER_WEBHOOK_RETRY_DELAYS (default 60, 300, 900 s), then gives up. A handler that fails for
// another reason (database) throws and the queue retries the same attempt.
//
// Monitor events (src/monitor/notify.ts) are queued with their payload made (PayloadDeliveryJob) and
// go through the same attempts, signature, record and retries.
//
// Events and the `events` filter: started, page (one per scraped page, data [document]; a page
// that failed is sent with success false, data [] and error), completed, failed; cancelled is sent
// with the terminal events, i.e. when `events` includes "completed" or "failed" (or by default).
import { createHash, createHmac } from 'node:crypto';
import { request } from 'undici';
import { webhookEvents } from '../contract/crawl.ts';
import { createGuardedAgent } from '../net/ssrf.ts';
import { type JobQueue } from './queue.ts';
import type { JobContext } from './job-context.ts';
import type { Log } from './log.ts';
import type { Job } from './job-runner.ts';
import type { Db, Queryable } from '../store/db-types.ts';

export const WEBHOOK_QUEUE = 'webhook-delivery';
/** How long one attempt may take. */
export const WEBHOOK_TIMEOUT_MS = 10_000;

export { webhookEvents };
export type WebhookEventName = (typeof webhookEvents)[number];
export type CrawlEvent = WebhookEventName | 'cancelled';

/** A crawl's webhook as stored (crawls.webhook). */
export interface WebhookSpec {
  url: string;
  headers: Record<string, string>;
  metadata: Record<string, unknown>;
  events: WebhookEventName[];
}

export function isWebhookEvent(e: string): e is WebhookEventName {
  return (webhookEvents as readonly string[]).includes(e);
}

/** The request's `webhook` (a URL or an object) in stored form; unknown events are left out (the crawler refuses them first). */
export function normalizeWebhook(
  w: string | { url: string; headers?: Record<string, string>; metadata?: Record<string, unknown>; events?: string[] },
): WebhookSpec {
  if (typeof w === 'string') return { url: w, headers: {}, metadata: {}, events: [...webhookEvents] };
  return {
    url: w.url,
    headers: w.headers ?? {},
    metadata: w.metadata ?? {},
    events: w.events ? [...new Set(w.events.filter(isWebhookEvent))] : [...webhookEvents],
  };
}

/** Whether the webhook asked for this event (cancelled goes with the terminal events). */
export function wantsEvent(spec: Pick<WebhookSpec, 'events'>, event: CrawlEvent): boolean {
  if (event === 'cancelled') return spec.events.includes('completed') || spec.events.includes('failed');
  return spec.events.includes(event);
}

export interface DeliveryJob {
  crawlId: string;
  event: CrawlEvent;
  /** The page's dedup key (page events). */
  key?: string;
  webhookId: string;
  /** 1 for the first attempt. */
  attempt: number;
}

/** A UUID-shaped digest of the parts (stable ids for events and their attempts). */
function uuidOf(...parts: string[]): string {
  const h = createHash('sha256').update(parts.join('\0')).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * Queues an event of a crawl for delivery when the crawl has a webhook that wants it. Never
 * throws: a failure to queue is logged, the crawl goes on.
 */
export async function enqueueCrawlEvent(
  queue: JobQueue,
  log: Log,
  crawl: { id: string; webhook: WebhookSpec | null },
  event: CrawlEvent,
  key?: string,
): Promise<void> {
  if (!crawl.webhook || !wantsEvent(crawl.webhook, event)) return;
  const webhookId = uuidOf(crawl.id, event, key ?? '');
  try {
    await queue.send<DeliveryJob>(
      WEBHOOK_QUEUE,
      { crawlId: crawl.id, event, webhookId, attempt: 1, ...(key === undefined ? {} : { key }) },
      { id: uuidOf(webhookId, '1') },
    );
  } catch (err) {
    log.warn({ err, crawlId: crawl.id, event }, 'webhook: event not queued');
  }
}

/** enqueueCrawlEvent for several pages of a crawl (page events) in one insert. Never throws; false when they could not be queued. */
export async function enqueueCrawlEvents(
  queue: JobQueue,
  log: Log,
  crawl: { id: string; webhook: WebhookSpec | null },
  event: CrawlEvent,
  keys: string[],
): Promise<boolean> {
  if (!crawl.webhook || !wantsEvent(crawl.webhook, event) || keys.length === 0) return true;
  try {
    await queue.sendMany<DeliveryJob>(
      WEBHOOK_QUEUE,
      keys.map((key) => {
        const webhookId = uuidOf(crawl.id, event, key);
        return {
          data: { crawlId: crawl.id, event, webhookId, attempt: 1, key },
          options: { id: uuidOf(webhookId, '1') },
        };
      }),
    );
    return true;
  } catch (err) {
    log.warn({ err, crawlId: crawl.id, event }, 'webhook: events not queued');
    return false;
  }
}

/** HMAC-SHA256 of the raw body under the secret, as sent in X-Firecrawl-Signature. */
export function signBody(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export interface DeliveryRecord {
  id: string;
  teamId: string;
  jobId: string;
  webhookId: string;
  event: string;
  url: string;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

/** A crawl's delivery attempts in order. */
export async function listDeliveries(db: Queryable, jobId: string): Promise<DeliveryRecord[]> {
  const { rows } = await db.query<DeliveryRecord>(
    `SELECT id::text, team_id AS "teamId", job_id AS "jobId", webhook_id AS "webhookId", event, url, attempt,
            status_code AS "statusCode", error, created_at AS "createdAt", delivered_at AS "deliveredAt"
     FROM webhook_deliveries WHERE job_id = $1 ORDER BY id`,
    [jobId],
  );
  return rows;
}

export interface WebhookDelivererOptions {
  db: Db;
  queue: JobQueue;
  log: Log;
  allowPrivateNetwork: boolean;
  /** Seconds before each retry (GLEANER_WEBHOOK_RETRY_DELAYS). */
  retryDelays: number[];
  timeoutMs?: number;
}

export class WebhookDeliverer {
  readonly #o: WebhookDelivererOptions;
  readonly #agent;

  constructor(o: WebhookDelivererOptions) {
    this.#o = o;
    this.#agent = createGuardedAgent({ allowPrivateNetwork: o.allowPrivateNetwork });
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }

  /** One attempt ('webhook-delivery' handler; file comment). */
  async deliver(job: Job<DeliveryJob | PayloadDeliveryJob>): Promise<void> {
    const { db, queue, log, retryDelays } = this.#o;
    const d = job.data;
    const event = 'payload' in d ? await this.#payloadEvent(d) : await this.#crawlEvent(d);
    if (!event) return;
    const { teamId, jobId, spec, secret, type } = event;
    const body = JSON.stringify(event.body);
    let statusCode: number | null = null;
    let failure: string | null = null;
    try {
      const res = await request(spec.url, {
        method: 'POST',
        dispatcher: this.#agent,
        headers: {
          ...spec.headers,
          'content-type': 'application/json',
          'x-firecrawl-signature': signBody(secret, body),
        },
        body,
        signal: AbortSignal.any([job.signal, AbortSignal.timeout(this.#o.timeoutMs ?? WEBHOOK_TIMEOUT_MS)]),
        headersTimeout: this.#o.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
        bodyTimeout: this.#o.timeoutMs ?? WEBHOOK_TIMEOUT_MS,
      });
      statusCode = res.statusCode;
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      if (statusCode < 200 || statusCode >= 300) failure = `receiver answered ${statusCode}`;
    } catch (err) {
      failure = err instanceof Error ? err.message || err.name : String(err);
    }
    if (job.signal.aborted) throw new Error('webhook delivery aborted');
    await db.query(
      `INSERT INTO webhook_deliveries (team_id, job_id, webhook_id, event, url, attempt, status_code, error, delivered_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $8::text IS NULL THEN clock_timestamp() END)`,
      [teamId, jobId, d.webhookId, type, spec.url, d.attempt, statusCode, failure],
    );
    if (failure === null) return;
    const delay = retryDelays[d.attempt - 1];
    if (delay === undefined) {
      log.warn({ jobId, type, url: spec.url, attempts: d.attempt, error: failure }, 'webhook: delivery abandoned');
      return;
    }
    const next = d.attempt + 1;
    await queue.send<DeliveryJob | PayloadDeliveryJob>(
      WEBHOOK_QUEUE,
      { ...d, attempt: next },
      { id: uuidOf(d.webhookId, String(next)), startAfter: new Date(Date.now() + delay * 1000) },
    );
  }

  /** A crawl event: the payload built now from the crawl (and page) as stored. */
  async #crawlEvent(d: DeliveryJob): Promise<WebhookEvent | undefined> {
    const { rows } = await this.#o.db.query<{
      teamId: string;
      kind: string;
      webhook: WebhookSpec | null;
      secret: string;
      error: string | null;
    }>(
      `SELECT c.team_id AS "teamId", c.kind, c.webhook, t.webhook_secret AS secret, j.error
       FROM crawls c JOIN teams t ON t.id = c.team_id JOIN jobs j ON j.id = c.id WHERE c.id = $1`,
      [d.crawlId],
    );
    const crawl = rows[0];
    // The crawl expired (results removed) or has no webhook: nothing to send.
    if (!crawl?.webhook) return undefined;
    const spec = crawl.webhook;
    let success = d.event !== 'failed';
    let data: unknown[] = [];
    let error: string | undefined = d.event === 'failed' ? (crawl.error ?? 'crawl failed') : undefined;
    if (d.event === 'page') {
      const { rows: pages } = await this.#o.db.query<{ status: string; document: unknown; error: string | null }>(
        'SELECT status, document, error FROM crawl_pages WHERE crawl_id = $1 AND url_key = $2',
        [d.crawlId, d.key ?? ''],
      );
      const page = pages[0];
      if (!page) return undefined;
      if (page.status === 'done' && page.document) data = [page.document];
      else {
        success = false;
        error = page.error ?? 'page failed';
      }
    }
    // crawl.* or batch_scrape.* (wire-names.md)
    const type = `${crawl.kind}.${d.event}`;
    const body = {
      success,
      type,
      id: d.crawlId,
      webhookId: d.webhookId,
      data,
      metadata: spec.metadata,
      ...(error === undefined ? {} : { error }),
    };
    return { teamId: crawl.teamId, jobId: d.crawlId, spec, secret: crawl.secret, type, body };
  }

  /** An event whose payload was built when it was queued (monitor events). */
  async #payloadEvent(d: PayloadDeliveryJob): Promise<WebhookEvent | undefined> {
    const { teamId, jobId, type, webhook, body } = d.payload;
    const { rows } = await this.#o.db.query<{ secret: string }>(
      'SELECT t.webhook_secret AS secret FROM teams t JOIN jobs j ON j.team_id = t.id WHERE t.id = $1 AND j.id = $2',
      [teamId, jobId],
    );
    if (!rows[0]) return undefined;
    return { teamId, jobId, spec: webhook, secret: rows[0].secret, type, body: { ...body, webhookId: d.webhookId } };
  }
}

/** What one attempt sends, and where it is recorded. */
interface WebhookEvent {
  teamId: string;
  jobId: string;
  spec: Pick<WebhookSpec, 'url' | 'headers'>;
  secret: string;
  type: string;
  body: Record<string, unknown>;
}

/**
 * A delivery whose body is made when it is queued (monitor events: a check's pages do not change
 * after it): signed, recorded against `jobId` and retried like crawl events.
 */
export interface PayloadDeliveryJob {
  payload: {
    teamId: string;
    jobId: string;
    type: string;
    webhook: Pick<WebhookSpec, 'url' | 'headers' | 'metadata'>;
    body: Record<string, unknown>;
  };
  webhookId: string;
  attempt: number;
}

/** Queues events with their payloads (webhookId derived from `key`, stable per event). Never throws; false when not queued. */
export async function enqueueWebhookPayloads(
  queue: JobQueue,
  log: Log,
  events: { key: string; payload: PayloadDeliveryJob['payload'] }[],
): Promise<boolean> {
  if (events.length === 0) return true;
  try {
    await queue.sendMany<PayloadDeliveryJob>(
      WEBHOOK_QUEUE,
      events.map(({ key, payload }) => {
        const webhookId = uuidOf(payload.jobId, key);
        return { data: { payload, webhookId, attempt: 1 }, options: { id: uuidOf(webhookId, '1') } };
      }),
    );
    return true;
  } catch (err) {
    log.warn({ err }, 'webhook: events not queued');
    return false;
  }
}

/** The 'webhook-delivery' queue and its handler. */
export async function registerWebhookJobs({ queue, db, config, log, onStop }: JobContext): Promise<void> {
  // Retries here are for the handler's own failures (database); failed deliveries are
  // rescheduled by the handler itself on the GLEANER_WEBHOOK_RETRY_DELAYS schedule.
  await queue.createQueue(WEBHOOK_QUEUE, { retryLimit: 3, retryDelay: 5, expireInSeconds: 60 });
  const deliverer = new WebhookDeliverer({
    db,
    queue,
    log,
    allowPrivateNetwork: config.allowPrivateNetwork,
    retryDelays: config.webhookRetryDelays,
  });
  onStop?.(() => deliverer.close());
  await queue.work<DeliveryJob | PayloadDeliveryJob>(WEBHOOK_QUEUE, (job) => deliverer.deliver(job));
}
