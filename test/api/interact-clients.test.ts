// Existing clients against browser sessions, unmodified: the official JS SDK (@mendable/firecrawl-js:
// scrape → interact → stopInteraction; browser → browserExecute → listBrowsers → deleteBrowser) and
// Firecrawl's MCP server (npm firecrawl-mcp over stdio: firecrawl_interact from a `url`, which
// scrapes then interacts with the returned scrapeId, and firecrawl_interact_stop, which DELETEs with
// `content-type: application/json` and no body).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import type { FixtureSite } from '../fixtures/site/index.ts';
import type { Api } from '../helpers/api.ts';
import { type McpStdioClient, startMcpStdio } from '../helpers/mcp-stdio.ts';
import { type TestService, startSiteAndService, stopSiteAndService } from '../helpers/service.ts';
import '../helpers/loopback-dns.ts';

const formPage = `<!DOCTYPE html><html><head><title>Client form</title></head><body><main><h1>Client form</h1>
<input id="q"><p id="out">nothing yet</p></main></body></html>`;

function mcpServerBin(): string {
  const manifest = createRequire(import.meta.url).resolve('firecrawl-mcp/package.json');
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  return join(dirname(manifest), pkg.bin['firecrawl-mcp']);
}

describe('browser sessions with existing clients', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: Api;
  let main: string;
  let fc: Firecrawl;
  let mcp: McpStdioClient | undefined;
  let cwd: string | undefined;
  const http: string[] = [];

  before(async () => {
    ({ site, svc, api, main } = await startSiteAndService());
    site.mutable.set('/mutable/clients/form', { html: formPage });
    fc = new Firecrawl({ apiKey: svc.key, apiUrl: svc.url });
    svc.app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (req.headers['x-origin'] !== 'mcp-fastmcp' && !String(req.url).includes('/interact')) return;
      // rawHeaders: the route's hook drops a bodiless request's content-type before this runs.
      const at = req.rawHeaders.findIndex((h, i) => i % 2 === 0 && h.toLowerCase() === 'content-type');
      const ct = at >= 0 ? req.rawHeaders[at + 1] : 'none';
      res.on('finish', () => http.push(`${req.method} ${req.url} (${ct}) -> ${res.statusCode}`));
    });
    cwd = await mkdtemp(join(tmpdir(), 'gleaner-mcp-'));
    mcp = await startMcpStdio(process.execPath, [mcpServerBin()], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: cwd, FIRECRAWL_API_URL: svc.url, FIRECRAWL_API_KEY: svc.key },
    });
  });
  after(async () => {
    await mcp?.close();
    await stopSiteAndService(svc, site);
    if (cwd) await rm(cwd, { recursive: true, force: true });
  });

  test('SDK: scrape, interact (node, then python and bash on the same page), stopInteraction', async () => {
    const doc = await fc.scrape(`${main}/mutable/clients/form`, { formats: ['markdown'] });
    const scrapeId = doc.metadata!.scrapeId!;
    const set = await fc.interact(scrapeId, { code: "await page.fill('#q', 'sdk'); await page.inputValue('#q')" });
    assert.equal(set.success, true, JSON.stringify(set));
    assert.equal(set.result, JSON.stringify('sdk'));
    assert.ok(set.cdpUrl && set.liveViewUrl && set.interactiveLiveViewUrl);
    const py = await fc.interact(scrapeId, { code: "print(await page.input_value('#q'))", language: 'python' });
    assert.equal(py.stdout?.trim(), 'sdk', JSON.stringify(py));
    const stopped = await fc.stopInteraction(scrapeId);
    assert.equal(stopped.success, true);
    assert.equal(stopped.status, 'destroyed');
    assert.equal(typeof stopped.sessionDurationMs, 'number');
    assert.equal(typeof stopped.creditsBilled, 'number');
    await assert.rejects(fc.interact(scrapeId, { code: '1' }), /410|destroyed|stopped/i);
  });

  test('SDK: browser, browserExecute (bash default and node), listBrowsers, deleteBrowser', async () => {
    const created = await fc.browser({ ttl: 120, activityTtl: 60 });
    assert.equal(created.success, true, JSON.stringify(created));
    assert.ok(created.id && created.cdpUrl && created.expiresAt);
    const opened = await fc.browserExecute(created.id!, {
      code: `agent-browser open ${main}/mutable/clients/form && agent-browser get title`,
    });
    assert.equal(opened.success, true, JSON.stringify(opened));
    assert.match(opened.stdout ?? '', /Client form/);
    const node = await fc.browserExecute(created.id!, { code: 'await page.title()', language: 'node' });
    assert.equal(node.result, JSON.stringify('Client form'));
    const active = await fc.listBrowsers({ status: 'active' });
    assert.ok(active.sessions?.some((s) => s.id === created.id && s.status === 'active'));
    const deleted = await fc.deleteBrowser(created.id!);
    assert.equal(deleted.success, true);
    const destroyed = await fc.listBrowsers({ status: 'destroyed' });
    assert.ok(destroyed.sessions?.some((s) => s.id === created.id));
    assert.equal((await api.executeBrowser(created.id!, { code: 'true' })).status, 410);
  });

  test('MCP: firecrawl_interact from a url (scrape, then interact), again by scrapeId, then firecrawl_interact_stop', async () => {
    const url = `${main}/mutable/clients/form`;
    const first = await mcp!.callTool('firecrawl_interact', {
      url,
      code: "await page.fill('#q', 'mcp'); await page.inputValue('#q')",
      language: 'node',
    });
    assert.notEqual(first.isError, true, `${first.content[0]?.text}\n${http.join('\n')}`);
    const answer = JSON.parse(first.content[0].text!);
    assert.equal(answer.success, true, first.content[0].text);
    assert.equal(answer.result, JSON.stringify('mcp'));
    assert.ok(answer.scrapeId);
    const again = await mcp!.callTool('firecrawl_interact', {
      scrapeId: answer.scrapeId,
      code: "agent-browser get value '#q'",
      language: 'bash',
    });
    assert.match(JSON.parse(again.content[0].text!).stdout, /mcp/);
    const stop = await mcp!.callTool('firecrawl_interact_stop', { scrapeId: answer.scrapeId });
    assert.notEqual(stop.isError, true, `${stop.content[0]?.text}\n${http.join('\n')}`);
    const stopped = JSON.parse(stop.content[0].text!);
    assert.equal(stopped.success, true, stop.content[0].text);
    assert.ok(
      http.some((l) => l.startsWith(`DELETE /v2/scrape/${answer.scrapeId}/interact (`) && l.endsWith('-> 200')),
      http.join('\n'),
    );
  });
});
