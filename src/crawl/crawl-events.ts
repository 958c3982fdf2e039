// A crawl's webhook (src/jobs/webhooks.ts delivers): the request's webhook checked and stored,
// events queued as the crawl goes, and page events a dead process left unqueued queued again
// (the record statement marks pages whose event is due: crawl_pages.event_pending).
import type { CrawlRequest } from '../contract/crawl.ts';
import { type JobQueue } from '../jobs/queue.ts';
import {
  type CrawlEvent,
  type WebhookSpec,
  enqueueCrawlEvent,
  enqueueCrawlEvents,
  isWebhookEvent,
  normalizeWebhook,
  wantsEvent,
  webhookEvents,
} from '../jobs/webhooks.ts';
import { assertUrlAllowed } from '../net/ssrf.ts';
import type { CrawlRow } from './crawl-row.ts';
import { refuse } from './refuse.ts';
import type { Log } from '../jobs/log.ts';
import type { Db } from '../store/db-types.ts';

export interface CrawlEventsDeps {
  db: Db;
  queue: JobQueue;
  log: Log;
  /** GLEANER_ALLOW_PRIVATE_NETWORK: webhook URLs on private addresses are refused at start without it. */
  allowPrivateNetwork?: boolean;
}

export class CrawlEvents {
  readonly #d: CrawlEventsDeps;

  constructor(deps: CrawlEventsDeps) {
    this.#d = deps;
  }

  /** The request's webhook in stored form; a 400 naming the field when it is unusable. */
  webhookOf(w: CrawlRequest['webhook']): WebhookSpec | null {
    if (w === undefined) return null;
    if (typeof w === 'object') {
      const bad = (w.events ?? []).findIndex((e) => !isWebhookEvent(e));
      if (bad >= 0) refuse(`webhook.events.${bad}`, `"${w.events![bad]}" is not one of ${webhookEvents.join(', ')}`);
    }
    const webhook = normalizeWebhook(w);
    try {
      assertUrlAllowed(webhook.url, { allowPrivateNetwork: this.#d.allowPrivateNetwork ?? false });
    } catch (err) {
      refuse(
        typeof w === 'string' ? 'webhook' : 'webhook.url',
        `must be an http(s) URL of a public host: ${(err as Error).message}`,
      );
    }
    return webhook;
  }

  /** Queues a webhook event of the crawl (a no-op without a webhook; never throws). */
  async event(crawl: { id: string; webhook: WebhookSpec | null }, event: CrawlEvent, key?: string): Promise<void> {
    await enqueueCrawlEvent(this.#d.queue, this.#d.log, crawl, event, key);
  }

  /**
   * Queues the page events of recorded pages, then clears their event_pending mark (set by the
   * record statement), so a process that dies in between leaves them for resendPageEvents.
   */
  async sendPageEvents(events: { crawl: Pick<CrawlRow, 'id' | 'webhook'>; keys: string[] }[]): Promise<void> {
    const sent: { c: string; k: string }[] = [];
    for (const { crawl, keys } of events) {
      if (!crawl.webhook || !wantsEvent(crawl.webhook, 'page')) continue;
      if (await enqueueCrawlEvents(this.#d.queue, this.#d.log, crawl, 'page', keys))
        for (const k of keys) sent.push({ c: crawl.id, k });
    }
    if (sent.length === 0) return;
    await this.#d.db.query(
      `UPDATE crawl_pages p SET event_pending = false FROM unnest($1::uuid[], $2::text[]) AS t(c, k)
       WHERE p.crawl_id = t.c AND p.url_key = t.k AND p.event_pending`,
      [sent.map((s) => s.c), sent.map((s) => s.k)],
    );
  }

  /** Page events left unqueued (a process died between a record and its events) for a minute or more: queued now (the frontier, every minute). */
  async resendPageEvents(): Promise<void> {
    const { rows } = await this.#d.db.query<{ crawlId: string; key: string; webhook: WebhookSpec | null }>(
      `SELECT p.crawl_id AS "crawlId", p.url_key AS key, c.webhook FROM crawl_pages p JOIN crawls c ON c.id = p.crawl_id
       WHERE p.event_pending AND p.updated_at < clock_timestamp() - interval '1 minute' ORDER BY p.updated_at LIMIT 1000`,
    );
    const byCrawl = new Map<string, { crawl: { id: string; webhook: WebhookSpec | null }; keys: string[] }>();
    for (const r of rows) {
      const e = byCrawl.get(r.crawlId) ?? { crawl: { id: r.crawlId, webhook: r.webhook }, keys: [] };
      e.keys.push(r.key);
      byCrawl.set(r.crawlId, e);
    }
    await this.sendPageEvents([...byCrawl.values()]);
  }
}
