// Agent test helpers: start an agent, wait for its end, the fixture pages the agents read, and a
// scripted LLM reply that checks what the agent sent back before answering.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FixtureSite } from '../fixtures/site/index.ts';
import type { Api } from '../helpers/api.ts';
import type { Scripted } from '../helpers/fake-llm.ts';

/** POST /v2/agent, asserting 200 and success: the id. */
export async function startAgent(api: Api, body: Record<string, unknown>): Promise<string> {
  const res = await api('POST', '/v2/agent', body);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.success, true, res.text);
  assert.match(res.json.id, /^[0-9a-f-]{36}$/);
  return res.json.id;
}

/** Polls GET /v2/agent/{id} until it is no longer processing: the last status and every status seen. */
export async function waitForAgent(api: Api, id: string, timeoutMs = 60_000): Promise<{ final: any; seen: string[] }> {
  const deadline = Date.now() + timeoutMs;
  const seen: string[] = [];
  for (;;) {
    const res = await api('GET', `/v2/agent/${id}`);
    assert.equal(res.status, 200, res.text);
    if (seen.at(-1) !== res.json.status) seen.push(res.json.status);
    if (res.json.status !== 'processing') return { final: res.json, seen };
    if (Date.now() > deadline) assert.fail(`agent ${id} still processing: ${res.text}`);
    await sleep(50);
  }
}

/** Two pages that each hold half of an answer (the founding year on one, the founder on the other). */
export const zephyr = {
  history: '/mutable/zephyr/history',
  people: '/mutable/zephyr/people',
  outside: '/mutable/elsewhere/note',
  year: 1987,
  founder: 'Ada Quill',
};

const page = (title: string, body: string) =>
  `<!DOCTYPE html><html lang="en"><head><title>${title}</title></head><body><main><h1>${title}</h1>${body}</main></body></html>`;

export function addZephyrPages(site: FixtureSite): void {
  site.mutable.set(zephyr.history, {
    html: page(
      'Zephyr observatory history',
      `<p>The Zephyr observatory opened its doors in ${zephyr.year} on the northern ridge.</p><p>Its first telescope was a 60 cm reflector.</p>`,
    ),
  });
  site.mutable.set(zephyr.people, {
    html: page(
      'Zephyr observatory people',
      `<p>The Zephyr observatory was founded by ${zephyr.founder}, an astronomer from Lyon.</p><p>Twelve staff work there today.</p>`,
    ),
  });
  site.mutable.set(zephyr.outside, {
    html: page('Unrelated note', '<p>Opening hours of the library: nine to five.</p>'),
  });
}

/** The last tool message of a chat request (what the agent sent back for the previous call). */
export function lastToolMessage(body: any): string {
  const tools = (body?.messages ?? []).filter((m: any) => m.role === 'tool');
  return String(tools.at(-1)?.content ?? '');
}

/** Failed checks of `expecting` replies: a test asserts it stays empty (the agent itself may recover from a bad reply). */
export const llmCheckFailures: string[] = [];

/** A reply that first checks the request (a failure is kept in llmCheckFailures), then answers `reply`. */
export function expecting(check: (body: any) => void, reply: Scripted): Scripted {
  return {
    from: (body) => {
      try {
        check(body);
      } catch (err) {
        llmCheckFailures.push((err as Error).message);
      }
      return reply;
    },
  };
}
