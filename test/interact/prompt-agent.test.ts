// Prompt mode's agent loop on real Chromium, driven by the scripted OpenAI-compatible server: the
// model's tool calls really act on the page, their results go back to it, the answer and the final
// snapshot come out; tool errors, the step bound, the deadline and a missing LLM.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import { type BrowserContext, chromium } from 'playwright-core';
import { loadConfig } from '../../src/config.ts';
import { ApiError, InteractPromptTimeoutError, LlmError } from '../../src/errors.ts';
import type { LiveBrowser } from '../../src/interact/live-browser.ts';
import { runPromptAgent } from '../../src/interact/prompt-agent.ts';
import { LlmProvider, type UsageOwner } from '../../src/llm/provider.ts';
import { CHROMIUM_ARGS } from '../../src/scrape/engines/browser/browser-pool.ts';
import { createApiKey, ensureTeam } from '../../src/store/teams.ts';
import type { Db } from '../../src/store/db-types.ts';
import { type FakeLlm, type Scripted, startFakeLlm } from '../helpers/fake-llm.ts';
import { openTestDb } from '../helpers/service.ts';

const CODE = 'ZX-4821';
const ANSWER = `The confirmation code is ${CODE}.`;

const PAGES: Record<string, string> = {
  '/step1':
    '<title>Checkout</title><h1>Checkout</h1><form action="/step2" method="get">' +
    '<label>Name <input name="name"></label> <button type="submit">Next</button></form>',
  '/step2':
    `<title>Done</title><h1>Thank you</h1><p>Your confirmation code is <b>${CODE}</b>.</p>` +
    '<a href="/receipt" target="_blank">Receipt</a>',
  '/receipt': '<title>Receipt</title><p>Receipt number R-77</p>',
  '/tools':
    '<title>Tools</title><label>Size <select name="size"><option value="s">Small</option>' +
    '<option value="l">Large</option></select></label> <input id="q" aria-label="Query"' +
    " onkeydown=\"if (event.key === 'Enter') document.getElementById('out').textContent = 'searched ' + this.value\">" +
    '<p id="out"></p><button onclick="setTimeout(() => document.body.insertAdjacentHTML(\'beforeend\', ' +
    '\'<p>Loaded later</p>\'), 300)">Load</button><div style="height: 3000px"></div><p>Bottom line</p>',
};

/** The tool messages of a recorded request body, in order. */
function toolMessages(body: any): { tool_call_id: string; content: string }[] {
  return body.messages.filter((m: any) => m.role === 'tool');
}

/** The ref the latest tool result's snapshot gives an element, e.g. `button "Next"` → e6. */
function refIn(body: any, element: string): string {
  const last = toolMessages(body).at(-1)?.content ?? '';
  const ref = new RegExp(`${element.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}[^\\n]*\\[ref=((?:f\\d+)?e\\d+)\\]`).exec(
    last,
  )?.[1];
  assert.ok(ref, `no ref for ${element} in the last tool result:\n${last}`);
  return ref;
}

const call = (name: string, args: unknown = {}): Scripted => ({ toolCalls: [{ name, arguments: args }] });

describe('prompt agent', () => {
  let db: Db;
  let closeDb: () => Promise<void>;
  let site: Server;
  let siteUrl: string;
  const siteHits: string[] = [];
  let profile: string;
  let context: BrowserContext;
  let browser: LiveBrowser;
  let fake: FakeLlm;
  let llm: LlmProvider;
  let owner: UsageOwner;

  before(async () => {
    ({ db, cleanup: closeDb } = await openTestDb('pglite'));
    site = createServer((req, res) => {
      if (req.url !== '/favicon.ico') siteHits.push(req.url ?? '');
      const html = PAGES[new URL(req.url ?? '/', 'http://x').pathname];
      res.writeHead(html ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html ?? 'not found');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    profile = await mkdtemp(join(tmpdir(), 'gleaner-prompt-agent-'));
    context = await chromium.launchPersistentContext(profile, {
      executablePath: '/usr/bin/chromium',
      headless: true,
      args: CHROMIUM_ARGS,
    });
    browser = {
      context,
      cdpEndpoint: '',
      page: async () => context.pages().at(-1) ?? (await context.newPage()),
    };
  });
  after(async () => {
    await context.close();
    await rm(profile, { recursive: true, force: true });
    await new Promise<void>((resolve) => site.close(() => resolve()));
    await closeDb();
  });

  beforeEach(async () => {
    fake = await startFakeLlm();
    llm = new LlmProvider({
      config: loadConfig({ OPENAI_BASE_URL: fake.baseUrl, MODEL_NAME: 'test-model' }).llm,
      db,
      retryBaseMs: 20,
    });
    const team = await ensureTeam(db, `t-${randomUUID()}`);
    const key = await createApiKey(db, team.id);
    owner = { teamId: team.id, apiKeyId: key.id, jobId: null };
    for (const extra of context.pages().slice(1)) await extra.close();
    const page = await browser.page();
    await page.goto(`${siteUrl}/step1`);
    siteHits.length = 0;
  });
  afterEach(async () => {
    await fake.close();
  });

  test('snapshot, type, click Next by ref, extract, answer: the page moved on and the answer is the code', async () => {
    fake.script(
      call('snapshot'),
      { from: (body) => call('type', { ref: refIn(body, 'textbox "Name"'), value: 'Ada' }) },
      { from: (body) => call('click', { ref: refIn(body, 'button "Next"') }) },
      call('extract', { format: 'text' }),
      { content: ANSWER },
    );
    const run = await runPromptAgent({
      llm,
      browser,
      prompt: 'Fill in the name Ada, go on, and tell me the confirmation code.',
      timeoutMs: 60_000,
      usage: owner,
    });

    // The browser really went to step 2 with the typed name.
    const page = await browser.page();
    assert.equal(page.url(), `${siteUrl}/step2?name=Ada`);
    assert.deepEqual(siteHits, ['/step2?name=Ada']);

    assert.equal(run.output, ANSWER);
    assert.equal(run.finished, true);
    assert.equal(run.steps, 5);
    assert.equal(run.url, page.url());
    assert.equal(run.result, await page.ariaSnapshot(), 'result is the final page snapshot');
    assert.match(run.result, new RegExp(CODE));
    assert.doesNotMatch(run.result, /\[ref=/, 'refs mean nothing to the caller');
    assert.deepEqual(
      run.actions.map((a) => [a.tool, a.ok]),
      [
        ['snapshot', true],
        ['type', true],
        ['click', true],
        ['extract', true],
      ],
    );
    assert.deepEqual(
      { requests: run.usage.requests, totalTokens: run.usage.totalTokens },
      { requests: 5, totalTokens: 90 },
    );
    const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM token_usage WHERE team_id = $1', [
      owner.teamId,
    ]);
    assert.equal(rows[0].n, 5, 'one ledger row per LLM request');

    // What the model was sent: the tools, the prompt, then each tool result under its call id.
    const bodies = fake.requests.map((r) => r.body);
    assert.equal(bodies.length, 5);
    assert.deepEqual(
      bodies[0].tools.map((t: any) => t.function.name),
      ['snapshot', 'click', 'type', 'select', 'press', 'navigate', 'go_back', 'scroll', 'wait', 'extract', 'finish'],
    );
    assert.match(bodies[0].messages[1].content, /tell me the confirmation code/);
    assert.match(bodies[0].messages[1].content, /\/step1/);
    const first = toolMessages(bodies[1]);
    assert.equal(first.length, 1);
    assert.equal(first[0].tool_call_id, bodies[1].messages[2].tool_calls[0].id);
    assert.match(first[0].content, /button "Next" \[ref=(?:f\d+)?e\d+\]/);
    const afterClick = toolMessages(bodies[3]).at(-1)!.content;
    assert.match(afterClick, /^Clicked\.\nPage: .*\/step2\?name=Ada/);
    assert.match(afterClick, new RegExp(`${CODE}`), 'an action answers with the new snapshot');
    // Only the latest snapshot stays whole: the first is a note by now.
    assert.match(toolMessages(bodies[3])[0].content, /older snapshot omitted/);
    assert.doesNotMatch(toolMessages(bodies[3])[0].content, /button "Next"/);
    assert.match(toolMessages(bodies[4]).at(-1)!.content, new RegExp(`Your confirmation code is ${CODE}`));
  });

  test('a link that opens a tab: the agent goes on in the new tab, and the result is that page', async () => {
    await (await browser.page()).goto(`${siteUrl}/step2`);
    fake.script(
      call('snapshot'),
      { from: (body) => call('click', { ref: refIn(body, 'link "Receipt"') }) },
      {
        content: 'R-77',
      },
    );
    const run = await runPromptAgent({ llm, browser, prompt: 'Open the receipt.', timeoutMs: 60_000, usage: owner });
    assert.equal(context.pages().length, 2);
    assert.equal(run.url, `${siteUrl}/receipt`);
    assert.match(run.result, /Receipt number R-77/);
    assert.match(toolMessages(fake.requests[2].body).at(-1)!.content, /Page: .*\/receipt[^]*Receipt number R-77/);
  });

  test('the other tools act on the page: navigate, select, type, press, wait, scroll, go_back', async () => {
    fake.script(
      call('navigate', { url: `${siteUrl}/tools` }),
      call('select', { role: 'combobox', name: 'Size', values: ['Large'] }),
      call('type', { selector: '#q', value: 'cats' }),
      call('press', { selector: '#q', key: 'Enter' }),
      call('click', { text: 'Load' }),
      call('wait', { text: 'Loaded later' }),
      call('scroll', { direction: 'down', pixels: 500 }),
      call('scroll', { text: 'Bottom line' }),
      call('go_back'),
      call('finish', { answer: 'done' }),
    );
    const run = await runPromptAgent({ llm, browser, prompt: 'Try everything.', timeoutMs: 60_000, usage: owner });
    assert.equal(run.output, 'done');
    assert.deepEqual(
      run.actions.filter((a) => !a.ok),
      [],
    );
    // Each call's result as the next request carried it (before later snapshots replaced it).
    const results = fake.requests.slice(1).map((r) => toolMessages(r.body).at(-1)!.content);
    assert.match(results[0], /^Navigated \(HTTP 200\)\.\nPage: .*\/tools \(title: "Tools"\)/);
    assert.match(results[1], /^Selected \["l"\]/);
    assert.match(results[2], /^Filled\./);
    assert.match(results[3], /^Pressed Enter\.[^]*searched cats/);
    assert.match(results[5], /^Waited\.[^]*Loaded later/);
    assert.match(results[6], /^Scrolled down: now at 500 of \d+ px/);
    assert.equal(results[7], 'Scrolled the element into view.');
    assert.match(results[8], /^Went back\.\nPage: .*\/step1/);
    assert.equal((await browser.page()).url(), `${siteUrl}/step1`);
  });

  test('finish ends the loop with its answer; a tool error goes back to the model as the result', async () => {
    fake.script(
      call('click', { selector: '#no-such-button' }),
      call('navigate', { url: 'file:///etc/passwd' }),
      call('dance'),
      call('click', '{not json'),
      { toolCalls: [{ name: 'finish', arguments: { answer: 'Could not find the button.' } }, { name: 'snapshot' }] },
    );
    const started = Date.now();
    const run = await runPromptAgent({
      llm,
      browser,
      prompt: 'Press the missing button.',
      timeoutMs: 60_000,
      usage: owner,
    });
    assert.ok(Date.now() - started < 5000, 'a missing element is reported at once, not waited for');
    assert.equal(run.output, 'Could not find the button.');
    assert.equal(run.finished, true);
    assert.deepEqual(
      run.actions.map((a) => [a.tool, a.ok]),
      [
        ['click', false],
        ['navigate', false],
        ['dance', false],
        ['click', false],
        ['finish', true],
      ],
      'calls after finish are not run',
    );
    const results = toolMessages(fake.requests[4].body).map((m) => m.content);
    assert.match(results[0], /^Error: No element matches selector "#no-such-button"/);
    assert.match(results[1], /^Error: `url` must be an absolute http\(s\) URL/);
    assert.match(results[2], /^Error: There is no tool "dance"/);
    assert.match(results[3], /^Error: The arguments are not valid JSON/);
    assert.equal(run.actions[0].error, results[0]);
    assert.equal((await browser.page()).url(), `${siteUrl}/step1`);
  });

  test('the step bound ends a model that never finishes: finished false, its last words, the page as it is', async () => {
    fake.script(
      call('snapshot'),
      { toolCalls: [{ name: 'snapshot' }], content: 'Still looking for the code.' },
      call('scroll', { direction: 'down' }),
      { content: 'never asked for' },
    );
    const run = await runPromptAgent({
      llm,
      browser,
      prompt: 'Find the code.',
      timeoutMs: 60_000,
      usage: owner,
      maxSteps: 3,
    });
    assert.equal(run.finished, false);
    assert.equal(run.steps, 3);
    assert.equal(run.output, 'Still looking for the code.');
    assert.equal(run.result, await (await browser.page()).ariaSnapshot());
    assert.equal(fake.requests.length, 3);
    assert.equal(fake.pending(), 1);
    assert.deepEqual(
      run.actions.map((a) => [a.tool, a.ok]),
      [
        ['snapshot', true],
        ['snapshot', true],
        ['scroll', true],
      ],
    );
    const [older, latest] = toolMessages(fake.requests[2].body).map((m) => m.content);
    assert.match(older, /older snapshot omitted/);
    assert.match(latest, /button "Next" \[ref=(?:f\d+)?e\d+\]/);
  });

  test('the deadline aborts a hanging LLM request: INTERACT_PROMPT_TIMEOUT', async () => {
    fake.script(call('snapshot'), { hang: true });
    const started = Date.now();
    const err = await runPromptAgent({ llm, browser, prompt: 'Find the code.', timeoutMs: 1500, usage: owner }).then(
      () => assert.fail('expected a timeout'),
      (e: unknown) => e,
    );
    const elapsed = Date.now() - started;
    assert.ok(err instanceof InteractPromptTimeoutError, String(err));
    assert.equal(err.code, 'INTERACT_PROMPT_TIMEOUT');
    assert.equal(err.statusCode, 408);
    assert.ok(elapsed >= 1500 && elapsed < 4000, `ended after ${elapsed} ms`);
    assert.equal(fake.requests.length, 2, 'the second request was sent and hung');
  });

  test('the deadline also bounds a browser action: a wait for text that never comes', async () => {
    fake.script(call('wait', { text: 'never shown' }), { content: 'not reached' });
    const started = Date.now();
    await assert.rejects(
      runPromptAgent({ llm, browser, prompt: 'Wait for it.', timeoutMs: 1500, usage: owner }),
      (e) => e instanceof InteractPromptTimeoutError,
    );
    const elapsed = Date.now() - started;
    assert.ok(elapsed < 4000, `ended after ${elapsed} ms (the wait alone may take ${10_000} ms)`);
  });

  test("the caller's abort ends the loop with the caller's reason", async () => {
    fake.script({ hang: true });
    const controller = new AbortController();
    const reason = new Error('session closed');
    const run = runPromptAgent({
      llm,
      browser,
      prompt: 'Find the code.',
      timeoutMs: 60_000,
      signal: controller.signal,
      usage: owner,
    });
    while (fake.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort(reason);
    await assert.rejects(run, (e) => e === reason);
  });

  test("the LLM endpoint's failure is the provider's error", async () => {
    fake.script({ status: 400, message: 'tools are not supported by this model' });
    await assert.rejects(
      runPromptAgent({ llm, browser, prompt: 'Find the code.', timeoutMs: 60_000, usage: owner }),
      (e) => e instanceof LlmError && e.code === 'LLM_ERROR' && /tools are not supported/.test(e.message),
    );
  });

  test('without an LLM configured: LLM_UNAVAILABLE (503) naming the settings, and the page is not touched', async () => {
    const none = new LlmProvider({ config: loadConfig({}).llm, db });
    assert.equal(none.available, false);
    const page = await browser.page();
    const before = page.url();
    await assert.rejects(
      runPromptAgent({ llm: none, browser, prompt: 'Find the code.', timeoutMs: 60_000, usage: owner }),
      (e) => {
        assert.ok(e instanceof ApiError);
        assert.equal(e.code, 'LLM_UNAVAILABLE');
        assert.equal(e.statusCode, 503);
        assert.match(e.message, /^Prompt mode needs an LLM/);
        for (const setting of ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'MODEL_NAME'])
          assert.match(e.message, new RegExp(setting));
        return true;
      },
    );
    assert.equal(page.url(), before);
    assert.equal(siteHits.length, 0);
  });
});
