// POST /v2/agent and its reads: the request checked (schema compiled, webhook usable,
// strictConstrainToURLs with urls) before anything exists; then the job (endpoint agent, the
// activity listing), the row and one queue job whose id is the agent's, so DELETE can cancel it
// wherever it runs. The work itself: src/agent/job.ts.
import { createBillableJob } from '../billing/credits.ts';
import {
  AGENT_DEFAULT_MAX_CREDITS,
  AGENT_LIST_PAGE,
  type AgentListItem,
  type AgentRequest,
  type AgentStatusBody,
} from '../contract/agent.ts';
import { refuse } from '../crawl/refuse.ts';
import { NotFoundError } from '../errors.ts';
import { refuseBlockedTarget } from '../net/ssrf.ts';
import type { Log } from '../jobs/log.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { checkJsonSchema } from '../llm/json.ts';
import type { Db } from '../store/db-types.ts';
import type { Caller } from '../store/teams.ts';
import { agentWebhookOf, sendAgentEvent } from './events.ts';
import { type AgentRow, type StoredAgentRequest, cancelAgent, listAgents, teamAgent, toJsonb } from './rows.ts';

export const AGENT_QUEUE = 'agent';
/** How long an agent's result stays readable (swept hourly; an expired agent reads as 404). */
export const AGENT_TTL_MS = 24 * 60 * 60 * 1000;
/** Characters of the prompt a listing shows as targetHint. */
const HINT_CHARS = 120;

export interface AgentsDeps {
  db: Db;
  queue: JobQueue;
  log: Log;
  /** GLEANER_ALLOW_PRIVATE_NETWORK: webhook URLs on private addresses are refused without it. */
  allowPrivateNetwork: boolean;
  /** The configured LLM's name (MODEL_NAME), when one is configured: listings show it. */
  model?: string;
}

export class Agents {
  readonly #d: AgentsDeps;

  constructor(deps: AgentsDeps) {
    this.#d = deps;
  }

  /** POST /v2/agent: validates, records the job and the agent, queues it. */
  async start(caller: Caller, req: AgentRequest, publicUrl: string): Promise<{ id: string }> {
    const { db, queue } = this.#d;
    if (req.schema !== undefined) {
      const problem = checkJsonSchema(req.schema);
      if (problem) refuse('schema', `not a usable JSON Schema: ${problem}`);
    }
    if (req.strictConstrainToURLs && !req.urls?.length)
      refuse('strictConstrainToURLs', 'needs urls: the pages the agent is constrained to');
    const webhook = agentWebhookOf(req.webhook, this.#d.allowPrivateNetwork);
    const policy = { allowPrivateNetwork: this.#d.allowPrivateNetwork };
    req.urls?.forEach((u, i) => refuseBlockedTarget(u, `urls.${i}`, policy));
    const stored: StoredAgentRequest = {
      prompt: req.prompt,
      urls: req.urls ?? [],
      ...(req.schema ? { schema: req.schema } : {}),
      maxCredits: req.maxCredits ?? AGENT_DEFAULT_MAX_CREDITS,
      strictConstrainToURLs: req.strictConstrainToURLs,
      ...(req.model ? { model: req.model } : {}),
      ...(req.effort ? { effort: req.effort } : {}),
      ...(req.origin ? { origin: req.origin } : {}),
      ...(req.integration ? { integration: req.integration } : {}),
    };
    // The cheapest tool use (a scrape, a map) costs 1: a team without that much is refused now.
    const job = await createBillableJob(
      db,
      {
        teamId: caller.teamId,
        apiKeyId: caller.keyId,
        endpoint: 'agent',
        status: 'queued',
        target: req.prompt.slice(0, HINT_CHARS),
      },
      1,
    );
    await db.query(
      `INSERT INTO agents (id, team_id, api_key_id, request, webhook, public_url, expires_at)
       VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, clock_timestamp() + $7 * interval '1 millisecond')`,
      [
        job.id,
        caller.teamId,
        caller.keyId,
        toJsonb(stored),
        webhook ? JSON.stringify(webhook) : null,
        publicUrl,
        AGENT_TTL_MS,
      ],
    );
    await queue.send(AGENT_QUEUE, { agentId: job.id }, { id: job.id });
    return { id: job.id };
  }

  /** GET /v2/agent/{id}: another team's (or an expired) agent reads as missing. */
  async status(teamId: string, id: string): Promise<AgentStatusBody> {
    const a = await teamAgent(this.#d.db, teamId, id);
    if (!a) throw notFound(id);
    const { rows } = await this.#d.db.query<{ n: number }>(
      'SELECT COALESCE(sum(tokens), 0)::int AS n FROM token_usage WHERE job_id = $1',
      [id],
    );
    return {
      success: true,
      status: a.status,
      ...(a.status === 'completed' ? { data: a.data ?? {} } : {}),
      ...(a.error ? { error: a.error } : {}),
      ...(a.warning ? { warning: a.warning } : {}),
      ...(a.model ? { model: a.model } : {}),
      ...(a.request.effort ? { effort: a.request.effort } : {}),
      expiresAt: new Date(a.expiresAt).toISOString(),
      creditsUsed: a.creditsUsed,
      tokensUsed: rows[0].n,
      ...(a.sources ? { sources: a.sources } : {}),
      actions: a.actions,
    };
  }

  /** GET /v2/agent: the team's agents, newest first, AGENT_LIST_PAGE a page; `next` goes on from the last one. */
  async list(
    teamId: string,
    before: number | undefined,
    base: string,
  ): Promise<{ agents: AgentListItem[]; next?: string }> {
    const rows = await listAgents(this.#d.db, teamId, before, AGENT_LIST_PAGE + 1);
    const page = rows.slice(0, AGENT_LIST_PAGE);
    const last = page.at(-1);
    return {
      agents: page.map((a) => this.#item(a)),
      ...(rows.length > AGENT_LIST_PAGE && last
        ? { next: `${base}/v2/agent?before=${new Date(last.createdAt).getTime()}` }
        : {}),
    };
  }

  #item(a: AgentRow): AgentListItem {
    const r = a.request;
    return {
      id: a.id,
      createdAt: new Date(a.createdAt).toISOString(),
      targetHint: r.prompt.slice(0, HINT_CHARS),
      origin: r.origin ?? 'api',
      ...(r.integration ? { integration: r.integration } : {}),
      settings: { hidden: false, starred: false },
      status: a.status,
      options: {
        ...(r.urls.length ? { urls: r.urls } : {}),
        prompt: r.prompt,
        ...(r.schema ? { schema: r.schema } : {}),
        model: a.model ?? r.model ?? this.#d.model ?? 'deterministic',
        ...(r.effort ? { effort: r.effort } : {}),
      },
    };
  }

  /**
   * DELETE /v2/agent/{id}: a processing agent becomes cancelled at once (its queue job too: a
   * running one stops at its next step, its LLM request aborted) and the cancelled event is
   * queued. An agent already done stays as it is; another team's reads as missing.
   */
  async cancel(teamId: string, id: string): Promise<void> {
    const { db, queue, log } = this.#d;
    const { found, cancelled } = await cancelAgent(db, teamId, id);
    if (!found) throw notFound(id);
    if (!cancelled) return;
    await queue
      .cancel(AGENT_QUEUE, id)
      .catch((err: unknown) => log.warn({ err, agentId: id }, 'agent: queue cancel failed'));
    await sendAgentEvent({ queue, log }, cancelled, { event: 'cancelled', creditsUsed: cancelled.creditsUsed });
  }
}

function notFound(id: string): NotFoundError {
  return new NotFoundError(`No agent ${id} for this team`, 'AGENT_NOT_FOUND');
}
