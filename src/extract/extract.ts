// POST /v2/extract and GET /v2/extract/{id}: structured data from a set of pages, on the job queue
// (src/extract/job.ts runs it). Start: URLs checked (invalid ones listed in invalidURLs, or a 400
// naming body.urls.N without ignoreInvalidURLs), the options too (enableWebSearch, prompt/schema,
// scrapeOptions as for a scrape), all before anything exists; then the job, the row, one queue job.
import { createBillableJob } from '../billing/credits.ts';
import type { ExtractRequest, ExtractStatus } from '../contract/extract.ts';
import { type ScrapeRequest, targetUrl } from '../contract/scrape.ts';
import { refuse } from '../crawl/refuse.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { checkJsonSchema } from '../llm/json.ts';
import { normalizeUrl } from '../net/url-key.ts';
import type { Scraper } from '../scrape/scrape.ts';
import type { Caller } from '../store/teams.ts';
import { NotFoundError } from '../errors.ts';
import { globBase } from './select-pages.ts';
import type { Db } from '../store/db-types.ts';

export const EXTRACT_QUEUE = 'extract';
/** How long an extract's result stays readable (swept hourly; an expired extract reads as 404). */
export const EXTRACT_TTL_MS = 24 * 60 * 60 * 1000;

/** What the extracts row keeps of the request. */
export type StoredRequest = Omit<ExtractRequest, 'origin' | 'integration'> & { validUrls: string[] };

export interface ExtractRow {
  id: string;
  teamId: string;
  apiKeyId: string | null;
  request: StoredRequest;
  publicUrl: string;
  status: 'processing' | 'completed' | 'failed' | 'cancelled';
  data: unknown;
  error: string | null;
  warning: string | null;
  sources: string[] | null;
  tokensUsed: number;
  creditsUsed: number;
  expiresAt: Date;
}

export const extractColumns = `id, team_id AS "teamId", api_key_id AS "apiKeyId", request, public_url AS "publicUrl", status, data, error, warning,
  sources, tokens_used AS "tokensUsed", credits_used AS "creditsUsed", expires_at AS "expiresAt"`;

/** The scrape request of one page: the caller's options, markdown and the raw HTML (structured data). */
export function pageRequest(o: StoredRequest, url: string): ScrapeRequest {
  return { ...o.scrapeOptions, url, formats: ['markdown', 'rawHtml'] } as ScrapeRequest;
}

export interface ExtractorDeps {
  db: Db;
  queue: JobQueue;
  scraper: Scraper;
}

export class Extractor {
  readonly #d: ExtractorDeps;

  constructor(deps: ExtractorDeps) {
    this.#d = deps;
  }

  /** POST /v2/extract: validates, records the job and the extract, queues it. */
  async start(caller: Caller, req: ExtractRequest, publicUrl: string): Promise<{ id: string; invalidURLs?: string[] }> {
    const { db, queue } = this.#d;
    if (req.enableWebSearch)
      refuse(
        'enableWebSearch',
        'extract does not search the web itself yet: find pages with POST /v2/search and list them in urls (a trailing "/*" covers a site path)',
      );
    if (req.prompt === undefined && req.schema === undefined) refuse('prompt', 'give a prompt, a schema or both');
    if (req.prompt !== undefined && !req.prompt.trim() && req.schema === undefined) refuse('prompt', 'is empty');
    if (req.schema !== undefined) {
      const problem = checkJsonSchema(req.schema);
      if (problem) refuse('schema', `not a usable JSON Schema: ${problem}`);
    }
    if (req.scrapeOptions.zeroDataRetention)
      refuse(
        'scrapeOptions.zeroDataRetention',
        'extract results are stored until they expire; not supported for extracts',
      );
    const valid: string[] = [];
    const invalidURLs: string[] = [];
    req.urls.forEach((u, i) => {
      const base = globBase(u);
      const parsed = targetUrl.safeParse(base ?? u);
      if (parsed.success && !req.ignoreInvalidURLs) this.#d.scraper.refuseBlockedTarget(parsed.data, `urls.${i}`);
      if (parsed.success && !this.#d.scraper.isBlockedTarget(parsed.data)) {
        const url = normalizeUrl(parsed.data) ?? parsed.data;
        valid.push(base ? `${url.replace(/\/$/, '')}/*` : url);
      } else if (req.ignoreInvalidURLs) invalidURLs.push(u);
      else
        refuse(
          `urls.${i}`,
          `"${u.slice(0, 200)}" is not an http(s) URL (ignoreInvalidURLs: true leaves such URLs out)`,
        );
    });
    if (valid.length === 0) refuse('urls', 'no valid http(s) URL');
    const first = globBase(valid[0]) ?? valid[0];
    this.#d.scraper.check(pageRequest({ ...req, validUrls: valid }, first));

    const { origin: _o, integration: _i, ...rest } = req;
    const stored: StoredRequest = { ...rest, validUrls: valid };
    const job = await createBillableJob(
      db,
      { teamId: caller.teamId, apiKeyId: caller.keyId, endpoint: 'extract', status: 'queued', target: first },
      1,
    );
    await db.query(
      `INSERT INTO extracts (id, team_id, api_key_id, request, public_url, expires_at)
       VALUES ($1, $2, $3, $4::jsonb, $5, clock_timestamp() + $6 * interval '1 millisecond')`,
      [job.id, caller.teamId, caller.keyId, JSON.stringify(stored), publicUrl, EXTRACT_TTL_MS],
    );
    await queue.send(EXTRACT_QUEUE, { extractId: job.id }, { singletonKey: job.id });
    return { id: job.id, ...(req.ignoreInvalidURLs ? { invalidURLs } : {}) };
  }

  /** GET /v2/extract/{id}: another team's (or an expired) extract reads as missing. */
  async status(teamId: string, id: string): Promise<ExtractStatus> {
    const { rows } = await this.#d.db.query<ExtractRow>(
      `SELECT ${extractColumns} FROM extracts WHERE id = $1 AND team_id = $2 AND expires_at > clock_timestamp()`,
      [id, teamId],
    );
    const e = rows[0];
    if (!e) throw new NotFoundError(`No extract ${id} for this team`, 'EXTRACT_NOT_FOUND');
    const done = e.status === 'completed';
    let tokensUsed = e.tokensUsed;
    if (e.status === 'processing') {
      const { rows: t } = await this.#d.db.query<{ n: number }>(
        'SELECT COALESCE(sum(tokens), 0)::int AS n FROM token_usage WHERE job_id = $1',
        [id],
      );
      tokensUsed = t[0].n;
    }
    return {
      success: true,
      status: e.status,
      ...(done ? { data: e.data ?? {} } : {}),
      ...(e.error ? { error: e.error } : {}),
      ...(e.warning ? { warning: e.warning } : {}),
      expiresAt: new Date(e.expiresAt).toISOString(),
      tokensUsed,
      creditsUsed: e.creditsUsed,
      ...(e.request.showSources && e.sources ? { sources: e.sources } : {}),
    };
  }
}
