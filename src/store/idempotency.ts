// Idempotency keys (batch scrape's `idempotencyKey` / `x-idempotency-key`): the first request with
// a key claims it, then records the job it created; a repeat gets that job back instead of
// starting another. Keys are kept 24 hours (removed by the crawl sweep).
import { createHash } from 'node:crypto';
import type { Queryable } from './db-types.ts';
import { ConflictError } from '../errors.ts';

/** How long a key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

export function requestHash(body: unknown): string {
  return createHash('sha256').update(JSON.stringify(body)).digest('hex');
}

/**
 * Claims the key for a new request: resolves to `undefined` when this request holds it now (go on,
 * then `recordIdempotentJob`), or to the job id of the earlier request with the same key and body.
 * The same key with another body, or while the first request is still starting, is a 409.
 */
export async function claimIdempotencyKey(
  db: Queryable,
  teamId: string,
  key: string,
  endpoint: string,
  hash: string,
): Promise<string | undefined> {
  const { rows: claimed } = await db.query(
    `INSERT INTO idempotency_keys (team_id, key, endpoint, request_hash) VALUES ($1, $2, $3, $4)
     ON CONFLICT (team_id, key) DO UPDATE SET key = EXCLUDED.key, endpoint = EXCLUDED.endpoint, request_hash = EXCLUDED.request_hash,
       job_id = NULL, created_at = clock_timestamp()
       WHERE idempotency_keys.created_at < clock_timestamp() - $5 * interval '1 millisecond'
          -- a claim whose process died before creating the job
          OR (idempotency_keys.job_id IS NULL AND idempotency_keys.created_at < clock_timestamp() - interval '1 minute')
     RETURNING key`,
    [teamId, key, endpoint, hash, IDEMPOTENCY_TTL_MS],
  );
  if (claimed.length > 0) return undefined;
  const { rows } = await db.query<{ endpoint: string; hash: string; jobId: string | null }>(
    'SELECT endpoint, request_hash AS hash, job_id AS "jobId" FROM idempotency_keys WHERE team_id = $1 AND key = $2',
    [teamId, key],
  );
  const prior = rows[0];
  if (!prior) return claimIdempotencyKey(db, teamId, key, endpoint, hash);
  if (prior.endpoint !== endpoint || prior.hash !== hash) {
    throw new ConflictError('This idempotency key was already used with a different request', 'IDEMPOTENCY_KEY_REUSED');
  }
  if (!prior.jobId)
    throw new ConflictError(
      'A request with this idempotency key is still being started; retry shortly',
      'IDEMPOTENCY_KEY_IN_USE',
    );
  return prior.jobId;
}

export async function recordIdempotentJob(db: Queryable, teamId: string, key: string, jobId: string): Promise<void> {
  await db.query('UPDATE idempotency_keys SET job_id = $3 WHERE team_id = $1 AND key = $2', [teamId, key, jobId]);
}

/** Frees a claimed key whose request failed before creating its job. */
export async function releaseIdempotencyKey(db: Queryable, teamId: string, key: string): Promise<void> {
  await db.query('DELETE FROM idempotency_keys WHERE team_id = $1 AND key = $2 AND job_id IS NULL', [teamId, key]);
}

export async function deleteExpiredIdempotencyKeys(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM idempotency_keys WHERE created_at < clock_timestamp() - $1 * interval '1 millisecond'`,
    [IDEMPOTENCY_TTL_MS],
  );
  return rowCount;
}
