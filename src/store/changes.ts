// Change-tracking snapshots (migration 11): per team, normalised URL and tag, the latest scrape
// and the one before it. recordSnapshot() reads the previous snapshot and writes the current one in
// a single upsert: the row is locked while the old values move to prev_* and the new ones take
// their place, so two scrapes of one key at once form a chain (the second sees the first) instead
// of both seeing the same predecessor.
import type { Queryable } from './db-types.ts';

export interface ChangeSnapshot {
  markdown: string;
  /** The json mode's extraction (parsed), null when none was stored. */
  json: unknown;
  statusCode: number;
  scrapedAt: Date;
}

export interface SnapshotKey {
  teamId: string;
  /** The normalised URL (see urlKeyForChanges in src/scrape/formats/change-tracking.ts). */
  urlKey: string;
  /** '' for the default history. */
  tag: string;
}

export interface SnapshotInput extends SnapshotKey {
  markdown: string;
  /** undefined: keep the JSON stored before (a scrape without json mode does not erase it). */
  json?: unknown;
  statusCode: number;
  /** When the content was fetched; default now (database clock). */
  scrapedAt?: Date;
}

interface Row {
  scraped_at: Date | string;
  prev_markdown: string | null;
  prev_json: string | null;
  prev_status_code: number | null;
  prev_scraped_at: Date | string | null;
}

const asDate = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));

/** Writes the current snapshot and returns the one it replaced (undefined: first of its key). */
export async function recordSnapshot(
  db: Queryable,
  s: SnapshotInput,
): Promise<{ previous?: ChangeSnapshot; scrapedAt: Date }> {
  const { rows } = await db.query<Row>(
    `INSERT INTO change_snapshots AS c (team_id, url_key, tag, markdown, json, status_code, scraped_at)
     VALUES ($1, $2, $3, $4, $5, $6, COALESCE($7::timestamptz, clock_timestamp()))
     ON CONFLICT (team_id, url_key, tag) DO UPDATE SET
       prev_markdown = c.markdown, prev_json = c.json, prev_status_code = c.status_code, prev_scraped_at = c.scraped_at,
       markdown = EXCLUDED.markdown, json = COALESCE(EXCLUDED.json, c.json),
       status_code = EXCLUDED.status_code, scraped_at = EXCLUDED.scraped_at
     RETURNING scraped_at, prev_markdown, prev_json, prev_status_code, prev_scraped_at`,
    [
      s.teamId,
      s.urlKey,
      s.tag,
      s.markdown,
      s.json === undefined ? null : JSON.stringify(s.json),
      s.statusCode,
      s.scrapedAt ? s.scrapedAt.toISOString() : null,
    ],
  );
  const r = rows[0];
  const previous =
    r.prev_scraped_at === null || r.prev_markdown === null
      ? undefined
      : {
          markdown: r.prev_markdown,
          json: r.prev_json === null ? null : (JSON.parse(r.prev_json) as unknown),
          statusCode: r.prev_status_code ?? 200,
          scrapedAt: asDate(r.prev_scraped_at),
        };
  return { previous, scrapedAt: asDate(r.scraped_at) };
}

/** The latest snapshot of a key, without writing (e.g. to skip an LLM call when nothing changed). */
export async function readSnapshot(db: Queryable, key: SnapshotKey): Promise<ChangeSnapshot | undefined> {
  const { rows } = await db.query<{
    markdown: string;
    json: string | null;
    status_code: number;
    scraped_at: Date | string;
  }>(
    'SELECT markdown, json, status_code, scraped_at FROM change_snapshots WHERE team_id = $1 AND url_key = $2 AND tag = $3',
    [key.teamId, key.urlKey, key.tag],
  );
  const r = rows[0];
  if (!r) return undefined;
  return {
    markdown: r.markdown,
    json: r.json === null ? null : (JSON.parse(r.json) as unknown),
    statusCode: r.status_code,
    scrapedAt: asDate(r.scraped_at),
  };
}
