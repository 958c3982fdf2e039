// An agent's webhook: the request's `webhook` checked and stored, and its events queued with their
// payloads made (src/jobs/webhooks.ts signs, delivers, records and retries them as crawl events).
// Types and payloads as Firecrawl's agent webhooks: agent.started {data: []}, agent.action
// {data: [{creditsUsed, action, input}]}, agent.completed {data: [{creditsUsed, data}]} (the
// spec's `agentCompleted`), agent.failed {success: false, data: [{creditsUsed}], error},
// agent.cancelled {success: false, data: [{creditsUsed}]}.
import { type AgentAction, type AgentRequest, type AgentWebhookEvent, agentWebhookEvents } from '../contract/agent.ts';
import { refuse } from '../crawl/refuse.ts';
import type { Log } from '../jobs/log.ts';
import type { JobQueue } from '../jobs/queue.ts';
import { enqueueWebhookPayloads } from '../jobs/webhooks.ts';
import { assertUrlAllowed } from '../net/ssrf.ts';

export interface AgentWebhook {
  url: string;
  headers: Record<string, string>;
  metadata: Record<string, unknown>;
  events: AgentWebhookEvent[];
}

const isAgentEvent = (e: string): e is AgentWebhookEvent => (agentWebhookEvents as readonly string[]).includes(e);

/** The request's webhook in stored form; a 400 naming the field when it is unusable. */
export function agentWebhookOf(w: AgentRequest['webhook'], allowPrivateNetwork: boolean): AgentWebhook | null {
  if (w === undefined) return null;
  const spec: AgentWebhook =
    typeof w === 'string'
      ? { url: w, headers: {}, metadata: {}, events: [...agentWebhookEvents] }
      : {
          url: w.url,
          headers: w.headers ?? {},
          metadata: w.metadata ?? {},
          events: [...agentWebhookEvents],
        };
  if (typeof w === 'object' && w.events) {
    const bad = w.events.findIndex((e) => !isAgentEvent(e));
    if (bad >= 0) refuse(`webhook.events.${bad}`, `"${w.events[bad]}" is not one of ${agentWebhookEvents.join(', ')}`);
    spec.events = [...new Set(w.events.filter(isAgentEvent))];
  }
  try {
    assertUrlAllowed(spec.url, { allowPrivateNetwork });
  } catch (err) {
    refuse(
      typeof w === 'string' ? 'webhook' : 'webhook.url',
      `must be an http(s) URL of a public host: ${(err as Error).message}`,
    );
  }
  return spec;
}

export type AgentEventData =
  | { event: 'started' }
  | { event: 'action'; number: number; action: AgentAction }
  | { event: 'completed'; creditsUsed: number; data: unknown }
  | { event: 'failed'; creditsUsed: number; error: string }
  | { event: 'cancelled'; creditsUsed: number };

/**
 * Queues one event when the agent's webhook wants it. The key (event, action number) makes its
 * webhookId, so an event queued again by a retried job is not sent twice. Never throws.
 */
export async function sendAgentEvent(
  d: { queue: JobQueue; log: Log },
  agent: { id: string; teamId: string; webhook: AgentWebhook | null },
  e: AgentEventData,
): Promise<void> {
  const hook = agent.webhook;
  if (!hook || !hook.events.includes(e.event)) return;
  const type = `agent.${e.event}`;
  let data: unknown[] = [];
  let extra: Record<string, unknown> = {};
  if (e.event === 'action')
    data = [{ creditsUsed: e.action.creditsUsed, action: e.action.action, input: e.action.input, ok: e.action.ok }];
  else if (e.event === 'completed') data = [{ creditsUsed: e.creditsUsed, data: e.data }];
  else if (e.event === 'failed') {
    data = [{ creditsUsed: e.creditsUsed }];
    extra = { error: e.error };
  } else if (e.event === 'cancelled') data = [{ creditsUsed: e.creditsUsed }];
  const success = e.event !== 'failed' && e.event !== 'cancelled';
  await enqueueWebhookPayloads(d.queue, d.log, [
    {
      key: e.event === 'action' ? `action:${e.number}` : e.event,
      payload: {
        teamId: agent.teamId,
        jobId: agent.id,
        type,
        webhook: hook,
        body: { success, type, id: agent.id, data, metadata: hook.metadata, ...extra },
      },
    },
  ]);
}
