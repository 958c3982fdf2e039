// Credit and LLM-token ledgers: append-only rows per job, summed per team, key and month.
import type { Queryable } from './db-types.ts';

export type UsageKind = 'credits' | 'tokens';

const ledger: Record<UsageKind, { table: string; column: string }> = {
  credits: { table: 'credit_usage', column: 'credits' },
  tokens: { table: 'token_usage', column: 'tokens' },
};

export interface UsageEntry {
  teamId: string;
  apiKeyId: string | null;
  jobId: string | null;
  amount: number;
  /** Defaults to now; given by tests and imports. */
  at?: Date;
}

export async function recordUsage(db: Queryable, kind: UsageKind, e: UsageEntry): Promise<void> {
  const { table, column } = ledger[kind];
  const insert = `INSERT INTO ${table} (team_id, api_key_id, job_id, ${column}, created_at)
     VALUES ($1, $2, $3, $4, COALESCE($5::timestamptz, clock_timestamp()))`;
  const params = [e.teamId, e.apiKeyId, e.jobId, e.amount, e.at ?? null];
  // A job's credits are also summed on its row: one statement for both.
  if (kind === 'credits' && e.jobId)
    await db.query(`WITH u AS (${insert}) UPDATE jobs SET credits = credits + $4 WHERE id = $3`, params);
  else await db.query(insert, params);
}

export async function usageSince(db: Queryable, kind: UsageKind, teamId: string, since: Date): Promise<number> {
  const { table, column } = ledger[kind];
  const { rows } = await db.query<{ total: number }>(
    `SELECT COALESCE(sum(${column}), 0)::int AS total FROM ${table} WHERE team_id = $1 AND created_at >= $2`,
    [teamId, since],
  );
  return rows[0].total;
}

export interface MonthlyUsage {
  month: Date;
  apiKeyId: string | null;
  keyPreview: string | null;
  keyName: string | null;
  total: number;
}

/** Sums per calendar month (UTC), optionally per API key, oldest month first. */
export async function monthlyUsage(
  db: Queryable,
  kind: UsageKind,
  teamId: string,
  byApiKey: boolean,
): Promise<MonthlyUsage[]> {
  const { table, column } = ledger[kind];
  const keyCols = byApiKey ? 'u.api_key_id' : 'NULL::uuid';
  const { rows } = await db.query<MonthlyUsage>(
    `SELECT date_trunc('month', u.created_at AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS month,
            ${keyCols} AS "apiKeyId",
            max(k.key_preview) AS "keyPreview", max(k.name) AS "keyName",
            sum(u.${column})::int AS total
     FROM ${table} u LEFT JOIN api_keys k ON k.id = u.api_key_id AND ${byApiKey ? 'true' : 'false'}
     WHERE u.team_id = $1
     GROUP BY 1, 2
     ORDER BY 1, 3`,
    [teamId],
  );
  return rows;
}

export interface TokenEntry {
  teamId: string;
  apiKeyId: string | null;
  jobId: string | null;
  /** Prompt plus completion tokens of one LLM request. */
  tokens: number;
  at?: Date;
}

/**
 * One row of the token ledger per LLM request (src/llm/provider.ts). The model is not stored:
 * token_usage has no column for it (it is in the provider's log line).
 */
export async function recordTokens(db: Queryable, e: TokenEntry): Promise<void> {
  await recordUsage(db, 'tokens', {
    teamId: e.teamId,
    apiKeyId: e.apiKeyId,
    jobId: e.jobId,
    amount: e.tokens,
    at: e.at,
  });
}
