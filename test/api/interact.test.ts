// POST/DELETE /v2/scrape/{jobId}/interact against real Chromium, the real sandbox and the fixture
// site: the spec's state machine (no session → live → destroyed, 410 after), every status it names
// (403 404 409 402 429 410 503), the replay of the scrape's page state (cookies from headers,
// actions), state kept across calls and languages, the timeout kill, idle expiry and billing.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import type { FixtureSite } from '../fixtures/site/index.ts';
import { type Api, apiClient } from '../helpers/api.ts';
import { startFakeLlm } from '../helpers/fake-llm.ts';
import {
  type TestService,
  startSiteAndService,
  startTestService,
  stopSiteAndService,
  storeKinds,
} from '../helpers/service.ts';
import { createApiKey, ensureTeam, findTeamByName, setCreditQuota } from '../../src/store/teams.ts';
import '../helpers/loopback-dns.ts';

/** Host pids of the session Chromiums' main processes started by this process (not renderers). */
function sessionChromiums(): number[] {
  const parent = new Map<number, number>();
  const cmd = new Map<number, string>();
  for (const name of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parent.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      cmd.set(Number(name), readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').join(' '));
    } catch {
      // gone meanwhile
    }
  }
  const mine = (pid: number) => {
    for (let p: number | undefined = pid; p; p = parent.get(p)) if (p === process.pid) return true;
    return false;
  };
  return [...cmd]
    .filter(
      ([pid, c]) =>
        /chromium\/chromium /.test(c) && c.includes('gleaner-session-') && !c.includes('--type=') && mine(pid),
    )
    .map(([pid]) => pid);
}

const formPage = `<!DOCTYPE html><html><head><title>Interact form</title></head><body>
<main><h1>Interact form</h1><input id="q" name="q"><p id="cookie"></p>
<button id="go" onclick="document.getElementById('out').textContent = 'clicked ' + document.getElementById('q').value">Go</button>
<p id="out"></p></main>
<script>document.getElementById('cookie').textContent = document.cookie;</script></body></html>`;

describe('interact: a browser session bound to a scrape', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: Api;
  let main: string;

  before(async () => {
    ({ site, svc, api, main } = await startSiteAndService({
      env: { BROWSER_SESSIONS_PER_TEAM: '3', INTERACT_IDLE_TIMEOUT_SECONDS: '600' },
    }));
    site.mutable.set('/mutable/interact/form', { html: formPage });
  });
  after(() => stopSiteAndService(svc, site));

  async function scrapeId(body: Record<string, unknown> = {}): Promise<string> {
    const res = await api.scrape({ url: `${main}/mutable/interact/form`, formats: ['markdown'], ...body } as never);
    assert.equal(res.status, 200, res.text);
    return res.json.data.metadata.scrapeId;
  }

  test('the first call replays the scrape (cookies from headers, actions); later calls reuse the live page; DELETE ends it; then 410', async () => {
    const id = await scrapeId({
      headers: { cookie: 'flavour=lemon' },
      actions: [
        { type: 'click', selector: '#q' },
        { type: 'write', text: 'typed by the scrape' },
      ],
    });
    const first = await api.interact(id, { code: "await page.inputValue('#q')", language: 'node' });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json.success, true, first.text);
    assert.equal(first.json.result, JSON.stringify('typed by the scrape'));
    assert.match(first.json.cdpUrl, /^ws:\/\//);
    assert.match(first.json.liveViewUrl, /^http:\/\//);
    assert.notEqual(first.json.liveViewUrl, first.json.interactiveLiveViewUrl);
    assert.equal(first.json.killed, false);
    assert.equal(first.json.exitCode, 0);

    const cookie = await api.interact(id, { code: "await page.textContent('#cookie')" });
    assert.equal(JSON.parse(cookie.json.result), 'flavour=lemon');

    // State set by one call is read by the next, across languages.
    const set = await api.interact(id, { code: "await page.fill('#q', 'from node'); console.log('set'); 1 + 1" });
    assert.equal(set.json.stdout.trim(), 'set');
    assert.equal(set.json.result, '2');
    const py = await api.interact(id, {
      language: 'python',
      code: "v = await page.input_value('#q')\nprint(v)",
    });
    assert.equal(py.json.success, true, py.text);
    assert.equal(py.json.stdout.trim(), 'from node');
    const bash = await api.interact(id, { language: 'bash', code: 'agent-browser get value "#q"' });
    assert.equal(bash.json.success, true, bash.text);
    assert.match(bash.json.stdout, /from node/);

    // As firecrawl-mcp may send it: DELETE with `content-type: application/json` and no body.
    const stop = await api('DELETE', `/v2/scrape/${id}/interact`, undefined, { 'content-type': 'application/json' });
    assert.equal(stop.status, 200, stop.text);
    assert.equal(stop.json.success, true);
    assert.equal(stop.json.status, 'destroyed');
    assert.ok(Number.isInteger(stop.json.sessionDurationMs) && stop.json.sessionDurationMs > 0);
    assert.equal(stop.json.creditsBilled, Math.ceil((Math.ceil(stop.json.sessionDurationMs / 1000) * 2) / 60));

    const again = await api.interact(id, { code: '1' });
    assert.equal(again.status, 410, again.text);
    assert.equal(again.json.code, 'BROWSER_SESSION_DESTROYED');
    assert.equal((await api.stopInteract(id)).status, 410);

    // The session is in the activity listing (its own job), and its time is billed on it.
    const activity = await api.activity('?endpoint=interact');
    const entry = activity.json.data.find((e: { target: string }) => e.target === `${main}/mutable/interact/form`);
    assert.ok(entry, activity.text);
    const { rows } = await svc.db.query<{ credits: number }>('SELECT credits FROM credit_usage WHERE job_id = $1', [
      entry.id,
    ]);
    assert.equal(rows[0]?.credits, stop.json.creditsBilled);
  });

  test('code errors answer 200 with success false; an endless loop is killed at its timeout and the session lives on', async () => {
    const id = await scrapeId();
    const thrown = await api.interact(id, { code: "throw new Error('boom')" });
    assert.equal(thrown.status, 200);
    assert.equal(thrown.json.success, false);
    assert.match(thrown.json.error, /boom/);
    assert.notEqual(thrown.json.exitCode, 0);

    await api.interact(id, { code: "await page.fill('#q', 'before the loop')" });
    const t0 = Date.now();
    const loop = await api.interact(id, { code: 'while (true) {}', timeout: 2 });
    const took = Date.now() - t0;
    assert.equal(loop.status, 200, loop.text);
    assert.equal(loop.json.killed, true);
    assert.equal(loop.json.success, false);
    assert.ok(took < 4000, `killed after ${took} ms`);
    const after = await api.interact(id, { code: "await page.inputValue('#q')" });
    assert.equal(after.json.success, true, after.text);
    assert.equal(JSON.parse(after.json.result), 'before the loop');
    await api.stopInteract(id);
  });

  test("neither the code nor the session's browser can read the server's files or environment", async () => {
    process.env.GLEANER_CANARY_SECRET = 'canary-7f3a';
    const dataCanary = join(svc.env.DATA_DIR ?? tmpdir(), 'canary.txt');
    await writeFile(dataCanary, 'data-canary-7f3a');
    try {
      const id = await scrapeId();
      const targets = [
        `file://${dataCanary}`,
        `file://${join(process.cwd(), 'package.json')}`,
        'file:///proc/self/environ',
      ];
      // Through the browser (which the code drives): file:// shows nothing of the server.
      const viaBrowser = await api.interact(id, {
        code: `const out = [];
for (const u of ${JSON.stringify(targets)}) {
  try { await page.goto(u); out.push(await page.content()); } catch (e) { out.push('refused: ' + e.message.split('\\n')[0]); }
}
out`,
        timeout: 30,
      });
      assert.equal(viaBrowser.status, 200, viaBrowser.text);
      const pages: string[] = JSON.parse(viaBrowser.json.result);
      assert.equal(pages.length, 3);
      for (const p of pages) {
        assert.doesNotMatch(p, /data-canary-7f3a|canary-7f3a|"name": "gleaner"/);
      }
      // Directly from the sandbox: no such files, no such variable.
      const direct = await api.interact(id, {
        code: `const fs = require('node:fs');
[${JSON.stringify(dataCanary)}, ${JSON.stringify(join(process.cwd(), 'package.json'))}].map((f) => fs.existsSync(f)).concat([process.env.GLEANER_CANARY_SECRET ?? null])`,
      });
      assert.equal(direct.json.result, JSON.stringify([false, false, null]), direct.text);
      await api.stopInteract(id);
    } finally {
      delete process.env.GLEANER_CANARY_SECRET;
    }
  });

  test("a context made over CDP without the guard proxy reaches nothing: the browser's only way out is its guard", async () => {
    // Requests by path: the first page's browser also asks for /favicon.ico, at a time of its own choosing.
    const hits = new Map<string, number>();
    const canary = createServer((req, res) => {
      hits.set(req.url ?? '', (hits.get(req.url ?? '') ?? 0) + 1);
      res.end('<title>canary</title>canary');
    });
    await new Promise<void>((r) => canary.listen(0, '127.0.0.1', () => r()));
    const canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}/`;
    try {
      const id = await scrapeId();
      const first = await api.interact(id, { code: '1' });
      const browser = await chromium.connectOverCDP(first.json.cdpUrl);
      try {
        // Through the session's own context (the guard allows loopback in tests): reached.
        const page = await browser.contexts()[0].newPage();
        await page.goto(`${canaryUrl}guarded`);
        assert.equal(hits.get('/guarded'), 1);
        await page.close();
        // A context told to connect directly: its own network namespace has nothing to reach.
        const cdp = await browser.newBrowserCDPSession();
        const { browserContextId } = (await cdp.send('Target.createBrowserContext', {
          proxyServer: 'direct://',
        } as never)) as { browserContextId: string };
        const { targetId } = (await cdp.send('Target.createTarget', {
          url: `${canaryUrl}direct`,
          browserContextId,
        } as never)) as { targetId: string };
        const deadline = Date.now() + 5000;
        let url = '';
        while (Date.now() < deadline) {
          const { targetInfos } = (await cdp.send('Target.getTargets')) as {
            targetInfos: { targetId: string; url: string; title: string }[];
          };
          const t = targetInfos.find((x) => x.targetId === targetId);
          url = `${t?.url} ${t?.title}`;
          if (t && t.title !== '' && t.title !== `${canaryUrl}direct`) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        assert.equal(hits.get('/direct'), undefined, `the direct context reached the canary (${url})`);
        assert.doesNotMatch(url, / canary$/);
      } finally {
        await browser.close();
      }
      await api.stopInteract(id);
    } finally {
      canary.close();
    }
  });

  test('a standard CDP client connects through cdpUrl and sees the session page', async () => {
    const id = await scrapeId();
    const first = await api.interact(id, { code: "await page.fill('#q', 'over cdp')" });
    const browser = await chromium.connectOverCDP(first.json.cdpUrl);
    try {
      const page = browser.contexts()[0].pages().at(-1)!;
      assert.equal(await page.inputValue('#q'), 'over cdp');
    } finally {
      await browser.close();
    }
    const bad = first.json.cdpUrl.replace(/token=[^&]+/, 'token=wrong').replace(/\/[A-Za-z0-9_-]{22,}$/, '/wrong');
    await assert.rejects(chromium.connectOverCDP(bad, { timeout: 5000 }));
    await api.stopInteract(id);
  });

  test('404 unknown job, 403 another team, 409 zero data retention and expired replay, 429 over the team limit', async () => {
    assert.equal((await api.interact(randomUUID(), { code: '1' })).status, 404);
    assert.equal((await api.interact('not-a-uuid', { code: '1' })).status, 404);
    assert.equal((await api.stopInteract(randomUUID())).status, 404);

    const id = await scrapeId();
    const other = await ensureTeam(svc.db, 'interact-other');
    const otherApi = apiClient(svc, (await createApiKey(svc.db, other.id)).key);
    const forbidden = await otherApi.interact(id, { code: '1' });
    assert.equal(forbidden.status, 403, forbidden.text);
    assert.equal((await otherApi.stopInteract(id)).status, 403);

    const zdr = await scrapeId({ zeroDataRetention: true });
    const refused = await api.interact(zdr, { code: '1' });
    assert.equal(refused.status, 409, refused.text);
    assert.equal(refused.json.code, 'INTERACT_REPLAY_UNAVAILABLE');

    const old = await scrapeId();
    await svc.settled();
    await svc.db.query(`UPDATE scrape_replays SET created_at = now() - interval '2 days' WHERE job_id = $1`, [old]);
    const expired = await api.interact(old, { code: '1' });
    assert.equal(expired.status, 409);
    assert.match(expired.json.error, /no longer be replayed/);

    // Bad input names the field.
    const both = await api.interact(id, { code: '1', prompt: 'x' });
    assert.equal(both.status, 400);
    assert.match(both.text, /prompt/);
    assert.equal((await api.interact(id, { code: '1', timeout: 301 })).status, 400);
    assert.equal((await api.interact(id, {})).status, 400);

    // The team limit is 3 live sessions (a team of its own: other tests' sessions do not count).
    const team = await ensureTeam(svc.db, 'interact-limit');
    const limited = apiClient(svc, (await createApiKey(svc.db, team.id)).key);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await limited.scrape({ url: `${main}/mutable/interact/form`, formats: ['markdown'] } as never);
      ids.push(res.json.data.metadata.scrapeId);
    }
    for (const s of ids.slice(0, 3)) assert.equal((await limited.interact(s, { code: '1' })).status, 200);
    const over = await limited.interact(ids[3], { code: '1' });
    assert.equal(over.status, 429, over.text);
    assert.equal(over.json.code, 'BROWSER_SESSION_LIMIT');
    for (const s of ids.slice(0, 3)) assert.equal((await limited.stopInteract(s)).status, 200);
    assert.equal((await limited.interact(ids[3], { code: '1' })).status, 200);
    await limited.stopInteract(ids[3]);
  });

  test('/v2/browser: a profile is saved when the session ends and loaded by the next; streamWebView false hides the live view', async () => {
    const first = await api.createBrowser({ profile: { name: 'shop' }, streamWebView: false });
    assert.equal(first.status, 200, first.text);
    const set = await api.executeBrowser(first.json.id, {
      language: 'node',
      code: `await page.goto(${JSON.stringify(`${main}/mutable/interact/form`)}); await page.evaluate(() => localStorage.setItem('cart', '3 apples')); 'set'`,
    });
    assert.equal(set.json.success, true, set.text);
    // The CDP URL works, the live view does not (404 as for a wrong token).
    assert.equal((await fetch(first.json.liveViewUrl)).status, 404);
    const ended = await api.deleteBrowser(first.json.id);
    assert.equal(ended.status, 200);
    assert.equal(ended.json.status, 'destroyed');

    const second = await api.createBrowser({ profile: { name: 'shop', saveChanges: false } });
    assert.equal((await fetch(second.json.liveViewUrl)).status, 200);
    const read = await api.executeBrowser(second.json.id, {
      language: 'node',
      code: `await page.goto(${JSON.stringify(`${main}/mutable/interact/form`)}); await page.evaluate(() => localStorage.getItem('cart'))`,
    });
    assert.equal(read.json.result, JSON.stringify('3 apples'), read.text);
    const listed = await api.listBrowsers('?status=active');
    assert.ok(listed.json.sessions.some((x: { id: string }) => x.id === second.json.id));
    assert.ok(!listed.json.sessions.some((x: { id: string }) => x.id === first.json.id));
    await api.deleteBrowser(second.json.id);
    assert.equal((await api.deleteBrowser(second.json.id)).status, 410);
    assert.equal((await api.executeBrowser(randomUUID(), { code: 'true' })).status, 404);
  });

  test('402 when the team cannot pay a minute of browser time, or a live session its time so far', async () => {
    const id = await scrapeId();
    const team = await findTeamByName(svc.db, svc.config.defaultTeam);
    await svc.settled();
    const used = await api.creditsUsed();
    await setCreditQuota(svc.db, team!.id, used + 1);
    try {
      const res = await api.interact(id, { code: '1' });
      assert.equal(res.status, 402, res.text);
      // A live session's calls stop at 402 once its time so far cannot be paid; DELETE still ends it.
      await setCreditQuota(svc.db, team!.id, null);
      const live = await scrapeId();
      assert.equal((await api.interact(live, { code: '1' })).status, 200);
      await setCreditQuota(svc.db, team!.id, await api.creditsUsed());
      const refused = await api.interact(live, { code: '1' });
      assert.equal(refused.status, 402, refused.text);
      assert.equal((await api.stopInteract(live)).status, 200);
    } finally {
      await setCreditQuota(svc.db, team!.id, null);
    }
  });

  test('a prompt without an LLM configured is a 503 naming the setting; language node with a prompt is accepted', async () => {
    const id = await scrapeId();
    const res = await api.interact(id, { prompt: 'Click Go', language: 'node' });
    assert.equal(res.status, 503, res.text);
    assert.match(res.json.error, /OPENAI_BASE_URL|MODEL_NAME|OPENAI_API_KEY/);
    await api.stopInteract(id).catch(() => undefined);
  });
});

describe('interact: idle expiry and a missing browser', () => {
  test('an idle session ends after INTERACT_IDLE_TIMEOUT_SECONDS, billed until then; POST is then 410', async () => {
    const { site, svc, api, main } = await startSiteAndService({ env: { INTERACT_IDLE_TIMEOUT_SECONDS: '1' } });
    try {
      site.mutable.set('/mutable/idle', { html: formPage });
      const res = await api.scrape({ url: `${main}/mutable/idle`, formats: ['markdown'] } as never);
      const id = res.json.data.metadata.scrapeId;
      assert.equal((await api.interact(id, { code: '1' })).status, 200);
      const deadline = Date.now() + 10_000;
      let row: { status: string; end_reason: string; duration_ms: string } | undefined;
      while (Date.now() < deadline) {
        row = (
          await svc.db.query<{ status: string; end_reason: string; duration_ms: string }>(
            'SELECT status, end_reason, duration_ms FROM browser_sessions WHERE scrape_job_id = $1',
            [id],
          )
        ).rows[0];
        if (row?.status === 'destroyed') break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(row?.status, 'destroyed');
      assert.equal(row?.end_reason, 'idle');
      assert.equal((await api.interact(id, { code: '1' })).status, 410);
    } finally {
      await stopSiteAndService(svc, site);
    }
  });

  test('without Chromium: 503 BROWSER_UNAVAILABLE naming the fix', async () => {
    const { site, svc, api, main } = await startSiteAndService({ env: { CHROMIUM_PATH: '/nonexistent/chromium' } });
    try {
      const res = await api.scrape({ url: `${main}/`, formats: ['markdown'] } as never);
      const id = res.json.data.metadata.scrapeId;
      const refused = await api.interact(id, { code: '1' });
      assert.equal(refused.status, 503, refused.text);
      assert.equal(refused.json.code, 'BROWSER_UNAVAILABLE');
      assert.match(refused.json.error, /CHROMIUM_PATH/);
    } finally {
      await stopSiteAndService(svc, site);
    }
  });
});

describe('interact: prompt mode, failures of the machinery, Postgres', () => {
  test('a prompt with a scripted OpenAI-compatible server clicks through a two-step flow', async () => {
    const fake = await startFakeLlm();
    const { site, svc, api, main } = await startSiteAndService({
      env: { OPENAI_BASE_URL: fake.baseUrl, MODEL_NAME: 'fake-model', LLM_MAX_RETRIES: '0' },
    });
    try {
      site.mutable.set('/mutable/flow/1', {
        html: '<!DOCTYPE html><html><head><title>Step 1</title></head><body><main><h1>Step 1</h1><a href="/mutable/flow/2">Continue</a></main></body></html>',
      });
      site.mutable.set('/mutable/flow/2', {
        html: '<!DOCTYPE html><html><head><title>Step 2</title></head><body><main><h1>Step 2</h1><p>Your code is K-4471.</p></main></body></html>',
      });
      const res = await api.scrape({ url: `${main}/mutable/flow/1`, formats: ['markdown'] } as never);
      const id = res.json.data.metadata.scrapeId;
      const lastTool = (body: any) => body.messages.filter((m: any) => m.role === 'tool').at(-1)?.content ?? '';
      fake.script(
        { toolCalls: [{ name: 'snapshot', arguments: {} }] },
        {
          from: (body) => {
            const ref = /link "Continue"[^\n]*\[ref=((?:f\d+)?e\d+)\]/.exec(lastTool(body))?.[1];
            assert.ok(ref, lastTool(body));
            return { toolCalls: [{ name: 'click', arguments: { ref } }] };
          },
        },
        {
          from: (body) => {
            assert.match(lastTool(body), /K-4471/);
            return { toolCalls: [{ name: 'finish', arguments: { answer: 'The code is K-4471.' } }] };
          },
        },
      );
      const answer = await api.interact(id, {
        prompt: 'Continue to the next step and tell me the code.',
        language: 'node',
      });
      assert.equal(answer.status, 200, answer.text);
      assert.equal(answer.json.success, true, answer.text);
      assert.equal(answer.json.output, 'The code is K-4471.');
      assert.match(answer.json.result, /Step 2/);
      // The live page is where the agent left it.
      const url = await api.interact(id, { code: 'page.url()' });
      assert.equal(JSON.parse(url.json.result), `${main}/mutable/flow/2`);
      assert.equal(fake.pending(), 0);
      await api.stopInteract(id);
    } finally {
      await stopSiteAndService(svc, site);
      await fake.close();
    }
  });

  test('the browser dying during a call is a 502; the session is then destroyed (410)', async () => {
    const { site, svc, api, main } = await startSiteAndService();
    try {
      site.mutable.set('/mutable/die', { html: formPage });
      const res = await api.scrape({ url: `${main}/mutable/die`, formats: ['markdown'] } as never);
      const id = res.json.data.metadata.scrapeId;
      assert.equal((await api.interact(id, { code: '1' })).status, 200);
      // The session's Chromium (this process's only session; a spare may die with it): its main
      // process, under this test process, is killed while a call waits on the page.
      const pids = sessionChromiums();
      assert.ok(pids.length >= 1);
      const call = api.interact(id, { code: 'await new Promise((r) => setTimeout(r, 1500)); await page.title()' });
      await new Promise((r) => setTimeout(r, 500));
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      const died = await call;
      assert.equal(died.status, 502, died.text);
      assert.equal(died.json.code, 'INTERACT_EXECUTION_FAILED');
      assert.equal((await api.interact(id, { code: '1' })).status, 410);
    } finally {
      await stopSiteAndService(svc, site);
    }
  });

  for (const store of storeKinds.filter((s) => s === 'postgres')) {
    test(`on ${store}: scrape, interact, stop, billed and listed`, async () => {
      const { site, svc, api, main } = await startSiteAndService({ store });
      try {
        site.mutable.set('/mutable/pg', { html: formPage });
        const res = await api.scrape({ url: `${main}/mutable/pg`, formats: ['markdown'] } as never);
        const id = res.json.data.metadata.scrapeId;
        const first = await api.interact(id, { code: "await page.fill('#q', 'pg'); await page.inputValue('#q')" });
        assert.equal(first.json.result, JSON.stringify('pg'), first.text);
        const stop = await api.stopInteract(id);
        assert.equal(stop.status, 200);
        const activity = await api.activity('?endpoint=interact');
        const entry = activity.json.data.find((e: any) => e.endpoint === 'interact');
        assert.ok(entry, activity.text);
        assert.equal(entry.target, `${main}/mutable/pg`);
        const { rows } = await svc.db.query<{ credits: number }>('SELECT credits FROM credit_usage WHERE job_id = $1', [
          entry.id,
        ]);
        assert.equal(rows[0]?.credits, stop.json.creditsBilled);
      } finally {
        await stopSiteAndService(svc, site);
      }
    });
  }
});

describe('interact: several API processes on one Postgres', () => {
  for (const store of storeKinds.filter((s) => s === 'postgres')) {
    test('a session lives in the process that opened it: another answers 503 ELSEWHERE; a stopped process ends its sessions (then 410)', async () => {
      const { site, svc: a, api: apiA, main } = await startSiteAndService({ store });
      let b: TestService | undefined;
      try {
        b = await startTestService({ store, shareWith: a });
        const apiB = apiClient(b, a.key);
        site.mutable.set('/mutable/two', { html: formPage });
        const res = await apiA.scrape({ url: `${main}/mutable/two`, formats: ['markdown'] } as never);
        const id = res.json.data.metadata.scrapeId;
        assert.equal((await apiA.interact(id, { code: '1' })).status, 200);
        const elsewhere = await apiB.interact(id, { code: '1' });
        assert.equal(elsewhere.status, 503, elsewhere.text);
        assert.equal(elsewhere.json.code, 'BROWSER_SESSION_ELSEWHERE');
        assert.equal((await apiB.stopInteract(id)).status, 503);
        // A's graceful stop ends (and bills) its sessions; B then sees the session destroyed.
        await a.stop();
        const gone = await apiB.interact(id, { code: '1' });
        assert.equal(gone.status, 410, gone.text);
        const { rows } = await b.db.query<{ end_reason: string }>(
          'SELECT end_reason FROM browser_sessions WHERE scrape_job_id = $1',
          [id],
        );
        assert.equal(rows[0].end_reason, 'shutdown');
      } finally {
        await b?.destroy();
        await stopSiteAndService(a, site);
      }
    });
  }
});
