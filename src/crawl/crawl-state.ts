// A crawl's (or batch scrape's) state as the routes and the frontier read it: its row, the status
// document with its pages, its errors, the team's running crawls; and its cancel.
import type { ScrapeDocument } from '../contract/scrape.ts';
import type { WebhookSpec } from '../jobs/webhooks.ts';
import { updateJob } from '../store/jobs.ts';
import { NotFoundError } from '../errors.ts';
import type { CrawlEvents } from './crawl-events.ts';
import { type CrawlKind, type CrawlOptions, type CrawlRow, crawlColumns } from './crawl-row.ts';
import type { Db } from '../store/db-types.ts';

/** Largest status response: the rest is behind `next`. */
export const STATUS_MAX_BYTES = 10 * 1024 * 1024;

/** The status document (src/contract/crawl.ts crawlStatus). */
export interface CrawlStatus {
  success: true;
  status: CrawlRow['status'];
  total: number;
  completed: number;
  creditsUsed: number;
  expiresAt: string;
  createdAt: string;
  completedAt?: string;
  duration: number;
  next: string | null;
  data: ScrapeDocument[];
}

export class CrawlState {
  readonly #db: Db;
  readonly #events: CrawlEvents;

  constructor(db: Db, events: CrawlEvents) {
    this.#db = db;
    this.#events = events;
  }

  /** The crawl (or batch scrape) of this team (another team's reads as missing: 404). */
  async get(teamId: string, id: string, kind: CrawlKind = 'crawl'): Promise<CrawlRow> {
    const { rows } = await this.#db.query<CrawlRow>(
      `SELECT ${crawlColumns} FROM crawls WHERE id = $1 AND team_id = $2 AND kind = $3`,
      [id, teamId, kind],
    );
    if (!rows[0]) {
      if (kind === 'crawl') throw new NotFoundError(`No crawl ${id} for this team`, 'CRAWL_NOT_FOUND');
      throw new NotFoundError(`No batch scrape ${id} for this team`, 'BATCH_SCRAPE_NOT_FOUND');
    }
    return rows[0];
  }

  /**
   * The status document of GET /v2/crawl/{id} and /v2/batch/scrape/{id} (also what the WebSocket
   * stream sends): documents from `skip`, `next` whenever more data remains or the job still runs.
   */
  async status(
    teamId: string,
    id: string,
    kind: CrawlKind,
    page: { skip: number; limit?: number },
    base: string,
  ): Promise<CrawlStatus> {
    const crawl = await this.get(teamId, id, kind);
    const { skip, limit } = page;
    // No page done past `skip` yet (the SDK reads on through `next` for as long as the crawl
    // runs, mostly finding nothing new): the row's count says so without the documents' query.
    const { data, more } = skip >= crawl.completed ? { data: [], more: false } : await this.documents(id, skip, limit);
    const terminal = crawl.status !== 'scraping';
    const created = new Date(crawl.createdAt);
    const end = terminal && crawl.completedAt ? new Date(crawl.completedAt) : new Date();
    const path = kind === 'crawl' ? 'crawl' : 'batch/scrape';
    const next =
      more || !terminal
        ? `${base}/v2/${path}/${id}?skip=${skip + data.length}${limit !== undefined ? `&limit=${limit}` : ''}`
        : null;
    return {
      success: true,
      status: crawl.status,
      total: crawl.total,
      completed: crawl.completed,
      creditsUsed: crawl.creditsUsed,
      expiresAt: new Date(crawl.expiresAt).toISOString(),
      createdAt: created.toISOString(),
      ...(terminal && crawl.completedAt ? { completedAt: end.toISOString() } : {}),
      duration: Math.max(0, (end.getTime() - created.getTime()) / 1000),
      next,
      data,
    };
  }

  /** Documents of done pages in admission order, from `skip`, at most `limit` and about 10 MiB. */
  async documents(
    id: string,
    skip: number,
    limit: number | undefined,
  ): Promise<{ data: ScrapeDocument[]; more: boolean }> {
    const data: ScrapeDocument[] = [];
    let bytes = 0;
    const batch = 100;
    let offset = skip;
    for (;;) {
      const want = limit === undefined ? batch : Math.min(batch, limit - data.length);
      if (want <= 0) break;
      // The skipped rows are passed over in the (crawl_id, status, seq) index alone: an OFFSET over
      // the full rows would read and convert every skipped document (the SDK's polls read from
      // ever larger offsets, so each poll would cost the whole crawl so far).
      const { rows } = await this.#db.query<{ document: ScrapeDocument; size: number }>(
        `WITH s AS (
           SELECT seq FROM crawl_pages WHERE crawl_id = $1 AND status = 'done' ORDER BY seq OFFSET $2 LIMIT $3
         )
         SELECT p.document, octet_length(p.document::text) AS size FROM s
         JOIN crawl_pages p ON p.crawl_id = $1 AND p.seq = s.seq AND p.status = 'done'
         ORDER BY s.seq`,
        [id, offset, want + 1],
      );
      for (let i = 0; i < Math.min(rows.length, want); i++) {
        const r = rows[i];
        if (data.length > 0 && bytes + Number(r.size) > STATUS_MAX_BYTES) return { data, more: true };
        data.push(r.document);
        bytes += Number(r.size);
      }
      if (rows.length <= want) return { data, more: false };
      offset += want;
      if (limit !== undefined && data.length >= limit) return { data, more: true };
    }
    return { data, more: false };
  }

  async cancel(teamId: string, id: string, kind: CrawlKind = 'crawl'): Promise<void> {
    await this.get(teamId, id, kind);
    const { rows } = await this.#db.query<{ id: string; webhook: WebhookSpec | null }>(
      `UPDATE crawls SET status = 'cancelled', completed_at = COALESCE(completed_at, clock_timestamp()) WHERE id = $1 AND status = 'scraping'
       RETURNING id, webhook`,
      [id],
    );
    await updateJob(this.#db, id, { status: 'cancelled' });
    if (rows[0]) await this.#events.event(rows[0], 'cancelled');
  }

  async errors(
    teamId: string,
    id: string,
    kind: CrawlKind = 'crawl',
  ): Promise<{
    errors: { id: string; timestamp: string; url: string; error: string; code?: string }[];
    robotsBlocked: string[];
  }> {
    await this.get(teamId, id, kind);
    const { rows } = await this.#db.query<{
      id: string;
      updatedAt: Date;
      url: string;
      status: string;
      error: string | null;
      code: string | null;
    }>(
      `SELECT id, updated_at AS "updatedAt", url, status, error, code FROM crawl_pages
       WHERE crawl_id = $1 AND status IN ('failed', 'blocked') ORDER BY seq`,
      [id],
    );
    return {
      errors: rows
        .filter((r) => r.status === 'failed')
        .map((r) => ({
          id: r.id,
          timestamp: new Date(r.updatedAt).toISOString(),
          url: r.url,
          error: r.error ?? 'failed',
          ...(r.code ? { code: r.code } : {}),
        })),
      robotsBlocked: rows.filter((r) => r.status === 'blocked').map((r) => r.url),
    };
  }

  async active(
    teamId: string,
  ): Promise<{ id: string; teamId: string; url: string; options: CrawlOptions; created_at: string }[]> {
    const { rows } = await this.#db.query<CrawlRow>(
      `SELECT ${crawlColumns} FROM crawls WHERE team_id = $1 AND kind = 'crawl' AND status = 'scraping' ORDER BY created_at`,
      [teamId],
    );
    return rows.map((r) => ({
      id: r.id,
      teamId: r.teamId,
      url: r.url,
      options: r.options,
      created_at: new Date(r.createdAt).toISOString(),
    }));
  }

  /** The crawl row, whatever its team. */
  async crawlOf(crawlId: string): Promise<CrawlRow | undefined> {
    const { rows } = await this.#db.query<CrawlRow>(`SELECT ${crawlColumns} FROM crawls WHERE id = $1`, [crawlId]);
    return rows[0];
  }

  /** Crawl rows by id (the frontier caches them: nothing but status and counters ever changes). */
  async crawlsById(ids: string[]): Promise<CrawlRow[]> {
    if (ids.length === 0) return [];
    const { rows } = await this.#db.query<CrawlRow>(`SELECT ${crawlColumns} FROM crawls WHERE id = ANY($1::uuid[])`, [
      ids,
    ]);
    return rows;
  }

  /** Of these crawls, the ones still `scraping`. */
  async scraping(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const { rows } = await this.#db.query<{ id: string }>(
      `SELECT id FROM crawls WHERE id = ANY($1::uuid[]) AND status = 'scraping'`,
      [ids],
    );
    return new Set(rows.map((r) => r.id));
  }
}
