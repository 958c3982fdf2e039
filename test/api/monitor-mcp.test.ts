// Firecrawl's MCP server (npm firecrawl-mcp, unmodified: its bin run by this Node over stdio, pointed at
// the real service with FIRECRAWL_API_URL and FIRECRAWL_API_KEY) through its monitor tools: monitors
// from `page`/`pages` + `goal` on its "every 30 minutes" schedule, runs, checks and a check's pages
// read back through the tools, update and delete; a `queries` + `goal` (search) monitor over the own index,
// its results new, then changed and new and notified when relevant.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { FixtureSite } from '../fixtures/site/index.ts';
import type { Api } from '../helpers/api.ts';
import { type McpStdioClient, type McpToolResult, startMcpStdio } from '../helpers/mcp-stdio.ts';
import { type TestService, startSiteAndService, stopSiteAndService } from '../helpers/service.ts';
import { type WebhookReceiver, startWebhookReceiver } from '../helpers/webhook-receiver.ts';
import '../helpers/loopback-dns.ts';

const page = (title: string, text: string) =>
  `<!DOCTYPE html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>`;

/** The installed firecrawl-mcp's version and the path of its bin. */
function mcpServerBin(): { version: string; bin: string } {
  const manifest = createRequire(import.meta.url).resolve('firecrawl-mcp/package.json');
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { version: string; bin: Record<string, string> };
  return { version: pkg.version, bin: join(dirname(manifest), pkg.bin['firecrawl-mcp']) };
}

const monitorTools = [
  'firecrawl_monitor_create',
  'firecrawl_monitor_list',
  'firecrawl_monitor_get',
  'firecrawl_monitor_update',
  'firecrawl_monitor_delete',
  'firecrawl_monitor_run',
  'firecrawl_monitor_checks',
  'firecrawl_monitor_check',
];

describe('monitors through Firecrawl MCP server', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: Api;
  let main: string;
  let receiver: WebhookReceiver;
  let mcp: McpStdioClient | undefined;
  let cwd: string | undefined;
  /** Requests the MCP server sent the service (X-Origin: mcp-fastmcp): "METHOD url -> status (auth ok?)". */
  const http: string[] = [];

  before(async () => {
    ({ site, svc, api, main } = await startSiteAndService());
    receiver = await startWebhookReceiver();
    svc.app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (req.headers['x-origin'] !== 'mcp-fastmcp') return;
      const auth = req.headers.authorization === `Bearer ${svc.key}` ? 'key' : `auth ${req.headers.authorization}`;
      res.on('finish', () => http.push(`${req.method} ${req.url} -> ${res.statusCode} (${auth})`));
    });
    // Its own empty directory: the server loads a .env from its working directory.
    cwd = await mkdtemp(join(tmpdir(), 'gleaner-mcp-'));
    mcp = await startMcpStdio(process.execPath, [mcpServerBin().bin], {
      cwd,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: cwd,
        FIRECRAWL_API_URL: svc.url,
        FIRECRAWL_API_KEY: svc.key,
      },
    });
  });
  after(async () => {
    await mcp?.close();
    await stopSiteAndService(svc, site);
    await receiver?.close();
    if (cwd) await rm(cwd, { recursive: true, force: true });
  });

  const report = () => `\nHTTP from the MCP server:\n${http.join('\n')}\nMCP traffic:\n${mcp!.recent()}`;

  /** Calls a tool that must succeed; its answer (the service's JSON, which the tool relays as text). */
  async function call(name: string, args: Record<string, unknown>): Promise<any> {
    const result = await mcp!.callTool(name, args);
    assert.notEqual(result.isError, true, `${name} failed: ${result.content[0]?.text}${report()}`);
    const answer = JSON.parse(result.content[0].text!);
    assert.equal(answer.success, true, report());
    return answer;
  }

  /** Calls a tool that must fail; its error text. */
  async function fails(name: string, args: Record<string, unknown>): Promise<string> {
    const result: McpToolResult = await mcp!.callTool(name, args);
    assert.equal(result.isError, true, `${name} should have failed: ${result.content[0]?.text}`);
    return result.content[0].text!;
  }

  /** Reads the check through firecrawl_monitor_check until it is no longer queued or running. */
  async function checkDone(id: string, checkId: string): Promise<any> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const answer = await call('firecrawl_monitor_check', { id, checkId });
      if (!['queued', 'running'].includes(answer.data.status)) return answer;
      if (Date.now() > deadline) assert.fail(`check ${checkId} still ${answer.data.status}${report()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  test('the server starts against the service and lists its monitor tools', async () => {
    const { version } = mcpServerBin();
    assert.equal(mcp!.initialized.serverInfo.name, 'firecrawl-fastmcp');
    assert.equal(mcp!.initialized.serverInfo.version, version);
    const tools = await mcp!.listTools();
    const names = tools.map((t) => t.name);
    for (const name of monitorTools) assert.ok(names.includes(name), `${name} missing from ${names}`);
    const create = tools.find((t) => t.name === 'firecrawl_monitor_create')!;
    for (const arg of ['page', 'pages', 'queries', 'goal', 'scheduleText'])
      assert.ok(create.inputSchema?.properties?.[arg], `create takes ${arg}`);
  });

  test('page + goal: created every 30 minutes, listed, run, its checks and the changed page read back', async () => {
    const url = `${main}/mutable/mcp/one`;
    site.mutable.set('/mutable/mcp/one', { html: page('Plans', 'The Pro plan costs 20 euros.') });
    const goal = 'Tell me when the price of a plan changes.';
    const created = await call('firecrawl_monitor_create', { page: url, goal });
    const m = created.data;
    assert.equal(m.name, `Monitor ${url}`);
    assert.deepEqual(m.schedule, { cron: '*/30 * * * *', timezone: 'UTC', text: 'every 30 minutes' });
    assert.equal(m.goal, goal);
    assert.equal(m.judgeEnabled, true, 'judging is on with a goal');
    assert.equal(m.status, 'active');
    assert.equal(m.targets.length, 1);
    assert.equal(m.targets[0].type, 'scrape');
    assert.deepEqual(m.targets[0].urls, [url]);

    // The service has it, as any client sees it.
    const listed = await api.listMonitors();
    assert.equal(listed.status, 200, listed.text);
    assert.ok(listed.json.data.some((x: { id: string }) => x.id === m.id));
    assert.ok((await call('firecrawl_monitor_list', { limit: 10 })).data.some((x: { id: string }) => x.id === m.id));
    assert.equal((await call('firecrawl_monitor_get', { id: m.id })).data.name, m.name);

    const run1 = (await call('firecrawl_monitor_run', { id: m.id })).data;
    assert.equal(run1.status, 'queued');
    assert.equal(run1.monitorId, m.id);
    const first = (await checkDone(m.id, run1.id)).data;
    assert.equal(first.status, 'completed', JSON.stringify(first));
    assert.deepEqual(first.summary, { totalPages: 1, same: 0, changed: 0, new: 1, removed: 0, error: 0 });
    assert.equal(first.pages[0].url, url);
    assert.equal(first.pages[0].status, 'new');

    site.mutable.set('/mutable/mcp/one', { html: page('Plans', 'The Pro plan costs 25 euros.') });
    const run2 = (await call('firecrawl_monitor_run', { id: m.id })).data;
    const second = await checkDone(m.id, run2.id);
    assert.equal(second.data.status, 'completed');
    assert.deepEqual(second.data.summary, { totalPages: 1, same: 0, changed: 1, new: 0, removed: 0, error: 0 });

    const checks = await call('firecrawl_monitor_checks', { id: m.id, limit: 10, status: 'completed' });
    assert.deepEqual(
      checks.data.map((c: { id: string }) => c.id),
      [run2.id, run1.id],
    );
    assert.equal(checks.data[0].summary.changed, 1);

    const changed = await call('firecrawl_monitor_check', { id: m.id, checkId: run2.id, pageStatus: 'changed' });
    assert.equal(changed.next, null);
    assert.equal(changed.data.pages.length, 1);
    const p = changed.data.pages[0];
    assert.equal(p.url, url);
    assert.equal(p.status, 'changed');
    assert.match(p.diff.text, /^-.*20 euros/m);
    assert.match(p.diff.text, /^\+.*25 euros/m);
    assert.ok(Array.isArray(p.diff.json.files));
    assert.equal(typeof p.judgment.meaningful, 'boolean', JSON.stringify(p.judgment));
    assert.ok(p.judgment.reason);
    const none = await call('firecrawl_monitor_check', { id: m.id, checkId: run2.id, pageStatus: 'removed' });
    assert.deepEqual(none.data.pages, []);

    assert.deepEqual((await call('firecrawl_monitor_delete', { id: m.id })).success, true);
    // The service's 404 message is what the tool reports.
    assert.match(await fails('firecrawl_monitor_get', { id: m.id }), new RegExp(`No monitor ${m.id}`));
    assert.ok(http.includes(`GET /v2/monitor/${m.id} -> 404 (key)`), http.join('\n'));
  });

  test('pages + goal with its timezone, email and webhook: checked, paged through, paused, deleted', async () => {
    const urls = ['a', 'b', 'c'].map((n) => `${main}/mutable/mcp/many/${n}`);
    urls.forEach((u, i) => site.mutable.set(new URL(u).pathname, { html: page(`Page ${i}`, `Text ${i}.`) }));
    const m = (
      await call('firecrawl_monitor_create', {
        pages: urls,
        goal: 'Any change of text.',
        name: 'three pages',
        scheduleText: 'every 30 minutes',
        timezone: 'Europe/Paris',
        email: 'ops@example.com',
        includeDiffs: true,
        webhookUrl: receiver.url,
      })
    ).data;
    assert.equal(m.name, 'three pages');
    assert.deepEqual(m.schedule, { cron: '*/30 * * * *', timezone: 'Europe/Paris', text: 'every 30 minutes' });
    assert.deepEqual(m.targets[0].urls, urls);
    assert.equal(m.webhook.url, receiver.url);
    assert.deepEqual(m.webhook.events, ['monitor.page', 'monitor.check.completed']);
    assert.deepEqual(m.notification.email.recipients, ['ops@example.com']);

    const run = (await call('firecrawl_monitor_run', { id: m.id })).data;
    const done = (await checkDone(m.id, run.id)).data;
    assert.equal(done.status, 'completed');
    assert.equal(done.summary.new, 3);
    await receiver.until('monitor.check.completed', () =>
      receiver.received.some((d) => d.type === 'monitor.check.completed' && d.body.monitorId === m.id),
    );

    // One page at a time: `next` is set until the last, and `skip` walks them all once.
    const seen: string[] = [];
    for (let skip = 0; skip < 3; skip++) {
      const one = await call('firecrawl_monitor_check', { id: m.id, checkId: run.id, limit: 1, skip });
      assert.equal(one.data.pages.length, 1);
      assert.equal(one.next === null, skip === 2, `next at skip ${skip}: ${one.next}`);
      seen.push(one.data.pages[0].url);
    }
    assert.deepEqual(seen.sort(), [...urls].sort());

    const paused = await call('firecrawl_monitor_update', { id: m.id, body: { status: 'paused' } });
    assert.equal(paused.data.status, 'paused');
    assert.match(await fails('firecrawl_monitor_run', { id: m.id }), /paused/i);
    assert.equal((await call('firecrawl_monitor_delete', { id: m.id })).success, true);
    assert.equal((await api.getMonitor(m.id)).status, 404);
  });

  test('queries + goal (a search monitor): created, run, its results read back, then new and changed ones', async () => {
    /** A fixture page scraped through the service: in the team's own index, which search targets search. */
    const publish = async (path: string, title: string, text: string) => {
      site.mutable.set(path, { html: page(title, text) });
      const res = await api.scrape({ url: `${main}${path}`, formats: ['markdown'], maxAge: 0 });
      assert.equal(res.status, 200, res.text);
      return `${main}${path}`;
    };
    const notes = await publish('/mutable/mcp/search/notes', 'Gleaner release notes', 'Version 1 is out.');
    const goal = 'Tell me about new Gleaner releases.';
    const created = await call('firecrawl_monitor_create', {
      queries: ['gleaner release notes', 'gleaner changelog'],
      goal,
      searchWindow: '24h',
      maxResults: 5,
      webhookUrl: receiver.url,
    });
    const m = created.data;
    assert.equal(m.name, 'Monitor gleaner release notes');
    assert.equal(m.goal, goal);
    assert.equal(m.judgeEnabled, true);
    assert.deepEqual(m.schedule, { cron: '*/30 * * * *', timezone: 'UTC', text: 'every 30 minutes' });
    assert.equal(m.targets.length, 1);
    assert.ok(m.targets[0].id);
    assert.deepEqual(
      { ...m.targets[0], id: undefined },
      {
        id: undefined,
        type: 'search',
        queries: ['gleaner release notes', 'gleaner changelog'],
        searchWindow: '24h',
        maxResults: 5,
      },
    );
    assert.ok(
      http.some((h) => h.startsWith('POST /v2/monitor -> 200')),
      `the MCP server's request was accepted:\n${http.join('\n')}`,
    );

    const run1 = (await call('firecrawl_monitor_run', { id: m.id })).data;
    const first = (await checkDone(m.id, run1.id)).data;
    assert.equal(first.status, 'completed', JSON.stringify(first));
    assert.deepEqual(first.summary, { totalPages: 1, same: 0, changed: 0, new: 1, removed: 0, error: 0 });
    assert.equal(first.pages[0].url, notes);
    assert.equal(first.pages[0].metadata.title, 'Gleaner release notes');
    assert.equal(first.targetResults[0].type, 'search');
    assert.equal(first.targetResults[0].resultCount, 1);

    const changelog = await publish('/mutable/mcp/search/changelog', 'Gleaner changelog', 'Version 2 is out.');
    await publish('/mutable/mcp/search/notes', 'Gleaner release notes: version 2', 'Version 2 is out.');
    const run2 = (await call('firecrawl_monitor_run', { id: m.id })).data;
    await checkDone(m.id, run2.id);
    const changed = await call('firecrawl_monitor_check', { id: m.id, checkId: run2.id, pageStatus: 'changed' });
    assert.deepEqual(
      changed.data.pages.map((p: { url: string }) => p.url),
      [notes],
    );
    const diff = changed.data.pages[0].diff;
    assert.deepEqual(diff.json.title, {
      previous: 'Gleaner release notes',
      current: 'Gleaner release notes: version 2',
    });
    assert.equal(changed.data.pages[0].judgment.meaningful, true, JSON.stringify(changed.data.pages[0].judgment));
    const fresh = await call('firecrawl_monitor_check', { id: m.id, checkId: run2.id, pageStatus: 'new' });
    assert.deepEqual(
      fresh.data.pages.map((p: { url: string }) => p.url),
      [changelog],
    );
    await receiver.until('the new changelog notified', () =>
      receiver.received.some(
        (d) => d.type === 'monitor.page' && d.body.checkId === run2.id && d.body.data.url === changelog,
      ),
    );
    assert.equal((await call('firecrawl_monitor_delete', { id: m.id })).success, true);
  });

  test('every request the MCP server sent carried the key', () => {
    assert.ok(http.length > 0);
    for (const h of http) assert.match(h, /\(key\)$/);
  });
});
