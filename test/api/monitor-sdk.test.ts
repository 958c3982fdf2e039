// Existing clients against monitors, unmodified: the official JS SDK (@mendable/firecrawl-js 4.42.0,
// its defaults) through every monitor call and a search target read through its types, and the requests Firecrawl's MCP server sends (a monitor
// from `pages` + goal with schedule text, a run with no body and no content type).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl, { type MonitorSearchTarget } from '@mendable/firecrawl-js';
import type { FixtureSite } from '../fixtures/site/index.ts';
import type { Api } from '../helpers/api.ts';
import { type TestService, startSiteAndService, stopSiteAndService } from '../helpers/service.ts';
import '../helpers/loopback-dns.ts';

const page = (title: string, text: string) =>
  `<!DOCTYPE html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${text}</p></main></body></html>`;

describe('monitors with existing clients', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: Api;
  let main: string;
  let fc: Firecrawl;

  before(async () => {
    ({ site, svc, api, main } = await startSiteAndService());
    fc = new Firecrawl({ apiKey: svc.key, apiUrl: svc.url });
  });
  after(() => stopSiteAndService(svc, site));

  test('the official SDK: create, list, get, update, run, list checks, get a check (paginated), delete', async () => {
    const urls = Array.from({ length: 5 }, (_, i) => `${main}/mutable/sdk/${i}`);
    urls.forEach((u, i) => site.mutable.set(new URL(u).pathname, { html: page(`SDK ${i}`, `Version one of ${i}.`) }));
    const m = await fc.createMonitor({
      name: 'sdk monitor',
      schedule: { text: 'hourly' },
      targets: [{ type: 'scrape', urls }],
      goal: 'text changes',
    });
    assert.equal(m.schedule.cron, '0 * * * *');
    assert.equal(m.schedule.timezone, 'UTC');
    assert.ok(m.targets[0].id);
    assert.ok((await fc.listMonitors({ limit: 10 })).some((x) => x.id === m.id));
    assert.equal((await fc.getMonitor(m.id)).name, 'sdk monitor');
    const updated = await fc.updateMonitor(m.id, { name: 'renamed', retentionDays: 7 });
    assert.equal(updated.name, 'renamed');
    assert.equal(updated.retentionDays, 7);

    const queued = await fc.runMonitor(m.id);
    assert.equal(queued.status, 'queued');
    await api.waitForCheck(m.id, queued.id);
    site.mutable.set(new URL(urls[2]).pathname, { html: page('SDK 2', 'Version two of 2.') });
    const second = await fc.runMonitor(m.id);
    await api.waitForCheck(m.id, second.id);

    const checks = await fc.listMonitorChecks(m.id, { limit: 10 });
    assert.deepEqual(
      checks.map((c) => c.id),
      [second.id, queued.id],
    );
    assert.equal(checks[0].status, 'completed');
    assert.equal(checks[0].summary.changed, 1);
    // autoPaginate (default) follows `next` to the end: every page once.
    const detail = await fc.getMonitorCheck(m.id, second.id, { limit: 2 });
    assert.equal(detail.pages.length, 5);
    assert.equal(new Set(detail.pages.map((p) => p.url)).size, 5);
    assert.equal(detail.next, null);
    const changed = detail.pages.find((p) => p.status === 'changed')!;
    assert.equal(changed.url, urls[2]);
    assert.match(changed.diff?.text ?? '', /Version two/);
    const one = await fc.getMonitorCheck(m.id, second.id, { limit: 2, autoPaginate: false });
    assert.equal(one.pages.length, 2);
    assert.ok(one.next);
    const onlyChanged = await fc.getMonitorCheck(m.id, second.id, { status: 'changed' });
    assert.deepEqual(
      onlyChanged.pages.map((p) => p.url),
      [urls[2]],
    );

    assert.equal(await fc.deleteMonitor(m.id), true);
    await assert.rejects(fc.getMonitor(m.id), (err: { status?: number; message?: string }) => {
      assert.equal(err.status, 404, String(err.message));
      return true;
    });
  });

  test('the official SDK: a search target, its check and target result as its types describe them', async () => {
    site.mutable.set('/mutable/sdk/search', { html: page('Nimbus pricing', 'Nimbus costs 5 euros.') });
    const scraped = await api.scrape({ url: `${main}/mutable/sdk/search`, formats: ['markdown'], maxAge: 0 });
    assert.equal(scraped.status, 200, scraped.text);
    const target: MonitorSearchTarget = { type: 'search', queries: ['nimbus'], searchWindow: '7d', maxResults: 3 };
    const m = await fc.createMonitor({
      name: 'sdk search',
      schedule: { text: 'hourly' },
      targets: [target],
      goal: 'Nimbus pricing',
    });
    assert.equal((m.targets[0] as MonitorSearchTarget).queries[0], 'nimbus');
    const queued = await fc.runMonitor(m.id);
    await api.waitForCheck(m.id, queued.id);
    const detail = await fc.getMonitorCheck(m.id, queued.id);
    assert.equal(detail.status, 'completed');
    assert.equal(detail.summary.new, 1);
    const result = detail.targetResults?.[0];
    assert.ok(result && result.type === 'search', JSON.stringify(detail.targetResults));
    assert.equal(result.searchCompleted, true);
    assert.equal(result.resultCount, 1);
    assert.equal(result.searchCredits, 2);
    assert.equal(result.resultsJudged, 1);
    assert.equal(result.matches, 1);
    assert.equal(typeof result.summary, 'string');
    const hit = detail.pages[0];
    assert.equal(hit.url, `${main}/mutable/sdk/search`);
    assert.equal(hit.status, 'new');
    assert.equal(hit.judgment?.meaningful, true);
    assert.deepEqual(hit.snapshot?.json, { title: 'Nimbus pricing', description: '' });
    assert.equal(await fc.deleteMonitor(m.id), true);
  });

  test("the MCP server's requests: pages + goal, schedule text, a run with no body, checks with error counts", async () => {
    site.mutable.set('/mutable/mcp', { html: page('MCP', 'Watched.') });
    const create = await fetch(`${svc.url}/v2/monitor`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.key}`, 'content-type': 'application/json', 'x-origin': 'mcp-fastmcp' },
      body: JSON.stringify({
        name: `Monitor ${main}/mutable/mcp`,
        schedule: { text: 'every 30 minutes', timezone: 'UTC' },
        goal: 'Tell me when the text changes.',
        targets: [{ type: 'scrape', urls: [`${main}/mutable/mcp`] }],
        webhook: { url: 'http://127.0.0.1:9/hook', events: ['monitor.page', 'monitor.check.completed'] },
      }),
    });
    assert.equal(create.status, 200);
    const m = ((await create.json()) as { data: { id: string; judgeEnabled: boolean } }).data;
    assert.equal(m.judgeEnabled, true);
    const run = await fetch(`${svc.url}/v2/monitor/${m.id}/run`, {
      method: 'POST',
      headers: { authorization: `Bearer ${svc.key}`, 'x-origin': 'mcp-fastmcp' },
    });
    assert.equal(run.status, 200, await run.clone().text());
    const check = ((await run.json()) as { data: { id: string } }).data;
    const done = await api.waitForCheck(m.id, check.id);
    assert.equal(done.summary.error, 0);
    assert.equal(done.error, null);
    const list = await api.monitorChecks(m.id, '?limit=10&status=completed');
    assert.equal(list.status, 200);
    assert.equal(list.json.data[0].summary.error, 0);
    await api.deleteMonitor(m.id);
  });
});
