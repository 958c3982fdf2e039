// POST /v2/agent, GET /v2/agent/{id}, GET /v2/agent, DELETE /v2/agent/{id}: names from wire-names.md
// ("Search, agent, browser sessions") and the JS SDK's agent types (AgentStatusResponse,
// AgentListItem). One schema gives validation, types and the OpenAPI document.
import { z } from 'zod';
import { clientLabels, targetUrl } from './scrape.ts';

/** Credits an agent may spend when the request names no maxCredits (Firecrawl's default). */
export const AGENT_DEFAULT_MAX_CREDITS = 2500;
export const AGENT_MAX_URLS = 100;
/** Agents one page of GET /v2/agent lists. */
export const AGENT_LIST_PAGE = 50;

export const agentEfforts = ['low', 'medium', 'high'] as const;
export type AgentEffort = (typeof agentEfforts)[number];
/** Values of webhook.events (the SDK's AgentWebhookEvent). */
export const agentWebhookEvents = ['started', 'action', 'completed', 'failed', 'cancelled'] as const;
export type AgentWebhookEvent = (typeof agentWebhookEvents)[number];

export const agentRequest = z
  .object({
    prompt: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(10_000)
      .describe('What to find out, in words (a question, or the data to gather)'),
    urls: z
      .array(targetUrl)
      .max(AGENT_MAX_URLS)
      .optional()
      .describe(
        'Pages to start from (read first); with strictConstrainToURLs the only pages (and pages under them) read',
      ),
    schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('JSON Schema of `data`: the answer is validated against it (an unusable schema is a 400)'),
    maxCredits: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        `Most credits the agent's tool uses (searches, maps, scrapes) may cost; default ${AGENT_DEFAULT_MAX_CREDITS}`,
      ),
    strictConstrainToURLs: z
      .boolean()
      .default(false)
      .describe('Read only the pages of `urls` and pages under them (same origin, path prefix); needs urls'),
    model: z
      .string()
      .trim()
      .max(100)
      .optional()
      .describe(
        "Accepted (clients send Firecrawl's model names); the configured MODEL_NAME answers, named in the status",
      ),
    effort: z
      .enum(agentEfforts)
      .optional()
      .describe('How many steps the agent may take: low 5, medium 10 (default), high 20'),
    webhook: z
      .union([
        z.string().min(1).max(2048),
        z
          .object({
            url: z.string().min(1).max(2048),
            headers: z.record(z.string(), z.string().max(8192)).optional().describe('Sent with every delivery'),
            metadata: z.record(z.string(), z.unknown()).optional().describe('Echoed in every payload'),
            // Checked by the service (a 400 naming body.webhook.events.N): inside a union, zod names only body.webhook.
            events: z
              .array(z.string())
              .max(agentWebhookEvents.length * 2)
              .optional()
              .describe(`Events to send, among ${agentWebhookEvents.join(', ')} (default all)`),
          })
          .strict(),
      ])
      .optional()
      .describe(
        'A URL, or {url, headers, metadata, events}: POSTs {success, type: "agent.started"|"agent.action"|"agent.completed"|' +
          '"agent.failed"|"agent.cancelled", id, webhookId, data, metadata, error?}, signed X-Firecrawl-Signature: ' +
          'sha256=<HMAC-SHA256 of the body under the team webhook secret>; retried on non-2xx (GLEANER_WEBHOOK_RETRY_DELAYS)',
      ),
    ...clientLabels,
  })
  .strict()
  .meta({ id: 'AgentRequest' });

export type AgentRequest = z.infer<typeof agentRequest>;

export const agentStarted = z.object({ success: z.literal(true), id: z.string() });

/** One tool use of an agent, as the status and the agent.action webhook report it. */
export const agentAction = z
  .object({
    action: z.string().describe('search, map, scrape or extract'),
    input: z.record(z.string(), z.unknown()).describe("The tool's arguments"),
    creditsUsed: z.number().int(),
    ok: z.boolean(),
    error: z.string().optional().describe('Why the tool failed or was refused'),
  })
  .meta({ id: 'AgentAction' });
export type AgentAction = z.infer<typeof agentAction>;

export const agentStatuses = ['processing', 'completed', 'failed', 'cancelled'] as const;
export type AgentStatus = (typeof agentStatuses)[number];

export const agentStatus = z
  .object({
    success: z.literal(true),
    status: z.enum(agentStatuses),
    data: z
      .unknown()
      .optional()
      .describe('When completed: valid for `schema` when one was given, else {answer, sources}'),
    error: z.string().optional().describe('Why the agent failed'),
    warning: z.string().optional().describe('How the answer was made when not by the LLM (no LLM configured)'),
    model: z.string().optional().describe('The LLM that planned (MODEL_NAME); absent for the deterministic agent'),
    effort: z.enum(agentEfforts).optional(),
    expiresAt: z.string().describe('When the result stops being readable (24 h after the request)'),
    creditsUsed: z.number().int().describe("Credits of the agent's tool uses so far"),
    tokensUsed: z.number().int().optional().describe('LLM tokens of this agent (also in the token ledger)'),
    sources: z.array(z.string()).optional().describe('The pages the agent read'),
    actions: z.array(agentAction).optional().describe('Each tool use, in order'),
  })
  .meta({ id: 'AgentStatus' });
export type AgentStatusBody = z.infer<typeof agentStatus>;

export const agentListQuery = z.object({
  before: z.coerce
    .number()
    .int()
    .min(0)
    .optional()
    .describe('Only agents created before this time (Unix milliseconds): the `next` link carries it'),
});

export const agentListItem = z
  .object({
    id: z.string(),
    createdAt: z.string(),
    targetHint: z.string().describe('The prompt, shortened'),
    origin: z.string(),
    integration: z.string().optional(),
    settings: z.object({ hidden: z.boolean(), starred: z.boolean(), label: z.string().optional() }),
    status: z.enum(agentStatuses),
    options: z.object({
      urls: z.array(z.string()).optional(),
      prompt: z.string(),
      schema: z.unknown().optional(),
      model: z.string(),
      effort: z.enum(agentEfforts).optional(),
    }),
  })
  .meta({ id: 'AgentListItem' });
export type AgentListItem = z.infer<typeof agentListItem>;

export const agentList = z.object({
  success: z.literal(true),
  agents: z.array(agentListItem),
  next: z.string().optional().describe('URL of the next (older) page, when there is one'),
});

export const agentCancelled = z.object({ success: z.literal(true) });
