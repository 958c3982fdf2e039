// Credits: what each job costs, the monthly billing period, and the quota check (402).
// A team's quota is optional (NULL = unlimited). The check runs before work starts; the
// charge is written when the cost is known. Concurrent requests near the limit may overshoot
// by at most their own cost, which is preferred over serialising every request on a lock.
import { randomUUID } from 'node:crypto';
import type { Queryable } from '../store/db-types.ts';
import { type Job, type NewJob, jobColumns } from '../store/jobs.ts';
import type { Caller } from '../store/teams.ts';
import { recordUsage } from '../store/usage.ts';
import { InsufficientCreditsError } from '../errors.ts';

/** Costs from the spec's Limits table and wire-names.md. */
export const creditCosts = {
  /** One page scraped (HTML) or one PDF page converted with the `pdf` parser. */
  page: 1,
  /** A PDF returned base64-encoded with `parsers: []`: flat for the whole file. */
  pdfRaw: 1,
  /** Surcharge to 5 per request when the enhanced proxy served it. */
  enhancedProxy: 5,
  lockdownHit: 5,
  lockdownMiss: 1,
  /** Browser (interact) time, per minute, prorated by the second. */
  browserMinute: 2,
} as const;

/** Reported as the plan size of a team without a quota: clients read these as numbers. */
export const UNLIMITED = 999_999_999;

export interface BillingPeriod {
  start: Date;
  /** Last millisecond of the period. */
  end: Date;
}

/** The calendar month (UTC) holding `at`. */
export function billingPeriod(at: Date = new Date()): BillingPeriod {
  const start = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
  const next = new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
  return { start, end: new Date(next.getTime() - 1) };
}

export interface CreditStatus {
  used: number;
  /** null when the team has no quota. */
  quota: number | null;
  remaining: number;
  period: BillingPeriod;
}

/** The team's quota and usage this period, read fresh: a quota change applies at once. */
export async function creditStatus(db: Queryable, teamId: string, now = new Date()): Promise<CreditStatus> {
  const period = billingPeriod(now);
  const { rows } = await db.query<{ quota: number | null; used: number }>(
    `SELECT t.credit_quota AS quota,
            (SELECT COALESCE(sum(credits), 0)::int FROM credit_usage WHERE team_id = t.id AND created_at >= $2) AS used
     FROM teams t WHERE t.id = $1`,
    [teamId, period.start],
  );
  const { quota, used } = rows[0] ?? { quota: 0, used: 0 };
  const remaining = quota === null ? UNLIMITED : Math.max(quota - used, 0);
  return { used, quota, remaining, period };
}

/** Throws 402 when the team cannot afford `needed` more credits this period. */
export async function ensureCredits(db: Queryable, teamId: string, needed: number): Promise<void> {
  // On every billable request: the ledger is summed only for a team that has a quota.
  const { rows } = await db.query<{ quota: number | null; used: number }>(
    `SELECT t.credit_quota AS quota,
            CASE WHEN t.credit_quota IS NULL THEN 0 ELSE
              (SELECT COALESCE(sum(credits), 0)::int FROM credit_usage WHERE team_id = t.id AND created_at >= $2) END AS used
     FROM teams t WHERE t.id = $1`,
    [teamId, billingPeriod().start],
  );
  const { quota, used } = rows[0] ?? { quota: 0, used: 0 };
  if (quota === null) return;
  const remaining = Math.max(quota - used, 0);
  if (remaining < needed || remaining === 0) throw new InsufficientCreditsError(needed, remaining);
}

/**
 * ensureCredits and createJob in one statement (a billable request's first query): the job is
 * created only when the team can afford `needed` credits; otherwise 402 and no job.
 */
export async function createBillableJob(db: Queryable, job: NewJob, needed: number): Promise<Job> {
  const { rows } = await db.query<Partial<Job> & { quota: number | null; used: number }>(
    `WITH q AS (
       SELECT t.credit_quota AS quota,
              CASE WHEN t.credit_quota IS NULL THEN 0 ELSE
                (SELECT COALESCE(sum(credits), 0)::int FROM credit_usage WHERE team_id = t.id AND created_at >= $8) END AS used
       FROM teams t WHERE t.id = $2
     ), job AS (
       INSERT INTO jobs (id, team_id, api_key_id, endpoint, status, target, api_version)
       SELECT $1, $2, $3, $4, $5, $6, $7 FROM q
       WHERE q.quota IS NULL OR (q.quota - q.used >= $9 AND q.quota - q.used > 0)
       RETURNING ${jobColumns}
     )
     SELECT q.quota, q.used, job.* FROM q LEFT JOIN job ON true`,
    [
      job.id ?? randomUUID(),
      job.teamId,
      job.apiKeyId,
      job.endpoint,
      job.status ?? 'queued',
      job.target ?? null,
      job.apiVersion ?? 'v2',
      billingPeriod().start,
      needed,
    ],
  );
  const row = rows[0];
  if (!row?.id)
    throw new InsufficientCreditsError(needed, row && row.quota !== null ? Math.max(row.quota - row.used, 0) : 0);
  const { quota: _q, used: _u, ...created } = row;
  return created as Job;
}

export async function chargeCredits(
  db: Queryable,
  caller: Pick<Caller, 'teamId' | 'keyId'>,
  jobId: string | null,
  credits: number,
): Promise<void> {
  if (credits <= 0) return;
  await recordUsage(db, 'credits', { teamId: caller.teamId, apiKeyId: caller.keyId, jobId, amount: credits });
}
