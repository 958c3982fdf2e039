// The web playground (GET /, src/playground/) driven in real Chromium against the real service and the
// fixture site, controls found by role and name as a person finds them: the page loads without a key,
// under its CSP, compressed and cached, and paints fast; the API key is kept; scrape (rendered markdown,
// links, screenshot), map, crawl with live progress over the WebSocket status stream, parse of an uploaded
// document, search of the own index, a monitor's check diff side by side, and the live view of an interact
// session. Each view is checked with axe-core (no serious or critical violations) and a screenshot of each
// flow is kept under test-artifacts/playground/.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { type Browser, type BrowserContext, type Page, chromium } from 'playwright-core';
import { CHROMIUM_ARGS } from '../../src/scrape/engines/browser.ts';
import { renderMarkdown } from '../../src/playground/markdown.js';
import { articles, documentContentTypes, documentTexts, type FixtureSite } from '../fixtures/site/index.ts';
import { buildDocx } from '../fixtures/site/documents.ts';
import type { Api } from '../helpers/api.ts';
import { type TestService, startSiteAndService, stopSiteAndService } from '../helpers/service.ts';
import '../helpers/loopback-dns.ts';

// Functions run in the browser (page.evaluate) use its globals; this project's types have no DOM.
declare const window: any;
declare const document: any;
declare const performance: any;
declare const MutationObserver: any;

const ARTIFACTS = new URL('../../test-artifacts/playground/', import.meta.url);
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const mutablePage = (title: string, body: string) =>
  `<!DOCTYPE html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${body}</p>` +
  '<p>Opening hours are nine to five.</p></main></body></html>';

describe('the web playground', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: Api;
  let main: string;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];
  const axeSummary: Record<string, string[]> = {};

  before(async () => {
    mkdirSync(ARTIFACTS, { recursive: true });
    ({ site, svc, api, main } = await startSiteAndService());
    browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: CHROMIUM_ARGS,
    });
    context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    page = await context.newPage();
    page.on('pageerror', (err) => pageErrors.push(err.message));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && /Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    });
  });
  after(async () => {
    await browser?.close();
    await stopSiteAndService(svc, site);
  });

  /** Runs axe-core on the page as it is; fails on serious or critical violations; keeps a summary. */
  async function axe(view: string): Promise<void> {
    // The page's CSP refuses inline scripts (page.addScriptTag's content); evaluate is not subject to it.
    if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(AXE_SOURCE);
    const result = await page.evaluate(() => window.axe.run(document, { resultTypes: ['violations'] }));
    const violations = result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[];
    axeSummary[view] = violations.map((v) => `${v.impact} ${v.id} (${v.nodes.length})`);
    const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(
      bad.map((v) => `${v.impact} ${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
      [],
      `axe on the ${view} view`,
    );
  }

  const shot = (name: string) => page.screenshot({ path: new URL(`${name}.png`, ARTIFACTS).pathname, fullPage: true });
  const tab = (name: string) => page.getByRole('tab', { name, exact: true }).click();
  const panel = (name: string) => page.getByRole('tabpanel', { name });

  test('the page: public, under a strict CSP, compressed, cached; first paint under 1 s; the key is kept', async () => {
    const res = await fetch(`${svc.url}/`, { headers: { 'accept-encoding': 'br, gzip' } });
    assert.equal(res.status, 200, 'no API key is needed');
    assert.match(res.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
    assert.equal(res.headers.get('content-encoding'), 'br');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    const csp = res.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /frame-ancestors 'none'/);
    const html = await res.text();
    const script = /src="(\/playground\/[^"]+\/app\.js)"/.exec(html)?.[1];
    assert.ok(script, html);
    const js = await fetch(`${svc.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.equal(js.headers.get('content-encoding'), 'gzip');
    assert.match(js.headers.get('cache-control') ?? '', /immutable/);
    const etag = js.headers.get('etag') ?? '';
    assert.equal((await fetch(`${svc.url}${script}`, { headers: { 'if-none-match': etag } })).status, 304);
    assert.equal((await fetch(`${svc.url}/playground/x/nothing.js`)).status, 404);
    assert.equal((await fetch(`${svc.url}/docs`)).status, 200, '/docs still served');
    assert.equal((await fetch(`${svc.url}/v2/openapi.json`)).status, 200);

    await page.goto(`${svc.url}/`);
    await page.waitForSelector('html[data-ready="true"]');
    const fcp = await page.evaluate(
      () => performance.getEntriesByType('paint').find((e: any) => e.name === 'first-contentful-paint')?.startTime,
    );
    assert.ok(typeof fcp === 'number' && fcp < 1000, `first contentful paint ${fcp} ms`);
    console.log(`# playground first contentful paint: ${Math.round(fcp)} ms`);

    const key = page.getByLabel('API key');
    await key.fill(svc.key);
    await page.reload();
    await page.waitForSelector('html[data-ready="true"]');
    assert.equal(await page.getByLabel('API key').inputValue(), svc.key, 'the key is kept in localStorage');

    // Tabs work from the keyboard.
    await page.getByRole('tab', { name: 'Scrape', exact: true }).focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.getByRole('tab', { name: 'Map' }).getAttribute('aria-selected'), 'true');
    assert.equal(
      await page.evaluate(() => window.getComputedStyle(document.activeElement).outlineStyle),
      'solid',
      'keyboard focus is visible',
    );
    assert.ok(await panel('Map').isVisible());
    await page.keyboard.press('ArrowLeft');
    assert.ok(await panel('Scrape').isVisible());
    await axe('start');
    await shot('start');
  });

  test('scrape: the markdown of a fixture page appears, rendered and raw, with links and a screenshot', async () => {
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    const a1 = articles[0];
    await page.getByLabel('URL').fill(`${main}/articles/1`);
    await page.getByLabel('links', { exact: true }).check();
    await page.getByLabel('screenshot', { exact: true }).check();
    await page.getByLabel('json', { exact: true }).check();
    assert.ok(await page.getByLabel('JSON prompt').isEnabled(), 'the prompt goes with the json format');
    await page.getByRole('button', { name: 'Scrape' }).click();
    const scrape = panel('Scrape');
    const rendered = scrape.getByRole('region', { name: 'Rendered markdown' });
    await rendered.waitFor({ timeout: 30_000 });
    assert.match(await rendered.innerText(), new RegExp(a1.lead.slice(0, 30)));
    assert.ok((await rendered.locator('h1, h2').count()) > 0, 'headings rendered');
    await scrape.getByText('Raw markdown', { exact: true }).click();
    assert.match(await scrape.getByRole('region', { name: 'Raw markdown' }).innerText(), /^#|\n#/);
    assert.ok((await scrape.locator('ul.links li').count()) > 3, 'links listed');
    assert.ok(await scrape.getByRole('heading', { name: 'JSON', exact: true }).isVisible(), 'the JSON shown');
    const img = scrape.getByRole('img', { name: /Screenshot of/ });
    await page.waitForFunction(() => document.querySelector('img.shot')?.naturalWidth > 0);
    assert.ok(await img.isVisible());
    assert.ok(
      requests.every((u) => !u.includes(svc.key)),
      'the key is never in a URL',
    );
    await axe('scrape');
    await shot('scrape');
  });

  test('map: the links of the site', async () => {
    await tab('Map');
    await page.getByLabel('Site to map').fill(`${main}/`);
    await page.getByRole('button', { name: 'Map', exact: true }).click();
    const links = panel('Map').locator('ol.links li');
    await page.waitForFunction(() => document.querySelectorAll('#panel-map ol.links li').length > 3);
    assert.ok((await links.count()) > 3);
    await axe('map');
    await shot('map');
  });

  test('crawl: pages arrive live over the status stream, the progress bar rises to the total', async () => {
    await tab('Crawl');
    const sockets: string[] = [];
    page.on('websocket', (ws) => sockets.push(ws.url()));
    // Records every value the progress bar takes.
    await page.evaluate(() => {
      const bar = document.getElementById('crawl-progress');
      window.progressSeen = [];
      new MutationObserver(() => window.progressSeen.push([bar.value, bar.max])).observe(bar, {
        attributes: true,
        attributeFilter: ['value', 'max'],
      });
    });
    const limit = 6;
    await page.getByLabel('Start page').fill(`${main}/`);
    await page.getByLabel('Most pages').fill(String(limit));
    await page.getByRole('button', { name: 'Start crawl' }).click();
    const progress = page.getByRole('progressbar', { name: 'Crawl progress' });
    await page.waitForFunction(
      (n) => {
        const bar = document.getElementById('crawl-progress');
        return bar.value === n && bar.max === n && document.querySelectorAll('#crawl-pages li').length === n;
      },
      limit,
      { timeout: 60_000 },
    );
    await page
      .getByRole('status')
      .filter({ hasText: /Crawl completed/ })
      .waitFor({ timeout: 10_000 });
    assert.equal(await progress.getAttribute('value'), String(limit));
    const seen: [number, number][] = await page.evaluate(() => window.progressSeen);
    const values = seen.map(([v]) => v);
    console.log(`# crawl progress values seen: ${values.join(' ')}`);
    assert.ok(values.length >= 2, JSON.stringify(seen));
    assert.ok(values[0] < limit, `the bar starts below the total: ${JSON.stringify(seen)}`);
    assert.ok(
      values.some((v) => v > 0 && v < limit),
      `pages were counted as they arrived: ${JSON.stringify(seen)}`,
    );
    for (let i = 1; i < values.length; i++) assert.ok(values[i] >= values[i - 1], `never goes back: ${values}`);
    assert.ok(
      sockets.some((u) => /\/v2\/crawl\/[\w-]+$/.test(new URL(u).pathname)),
      `the status stream was used: ${sockets}`,
    );
    assert.ok(
      sockets.every((u) => !u.includes(svc.key)),
      'the key is not in the WebSocket URL',
    );
    assert.equal(await panel('Crawl').getByRole('listitem').count(), limit);
    await axe('crawl');
    await shot('crawl');
  });

  test('parse: an uploaded document comes back as markdown', async () => {
    await tab('Parse');
    await page.getByLabel('Document', { exact: true }).setInputFiles({
      name: 'handbook.docx',
      mimeType: documentContentTypes.docx,
      buffer: buildDocx(),
    });
    await page.getByRole('button', { name: 'Parse' }).click();
    const rendered = panel('Parse').getByRole('region', { name: 'Rendered markdown' });
    await rendered.waitFor({ timeout: 30_000 });
    const texts = documentTexts.docx;
    assert.equal(await rendered.locator('h1').first().innerText(), texts.headings[0].text);
    assert.ok(await rendered.getByRole('listitem').filter({ hasText: texts.bullets[0] }).isVisible());
    await axe('parse');
    await shot('parse');
  });

  test('search: the own index finds the scraped page', async () => {
    await tab('Search');
    await page.getByLabel('Query').fill('harvesters');
    await page.getByRole('button', { name: 'Search', exact: true }).click();
    await panel('Search').locator('ol.links li').first().waitFor({ timeout: 30_000 });
    assert.match(await panel('Search').locator('ol.links').innerText(), /articles\/1/);
    await axe('search');
    await shot('search');
  });

  test('monitors: a check diff side by side', async () => {
    const url = `${main}/mutable/playground-prices`;
    site.mutable.set('/mutable/playground-prices', { html: mutablePage('Prices', 'The price is 10 euros.') });
    const m = await api.startMonitor({
      name: 'playground prices',
      schedule: { text: 'every 30 minutes', timezone: 'UTC' },
      targets: [{ type: 'scrape', urls: [url] }],
    });
    const first = await api.runCheck(m.id);
    assert.equal(first.status, 'completed');
    site.mutable.set('/mutable/playground-prices', { html: mutablePage('Prices', 'The price is 12 euros.') });
    const second = await api.runCheck(m.id);
    assert.equal(second.summary.changed, 1, JSON.stringify(second.summary));

    await tab('Monitors');
    await page.getByRole('button', { name: 'Load monitors' }).click();
    await page.getByRole('button', { name: /^playground prices/ }).click();
    // Newest first: the second check, with the change.
    await page
      .getByRole('button', { name: /1 changed/ })
      .first()
      .click();
    const diff = panel('Monitors').getByRole('table', { name: `Changes of ${url}` });
    await diff.waitFor({ timeout: 10_000 });
    const row = diff.getByRole('row').filter({ has: page.locator('del') });
    assert.match(await row.locator('del').innerText(), /10 euros/);
    assert.match(await row.locator('ins').innerText(), /12 euros/, 'before and after on one row');
    await axe('monitors');
    await shot('monitors');
  });

  test("interact: a session's live view opens", async () => {
    await tab('Interact');
    assert.match(await page.getByLabel('Scrape ID').inputValue(), /^[\w-]{36}$/, 'the last scrape is filled in');
    await page.getByRole('button', { name: 'Run code' }).click();
    const frame = page.frameLocator('iframe[title="Live view of the browser session"]');
    await page.locator('iframe.live').waitFor({ timeout: 60_000 });
    const output = panel('Interact').getByRole('region', { name: 'Output of the code' });
    assert.match(await output.innerText(), new RegExp(articles[0].title.slice(0, 20)));
    await frame.locator('#screen').waitFor({ timeout: 20_000 });
    await page.waitForFunction(
      () => {
        const img = document.querySelector('iframe.live')?.contentDocument?.getElementById('screen');
        return img?.naturalWidth > 0;
      },
      undefined,
      { timeout: 20_000 },
    );
    await axe('interact');
    await shot('interact');
    await page.getByRole('button', { name: 'End session' }).click();
    await panel('Interact')
      .getByRole('status')
      .filter({ hasText: /Session ended/ })
      .waitFor({ timeout: 20_000 });
  });

  test('nothing broke the page: no script errors, no CSP refusal but remote images', () => {
    assert.deepEqual(pageErrors, []);
    assert.deepEqual(
      cspViolations.filter((v) => !/img-src/.test(v)),
      [],
    );
    console.log(`# axe (violations of any impact per view): ${JSON.stringify(axeSummary)}`);
  });
});

describe('the playground markdown renderer', () => {
  test('escapes everything and keeps only safe addresses', () => {
    const html = renderMarkdown(
      '# A <script>x</script>\n\n[a](javascript:alert(1)) ![i](javascript:x) <img src=x onerror=y>\n\n' +
        '| a | b |\n|---|---|\n| <b>1</b> | 2 |\n\n```\n<i>code</i>\n```',
    );
    assert.doesNotMatch(html, /<script|<img src=x|javascript:|<b>|<i>/);
    assert.match(html, /<h1>A &lt;script&gt;x&lt;\/script&gt;<\/h1>/);
    assert.match(html, /<table>/);
    assert.match(html, /<pre><code>&lt;i&gt;code&lt;\/i&gt;<\/code><\/pre>/);
  });

  test('headings, paragraphs, nested lists, links, images, tables, code', () => {
    const html = renderMarkdown(
      '## Title\n\nSome **bold** and `code` and [a link](https://example.com/x_(y)).\n\n' +
        '- one\n- two\n  - nested\n\n1. first\n2. second\n\n![alt](https://example.com/i.png)\n\n' +
        '| h |\n|--:|\n| c |\n\n```js\nlet a = 1;\n```',
    );
    for (const part of [
      '<h2>Title</h2>',
      '<strong>bold</strong>',
      '<code>code</code>',
      '<a href="https://example.com/x_(y)" rel="noopener noreferrer nofollow">a link</a>',
      '<li>two<ul>\n<li>nested</li>',
      '<ol>',
      '<img src="https://example.com/i.png" alt="alt" loading="lazy">',
      '<th scope="col" class="align-right">h</th>',
      '<pre><code class="language-js">let a = 1;</code></pre>',
    ]) {
      assert.ok(html.includes(part), `${part} in\n${html}`);
    }
  });
});
