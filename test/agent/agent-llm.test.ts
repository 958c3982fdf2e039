// Agents with the scripted local LLM (test/helpers/fake-llm.ts), end to end on the real service and
// the fixture site, on PGlite and, with TEST_DATABASE_URL, Postgres: an answer spread over two pages
// returned as schema-valid data; a schema mismatch retried once with the problems, then accepted; a
// second invalid answer failing with AGENT_INVALID_OUTPUT; strictConstrainToURLs refusing other
// pages; maxCredits ending the run (with what was found, or failing when nothing was); cancel
// between steps; the signed webhooks of each; 400s naming the field; another team's 404; the list.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, beforeEach, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createApiKey, ensureTeam } from '../../src/store/teams.ts';
import type { FixtureSite } from '../fixtures/site/index.ts';
import { type Api, apiClient } from '../helpers/api.ts';
import { DEFAULT_USAGE, type FakeLlm, startFakeLlm } from '../helpers/fake-llm.ts';
import { type TestService, startSiteAndService, stopSiteAndService, storeKinds } from '../helpers/service.ts';
import { type WebhookReceiver, startWebhookReceiver } from '../helpers/webhook-receiver.ts';
import {
  addZephyrPages,
  expecting,
  lastToolMessage,
  llmCheckFailures,
  startAgent,
  waitForAgent,
  zephyr,
} from './helpers.ts';

const schema = {
  type: 'object',
  properties: { founded: { type: 'integer' }, founder: { type: 'string' } },
  required: ['founded', 'founder'],
};
const prompt = 'When did the Zephyr observatory open, and who founded it?';
const toolNames = (body: any) => (body.tools ?? []).map((t: any) => t.function.name).sort();

for (const store of storeKinds) {
  describe(`agent with a scripted LLM (${store})`, () => {
    let site: FixtureSite;
    let svc: TestService;
    let api: Api;
    let main: string;
    let llm: FakeLlm;
    let receiver: WebhookReceiver;
    let secret: string;

    before(async () => {
      llm = await startFakeLlm();
      receiver = await startWebhookReceiver();
      ({ site, svc, api, main } = await startSiteAndService({
        store,
        env: {
          OPENAI_BASE_URL: llm.baseUrl,
          MODEL_NAME: 'fake-model',
          LLM_TIMEOUT_MS: '5000',
          LLM_MAX_RETRIES: '0',
          GLEANER_WEBHOOK_RETRY_DELAYS: '1',
        },
      }));
      addZephyrPages(site);
      const { rows } = await svc.db.query<{ secret: string }>(
        'SELECT webhook_secret AS secret FROM teams WHERE name = $1',
        [svc.config.defaultTeam],
      );
      secret = rows[0].secret;
    });
    after(async () => {
      await stopSiteAndService(svc, site);
      await llm?.close();
      await receiver?.close();
    });
    beforeEach(async () => {
      llmCheckFailures.length = 0;
      // Replies an earlier failed test left queued would answer this test's requests.
      while (llm.pending()) await dropOne(llm);
    });

    const hooksOf = (id: string) => receiver.received.filter((d) => d.body.id === id);
    const requestsTo = (path: string, since = 0) => site.requests.slice(since).filter((r) => r.path === path).length;

    test('an answer spread over two pages: schema-valid data, actions, credits, tokens, signed webhooks', async () => {
      const [history, people] = [`${main}${zephyr.history}`, `${main}${zephyr.people}`];
      llm.script(
        expecting(
          (body) => {
            assert.deepEqual(toolNames(body), ['extract', 'finish', 'map', 'scrape', 'search']);
            const user = body.messages.find((m: any) => m.role === 'user').content;
            assert.match(user, /Zephyr observatory open/);
            assert.match(user, /"founded":\{"type":"integer"\}/);
          },
          { toolCalls: [{ name: 'scrape', arguments: { url: history } }] },
        ),
        expecting((body) => assert.match(lastToolMessage(body), /opened its doors in 1987/), {
          toolCalls: [{ name: 'scrape', arguments: { url: people } }],
        }),
        expecting((body) => assert.match(lastToolMessage(body), /founded by Ada Quill/), {
          toolCalls: [{ name: 'finish', arguments: { data: { founded: zephyr.year, founder: zephyr.founder } } }],
        }),
      );
      const id = await startAgent(api, {
        prompt,
        schema,
        urls: [history],
        origin: 'js-sdk@test',
        webhook: { url: `${receiver.origin}/agent`, metadata: { run: 'two-pages' }, headers: { 'x-test': 'yes' } },
      });
      const { final, seen } = await waitForAgent(api, id);
      assert.equal(seen[0], 'processing');
      assert.equal(final.status, 'completed', JSON.stringify(final));
      assert.deepEqual(final.data, { founded: zephyr.year, founder: zephyr.founder });
      assert.equal(final.model, 'fake-model');
      assert.equal(final.warning, undefined);
      assert.deepEqual(llmCheckFailures, []);
      assert.equal(llm.pending(), 0);
      assert.deepEqual(
        final.actions.map((a: any) => [a.action, a.input.url, a.ok, a.creditsUsed]),
        [
          ['scrape', history, true, 1],
          ['scrape', people, true, 1],
        ],
      );
      assert.equal(final.creditsUsed, 2);
      assert.equal(final.tokensUsed, 3 * (DEFAULT_USAGE.prompt_tokens + DEFAULT_USAGE.completion_tokens));
      assert.deepEqual(final.sources, [history, people]);
      assert.ok(Date.parse(final.expiresAt) > Date.now() + 23 * 3600_000);
      const { rows } = await svc.db.query<{ endpoint: string; status: string }>(
        'SELECT endpoint, status FROM jobs WHERE id = $1',
        [id],
      );
      assert.deepEqual(rows[0], { endpoint: 'agent', status: 'completed' });
      const activity = await api.activity('?endpoint=agent');
      assert.ok(
        activity.json.data.some((j: any) => j.id === id),
        activity.text,
      );

      await receiver.until('agent.completed', () => hooksOf(id).some((d) => d.type === 'agent.completed'));
      await sleep(300);
      const hooks = hooksOf(id);
      assert.deepEqual(hooks.map((d) => d.type).sort(), [
        'agent.action',
        'agent.action',
        'agent.completed',
        'agent.started',
      ]);
      for (const d of hooks) {
        assert.equal(d.path, '/agent');
        assert.equal(d.signature, `sha256=${createHmac('sha256', secret).update(d.raw).digest('hex')}`);
        assert.equal(d.headers['x-test'], 'yes');
        assert.deepEqual(d.body.metadata, { run: 'two-pages' });
        assert.match(d.body.webhookId, /^[0-9a-f-]{36}$/);
        assert.equal(d.body.success, true);
      }
      const actions = hooks.filter((d) => d.type === 'agent.action').map((d) => d.body.data[0]);
      assert.deepEqual(actions.map((a) => a.input.url).sort(), [history, people].sort());
      assert.ok(actions.every((a) => a.action === 'scrape' && a.creditsUsed === 1));
      const done = hooks.find((d) => d.type === 'agent.completed')!;
      assert.deepEqual(done.body.data, [{ creditsUsed: 2, data: { founded: zephyr.year, founder: zephyr.founder } }]);
      assert.deepEqual(hooks.find((d) => d.type === 'agent.started')!.body.data, []);
    });

    test('a schema mismatch gets one retry carrying the problems, then the corrected answer', async () => {
      llm.script(
        { toolCalls: [{ name: 'finish', arguments: { data: { founded: '1987', founder: zephyr.founder } } }] },
        expecting(
          (body) => {
            assert.match(lastToolMessage(body), /\/founded: must be integer/);
            assert.deepEqual(toolNames(body), ['finish'], 'the retry turn offers finish only');
          },
          { toolCalls: [{ name: 'finish', arguments: { data: { founded: 1987, founder: zephyr.founder } } }] },
        ),
      );
      const id = await startAgent(api, { prompt, schema });
      const { final } = await waitForAgent(api, id);
      assert.equal(final.status, 'completed', JSON.stringify(final));
      assert.deepEqual(final.data, { founded: 1987, founder: zephyr.founder });
      assert.deepEqual(llmCheckFailures, []);
      assert.equal(llm.pending(), 0);
    });

    test('invalid data twice fails with AGENT_INVALID_OUTPUT naming the problem; agent.failed is sent', async () => {
      const bad = { toolCalls: [{ name: 'finish', arguments: { data: { founder: zephyr.founder } } }] };
      llm.script(bad, bad);
      const id = await startAgent(api, { prompt, schema, webhook: `${receiver.origin}/agent` });
      const { final } = await waitForAgent(api, id);
      assert.equal(final.status, 'failed', JSON.stringify(final));
      assert.match(
        final.error,
        /^AGENT_INVALID_OUTPUT: the answer did not match the schema, also after one retry: .*founded/,
      );
      assert.equal(final.data, undefined);
      assert.equal(llm.pending(), 0);
      await receiver.until('agent.failed', () => hooksOf(id).some((d) => d.type === 'agent.failed'));
      const failed = hooksOf(id).find((d) => d.type === 'agent.failed')!;
      assert.equal(failed.body.success, false);
      assert.equal(failed.body.error, final.error);
      assert.deepEqual(failed.body.data, [{ creditsUsed: 0 }]);
      assert.equal(failed.signature, `sha256=${createHmac('sha256', secret).update(failed.raw).digest('hex')}`);
      const { rows } = await svc.db.query<{ status: string; error: string }>(
        'SELECT status, error FROM jobs WHERE id = $1',
        [id],
      );
      assert.deepEqual(rows[0], { status: 'failed', error: 'AGENT_INVALID_OUTPUT' });
    });

    test('strictConstrainToURLs: a page outside the given URLs is refused and never fetched', async () => {
      const since = site.requests.length;
      llm.script(
        { toolCalls: [{ name: 'scrape', arguments: { url: `${main}${zephyr.outside}` } }] },
        expecting((body) => assert.match(lastToolMessage(body), /^Refused: outside the allowed URLs/), {
          toolCalls: [{ name: 'scrape', arguments: { url: `${main}${zephyr.history}` } }],
        }),
        { toolCalls: [{ name: 'finish', arguments: { answer: 'It opened in 1987.' } }] },
      );
      const id = await startAgent(api, { prompt, urls: [`${main}/mutable/zephyr`], strictConstrainToURLs: true });
      const { final } = await waitForAgent(api, id);
      assert.equal(final.status, 'completed', JSON.stringify(final));
      assert.deepEqual(final.data, { answer: 'It opened in 1987.', sources: [`${main}${zephyr.history}`] });
      assert.deepEqual(llmCheckFailures, []);
      assert.equal(requestsTo(zephyr.outside, since), 0, 'the outside page was never fetched');
      assert.deepEqual(
        final.actions.map((a: any) => [a.input.url, a.ok, a.creditsUsed]),
        [
          [`${main}${zephyr.outside}`, false, 0],
          [`${main}${zephyr.history}`, true, 1],
        ],
      );
      assert.equal(final.creditsUsed, 1);
    });

    test('maxCredits: a use past it is refused and the agent answers with what it found', async () => {
      const since = site.requests.length;
      llm.script(
        { toolCalls: [{ name: 'scrape', arguments: { url: `${main}${zephyr.history}` } }] },
        { toolCalls: [{ name: 'scrape', arguments: { url: `${main}${zephyr.people}` } }] },
        expecting(
          (body) => {
            assert.match(lastToolMessage(body), /maxCredits reached/);
            assert.match(body.messages.at(-1).content, /credits are used up/);
            assert.deepEqual(toolNames(body), ['finish']);
          },
          { toolCalls: [{ name: 'finish', arguments: { answer: 'It opened in 1987; the founder is not known.' } }] },
        ),
      );
      const id = await startAgent(api, { prompt, maxCredits: 1 });
      const { final } = await waitForAgent(api, id);
      assert.equal(final.status, 'completed', JSON.stringify(final));
      assert.equal(final.data.answer, 'It opened in 1987; the founder is not known.');
      assert.equal(final.creditsUsed, 1);
      assert.deepEqual(llmCheckFailures, []);
      assert.equal(requestsTo(zephyr.people, since), 0);
      assert.equal(final.actions.length, 2);
      assert.match(final.actions[1].error, /maxCredits reached/);
    });

    test('maxCredits reached before anything was found fails with AGENT_CREDITS_EXHAUSTED', async () => {
      // A search of 5 results costs 2: more than maxCredits 1 allows.
      llm.script({ toolCalls: [{ name: 'search', arguments: { query: 'zephyr observatory' } }] });
      const id = await startAgent(api, { prompt, maxCredits: 1 });
      const { final } = await waitForAgent(api, id);
      assert.equal(final.status, 'failed', JSON.stringify(final));
      assert.match(final.error, /^AGENT_CREDITS_EXHAUSTED: maxCredits \(1\) was reached/);
      assert.equal(final.creditsUsed, 0);
      assert.equal(llm.pending(), 0);
    });

    test('cancel stops a running agent between steps: cancelled, agent.cancelled sent, no further step', async () => {
      llm.script(
        { toolCalls: [{ name: 'scrape', arguments: { url: `${main}/slow?ms=1500` } }] },
        { toolCalls: [{ name: 'finish', arguments: { answer: 'too late' } }] },
      );
      const before = llm.requests.length;
      const id = await startAgent(api, { prompt, webhook: `${receiver.origin}/agent` });
      const t0 = Date.now();
      while (!site.requests.some((r) => r.path.startsWith('/slow') && r.at >= t0)) {
        assert.ok(Date.now() - t0 < 20_000, 'the agent never started scraping');
        await sleep(20);
      }
      const res = await api('DELETE', `/v2/agent/${id}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json, { success: true });
      const now = await api('GET', `/v2/agent/${id}`);
      assert.equal(now.json.status, 'cancelled');
      await receiver.until('agent.cancelled', () => hooksOf(id).some((d) => d.type === 'agent.cancelled'));
      const cancelled = hooksOf(id).find((d) => d.type === 'agent.cancelled')!;
      assert.equal(cancelled.body.success, false);
      await sleep(2500); // the slow page answered meanwhile: the agent would have asked the LLM again
      const later = await api('GET', `/v2/agent/${id}`);
      assert.equal(later.json.status, 'cancelled');
      assert.equal(later.json.data, undefined);
      assert.equal(llm.requests.length - before, 1, 'no LLM request after the cancel');
      assert.equal(llm.pending(), 1, 'the finish reply was never asked for');
      await dropOne(llm);
      assert.ok(!hooksOf(id).some((d) => d.type === 'agent.completed' || d.type === 'agent.failed'));
      const again = await api('DELETE', `/v2/agent/${id}`);
      assert.equal(again.status, 200, 'cancelling a finished agent leaves it as it is');
      const { rows } = await svc.db.query<{ status: string }>('SELECT status FROM jobs WHERE id = $1', [id]);
      assert.equal(rows[0].status, 'cancelled');
    });

    test('an LLM failure: the deterministic agent answers, the warning names the failure', async () => {
      llm.script({ status: 500, message: 'the model is down' });
      const id = await startAgent(api, {
        prompt: 'When did the Zephyr observatory open?',
        urls: [`${main}${zephyr.history}`],
      });
      const { final } = await waitForAgent(api, id);
      assert.equal(final.status, 'completed', JSON.stringify(final));
      assert.match(final.warning, /^the LLM failed \(LLM_ERROR: [^)]*\); a deterministic agent answered: /);
      assert.match(final.data.answer, /opened its doors in 1987/);
      assert.equal(final.model, 'fake-model');
      assert.equal(llm.pending(), 0);
    });

    test('bad input is a 400 naming the field', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ prompt: '   ' }, 'body.prompt'],
        [{}, 'body.prompt'],
        [{ prompt, schema: { type: 'nope' } }, 'body.schema'],
        [{ prompt, strictConstrainToURLs: true }, 'body.strictConstrainToURLs'],
        [{ prompt, urls: ['ftp://example.com/x'] }, 'body.urls.0'],
        [{ prompt, effort: 'extreme' }, 'body.effort'],
        [{ prompt, maxCredits: 0 }, 'body.maxCredits'],
        [{ prompt, webhook: { url: `${receiver.origin}/x`, events: ['completed', 'page'] } }, 'body.webhook.events.1'],
      ];
      for (const [body, field] of cases) {
        const res = await api('POST', '/v2/agent', body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.json.code, 'BAD_REQUEST');
        assert.ok(
          res.json.details.some((d: any) => d.path === field),
          `${JSON.stringify(body)} should name ${field}: ${res.text}`,
        );
      }
    });

    test("another team's agent reads as 404; the list shows the team's own agents, newest first, paged by before", async () => {
      llm.script({ toolCalls: [{ name: 'search', arguments: { query: 'x' } }] });
      const id = await startAgent(api, { prompt: 'nothing to do here', maxCredits: 1 });
      await waitForAgent(api, id);
      const other = await ensureTeam(svc.db, `agent-other-${store}`);
      const otherApi = apiClient(svc, (await createApiKey(svc.db, other.id)).key);
      for (const [method, path] of [
        ['GET', `/v2/agent/${id}`],
        ['DELETE', `/v2/agent/${id}`],
      ] as const) {
        const res = await otherApi(method, path);
        assert.equal(res.status, 404, res.text);
        assert.equal(res.json.code, 'AGENT_NOT_FOUND');
      }
      assert.deepEqual((await otherApi('GET', '/v2/agent')).json, { success: true, agents: [] });
      const list = await api('GET', '/v2/agent');
      assert.equal(list.status, 200, list.text);
      const first = list.json.agents[0];
      assert.equal(first.id, id, 'newest first');
      assert.equal(first.status, 'failed');
      assert.equal(first.options.prompt, 'nothing to do here');
      assert.equal(first.options.model, 'fake-model');
      assert.deepEqual(first.settings, { hidden: false, starred: false });
      assert.ok(list.json.agents.length >= 8);
      const older = await api('GET', `/v2/agent?before=${Date.parse(first.createdAt)}`);
      assert.ok(!older.json.agents.some((a: any) => a.id === id));
      assert.equal(older.json.agents.length, list.json.agents.length - 1);
    });
  });
}

/** Takes one queued reply off the fake LLM (a request no agent will make). */
async function dropOne(llm: FakeLlm): Promise<void> {
  await fetch(`${llm.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'x', messages: [] }),
  });
}
