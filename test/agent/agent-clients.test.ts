// Existing clients against agents and search, unmodified: the official JS SDK (@mendable/firecrawl-js:
// startAgent, getAgentStatus, agent (start and poll), listAgents, cancelAgent) and Firecrawl's MCP
// server (npm firecrawl-mcp over stdio: firecrawl_search, firecrawl_agent, firecrawl_agent_status),
// with the scripted LLM planning.
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
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.ts';
import { type McpStdioClient, startMcpStdio } from '../helpers/mcp-stdio.ts';
import { type TestService, startSiteAndService, stopSiteAndService } from '../helpers/service.ts';
import { addZephyrPages, zephyr } from './helpers.ts';
import '../helpers/loopback-dns.ts';

function mcpServerBin(): string {
  const manifest = createRequire(import.meta.url).resolve('firecrawl-mcp/package.json');
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  return join(dirname(manifest), pkg.bin['firecrawl-mcp']);
}

const schema = {
  type: 'object',
  properties: { founded: { type: 'integer' }, founder: { type: 'string' } },
  required: ['founded', 'founder'],
};

describe('agents and search with existing clients', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: Api;
  let main: string;
  let llm: FakeLlm;
  let fc: Firecrawl;
  let mcp: McpStdioClient | undefined;
  let cwd: string | undefined;
  const http: string[] = [];

  before(async () => {
    llm = await startFakeLlm();
    ({ site, svc, api, main } = await startSiteAndService({
      env: { OPENAI_BASE_URL: llm.baseUrl, MODEL_NAME: 'fake-model', LLM_MAX_RETRIES: '0' },
    }));
    addZephyrPages(site);
    for (const path of [zephyr.history, zephyr.people]) {
      const res = await api.scrape({ url: `${main}${path}`, formats: ['markdown'] });
      assert.equal(res.status, 200, res.text);
    }
    await svc.settled();
    fc = new Firecrawl({ apiKey: svc.key, apiUrl: svc.url });
    svc.app.server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      if (req.headers['x-origin'] !== 'mcp-fastmcp' && !String(req.url).includes('/v2/agent')) return;
      res.on('finish', () => http.push(`${req.method} ${req.url} -> ${res.statusCode}`));
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
    await llm?.close();
    if (cwd) await rm(cwd, { recursive: true, force: true });
  });

  const report = () => `\nHTTP:\n${http.join('\n')}\nMCP traffic:\n${mcp?.recent() ?? ''}`;

  async function call(name: string, args: Record<string, unknown>): Promise<any> {
    const result = await mcp!.callTool(name, args);
    assert.notEqual(result.isError, true, `${name} failed: ${result.content[0]?.text}${report()}`);
    return JSON.parse(result.content[0].text!);
  }

  test('JS SDK: agent() starts and polls to the schema-valid answer; getAgentStatus, listAgents, cancelAgent', async () => {
    llm.script(
      { toolCalls: [{ name: 'scrape', arguments: { url: `${main}${zephyr.history}` } }] },
      { toolCalls: [{ name: 'scrape', arguments: { url: `${main}${zephyr.people}` } }] },
      { toolCalls: [{ name: 'finish', arguments: { data: { founded: zephyr.year, founder: zephyr.founder } } }] },
    );
    const done = await fc.agent({
      prompt: 'When did the Zephyr observatory open, and who founded it?',
      urls: [`${main}${zephyr.history}`],
      schema,
      maxCredits: 10,
      effort: 'low',
      pollInterval: 1,
      timeout: 60,
    });
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.deepEqual(done.data, { founded: zephyr.year, founder: zephyr.founder });
    assert.equal(done.model, 'fake-model');
    assert.equal(done.effort, 'low');
    assert.equal(done.creditsUsed, 2);
    assert.ok(Date.parse(done.expiresAt) > Date.now());

    llm.script({ toolCalls: [{ name: 'finish', arguments: { answer: 'In 1987.' } }] });
    const started = await fc.startAgent({ prompt: 'When did the Zephyr observatory open?' });
    assert.equal(started.success, true, JSON.stringify(started));
    let status = await fc.getAgentStatus(started.id);
    for (let i = 0; status.status === 'processing' && i < 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = await fc.getAgentStatus(started.id);
    }
    assert.equal(status.status, 'completed', JSON.stringify(status));
    assert.deepEqual(status.data, { answer: 'In 1987.', sources: [] });

    const list = await fc.listAgents();
    assert.equal(list.success, true);
    assert.equal(list.agents!.length, 2);
    assert.equal(list.agents![0].id, started.id, 'newest first');
    assert.deepEqual(list.agents![1].options!.schema, schema);
    assert.equal(list.agents![0].options!.prompt, 'When did the Zephyr observatory open?');
    assert.equal(await fc.cancelAgent(started.id), true, 'cancelling a finished agent answers success');
  });

  test('MCP server: firecrawl_search finds the indexed page; firecrawl_agent starts, firecrawl_agent_status reads the answer', async () => {
    const found = await call('firecrawl_search', { query: 'Zephyr observatory founded', limit: 3 });
    assert.equal(found.success, true, JSON.stringify(found));
    assert.ok(
      found.data.web.some((r: any) => r.url === `${main}${zephyr.people}`),
      `${JSON.stringify(found.data)}${report()}`,
    );

    llm.script(
      { toolCalls: [{ name: 'search', arguments: { query: 'Zephyr observatory founder' } }] },
      { toolCalls: [{ name: 'scrape', arguments: { url: `${main}${zephyr.people}` } }] },
      { toolCalls: [{ name: 'finish', arguments: { data: { founded: 1987, founder: zephyr.founder } } }] },
    );
    const started = await call('firecrawl_agent', {
      prompt: 'When did the Zephyr observatory open, and who founded it?',
      urls: [`${main}${zephyr.history}`],
      schema,
    });
    assert.equal(started.success, true, JSON.stringify(started));
    let status: any;
    const deadline = Date.now() + 30_000;
    do {
      status = await call('firecrawl_agent_status', { id: started.id });
      if (status.status !== 'processing') break;
      await new Promise((r) => setTimeout(r, 100));
    } while (Date.now() < deadline);
    assert.equal(status.status, 'completed', `${JSON.stringify(status)}${report()}`);
    assert.deepEqual(status.data, { founded: 1987, founder: zephyr.founder });
    assert.deepEqual(
      status.actions.map((a: any) => a.action),
      ['search', 'scrape'],
    );
    assert.ok(
      http.some((l) => l.startsWith('POST /v2/agent -> 200')),
      report(),
    );
  });
});
