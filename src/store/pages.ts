// The page cache (raw responses by request variant) and stored scrape documents.
import type { Queryable } from './db.ts';

export interface CachedPage {
  url: string;
  finalUrl: string;
  statusCode: number;
  contentType: string;
  headers: Record<string, string>;
  body: Buffer;
  fetchedAt: Date;
}

export async function readCachedPage(db: Queryable, cacheKey: string): Promise<CachedPage | undefined> {
  const { rows } = await db.query<CachedPage & { body: Uint8Array }>(
    `SELECT url, final_url AS "finalUrl", status_code AS "statusCode", content_type AS "contentType",
            headers, body, fetched_at AS "fetchedAt"
     FROM page_cache WHERE cache_key = $1`,
    [cacheKey],
  );
  const row = rows[0];
  return row && { ...row, body: Buffer.from(row.body.buffer, row.body.byteOffset, row.body.byteLength) };
}

export async function writeCachedPage(db: Queryable, cacheKey: string, page: CachedPage): Promise<void> {
  await db.query(
    `INSERT INTO page_cache (cache_key, url, final_url, status_code, content_type, headers, body, fetched_at)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8)
     ON CONFLICT (cache_key) DO UPDATE SET url = EXCLUDED.url, final_url = EXCLUDED.final_url,
       status_code = EXCLUDED.status_code, content_type = EXCLUDED.content_type, headers = EXCLUDED.headers,
       body = EXCLUDED.body, fetched_at = EXCLUDED.fetched_at
     WHERE page_cache.fetched_at <= EXCLUDED.fetched_at`,
    [cacheKey, page.url, page.finalUrl, page.statusCode, page.contentType, JSON.stringify(page.headers), page.body, page.fetchedAt],
  );
}

export async function saveScrapeResult(db: Queryable, jobId: string, teamId: string, document: unknown): Promise<void> {
  await db.query('INSERT INTO scrape_results (job_id, team_id, document) VALUES ($1, $2, $3::jsonb)', [
    jobId,
    teamId,
    JSON.stringify(document),
  ]);
}

/** The document of a finished scrape of this team; another team's id reads as missing. */
export async function readScrapeResult(db: Queryable, teamId: string, jobId: string): Promise<unknown> {
  const { rows } = await db.query<{ document: unknown }>('SELECT document FROM scrape_results WHERE job_id = $1 AND team_id = $2', [
    jobId,
    teamId,
  ]);
  return rows[0]?.document;
}
