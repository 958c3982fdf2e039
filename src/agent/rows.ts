// The agents table (migration 17): one row per agent, written by the routes (start, cancel) and by
// the job (actions as they happen, the outcome once). Every write that ends an agent only applies
// to a processing row, so a cancel and the job's own end never both win.
import type { AgentAction, AgentEffort, AgentStatus } from '../contract/agent.ts';
import type { JsonSchema } from '../llm/json.ts';
import type { Queryable } from '../store/db-types.ts';
import type { AgentWebhook } from './events.ts';

/** What the row keeps of the request (validated, defaults applied). */
export interface StoredAgentRequest {
  prompt: string;
  urls: string[];
  schema?: JsonSchema;
  maxCredits: number;
  strictConstrainToURLs: boolean;
  model?: string;
  effort?: AgentEffort;
  origin?: string;
  integration?: string;
}

export interface AgentRow {
  id: string;
  teamId: string;
  apiKeyId: string;
  request: StoredAgentRequest;
  webhook: AgentWebhook | null;
  publicUrl: string;
  status: AgentStatus;
  data: unknown;
  error: string | null;
  warning: string | null;
  model: string | null;
  sources: string[] | null;
  actions: AgentAction[];
  creditsUsed: number;
  createdAt: Date;
  expiresAt: Date;
}

export const agentColumns = `id, team_id AS "teamId", api_key_id AS "apiKeyId", request, webhook, public_url AS "publicUrl",
  status, data, error, warning, model, sources, actions, credits_used AS "creditsUsed", created_at AS "createdAt",
  expires_at AS "expiresAt"`;

// jsonb refuses U+0000 and unpaired surrogates in strings (page text ends up in answers).
function jsonbSafe(_key: string, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const s = value.includes('\0') ? value.replaceAll('\0', '') : value;
  return s.isWellFormed() ? s : s.toWellFormed();
}
export const toJsonb = (v: unknown) => JSON.stringify(v, jsonbSafe);

/** The row, whatever its team (the job's read). */
export async function loadAgent(db: Queryable, id: string): Promise<AgentRow | undefined> {
  const { rows } = await db.query<AgentRow>(`SELECT ${agentColumns} FROM agents WHERE id = $1`, [id]);
  return rows[0];
}

/** The team's agent, unless expired. */
export async function teamAgent(db: Queryable, teamId: string, id: string): Promise<AgentRow | undefined> {
  const { rows } = await db.query<AgentRow>(
    `SELECT ${agentColumns} FROM agents WHERE id = $1 AND team_id = $2 AND expires_at > clock_timestamp()`,
    [id, teamId],
  );
  return rows[0];
}

/** Whether the agent is still processing (the job's check between steps). */
export async function isProcessing(db: Queryable, id: string): Promise<boolean> {
  const { rows } = await db.query<{ status: string }>('SELECT status FROM agents WHERE id = $1', [id]);
  return rows[0]?.status === 'processing';
}

/**
 * Appends a tool use and adds its credits (charged on the tool's own job already, so this counts
 * even once the agent was cancelled); resolves to the action's 1-based number.
 */
export async function appendAction(db: Queryable, id: string, action: AgentAction): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `UPDATE agents SET actions = actions || jsonb_build_array($2::jsonb), credits_used = credits_used + $3
     WHERE id = $1 RETURNING jsonb_array_length(actions) AS n`,
    [id, toJsonb(action), action.creditsUsed],
  );
  return rows[0]?.n ?? 0;
}

export interface AgentOutcome {
  status: 'completed' | 'failed';
  data?: unknown;
  error?: string;
  /** The code kept in the jobs ledger (failed only). */
  code?: string;
  warning?: string | null;
  model?: string | null;
  sources?: string[];
}

/** Records the outcome once (only a processing agent changes) with the job's end; the credits used, or null when it was no longer processing. */
export async function finishAgent(db: Queryable, id: string, o: AgentOutcome): Promise<number | null> {
  const { rows } = await db.query<{ credits: number }>(
    `WITH a AS (
       UPDATE agents SET status = $2, data = $3::jsonb, error = $4, warning = $5, model = $6, sources = $7::jsonb,
         completed_at = clock_timestamp()
       WHERE id = $1 AND status = 'processing' RETURNING credits_used
     ), j AS (
       UPDATE jobs SET status = $2, error = $8, updated_at = clock_timestamp(),
         completed_at = COALESCE(completed_at, clock_timestamp())
       WHERE id = $1 AND EXISTS (SELECT 1 FROM a)
     )
     SELECT credits_used AS credits FROM a`,
    [
      id,
      o.status,
      o.data === undefined ? null : toJsonb(o.data),
      o.error ?? null,
      o.warning ?? null,
      o.model ?? null,
      o.sources ? toJsonb(o.sources) : null,
      o.status === 'failed' ? (o.code ?? 'UNKNOWN_ERROR') : null,
    ],
  );
  return rows[0]?.credits ?? null;
}

/** DELETE: a processing agent of the team becomes cancelled (with its job); the row as it was, or undefined when there was none to cancel. */
export async function cancelAgent(
  db: Queryable,
  teamId: string,
  id: string,
): Promise<{ found: boolean; cancelled?: AgentRow }> {
  const { rows } = await db.query<AgentRow & { was: string }>(
    `WITH a AS (
       UPDATE agents SET status = 'cancelled', completed_at = clock_timestamp()
       WHERE id = $1 AND team_id = $2 AND status = 'processing' AND expires_at > clock_timestamp()
       RETURNING ${agentColumns}
     ), j AS (
       UPDATE jobs SET status = 'cancelled', updated_at = clock_timestamp(),
         completed_at = COALESCE(completed_at, clock_timestamp())
       WHERE id = $1 AND EXISTS (SELECT 1 FROM a)
     )
     SELECT * FROM a`,
    [id, teamId],
  );
  if (rows[0]) return { found: true, cancelled: rows[0] };
  return { found: (await teamAgent(db, teamId, id)) !== undefined };
}

/** A page of the team's agents, newest first, created before `before` (ms). */
export async function listAgents(
  db: Queryable,
  teamId: string,
  before: number | undefined,
  limit: number,
): Promise<AgentRow[]> {
  const { rows } = await db.query<AgentRow>(
    `SELECT ${agentColumns} FROM agents
     WHERE team_id = $1 AND expires_at > clock_timestamp() AND ($2::timestamptz IS NULL OR created_at < $2)
     ORDER BY created_at DESC, id LIMIT $3`,
    [teamId, before === undefined ? null : new Date(before), limit],
  );
  return rows;
}

/** Expired agents are removed (hourly). */
export async function deleteExpiredAgents(db: Queryable): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM agents WHERE expires_at < clock_timestamp()');
  return rowCount;
}
