// Teams and their API keys. Keys are shown once at creation and stored only as SHA-256 digests.
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Queryable } from './db-types.ts';

export interface Team {
  id: string;
  name: string;
  creditQuota: number | null;
  webhookSecret: string;
  createdAt: Date;
}

export interface ApiKeyInfo {
  id: string;
  teamId: string;
  teamName: string;
  name: string;
  preview: string;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** Who is calling: resolved from the bearer token on every authenticated request. */
export interface Caller {
  teamId: string;
  teamName: string;
  keyId: string;
  /** The team's monthly credit quota as read with the key (null: unlimited; absent: not read). */
  creditQuota?: number | null;
}

// The `fc-` prefix keeps keys acceptable to clients that check Firecrawl's key format.
const KEY_PREFIX = 'fc-';

export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function previewKey(key: string): string {
  return key.length <= 12 ? `${key.slice(0, 3)}…` : `${key.slice(0, 6)}…${key.slice(-4)}`;
}

export function generateKey(): string {
  return KEY_PREFIX + randomBytes(24).toString('hex');
}

const teamColumns = `id, name, credit_quota AS "creditQuota", webhook_secret AS "webhookSecret", created_at AS "createdAt"`;

export async function findTeamByName(db: Queryable, name: string): Promise<Team | undefined> {
  const { rows } = await db.query<Team>(`SELECT ${teamColumns} FROM teams WHERE name = $1`, [name]);
  return rows[0];
}

export async function listTeams(db: Queryable): Promise<Team[]> {
  return (await db.query<Team>(`SELECT ${teamColumns} FROM teams ORDER BY name`)).rows;
}

/** Returns the team of that name, creating it on first use. */
export async function ensureTeam(db: Queryable, name: string): Promise<Team> {
  await db.query(`INSERT INTO teams (id, name, webhook_secret) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING`, [
    randomUUID(),
    name,
    randomBytes(32).toString('hex'),
  ]);
  return (await findTeamByName(db, name))!;
}

export async function setCreditQuota(db: Queryable, teamId: string, quota: number | null): Promise<void> {
  await db.query('UPDATE teams SET credit_quota = $2 WHERE id = $1', [teamId, quota]);
}

export interface CreatedKey {
  id: string;
  key: string;
  preview: string;
}

/** Stores a key for the team; `key` may be given (GLEANER_API_KEY) or is generated. */
export async function createApiKey(
  db: Queryable,
  teamId: string,
  opts: { name?: string; key?: string } = {},
): Promise<CreatedKey> {
  const key = opts.key ?? generateKey();
  const id = randomUUID();
  const preview = previewKey(key);
  await db.query('INSERT INTO api_keys (id, team_id, name, key_hash, key_preview) VALUES ($1, $2, $3, $4, $5)', [
    id,
    teamId,
    opts.name ?? preview,
    hashKey(key),
    preview,
  ]);
  return { id, key, preview };
}

/**
 * Makes sure `key` authenticates for the team (used for GLEANER_API_KEY). A key that exists
 * for another team, or was revoked, is an error rather than silently moved or revived.
 */
export async function ensureApiKey(db: Queryable, teamId: string, key: string): Promise<void> {
  const { rows } = await db.query<{ team_id: string; revoked_at: Date | null }>(
    'SELECT team_id, revoked_at FROM api_keys WHERE key_hash = $1',
    [hashKey(key)],
  );
  if (!rows[0]) {
    await createApiKey(db, teamId, { key, name: 'GLEANER_API_KEY' });
    return;
  }
  if (rows[0].team_id !== teamId) throw new Error('GLEANER_API_KEY already belongs to another team');
  if (rows[0].revoked_at) throw new Error('GLEANER_API_KEY was revoked; choose another key');
}

const keyColumns = `k.id, k.team_id AS "teamId", t.name AS "teamName", k.name, k.key_preview AS preview,
  k.created_at AS "createdAt", k.revoked_at AS "revokedAt", k.last_used_at AS "lastUsedAt"`;

export async function listApiKeys(db: Queryable, teamName?: string): Promise<ApiKeyInfo[]> {
  const { rows } = await db.query<ApiKeyInfo>(
    `SELECT ${keyColumns} FROM api_keys k JOIN teams t ON t.id = k.team_id
     WHERE $1::text IS NULL OR t.name = $1 ORDER BY t.name, k.created_at`,
    [teamName ?? null],
  );
  return rows;
}

/** Revokes by key id (see `keys list`) or by the full key; returns the revoked keys. */
export async function revokeApiKey(db: Queryable, idOrKey: string): Promise<ApiKeyInfo[]> {
  const isUuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(idOrKey);
  const { rows } = await db.query<{ id: string }>(
    `UPDATE api_keys SET revoked_at = now()
     WHERE revoked_at IS NULL AND (id = $1::uuid OR key_hash = $2) RETURNING id`,
    [isUuid ? idOrKey : null, hashKey(idOrKey)],
  );
  const all = await listApiKeys(db);
  return all.filter((k) => rows.some((r) => r.id === k.id));
}

export async function findCallerByKey(db: Queryable, key: string): Promise<Caller | undefined> {
  const { rows } = await db.query<Caller>(
    `SELECT k.id AS "keyId", t.id AS "teamId", t.name AS "teamName", t.credit_quota AS "creditQuota"
     FROM api_keys k JOIN teams t ON t.id = k.team_id
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [hashKey(key)],
  );
  return rows[0];
}

export async function touchApiKey(db: Queryable, keyId: string): Promise<void> {
  await db.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [keyId]);
}
