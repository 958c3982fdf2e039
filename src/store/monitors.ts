// Monitors, their checks, the pages targets yielded and the contents they had (src/monitor/):
// the queries. Batches go in one statement each (jsonb_to_recordset), so a 1,000-page check is a
// handful of statements.
import { createHash } from 'node:crypto';
import type { Queryable } from './db-types.ts';

export interface MonitorRow {
  id: string;
  teamId: string;
  apiKeyId: string | null;
  name: string;
  status: 'active' | 'paused';
  cron: string;
  timezone: string;
  scheduleText: string | null;
  targets: StoredTarget[];
  webhook: StoredWebhook | null;
  notification: Record<string, unknown> | null;
  retentionDays: number;
  goal: string | null;
  judgeEnabled: boolean;
  publicUrl: string;
  estimatedCreditsPerMonth: number | null;
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  currentCheckId: string | null;
  lastCheckSummary: CheckSummary | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A target as stored: the request's, with its id. */
export type StoredTarget = { id: string; type: 'scrape' | 'crawl' | 'search' } & Record<string, unknown>;

export interface StoredWebhook {
  url: string;
  headers: Record<string, string>;
  metadata: Record<string, unknown>;
  events: string[];
}

export interface CheckSummary {
  totalPages: number;
  same: number;
  changed: number;
  new: number;
  removed: number;
  error: number;
}

const monitorColumns = `id, team_id AS "teamId", api_key_id AS "apiKeyId", name, status, cron, timezone,
  schedule_text AS "scheduleText", targets, webhook, notification, retention_days AS "retentionDays", goal,
  judge_enabled AS "judgeEnabled", public_url AS "publicUrl", estimated_credits_per_month AS "estimatedCreditsPerMonth",
  next_run_at AS "nextRunAt", last_run_at AS "lastRunAt", current_check_id AS "currentCheckId",
  last_check_summary AS "lastCheckSummary", created_at AS "createdAt", updated_at AS "updatedAt"`;

/** What a create or an update writes (everything the caller chooses). */
export type MonitorFields = Pick<
  MonitorRow,
  | 'name'
  | 'status'
  | 'cron'
  | 'timezone'
  | 'scheduleText'
  | 'targets'
  | 'webhook'
  | 'notification'
  | 'retentionDays'
  | 'goal'
  | 'judgeEnabled'
  | 'estimatedCreditsPerMonth'
  | 'nextRunAt'
>;

const fieldParams = (f: MonitorFields) => [
  f.name,
  f.status,
  f.cron,
  f.timezone,
  f.scheduleText,
  JSON.stringify(f.targets),
  f.webhook && JSON.stringify(f.webhook),
  f.notification && JSON.stringify(f.notification),
  f.retentionDays,
  f.goal,
  f.judgeEnabled,
  f.estimatedCreditsPerMonth,
  f.nextRunAt,
];

export async function insertMonitor(
  db: Queryable,
  m: MonitorFields & Pick<MonitorRow, 'id' | 'teamId' | 'apiKeyId' | 'publicUrl'>,
): Promise<MonitorRow> {
  const { rows } = await db.query<MonitorRow>(
    `INSERT INTO monitors (name, status, cron, timezone, schedule_text, targets, webhook, notification, retention_days,
       goal, judge_enabled, estimated_credits_per_month, next_run_at, id, team_id, api_key_id, public_url)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb, $8::jsonb, $9, $10, $11, $12, $13, $14, $15, $16, $17)
     RETURNING ${monitorColumns}`,
    [...fieldParams(m), m.id, m.teamId, m.apiKeyId, m.publicUrl],
  );
  return rows[0];
}

export async function updateMonitorFields(db: Queryable, id: string, f: MonitorFields): Promise<MonitorRow> {
  const { rows } = await db.query<MonitorRow>(
    `UPDATE monitors SET name = $1, status = $2, cron = $3, timezone = $4, schedule_text = $5, targets = $6::jsonb,
       webhook = $7::jsonb, notification = $8::jsonb, retention_days = $9, goal = $10, judge_enabled = $11,
       estimated_credits_per_month = $12, next_run_at = $13, updated_at = clock_timestamp()
     WHERE id = $14 RETURNING ${monitorColumns}`,
    [...fieldParams(f), id],
  );
  return rows[0];
}

/** The team's monitor (another team's reads as missing). */
export async function getMonitor(db: Queryable, teamId: string, id: string): Promise<MonitorRow | undefined> {
  const { rows } = await db.query<MonitorRow>(`SELECT ${monitorColumns} FROM monitors WHERE id = $1 AND team_id = $2`, [
    id,
    teamId,
  ]);
  return rows[0];
}

export async function getMonitorById(db: Queryable, id: string): Promise<MonitorRow | undefined> {
  const { rows } = await db.query<MonitorRow>(`SELECT ${monitorColumns} FROM monitors WHERE id = $1`, [id]);
  return rows[0];
}

export async function listMonitors(
  db: Queryable,
  teamId: string,
  limit: number,
  offset: number,
): Promise<MonitorRow[]> {
  const { rows } = await db.query<MonitorRow>(
    `SELECT ${monitorColumns} FROM monitors WHERE team_id = $1 ORDER BY created_at DESC, id LIMIT $2 OFFSET $3`,
    [teamId, limit, offset],
  );
  return rows;
}

export async function deleteMonitor(db: Queryable, teamId: string, id: string): Promise<boolean> {
  const { rows } = await db.query('DELETE FROM monitors WHERE id = $1 AND team_id = $2 RETURNING id', [id, teamId]);
  return rows.length > 0;
}

/** The state of a monitor's current check (null when it has none). */
export interface CurrentCheck {
  currentCheckStatus: string | null;
  currentCheckUpdatedAt: Date | null;
}

/**
 * Active monitors due at `now`, locked for this transaction (another process's tick skips them):
 * with their current check's status, to tell an overlap.
 */
export async function lockDueMonitors(tx: Queryable, now: Date, limit: number): Promise<(MonitorRow & CurrentCheck)[]> {
  const { rows } = await tx.query<MonitorRow & CurrentCheck>(
    `SELECT ${monitorColumns},
       (SELECT c.status FROM monitor_checks c WHERE c.id = monitors.current_check_id) AS "currentCheckStatus",
       (SELECT c.updated_at FROM monitor_checks c WHERE c.id = monitors.current_check_id) AS "currentCheckUpdatedAt"
     FROM monitors WHERE status = 'active' AND next_run_at <= $1
     ORDER BY next_run_at LIMIT $2 FOR UPDATE SKIP LOCKED`,
    [now, limit],
  );
  return rows;
}

/** Locks one monitor row (a manual run against a tick or another run). */
export async function lockMonitor(
  tx: Queryable,
  teamId: string,
  id: string,
): Promise<(MonitorRow & CurrentCheck) | undefined> {
  const { rows } = await tx.query<MonitorRow & CurrentCheck>(
    `SELECT ${monitorColumns},
       (SELECT c.status FROM monitor_checks c WHERE c.id = monitors.current_check_id) AS "currentCheckStatus",
       (SELECT c.updated_at FROM monitor_checks c WHERE c.id = monitors.current_check_id) AS "currentCheckUpdatedAt"
     FROM monitors WHERE id = $1 AND team_id = $2 FOR UPDATE`,
    [id, teamId],
  );
  return rows[0];
}

export async function setMonitorRun(
  db: Queryable,
  id: string,
  f: { nextRunAt?: Date | null; currentCheckId?: string | null },
): Promise<void> {
  await db.query(
    `UPDATE monitors SET
       next_run_at = CASE WHEN $2::boolean THEN $3 ELSE next_run_at END,
       current_check_id = CASE WHEN $4::boolean THEN $5 ELSE current_check_id END
     WHERE id = $1`,
    [id, f.nextRunAt !== undefined, f.nextRunAt ?? null, f.currentCheckId !== undefined, f.currentCheckId ?? null],
  );
}

/** A finished check's mark on its monitor (the current check cleared only if it is this one). */
export async function setMonitorChecked(
  db: Queryable,
  id: string,
  checkId: string,
  summary: CheckSummary,
  ranAt: Date,
): Promise<void> {
  await db.query(
    `UPDATE monitors SET last_run_at = $3, last_check_summary = $4::jsonb,
       current_check_id = CASE WHEN current_check_id = $2 THEN NULL ELSE current_check_id END
     WHERE id = $1`,
    [id, checkId, ranAt, JSON.stringify(summary)],
  );
}

// ---- checks

export interface CheckRow {
  id: string;
  monitorId: string;
  teamId: string;
  status: string;
  trigger: 'scheduled' | 'manual';
  scheduledFor: Date | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  estimatedCredits: number | null;
  reservedCredits: number | null;
  actualCredits: number | null;
  billingStatus: 'not_applicable' | 'reserved' | 'confirmed' | 'released' | 'failed';
  summary: CheckSummary | null;
  targetResults: Record<string, unknown>[] | null;
  notificationStatus: Record<string, unknown> | null;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
}

const checkColumns = `id, monitor_id AS "monitorId", team_id AS "teamId", status, trigger, scheduled_for AS "scheduledFor",
  started_at AS "startedAt", finished_at AS "finishedAt", estimated_credits AS "estimatedCredits",
  reserved_credits AS "reservedCredits", actual_credits AS "actualCredits", billing_status AS "billingStatus", summary,
  target_results AS "targetResults", notification_status AS "notificationStatus", error, created_at AS "createdAt",
  updated_at AS "updatedAt"`;

export type NewCheck = Pick<CheckRow, 'id' | 'monitorId' | 'teamId' | 'status' | 'trigger' | 'scheduledFor'> &
  Partial<Pick<CheckRow, 'estimatedCredits' | 'reservedCredits' | 'billingStatus' | 'summary' | 'finishedAt'>>;

/** Inserts a check; undefined when this tick already has one (another process ran it). */
export async function insertCheck(db: Queryable, c: NewCheck): Promise<CheckRow | undefined> {
  const { rows } = await db.query<CheckRow>(
    `INSERT INTO monitor_checks (id, monitor_id, team_id, status, trigger, scheduled_for, estimated_credits,
       reserved_credits, billing_status, summary, finished_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11)
     ON CONFLICT DO NOTHING RETURNING ${checkColumns}`,
    [
      c.id,
      c.monitorId,
      c.teamId,
      c.status,
      c.trigger,
      c.scheduledFor,
      c.estimatedCredits ?? null,
      c.reservedCredits ?? null,
      c.billingStatus ?? 'not_applicable',
      c.summary ? JSON.stringify(c.summary) : null,
      c.finishedAt ?? null,
    ],
  );
  return rows[0];
}

export async function getCheck(db: Queryable, monitorId: string, checkId: string): Promise<CheckRow | undefined> {
  const { rows } = await db.query<CheckRow>(
    `SELECT ${checkColumns} FROM monitor_checks WHERE id = $1 AND monitor_id = $2`,
    [checkId, monitorId],
  );
  return rows[0];
}

export async function getCheckById(db: Queryable, checkId: string): Promise<CheckRow | undefined> {
  const { rows } = await db.query<CheckRow>(`SELECT ${checkColumns} FROM monitor_checks WHERE id = $1`, [checkId]);
  return rows[0];
}

export async function listChecks(
  db: Queryable,
  monitorId: string,
  q: { limit: number; offset: number; status?: string },
): Promise<CheckRow[]> {
  const { rows } = await db.query<CheckRow>(
    `SELECT ${checkColumns} FROM monitor_checks WHERE monitor_id = $1 AND ($2::text IS NULL OR status = $2)
     ORDER BY created_at DESC, id LIMIT $3 OFFSET $4`,
    [monitorId, q.status ?? null, q.limit, q.offset],
  );
  return rows;
}

/** Queued checks whose job may have been lost (the process died between the insert and the send). */
/** Ends a check no worker finished (its job was lost): failed, its credits released. */
export async function failStaleCheck(db: Queryable, id: string, error: string): Promise<void> {
  await db.query(
    `UPDATE monitor_checks SET status = 'failed', error = $2, billing_status = 'released', finished_at = clock_timestamp(),
       updated_at = clock_timestamp() WHERE id = $1 AND status IN ('queued', 'running')`,
    [id, error],
  );
  await db.query(
    `UPDATE jobs SET status = 'failed', error = $2, updated_at = clock_timestamp(), completed_at = clock_timestamp()
     WHERE id = $1 AND status IN ('queued', 'active')`,
    [id, error],
  );
}

export async function staleQueuedChecks(db: Queryable, olderThan: Date): Promise<string[]> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT id FROM monitor_checks WHERE status = 'queued' AND created_at < $1 LIMIT 100`,
    [olderThan],
  );
  return rows.map((r) => r.id);
}

export async function updateCheck(
  db: Queryable,
  id: string,
  f: Partial<
    Pick<
      CheckRow,
      | 'status'
      | 'startedAt'
      | 'finishedAt'
      | 'actualCredits'
      | 'reservedCredits'
      | 'billingStatus'
      | 'summary'
      | 'targetResults'
      | 'notificationStatus'
      | 'error'
    >
  >,
): Promise<void> {
  const cols: Record<string, [string, unknown]> = {
    status: ['status', f.status],
    startedAt: ['started_at', f.startedAt],
    finishedAt: ['finished_at', f.finishedAt],
    actualCredits: ['actual_credits', f.actualCredits],
    reservedCredits: ['reserved_credits', f.reservedCredits],
    billingStatus: ['billing_status', f.billingStatus],
    summary: ['summary', f.summary && JSON.stringify(f.summary)],
    targetResults: ['target_results', f.targetResults && JSON.stringify(f.targetResults)],
    notificationStatus: ['notification_status', f.notificationStatus && JSON.stringify(f.notificationStatus)],
    error: ['error', f.error],
  };
  const sets: string[] = [];
  const params: unknown[] = [id];
  for (const [key, [col, value]] of Object.entries(cols)) {
    if (!(key in f)) continue;
    params.push(value ?? null);
    const json = ['summary', 'target_results', 'notification_status'].includes(col) ? '::jsonb' : '';
    sets.push(`${col} = $${params.length}${json}`);
  }
  await db.query(
    `UPDATE monitor_checks SET ${[...sets, 'updated_at = clock_timestamp()'].join(', ')} WHERE id = $1`,
    params,
  );
}

// ---- pages and contents

export interface MonitorPageRow {
  id: string;
  targetId: string;
  url: string;
  hash: string | null;
  scrapeId: string | null;
  removed: boolean;
}

export async function monitorPages(db: Queryable, monitorId: string): Promise<MonitorPageRow[]> {
  const { rows } = await db.query<MonitorPageRow>(
    `SELECT id, target_id AS "targetId", url, hash, scrape_id AS "scrapeId", removed_at IS NOT NULL AS removed
     FROM monitor_pages WHERE monitor_id = $1`,
    [monitorId],
  );
  return rows;
}

/** Writes pages' current state (new ones inserted with their own ids). */
export async function upsertMonitorPages(db: Queryable, monitorId: string, pages: MonitorPageRow[]): Promise<void> {
  if (pages.length === 0) return;
  await db.query(
    `INSERT INTO monitor_pages (id, monitor_id, target_id, url, hash, scrape_id, removed_at)
     SELECT x.id, $1, x.target_id, x.url, x.hash, x.scrape_id, CASE WHEN x.removed THEN clock_timestamp() END
     FROM jsonb_to_recordset($2::jsonb) AS x(id uuid, target_id text, url text, hash text, scrape_id uuid, removed boolean)
     ON CONFLICT (monitor_id, target_id, url) DO UPDATE SET hash = EXCLUDED.hash,
       scrape_id = COALESCE(EXCLUDED.scrape_id, monitor_pages.scrape_id), removed_at = EXCLUDED.removed_at,
       last_seen_at = CASE WHEN EXCLUDED.removed_at IS NULL THEN clock_timestamp() ELSE monitor_pages.last_seen_at END`,
    [
      monitorId,
      JSON.stringify(
        pages.map((p) => ({
          id: p.id,
          target_id: p.targetId,
          url: p.url,
          hash: p.hash,
          scrape_id: p.scrapeId,
          removed: p.removed,
        })),
      ),
    ],
  );
}

/** Stores contents not stored yet (once per distinct hash). */
export async function putContents(
  db: Queryable,
  monitorId: string,
  contents: { hash: string; content: string }[],
): Promise<void> {
  if (contents.length === 0) return;
  await db.query(
    `INSERT INTO monitor_contents (monitor_id, hash, content)
     SELECT $1, x.hash, x.content FROM jsonb_to_recordset($2::jsonb) AS x(hash text, content text)
     ON CONFLICT DO NOTHING`,
    [monitorId, JSON.stringify(contents)],
  );
}

export async function getContents(db: Queryable, monitorId: string, hashes: string[]): Promise<Map<string, string>> {
  if (hashes.length === 0) return new Map();
  const { rows } = await db.query<{ hash: string; content: string }>(
    'SELECT hash, content FROM monitor_contents WHERE monitor_id = $1 AND hash = ANY($2::text[])',
    [monitorId, hashes],
  );
  return new Map(rows.map((r) => [r.hash, r.content]));
}

/** The API id of a check's page: a UUID derived from the check and the page's place in it (not stored). */
export function checkPageId(checkId: string, seq: number): string {
  const h = createHash('sha256').update(`${checkId}\0${seq}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

export interface CheckPageRow {
  /** checkPageId(check, seq): not stored. */
  id: string;
  seq: number;
  pageId: string;
  status: string;
  hash: string | null;
  prevHash: string | null;
  scrapeId: string | null;
  prevScrapeId: string | null;
  statusCode: number | null;
  error: string | null;
  judgment: Record<string, unknown> | null;
  diff: { text?: string; json?: unknown } | null;
}

export async function insertCheckPages(db: Queryable, checkId: string, pages: CheckPageRow[]): Promise<void> {
  for (let i = 0; i < pages.length; i += 500) {
    const batch = pages.slice(i, i + 500).map((p) => ({
      seq: p.seq,
      page_id: p.pageId,
      status: p.status,
      hash: p.hash,
      prev_hash: p.prevHash,
      scrape_id: p.scrapeId,
      prev_scrape_id: p.prevScrapeId,
      status_code: p.statusCode,
      error: p.error,
      judgment: p.judgment,
      diff: p.diff,
    }));
    await db.query(
      `INSERT INTO monitor_check_pages (check_id, seq, page_id, status, hash, prev_hash, scrape_id, prev_scrape_id,
         status_code, error, judgment, diff)
       SELECT $1, x.seq, x.page_id, x.status, x.hash, x.prev_hash, x.scrape_id, x.prev_scrape_id, x.status_code,
         x.error, x.judgment, x.diff
       FROM jsonb_to_recordset($2::jsonb) AS x(seq integer, page_id uuid, status text, hash text,
         prev_hash text, scrape_id uuid, prev_scrape_id uuid, status_code integer, error text, judgment jsonb, diff jsonb)
       ON CONFLICT DO NOTHING`,
      [checkId, JSON.stringify(batch)],
    );
  }
}

export type CheckPageView = CheckPageRow & { targetId: string; url: string };

/** A check's pages in check order, from `skip`, at most `limit`, optionally of one status. */
export async function listCheckPages(
  db: Queryable,
  checkId: string,
  q: { skip: number; limit: number; status?: string },
): Promise<CheckPageView[]> {
  const { rows } = await db.query<CheckPageView>(
    `SELECT c.seq, c.page_id AS "pageId", c.status, c.hash, c.prev_hash AS "prevHash", c.scrape_id AS "scrapeId",
       c.prev_scrape_id AS "prevScrapeId", c.status_code AS "statusCode", c.error, c.judgment, c.diff,
       p.target_id AS "targetId", p.url
     FROM monitor_check_pages c JOIN monitor_pages p ON p.id = c.page_id
     WHERE c.check_id = $1 AND ($2::text IS NULL OR c.status = $2)
     ORDER BY c.seq OFFSET $3 LIMIT $4`,
    [checkId, q.status ?? null, q.skip, q.limit],
  );
  return rows.map((r) => ({ ...r, id: checkPageId(checkId, r.seq) }));
}

/**
 * Retention: checks older than their monitor's retentionDays go (with their pages), then contents
 * no page and no remaining check refers to. Returns the checks deleted.
 */
export async function pruneMonitorChecks(db: Queryable, now: Date): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `WITH gone AS (
       DELETE FROM monitor_checks c USING monitors m
       WHERE m.id = c.monitor_id AND c.created_at < $1::timestamptz - m.retention_days * interval '1 day'
         AND c.status NOT IN ('queued', 'running')
       RETURNING c.id
     ) SELECT count(*)::int AS n FROM gone`,
    [now],
  );
  await db.query(
    `DELETE FROM monitor_contents t
     WHERE NOT EXISTS (SELECT 1 FROM monitor_pages p WHERE p.monitor_id = t.monitor_id AND p.hash = t.hash)
       AND NOT EXISTS (
         SELECT 1 FROM monitor_check_pages cp JOIN monitor_checks c ON c.id = cp.check_id
         WHERE c.monitor_id = t.monitor_id AND (cp.hash = t.hash OR cp.prev_hash = t.hash))`,
  );
  return rows[0].n;
}
