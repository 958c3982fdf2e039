// The jobs ledger: one row per API job (scrape, crawl, batch_scrape, map, parse, extract, ...).
// Features create a job when a request is accepted and update it as it runs; the activity
// listing, concurrency and queue figures, and team scoping all read from here.
import { randomUUID } from 'node:crypto';
import type { JobEndpoint } from '../contract/common.ts';
import type { Queryable } from './db-types.ts';

export const jobStatuses = ['queued', 'active', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof jobStatuses)[number];

export interface Job {
  id: string;
  /** Creation order (a database sequence). */
  seq: number;
  teamId: string;
  apiKeyId: string | null;
  endpoint: JobEndpoint;
  apiVersion: string;
  status: JobStatus;
  target: string | null;
  credits: number;
  error: string | null;
  createdAt: Date;
  updatedAt: Date;
  completedAt: Date | null;
}

export const jobColumns = `id, seq, team_id AS "teamId", api_key_id AS "apiKeyId", endpoint, api_version AS "apiVersion",
  status, target, credits, error, created_at AS "createdAt", updated_at AS "updatedAt", completed_at AS "completedAt"`;

export interface NewJob {
  id?: string;
  teamId: string;
  apiKeyId: string | null;
  endpoint: JobEndpoint;
  status?: JobStatus;
  /** What the job works on (URL, file name); omitted under zero data retention. */
  target?: string | null;
  apiVersion?: string;
}

export async function createJob(db: Queryable, job: NewJob): Promise<Job> {
  const { rows } = await db.query<Job>(
    `INSERT INTO jobs (id, team_id, api_key_id, endpoint, status, target, api_version)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${jobColumns}`,
    [
      job.id ?? randomUUID(),
      job.teamId,
      job.apiKeyId,
      job.endpoint,
      job.status ?? 'queued',
      job.target ?? null,
      job.apiVersion ?? 'v2',
    ],
  );
  return rows[0];
}

export interface JobUpdate {
  status?: JobStatus;
  error?: string | null;
}

/** Sets the status (and error); terminal statuses stamp completed_at. */
export async function updateJob(db: Queryable, id: string, update: JobUpdate): Promise<void> {
  await db.query(
    `UPDATE jobs SET
       status = COALESCE($2, status),
       error = CASE WHEN $3::boolean THEN $4 ELSE error END,
       updated_at = clock_timestamp(),
       completed_at = CASE WHEN COALESCE($2, status) IN ('completed', 'failed', 'cancelled')
                           THEN COALESCE(completed_at, clock_timestamp()) ELSE completed_at END
     WHERE id = $1`,
    [id, update.status ?? null, update.error !== undefined, update.error ?? null],
  );
}

/** The endpoints whose job lives only as long as its request (the process answers it or nobody does). */
const REQUEST_BOUND_ENDPOINTS = ['scrape', 'map', 'search', 'parse'];

/**
 * Closes, as failed with JOB_INTERRUPTED, the request-bound jobs still active that started more than
 * `olderThanMs` ago: their process stopped mid-request (a crash, a kill), so no one will finish them,
 * and they would count against the team's concurrency for ever. Returns how many.
 */
export async function failInterruptedJobs(db: Queryable, olderThanMs: number): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE jobs SET status = 'failed', error = 'JOB_INTERRUPTED', updated_at = clock_timestamp(),
       completed_at = clock_timestamp()
     WHERE status = 'active' AND endpoint = ANY($1::text[])
       AND created_at < clock_timestamp() - $2 * interval '1 millisecond'`,
    [REQUEST_BOUND_ENDPOINTS, olderThanMs],
  );
  return rowCount;
}

/** The job if it exists and belongs to the team: another team's job reads as missing. */
export async function getTeamJob(
  db: Queryable,
  teamId: string,
  id: string,
  endpoint?: JobEndpoint,
): Promise<Job | undefined> {
  const { rows } = await db.query<Job>(
    `SELECT ${jobColumns} FROM jobs WHERE id = $1 AND team_id = $2 AND ($3::text IS NULL OR endpoint = $3)`,
    [id, teamId, endpoint ?? null],
  );
  return rows[0];
}

/** Ownership of a job id regardless of team: for the few routes the spec answers with 403. */
export async function getJobOwner(db: Queryable, id: string): Promise<string | undefined> {
  const { rows } = await db.query<{ teamId: string }>('SELECT team_id AS "teamId" FROM jobs WHERE id = $1', [id]);
  return rows[0]?.teamId;
}

export interface ActivityPageQuery {
  teamId: string;
  endpoint?: JobEndpoint;
  limit: number;
  /** Keyset position: entries created before the one with this seq. */
  beforeSeq?: number;
  since: Date;
}

/** Newest first; `limit + 1` rows are read so the caller knows whether more remain. */
export async function listActivity(db: Queryable, q: ActivityPageQuery): Promise<Job[]> {
  const { rows } = await db.query<Job>(
    `SELECT ${jobColumns} FROM jobs
     WHERE team_id = $1 AND created_at >= $2 AND ($3::text IS NULL OR endpoint = $3)
       AND ($4::bigint IS NULL OR seq < $4)
     ORDER BY seq DESC
     LIMIT $5`,
    [q.teamId, q.since, q.endpoint ?? null, q.beforeSeq ?? null, q.limit + 1],
  );
  return rows;
}

export interface TeamJobCounts {
  queued: number;
  active: number;
  lastCompletedAt: Date | null;
}

export async function countTeamJobs(db: Queryable, teamId: string): Promise<TeamJobCounts> {
  const { rows } = await db.query<TeamJobCounts>(
    `SELECT count(*) FILTER (WHERE status = 'queued')::int AS queued,
            count(*) FILTER (WHERE status = 'active')::int AS active,
            max(completed_at) FILTER (WHERE status = 'completed') AS "lastCompletedAt"
     FROM jobs WHERE team_id = $1 AND status IN ('queued', 'active', 'completed')`,
    [teamId],
  );
  return rows[0];
}
