// The LLM provider against a scripted OpenAI-compatible server: what we send (model, page in the
// prompt, the caller's schema), what we return, repairs, retries, timeouts, format fallbacks, and
// the token ledger (store and /v1/team/token-usage/historical).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type LlmConfig, loadConfig } from '../../src/config.ts';
import { LlmProvider, type LlmProviderOptions, type UsageOwner } from '../../src/llm/provider.ts';
import { jsonExtractionPrompt } from '../../src/llm/prompts.ts';
import { createApiKey, ensureTeam, findCallerByKey, previewKey } from '../../src/store/teams.ts';
import { monthlyUsage, recordTokens } from '../../src/store/usage.ts';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.ts';
import { apiClient } from '../helpers/api.ts';
import { openTestDb, startTestService, storeKinds } from '../helpers/service.ts';
import { LlmError } from '../../src/errors.ts';
import type { Db } from '../../src/store/db-types.ts';

const PAGE = '# Acme Widget\n\nThe Acme Widget costs 12.50 EUR and ships in 3 days.\n';
const schema = {
  type: 'object',
  properties: { name: { type: 'string' }, price: { type: 'number' }, currency: { type: 'string' } },
  required: ['name', 'price'],
};
const good = { name: 'Acme Widget', price: 12.5, currency: 'EUR' };

function llmConfig(
  fake: FakeLlm | undefined,
  over: Partial<LlmConfig> = {},
  env: Record<string, string> = {},
): LlmConfig {
  const base = loadConfig(fake ? { OPENAI_BASE_URL: fake.baseUrl, MODEL_NAME: 'test-model', ...env } : env).llm;
  return { ...base, ...over };
}

async function expectLlmError(p: Promise<unknown>, code: string): Promise<LlmError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof LlmError, `expected an LlmError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}, the call succeeded`);
}

async function ledgerRows(db: Db, teamId: string) {
  const { rows } = await db.query<{ tokens: number; apiKeyId: string | null; jobId: string | null }>(
    'SELECT tokens, api_key_id AS "apiKeyId", job_id AS "jobId" FROM token_usage WHERE team_id = $1 ORDER BY id',
    [teamId],
  );
  return rows;
}

describe('LLM provider', () => {
  let db: Db;
  let cleanup: () => Promise<void>;
  let fake: FakeLlm;
  let owner: UsageOwner;

  before(async () => {
    ({ db, cleanup } = await openTestDb('pglite'));
  });
  after(async () => {
    await cleanup();
  });

  // Each test gets its own server (its own base URL: no remembered format fallbacks) and team.
  async function setup(over: Partial<LlmConfig> = {}, opts: Partial<LlmProviderOptions> = {}) {
    fake = await startFakeLlm();
    const team = await ensureTeam(db, `t-${randomUUID()}`);
    const key = await createApiKey(db, team.id);
    owner = { teamId: team.id, apiKeyId: key.id, jobId: randomUUID() };
    return new LlmProvider({ config: llmConfig(fake, over), db, retryBaseMs: 20, ...opts });
  }
  async function teardown() {
    await fake.close();
  }

  test('extractJson: sends the model, the page and the caller schema; returns the data; one ledger row', async () => {
    const llm = await setup();
    try {
      assert.equal(llm.available, true);
      fake.script({ json: good, usage: { prompt_tokens: 120, completion_tokens: 30 } });
      const p = jsonExtractionPrompt(
        { markdown: PAGE, url: 'https://acme.example/widget' },
        { prompt: 'Name and price', schema },
      );
      const out = await llm.extractJson({ ...p, schema, usage: owner });
      assert.deepEqual(out.data, good);
      assert.equal(out.repaired, false);
      assert.equal(out.model, 'test-model');
      assert.deepEqual(out.usage, {
        promptTokens: 120,
        completionTokens: 30,
        totalTokens: 150,
        requests: 1,
        estimated: false,
      });

      assert.equal(fake.requests.length, 1);
      const sent = fake.requests[0];
      assert.equal(sent.headers.authorization, 'Bearer gleaner-no-key', 'a placeholder key without OPENAI_API_KEY');
      assert.equal(sent.body.model, 'test-model');
      assert.equal(sent.body.stream, undefined);
      assert.equal(sent.body.messages[0].role, 'system');
      assert.match(sent.body.messages[0].content, /JSON only/);
      assert.equal(sent.body.messages[1].role, 'user');
      assert.ok(sent.body.messages[1].content.includes(PAGE.trim()), 'the page is in the prompt');
      assert.match(sent.body.messages[1].content, /Task: Name and price/);
      assert.match(sent.body.messages[1].content, /acme\.example\/widget/);
      assert.equal(sent.body.response_format.type, 'json_schema');
      assert.deepEqual(sent.body.response_format.json_schema.schema, schema, 'the caller schema, unchanged');
      assert.equal(sent.body.response_format.json_schema.strict, false);
      assert.equal(sent.body.max_tokens, undefined, 'no cap unless configured');

      assert.deepEqual(await ledgerRows(db, owner.teamId), [
        { tokens: 150, apiKeyId: owner.apiKeyId, jobId: owner.jobId },
      ]);
    } finally {
      await teardown();
    }
  });

  test('OPENAI_API_KEY is sent as the bearer key; LLM_MAX_OUTPUT_TOKENS as max_tokens', async () => {
    const llm = await setup({ apiKey: 'sk-test-123', maxOutputTokens: 256 });
    try {
      fake.script({ content: 'hello' }, { content: 'again' });
      const out = await llm.complete({ system: 'Be brief.', prompt: 'Say hello', usage: owner });
      assert.equal(out.text, 'hello');
      assert.equal(out.truncated, false);
      assert.equal(fake.requests[0].headers.authorization, 'Bearer sk-test-123');
      assert.equal(fake.requests[0].body.max_tokens, 256);
      assert.deepEqual(fake.requests[0].body.messages, [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Say hello' },
      ]);
      assert.equal(fake.requests[0].body.response_format, undefined);
      await llm.complete({ prompt: 'Again', maxOutputTokens: 10, usage: owner });
      assert.equal(fake.requests[1].body.max_tokens, 10, 'the call overrides the configured cap');
      assert.deepEqual(fake.requests[1].body.messages, [{ role: 'user', content: 'Again' }]);
    } finally {
      await teardown();
    }
  });

  test('complete: a reply cut at the token cap says so; no reported usage is estimated and still recorded', async () => {
    const llm = await setup();
    try {
      fake.script({ content: 'x'.repeat(40), usage: null, finishReason: 'length' });
      const out = await llm.complete({ prompt: 'p'.repeat(400), usage: owner });
      assert.equal(out.truncated, true);
      assert.equal(out.usage.estimated, true);
      assert.equal(out.usage.promptTokens, 100);
      assert.equal(out.usage.completionTokens, 10);
      assert.deepEqual(
        (await ledgerRows(db, owner.teamId)).map((r) => r.tokens),
        [110],
      );
    } finally {
      await teardown();
    }
  });

  test('chat: sends the conversation and the tools; returns the tool calls; retried like the rest; one ledger row per answer', async () => {
    const llm = await setup();
    try {
      const tools = [
        {
          type: 'function' as const,
          function: { name: 'lookup', parameters: { type: 'object', properties: { q: { type: 'string' } } } },
        },
      ];
      fake.script({ status: 500 }, { toolCalls: [{ name: 'lookup', arguments: { q: 'widget' }, id: 'call_a' }] });
      const out = await llm.chat({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'find the widget' },
        ],
        tools,
        usage: owner,
      });
      assert.equal(out.finishReason, 'tool_calls');
      assert.equal(out.message.content, null);
      assert.deepEqual(out.message.tool_calls, [
        { id: 'call_a', type: 'function', function: { name: 'lookup', arguments: '{"q":"widget"}' } },
      ]);
      assert.equal(fake.requests.length, 2, 'the 500 was retried');
      assert.deepEqual(fake.requests[1].body.tools, tools);
      assert.deepEqual(
        fake.requests[1].body.messages.map((m: any) => m.role),
        ['system', 'user'],
      );
      assert.deepEqual(
        { requests: out.usage.requests, totalTokens: out.usage.totalTokens },
        { requests: 1, totalTokens: 18 },
      );
      assert.equal((await ledgerRows(db, owner.teamId)).length, 1);

      // A tool call without reported usage is estimated from its arguments too; no tools: none sent.
      fake.script({ toolCalls: [{ name: 'lookup', arguments: { q: 'x'.repeat(100) } }], usage: null });
      const estimated = await llm.chat({ messages: [{ role: 'user', content: 'p'.repeat(40) }], usage: owner });
      assert.equal(estimated.usage.estimated, true);
      assert.ok(estimated.usage.completionTokens >= 25, String(estimated.usage.completionTokens));
      assert.equal(fake.requests[2].body.tools, undefined);
    } finally {
      await teardown();
    }
  });

  test('a fenced or prose-wrapped JSON reply is accepted without a repair', async () => {
    const llm = await setup();
    try {
      fake.script(
        { content: '```json\n' + JSON.stringify(good) + '\n```' },
        { content: `Here you go: ${JSON.stringify(good)} Hope it helps.` },
      );
      assert.deepEqual((await llm.extractJson({ prompt: PAGE, schema, usage: owner })).data, good);
      const second = await llm.extractJson({ prompt: PAGE, schema, usage: owner });
      assert.deepEqual(second.data, good);
      assert.equal(second.repaired, false);
      assert.equal(fake.requests.length, 2);
    } finally {
      await teardown();
    }
  });

  test('malformed JSON gets one repair request with the problem and the bad output; both calls are recorded', async () => {
    const llm = await setup();
    try {
      const bad = '{"name": "Acme Widget", "price": 12.5,';
      fake.script(
        { content: bad, usage: { prompt_tokens: 100, completion_tokens: 10 } },
        { json: good, usage: { prompt_tokens: 130, completion_tokens: 20 } },
      );
      const out = await llm.extractJson({ prompt: PAGE, schema, usage: owner });
      assert.deepEqual(out.data, good);
      assert.equal(out.repaired, true);
      assert.deepEqual(out.usage, {
        promptTokens: 230,
        completionTokens: 30,
        totalTokens: 260,
        requests: 2,
        estimated: false,
      });

      assert.equal(fake.requests.length, 2);
      const repair = fake.requests[1].body;
      assert.deepEqual(
        repair.messages.slice(0, 2),
        fake.requests[0].body.messages,
        'the repair continues the conversation',
      );
      assert.deepEqual(repair.messages[2], { role: 'assistant', content: bad });
      assert.equal(repair.messages[3].role, 'user');
      assert.match(repair.messages[3].content, /not valid JSON/);
      assert.deepEqual(repair.response_format, fake.requests[0].body.response_format);
      assert.deepEqual(
        (await ledgerRows(db, owner.teamId)).map((r) => r.tokens),
        [110, 150],
      );
    } finally {
      await teardown();
    }
  });

  test('schema-violating JSON twice is LLM_INVALID_OUTPUT after exactly one repair', async () => {
    const llm = await setup();
    try {
      fake.script({ json: { name: 5, price: 'cheap' } }, { json: { name: 'Acme Widget' } });
      const err = await expectLlmError(llm.extractJson({ prompt: PAGE, schema, usage: owner }), 'LLM_INVALID_OUTPUT');
      assert.equal(err.statusCode, 502);
      assert.match(err.message, /must have required property 'price'/);
      assert.equal(fake.requests.length, 2, 'one repair, no more');
      const repairText = fake.requests[1].body.messages[3].content as string;
      assert.match(repairText, /\/name: must be string/);
      assert.match(repairText, /\/price: must be number/);
      assert.equal((await ledgerRows(db, owner.teamId)).length, 2, 'the tokens were spent: both recorded');
    } finally {
      await teardown();
    }
  });

  test('without a schema: json_object, any object; an array is repaired', async () => {
    const llm = await setup();
    try {
      fake.script({ json: [1, 2] }, { json: { anything: true } });
      const out = await llm.extractJson({ prompt: PAGE, usage: owner });
      assert.deepEqual(out.data, { anything: true });
      assert.equal(out.repaired, true);
      assert.deepEqual(fake.requests[0].body.response_format, { type: 'json_object' });
      assert.match(fake.requests[1].body.messages.at(-1).content, /must be object/);
    } finally {
      await teardown();
    }
  });

  test('an invalid schema is LLM_INVALID_SCHEMA before any request', async () => {
    const llm = await setup();
    try {
      await expectLlmError(
        llm.extractJson({ prompt: PAGE, schema: { type: 'nonsense' }, usage: owner }),
        'LLM_INVALID_SCHEMA',
      );
      assert.equal(fake.requests.length, 0);
    } finally {
      await teardown();
    }
  });

  test('a 400 to json_schema falls back to json_object with the schema in the prompt, remembered for the process', async () => {
    const llm = await setup();
    try {
      fake.refuseFormats.add('json_schema');
      fake.script({ json: good }, { json: good });
      assert.deepEqual((await llm.extractJson({ prompt: PAGE, schema, usage: owner })).data, good);
      assert.deepEqual((await llm.extractJson({ prompt: PAGE, schema, usage: owner })).data, good);
      assert.deepEqual(
        fake.requests.map((r) => r.body.response_format?.type),
        ['json_schema', 'json_object', 'json_object'],
        'the second call does not ask for json_schema again',
      );
      assert.ok(
        fake.requests[1].body.messages[0].content.includes(JSON.stringify(schema)),
        'the schema goes in the system message',
      );
      assert.equal((await ledgerRows(db, owner.teamId)).length, 2, 'a refused request spent no tokens');
      // Another provider on the same endpoint and model shares the memory.
      const again = new LlmProvider({ config: llmConfig(fake), db });
      fake.script({ json: good });
      await again.extractJson({ prompt: PAGE, schema, usage: owner });
      assert.equal(fake.requests.at(-1)?.body.response_format?.type, 'json_object');
    } finally {
      await teardown();
    }
  });

  test('an endpoint refusing every response_format gets a plain instruction', async () => {
    const llm = await setup();
    try {
      fake.refuseFormats.add('json_schema');
      fake.refuseFormats.add('json_object');
      fake.script({ json: good });
      assert.deepEqual((await llm.extractJson({ prompt: PAGE, schema, usage: owner })).data, good);
      assert.deepEqual(
        fake.requests.map((r) => r.body.response_format?.type ?? 'none'),
        ['json_schema', 'json_object', 'none'],
      );
    } finally {
      await teardown();
    }
  });

  test('429 with Retry-After is retried after that delay', async () => {
    const llm = await setup();
    try {
      fake.script({ status: 429, headers: { 'retry-after': '1' } }, { json: good });
      const started = Date.now();
      const out = await llm.extractJson({ prompt: PAGE, schema, usage: owner });
      const elapsed = Date.now() - started;
      assert.deepEqual(out.data, good);
      assert.equal(fake.requests.length, 2);
      const gap = fake.requests[1].at - fake.requests[0].at;
      assert.ok(gap >= 950, `waited ${gap} ms for Retry-After: 1`);
      assert.ok(elapsed < 3000, `took ${elapsed} ms`);
      assert.equal((await ledgerRows(db, owner.teamId)).length, 1, 'the 429 spent no tokens');
    } finally {
      await teardown();
    }
  });

  test('a Retry-After beyond the bound is LLM_RATE_LIMITED at once; 429 after every retry too', async () => {
    const llm = await setup({}, { maxRetryAfterMs: 5000 });
    try {
      fake.script({ status: 429, headers: { 'retry-after': '120' } });
      const started = Date.now();
      const err = await expectLlmError(llm.complete({ prompt: 'x', usage: owner }), 'LLM_RATE_LIMITED');
      assert.ok(Date.now() - started < 1000);
      assert.equal(fake.requests.length, 1);
      assert.equal(err.headers?.['retry-after'], '120');

      fake.script({ status: 429 }, { status: 429 }, { status: 429 });
      await expectLlmError(llm.complete({ prompt: 'x', usage: owner }), 'LLM_RATE_LIMITED');
      assert.equal(fake.requests.length, 4, 'LLM_MAX_RETRIES=2: three tries');
    } finally {
      await teardown();
    }
  });

  test('500 is retried; 500 on every try is LLM_ERROR', async () => {
    const llm = await setup({ maxRetries: 1 });
    try {
      fake.script({ status: 500 }, { json: good });
      assert.deepEqual((await llm.extractJson({ prompt: PAGE, schema, usage: owner })).data, good);
      assert.equal(fake.requests.length, 2);

      fake.script({ status: 500, message: 'model crashed' }, { status: 503 });
      const err = await expectLlmError(llm.extractJson({ prompt: PAGE, schema, usage: owner }), 'LLM_ERROR');
      assert.match(err.message, /503/);
      assert.equal(fake.requests.length, 4, 'LLM_MAX_RETRIES=1: two tries');
      assert.equal(fake.pending(), 0);
    } finally {
      await teardown();
    }
  });

  test('a 4xx other than 429 is LLM_ERROR without retries', async () => {
    const llm = await setup();
    try {
      fake.script({ status: 404, message: 'model "test-model" not found' });
      const err = await expectLlmError(llm.complete({ prompt: 'x', usage: owner }), 'LLM_ERROR');
      assert.match(err.message, /404.*not found/);
      assert.equal(fake.requests.length, 1);
    } finally {
      await teardown();
    }
  });

  test('an unreachable endpoint is retried, then LLM_ERROR', async () => {
    const llm = await setup({ maxRetries: 1 });
    await fake.close();
    const err = await expectLlmError(llm.complete({ prompt: 'x', usage: owner }), 'LLM_ERROR');
    assert.match(err.message, /Could not reach/);
  });

  test('a hanging endpoint is LLM_TIMEOUT within LLM_TIMEOUT_MS, not retried', async () => {
    const llm = await setup({ timeoutMs: 400 });
    try {
      fake.script({ hang: true }, { json: good });
      const started = Date.now();
      const err = await expectLlmError(llm.extractJson({ prompt: PAGE, schema, usage: owner }), 'LLM_TIMEOUT');
      const elapsed = Date.now() - started;
      assert.ok(elapsed >= 350 && elapsed < 1500, `gave up after ${elapsed} ms`);
      assert.equal(err.statusCode, 504);
      assert.equal(fake.requests.length, 1);
      assert.equal((await ledgerRows(db, owner.teamId)).length, 0);
    } finally {
      await teardown();
    }
  });

  test("the caller's signal ends the call with the caller's reason, also during a retry wait", async () => {
    const llm = await setup({}, { retryBaseMs: 5000 });
    try {
      fake.script({ hang: true });
      const reason = new Error('scrape deadline');
      await assert.rejects(
        llm.complete({ prompt: 'x', signal: AbortSignal.timeout(200), usage: owner }),
        (e: Error) => e.name === 'TimeoutError',
      );
      const ctl = new AbortController();
      fake.script({ status: 503 });
      setTimeout(() => ctl.abort(reason), 300);
      const started = Date.now();
      await assert.rejects(llm.complete({ prompt: 'x', signal: ctl.signal, usage: owner }), (e) => e === reason);
      assert.ok(Date.now() - started < 2000, 'the backoff wait was cut short');
    } finally {
      await teardown();
    }
  });

  test('not configured: available is false and every call is LLM_UNAVAILABLE', async () => {
    const llm = new LlmProvider({ config: llmConfig(undefined), db });
    assert.equal(llm.available, false);
    assert.equal(llm.model, undefined);
    const usage = { teamId: randomUUID(), apiKeyId: null, jobId: null };
    const err = await expectLlmError(llm.complete({ prompt: 'x', usage }), 'LLM_UNAVAILABLE');
    assert.equal(err.statusCode, 503);
    await expectLlmError(llm.extractJson({ prompt: 'x', schema, usage }), 'LLM_UNAVAILABLE');
    await expectLlmError(llm.chat({ messages: [{ role: 'user', content: 'x' }], usage }), 'LLM_UNAVAILABLE');
  });

  test('a ledger write that fails fails the call (tokens are never handed out unaccounted)', async () => {
    const llm = await setup();
    try {
      fake.script({ json: good });
      const usage = { ...owner, teamId: randomUUID() }; // no such team: the foreign key refuses the row
      await assert.rejects(llm.extractJson({ prompt: PAGE, schema, usage }), /foreign key/);
    } finally {
      await teardown();
    }
  });
});

for (const store of storeKinds) {
  describe(`token ledger on ${store}`, () => {
    test('usage by month and by key matches the tokens the server reported', async () => {
      const { db, cleanup } = await openTestDb(store);
      const fake = await startFakeLlm();
      try {
        const team = await ensureTeam(db, 'ledger');
        const a = await createApiKey(db, team.id, { name: 'key a' });
        const b = await createApiKey(db, team.id, { name: 'key b' });
        const llm = new LlmProvider({ config: llmConfig(fake), db });
        fake.script(
          { json: good, usage: { prompt_tokens: 1000, completion_tokens: 200 } },
          { content: '{"name": 1}', usage: { prompt_tokens: 900, completion_tokens: 50 } },
          { json: good, usage: { prompt_tokens: 950, completion_tokens: 60 } },
          { content: 'summary', usage: { prompt_tokens: 300, completion_tokens: 40 } },
        );
        await llm.extractJson({
          prompt: PAGE,
          schema,
          usage: { teamId: team.id, apiKeyId: a.id, jobId: randomUUID() },
        });
        const repaired = await llm.extractJson({
          prompt: PAGE,
          schema,
          usage: { teamId: team.id, apiKeyId: a.id, jobId: randomUUID() },
        });
        assert.equal(repaired.repaired, true);
        await llm.complete({ prompt: PAGE, usage: { teamId: team.id, apiKeyId: b.id, jobId: null } });
        // An earlier month, written as an import would.
        const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 15));
        await recordTokens(db, { teamId: team.id, apiKeyId: b.id, jobId: null, tokens: 77, at: lastMonth });

        const totals = await monthlyUsage(db, 'tokens', team.id, false);
        assert.deepEqual(
          totals.map((m) => [m.month.getUTCMonth(), m.total]),
          [
            [lastMonth.getUTCMonth(), 77],
            [new Date().getUTCMonth(), 1200 + 950 + 1010 + 340],
          ],
        );
        const byKey = await monthlyUsage(db, 'tokens', team.id, true);
        const rows = byKey
          .toSorted(
            (x, y) => x.month.getTime() - y.month.getTime() || String(x.keyName).localeCompare(String(y.keyName)),
          )
          .map((m) => [m.month.getUTCMonth(), m.keyName, m.total]);
        assert.deepEqual(rows, [
          [lastMonth.getUTCMonth(), 'key b', 77],
          [new Date().getUTCMonth(), 'key a', 1200 + 950 + 1010],
          [new Date().getUTCMonth(), 'key b', 340],
        ]);
      } finally {
        await fake.close();
        await cleanup();
      }
    });

    test('/v1/team/token-usage/historical shows the provider usage of the service key, by month and by key', async () => {
      const fake = await startFakeLlm();
      const service = await startTestService({
        store,
        env: { OPENAI_BASE_URL: fake.baseUrl, MODEL_NAME: 'test-model' },
      });
      try {
        assert.equal(service.config.llm.configured, true);
        assert.equal(service.config.llm.model, 'test-model');
        // No route calls the LLM yet: the provider is built the way the service will build it
        // (its config, its database) and called for the service key's team.
        const caller = await findCallerByKey(service.db, service.key);
        assert.ok(caller);
        const llm = new LlmProvider({ config: service.config.llm, db: service.db });
        fake.script(
          { json: good, usage: { prompt_tokens: 400, completion_tokens: 100 } },
          { content: 'answer', usage: { prompt_tokens: 20, completion_tokens: 3 } },
        );
        await llm.extractJson({
          prompt: PAGE,
          schema,
          usage: { teamId: caller.teamId, apiKeyId: caller.keyId, jobId: randomUUID() },
        });
        await llm.complete({ prompt: 'q', usage: { teamId: caller.teamId, apiKeyId: caller.keyId, jobId: null } });
        const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 2));
        await recordTokens(service.db, {
          teamId: caller.teamId,
          apiKeyId: caller.keyId,
          jobId: null,
          tokens: 5,
          at: lastMonth,
        });

        const call = apiClient(service);
        const total = await call('GET', '/v1/team/token-usage/historical');
        assert.equal(total.status, 200, total.text);
        assert.deepEqual(
          total.json.periods.map((p: any) => [p.startDate.slice(0, 7), p.totalTokens, p.tokensUsed, p.apiKey]),
          [
            [lastMonth.toISOString().slice(0, 7), 5, 5, undefined],
            [new Date().toISOString().slice(0, 7), 523, 523, undefined],
          ],
        );
        const byKey = await call('GET', '/v1/team/token-usage/historical?byApiKey=true');
        assert.equal(byKey.status, 200, byKey.text);
        const preview = previewKey(service.key);
        assert.deepEqual(
          byKey.json.periods.map((p: any) => [p.startDate.slice(0, 7), p.totalTokens, p.apiKey]),
          [
            [lastMonth.toISOString().slice(0, 7), 5, preview],
            [new Date().toISOString().slice(0, 7), 523, preview],
          ],
          'per key: the preview, never the key',
        );
        const current = await call('GET', '/v2/team/token-usage');
        assert.equal(current.json.data.tokensUsed, 523);
      } finally {
        await service.destroy();
        await fake.close();
      }
    });
  });
}
