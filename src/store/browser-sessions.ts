// Browser sessions (src/interact/) and the scrape replays they start from. The live browser is
// held in memory by one process; these rows are what every process agrees on: who owns a
// session, whether it is still live (a stopped session answers 410 forever), what it cost.
import type { Queryable } from './db-types.ts';

export type BrowserSessionKind = 'interact' | 'browser';
export type BrowserSessionStatus = 'active' | 'destroyed';
/** Why a session ended: a DELETE, no activity for its activity TTL, its total TTL, shutdown, a lost process. */
export type SessionEndReason = 'deleted' | 'idle' | 'ttl' | 'shutdown' | 'lost' | 'failed';

export interface BrowserSessionRow {
  id: string;
  teamId: string;
  apiKeyId: string | null;
  kind: BrowserSessionKind;
  scrapeJobId: string | null;
  status: BrowserSessionStatus;
  instance: string;
  streamWebView: boolean;
  ttlSeconds: number | null;
  activityTtlSeconds: number;
  cdpUrl: string;
  liveViewUrl: string;
  interactiveLiveViewUrl: string;
  createdAt: Date;
  lastActivity: Date;
  expiresAt: Date | null;
  endedAt: Date | null;
  endReason: SessionEndReason | null;
  durationMs: number | null;
  credits: number | null;
}

const columns = `id, team_id AS "teamId", api_key_id AS "apiKeyId", kind, scrape_job_id AS "scrapeJobId", status,
  instance, stream_web_view AS "streamWebView", ttl_seconds AS "ttlSeconds",
  activity_ttl_seconds AS "activityTtlSeconds", cdp_url AS "cdpUrl", live_view_url AS "liveViewUrl",
  interactive_live_view_url AS "interactiveLiveViewUrl", created_at AS "createdAt",
  last_activity AS "lastActivity", expires_at AS "expiresAt", ended_at AS "endedAt", end_reason AS "endReason",
  duration_ms::float8 AS "durationMs", credits`;

export type NewBrowserSession = Pick<
  BrowserSessionRow,
  | 'id'
  | 'teamId'
  | 'apiKeyId'
  | 'kind'
  | 'scrapeJobId'
  | 'instance'
  | 'streamWebView'
  | 'ttlSeconds'
  | 'activityTtlSeconds'
  | 'cdpUrl'
  | 'liveViewUrl'
  | 'interactiveLiveViewUrl'
>;

/**
 * Inserts the session when the team has fewer than `perTeam` live sessions; undefined when it has
 * that many already. For an interact session the scrape's unique id makes a second insert fail
 * (unique violation, 23505): one session per scrape, ever.
 */
export async function insertBrowserSession(
  db: Queryable,
  s: NewBrowserSession,
  perTeam: number,
): Promise<BrowserSessionRow | undefined> {
  const { rows } = await db.query<BrowserSessionRow>(
    `INSERT INTO browser_sessions (id, team_id, api_key_id, kind, scrape_job_id, instance, stream_web_view,
       ttl_seconds, activity_ttl_seconds, cdp_url, live_view_url, interactive_live_view_url, expires_at)
     SELECT $1, $2, $3, $4, $5, $6, $7, $8::integer, $9, $10, $11, $12,
       CASE WHEN $8::integer IS NULL THEN NULL ELSE clock_timestamp() + make_interval(secs => $8::integer) END
     WHERE (SELECT count(*) FROM browser_sessions WHERE team_id = $2 AND status = 'active') < $13
     RETURNING ${columns}`,
    [
      s.id,
      s.teamId,
      s.apiKeyId,
      s.kind,
      s.scrapeJobId,
      s.instance,
      s.streamWebView,
      s.ttlSeconds,
      s.activityTtlSeconds,
      s.cdpUrl,
      s.liveViewUrl,
      s.interactiveLiveViewUrl,
      perTeam,
    ],
  );
  return rows[0];
}

export async function getBrowserSession(db: Queryable, id: string): Promise<BrowserSessionRow | undefined> {
  const { rows } = await db.query<BrowserSessionRow>(`SELECT ${columns} FROM browser_sessions WHERE id = $1`, [id]);
  return rows[0];
}

export async function getSessionOfScrape(db: Queryable, scrapeJobId: string): Promise<BrowserSessionRow | undefined> {
  const { rows } = await db.query<BrowserSessionRow>(
    `SELECT ${columns} FROM browser_sessions WHERE scrape_job_id = $1`,
    [scrapeJobId],
  );
  return rows[0];
}

export async function listBrowserSessions(
  db: Queryable,
  teamId: string,
  status: BrowserSessionStatus | undefined,
  limit: number,
): Promise<BrowserSessionRow[]> {
  const { rows } = await db.query<BrowserSessionRow>(
    `SELECT ${columns} FROM browser_sessions WHERE team_id = $1 AND kind = 'browser' AND ($2::text IS NULL OR status = $2)
     ORDER BY created_at DESC LIMIT $3`,
    [teamId, status ?? null, limit],
  );
  return rows;
}

/** Records a call's activity (the idle clock restarts). */
export async function touchBrowserSession(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query('UPDATE browser_sessions SET last_activity = $2 WHERE id = $1', [id, at]);
}

/** This process still holds these sessions (see failLostSessions). */
export async function renewBrowserSessions(db: Queryable, instance: string): Promise<void> {
  await db.query(`UPDATE browser_sessions SET seen_at = clock_timestamp() WHERE instance = $1 AND status = 'active'`, [
    instance,
  ]);
}

export interface SessionEnd {
  reason: SessionEndReason;
  endedAt: Date;
  durationMs: number;
  credits: number;
}

/**
 * Ends a live session in one statement: destroyed with its duration and credits, the credits
 * charged (ledger), its job (same id) completed. False when it had already ended (another
 * request or process ended it first: nothing is charged twice).
 */
export async function endBrowserSession(db: Queryable, id: string, end: SessionEnd): Promise<boolean> {
  const { rows } = await db.query<{ id: string }>(
    `WITH ended AS (
       UPDATE browser_sessions SET status = 'destroyed', ended_at = $2, end_reason = $3, duration_ms = $4, credits = $5
       WHERE id = $1 AND status = 'active'
       RETURNING id, team_id, api_key_id
     ), charge AS (
       INSERT INTO credit_usage (team_id, api_key_id, job_id, credits)
       SELECT team_id, api_key_id, id, $5 FROM ended WHERE $5 > 0
     ), job AS (
       UPDATE jobs SET status = CASE WHEN $3 IN ('failed', 'lost') THEN 'failed' ELSE 'completed' END,
         credits = credits + $5, updated_at = clock_timestamp(), completed_at = COALESCE(completed_at, clock_timestamp())
       WHERE id IN (SELECT id FROM ended)
     )
     SELECT id FROM ended`,
    [id, end.endedAt, end.reason, Math.round(end.durationMs), end.credits],
  );
  return rows.length > 0;
}

/**
 * Sessions whose process stopped renewing them (crashed, killed) before `staleBefore`: returned so
 * the caller bills them up to their last sign of life and ends them.
 */
export async function lostBrowserSessions(db: Queryable, staleBefore: Date): Promise<BrowserSessionRow[]> {
  const { rows } = await db.query<BrowserSessionRow & { seenAt: Date }>(
    `SELECT ${columns}, seen_at AS "seenAt" FROM browser_sessions WHERE status = 'active' AND seen_at < $1`,
    [staleBefore],
  );
  return rows;
}

/** The replay of a finished scrape of this team, with its age; undefined when none was kept. */
export async function readScrapeReplay(
  db: Queryable,
  teamId: string,
  jobId: string,
): Promise<{ replay: unknown; createdAt: Date } | undefined> {
  const { rows } = await db.query<{ replay: string; createdAt: Date }>(
    'SELECT replay, created_at AS "createdAt" FROM scrape_replays WHERE job_id = $1 AND team_id = $2',
    [jobId, teamId],
  );
  return rows[0] && { replay: JSON.parse(rows[0].replay), createdAt: rows[0].createdAt };
}

/** Deletes replays older than `before`; returns how many. */
export async function pruneScrapeReplays(db: Queryable, before: Date): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM scrape_replays WHERE created_at < $1', [before]);
  return rowCount ?? 0;
}
