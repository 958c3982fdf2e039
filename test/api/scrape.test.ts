// POST /v2/scrape and GET /v2/scrape/{id} end to end: the real service against the fixture
// website (test/fixtures/site). Every format, every metadata field, validation (400s naming the
// field), the HTTP engine through the API (redirects, cookies, headers, mobile, languages,
// compression, charsets), every error code, SSRF, and — on every store — cache semantics,
// lockdown, zero data retention, credits and retrieval by id across teams.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { scrapeRequest } from '../../src/contract/scrape.ts';
import { TeamConcurrency } from '../../src/scrape/team-concurrency.ts';
import { DESKTOP_USER_AGENT, HttpEngine } from '../../src/scrape/engines/http.ts';
import { Scraper } from '../../src/scrape/scrape.ts';
import type { Db } from '../../src/store/db-types.ts';
import { createApiKey, ensureTeam, setCreditQuota } from '../../src/store/teams.ts';
import {
  type FixtureSite,
  articles,
  charsetTexts,
  homeText,
  piiText,
  startFixtureSite,
} from '../fixtures/site/index.ts';
import { DATA_URI_PNG, articlePage } from '../fixtures/site/pages.ts';
import { allDocuments } from '../fixtures/site/documents.ts';
import { type Api, type ApiResponse, apiClient } from '../helpers/api.ts';
import { type StoreKind, type TestService, startTestService, storeKinds } from '../helpers/service.ts';

type Res = ApiResponse;

/** SCRAPE_MAX_BYTES of the services under test: every fixture page but /large?kb=1500 fits. */
const MAX_BYTES = 1024 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let site: FixtureSite;
const services = new Map<StoreKind, TestService>();
let unique = 0;

/** A URL of the fixture no other test asked for (the routes ignore the query), for cache tests. */
function freshUrl(path = '/articles/1'): string {
  return site.url(`${path}${path.includes('?') ? '&' : '?'}u=${++unique}-${Date.now()}`);
}

/** How many requests the fixture has seen for this exact path (and query). */
function hits(url: string): number {
  const u = new URL(url);
  return site.requests.filter((r) => r.path === u.pathname + u.search).length;
}

function assertError(res: Res, status: number, code: string): void {
  assert.equal(res.status, status, res.text);
  assert.equal(res.json.success, false);
  assert.equal(res.json.code, code);
  assert.equal(typeof res.json.error, 'string');
  assert.ok(res.json.error.length > 0);
  const allowed = ['BAD_REQUEST', 'SCRAPE_BLOCKED_URL'].includes(code)
    ? ['code', 'details', 'error', 'success']
    : ['code', 'error', 'success'];
  for (const k of Object.keys(res.json)) assert.ok(allowed.includes(k), `unexpected key ${k} in ${res.text}`);
}

/** A 400 whose message and details name `path` (and, if given, the message text). */
function assertBadRequest(res: Res, path: string, message?: RegExp): void {
  assertError(res, 400, 'BAD_REQUEST');
  assert.ok(res.json.error.includes(path), `${path} not named in: ${res.json.error}`);
  const detail = (res.json.details as { path: string; message: string }[]).find((d) => d.path === path);
  assert.ok(detail, `${path} not in details: ${JSON.stringify(res.json.details)}`);
  if (message) assert.match(res.json.error, message);
}

async function startScrapeService(store: StoreKind): Promise<TestService> {
  // The route's Scraper needs the service's database, known once the service has started.
  const started: { db?: Db } = {};
  const svc = await startTestService({
    store,
    env: { SCRAPE_MAX_BYTES: String(MAX_BYTES) },
    configure(app) {
      // The same pipeline behind a route whose HTTP engine has the SSRF test hook: "public.test"
      // stands for a public site (it resolves to the fixture on loopback and only that name is
      // let through), so a redirect from it to a private address can be shown to be refused
      // without any traffic leaving the machine.
      const http = new HttpEngine({
        allowPrivateNetwork: false,
        maxBytes: MAX_BYTES,
        ssrf: {
          resolver: async () => [{ address: '127.0.0.1', family: 4 }],
          isAllowed: (_ip, hostname) => hostname === 'public.test',
        },
      });
      app.addHook('onClose', () => http.close());
      let scraper: Scraper | undefined;
      app.post('/test/guarded-scrape', async (request) => {
        scraper ??= new Scraper({
          db: started.db!,
          http,
          concurrency: new TeamConcurrency(),
          maxConcurrency: 10,
          log: app.log,
          fileTtlMs: 60_000,
        });
        const { document } = await scraper.scrape(request.caller, scrapeRequest.parse(request.body), {
          publicUrl: 'http://127.0.0.1',
        });
        return { success: true, data: document };
      });
    },
  });
  started.db = svc.db;
  return svc;
}

/** A client of the first store's service, for the store-independent tests. */
let api: Api;

before(async () => {
  site = await startFixtureSite();
  for (const store of storeKinds) services.set(store, await startScrapeService(store));
  api = apiClient(services.get(storeKinds[0])!);
});
after(async () => {
  for (const svc of services.values()) await svc.destroy();
  await site.close();
});

// ---------------------------------------------------------------------------------------------
// Store-independent behaviour, on the first store (PGlite).

describe('scrape formats', () => {
  test('markdown: GFM table, fenced code with its language, nested lists, absolute links and images; boilerplate gone', async () => {
    const a = articles[0];
    const res = await api.scrape({ url: site.url('/articles/1') });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.success, true);
    const md: string = res.json.data.markdown;
    assert.deepEqual(Object.keys(res.json.data).sort(), ['markdown', 'metadata'], 'default formats: markdown only');
    assert.ok(md.startsWith(`# ${a.title}\n\n${a.lead}\n`), md.slice(0, 200));
    // GFM table with the colspan row padded.
    assert.ok(
      md.includes(
        '| Strategy | Speed | JavaScript |\n| --- | --- | --- |\n| HTTP client | Fast | No |\n| Headless browser | Slow | Yes |\n| Hybrid approaches try HTTP first | | Maybe |',
      ),
      md,
    );
    assert.ok(md.includes(`\`\`\`js\n${a.code}\n\`\`\``), 'fenced code with its language');
    assert.ok(
      md.includes(
        '1. Fetch the page\n   - Try a plain HTTP request\n     1. Send a realistic User-Agent\n     2. Follow redirects\n   - Fall back to a browser\n2. Extract the main content',
      ),
      'nested ordered/unordered lists',
    );
    assert.ok(md.includes('- Be polite\n  - Honour robots.txt\n    - Including Crawl-delay\n- Cache what you can'));
    assert.ok(md.includes(`[${articles[2].title}](${site.origin}/articles/3)`), 'relative link made absolute');
    assert.ok(
      md.includes(`![Illustration for ${a.title}](${site.origin}/images/article-1.png)`),
      'relative image made absolute',
    );
    assert.ok(md.includes(`> ${a.quote.text}`));
    assert.ok(md.includes('A good scraper is **fast** and *polite*'));
    assert.ok(md.includes('`fetch()`'));
    // onlyMainContent (default true): header/nav, cookie banner, ads, sidebar and footer are gone.
    for (const boiler of [
      '[Home]',
      'We use cookies',
      'Advertisement',
      'Buy the Widget Pro',
      'Related posts',
      'All rights reserved',
      'Subscribe for weekly',
    ]) {
      assert.ok(!md.includes(boiler), `boilerplate "${boiler}" left in markdown`);
    }
  });

  test('onlyMainContent false keeps nav and footer; ads and the cookie banner need blockAds false too', async () => {
    const res = await api.scrape({ url: site.url('/articles/2'), onlyMainContent: false });
    assert.equal(res.status, 200);
    const md: string = res.json.data.markdown;
    assert.ok(md.includes(`[Home](${site.origin}/)`), 'nav kept');
    assert.ok(md.includes('All rights reserved'), 'footer kept');
    assert.ok(md.includes('Related posts'), 'sidebar kept');
    assert.ok(md.includes(`# ${articles[1].title}`));
    assert.ok(!md.includes('We use cookies'), 'blockAds (default true) still drops the cookie banner');
    assert.ok(!md.includes('Buy the Widget Pro'), 'blockAds (default true) still drops ads');

    const all = await api.scrape({ url: site.url('/articles/2'), onlyMainContent: false, blockAds: false });
    assert.ok(all.json.data.markdown.includes('We use cookies to improve your experience'));
    assert.ok(all.json.data.markdown.includes('Buy the Widget Pro today'));
  });

  test('html is the cleaned content with absolute URLs; rawHtml is the page as served', async () => {
    const res = await api.scrape({ url: site.url('/articles/1'), formats: ['html', 'rawHtml'] });
    assert.equal(res.status, 200);
    const { html, rawHtml } = res.json.data;
    assert.equal(res.json.data.markdown, undefined, 'markdown only when asked');
    assert.ok(html.includes(`<h1 itemprop="headline">${articles[0].title}</h1>`), html.slice(0, 300));
    assert.ok(html.includes(`href="${site.origin}/articles/3"`), 'links absolute');
    assert.ok(html.includes(`src="${site.origin}/images/article-1.png"`), 'images absolute');
    assert.ok(
      html.includes(
        `srcset="${site.origin}/images/photo-400.png 400w, ${site.origin}/images/photo-800.png 800w, ${site.origin}/images/photo-1600.png 1600w"`,
      ),
      'srcset candidates absolute',
    );
    for (const gone of ['<nav', '<script', 'cookie-banner', 'ad-banner', '<footer class="site-footer"', '<head']) {
      assert.ok(!html.includes(gone), `${gone} left in html`);
    }
    const ctx = {
      origin: site.origin,
      mainOrigin: `http://localhost:${site.port}`,
      blogOrigin: site.hostOrigin('blog'),
    };
    assert.equal(rawHtml, articlePage(1, ctx)!, 'rawHtml is byte for byte what the fixture served');
    assert.ok(rawHtml.includes('<nav class="main-nav"'));
  });

  test('links: absolute, deduplicated, fragments dropped, only http(s)', async () => {
    const res = await api.scrape({ url: site.url('/'), formats: ['links'] });
    assert.equal(res.status, 200);
    const o = site.origin;
    const expected = [
      `${o}/`,
      `${o}/blog/`,
      `${o}/docs/getting-started`,
      `${o}/products/widget`,
      `${o}/forum/thread-1`,
      `${o}/about`,
      `${o}/articles/1`,
      `${o}/articles/2`,
      `${o}/articles/3`,
      `${o}/products/widget?color=blue&size=m`,
      `${site.hostOrigin('blog')}/`,
      'https://example.com/',
      'http://example.org/partners',
      `${o}/private/secret`,
      `${o}/private/public-note`,
    ];
    assert.deepEqual([...res.json.data.links].sort(), expected.sort());
    assert.equal(res.json.data.markdown, undefined);
  });

  test('images: absolute, each once, no data: URIs', async () => {
    const res = await api.scrape({ url: site.url('/articles/1'), formats: ['images'] });
    assert.equal(res.status, 200);
    const o = site.origin;
    assert.deepEqual(res.json.data.images, [
      `${o}/images/logo.png`,
      `${o}/images/article-1.png`,
      `${o}/images/diagram-1.png`,
      `${o}/images/photo-400.png`,
    ]);
  });

  test('attributes: the object form returns values per selector; the bare string is a 400', async () => {
    const res = await api.scrape({
      url: site.url('/articles/1'),
      formats: [
        {
          type: 'attributes',
          selectors: [
            { selector: 'meta[property="article:tag"]', attribute: 'content' },
            { selector: 'a.logo', attribute: 'href' },
            { selector: 'h2', attribute: 'id' },
            { selector: 'h2', attribute: 'data-none' },
          ],
        },
      ],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.data.attributes, [
      { selector: 'meta[property="article:tag"]', attribute: 'content', values: ['scraping', 'crawling'] },
      { selector: 'a.logo', attribute: 'href', values: ['/'] },
      { selector: 'h2', attribute: 'id', values: ['why', 'together'] },
      { selector: 'h2', attribute: 'data-none', values: [] },
    ]);
    assertBadRequest(
      await api.scrapeRaw({ url: site.url('/articles/1'), formats: ['attributes'] }),
      'body.formats.0',
      /attributes/,
    );
  });

  test('summary: extractive, non-empty, with a warning that no LLM is configured', async () => {
    const res = await api.scrape({ url: site.url('/articles/1'), formats: ['summary'] });
    assert.equal(res.status, 200);
    const { summary } = res.json.data;
    assert.equal(typeof summary, 'string');
    assert.ok(summary.length > 50 && summary.length < 2000, summary);
    assert.ok(summary.includes(articles[0].lead), summary);
    assert.match(res.json.warning, /no LLM/);
    assert.match(res.json.data.warning, /no LLM/);
    assert.equal(res.json.data.markdown, undefined);
  });

  test('rawBase64 alone returns the bytes; with another format it is a 400', async () => {
    const res = await api.scrape({ url: site.url('/files/image.png'), formats: ['rawBase64'] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Buffer.from(res.json.data.rawBase64, 'base64'), allDocuments()['image.png']);
    assert.equal(res.json.data.metadata.contentType, 'image/png');
    const html = await api.scrape({ url: site.url('/about'), formats: [{ type: 'rawBase64' }] });
    assert.equal(html.status, 200);
    assert.ok(
      Buffer.from(html.json.data.rawBase64, 'base64').toString('utf8').includes('<h1>About the Gleaner Gazette</h1>'),
    );
    assertBadRequest(
      await api.scrapeRaw({ url: site.url('/files/image.png'), formats: ['rawBase64', 'markdown'] }),
      'body.formats',
      /rawBase64/,
    );
  });

  test('formats as objects {type} work like the strings', async () => {
    const res = await api.scrape({
      url: site.url('/about'),
      formats: [{ type: 'markdown' }, { type: 'links' }, 'rawHtml'],
    });
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.json.data).sort(), ['links', 'markdown', 'metadata', 'rawHtml']);
    assert.ok(res.json.data.markdown.startsWith('# About the Gleaner Gazette'));
  });

  test('includeTags keeps only the matches; excludeTags drops them', async () => {
    const a = articles[0];
    const inc = await api.scrape({ url: site.url('/articles/1'), includeTags: ['table.data', 'blockquote'] });
    assert.equal(inc.status, 200);
    const md: string = inc.json.data.markdown;
    assert.ok(md.includes('| Strategy | Speed | JavaScript |'));
    assert.ok(md.includes(a.quote.text));
    assert.ok(!md.includes(a.lead), 'only the selected parts');
    assert.ok(!md.includes(a.h2[0]));

    const exc = await api.scrape({ url: site.url('/articles/1'), excludeTags: ['pre', 'table', '.lead'] });
    const md2: string = exc.json.data.markdown;
    assert.ok(!md2.includes('```'), 'pre dropped');
    assert.ok(!md2.includes('| Strategy'), 'table dropped');
    assert.ok(!md2.includes(a.lead), '.lead dropped');
    assert.ok(md2.includes(a.h2[0]), 'the rest kept');
  });

  test('removeBase64Images: placeholder with the alt text by default, the data: URI with false; html and rawHtml untouched', async () => {
    const def = await api.scrape({ url: site.url('/articles/1'), formats: ['markdown', 'html', 'rawHtml'] });
    assert.ok(def.json.data.markdown.includes('![Inline pixel](<Base64-Image-Removed>)'));
    assert.ok(!def.json.data.markdown.includes('data:image'));
    assert.ok(def.json.data.html.includes(`src="${DATA_URI_PNG}"`), 'html keeps the data: URI');
    assert.ok(def.json.data.rawHtml.includes(`src="${DATA_URI_PNG}"`), 'rawHtml keeps the data: URI');
    const keep = await api.scrape({ url: site.url('/articles/1'), removeBase64Images: false });
    assert.ok(keep.json.data.markdown.includes(`![Inline pixel](${DATA_URI_PNG})`));
    assert.ok(!keep.json.data.markdown.includes('Base64-Image-Removed'));
  });

  test('redactPII: true redacts every kind in markdown; the object form only the named entities, masked; rawHtml untouched', async () => {
    const all = await api.scrape({ url: site.url('/pii'), formats: ['markdown', 'rawHtml'], redactPII: true });
    assert.equal(all.status, 200, all.text);
    const md: string = all.json.data.markdown;
    for (const v of [piiText.email, piiText.phone, piiText.card, piiText.ip])
      assert.ok(!md.includes(v), `${v} left in ${md}`);
    for (const tag of ['<EMAIL>', '<PHONE>', '<FINANCIAL>', '<LOCATION>'])
      assert.ok(md.includes(tag), `${tag} missing in ${md}`);
    assert.ok(md.includes(piiText.plain), 'ordinary text kept');
    for (const v of [piiText.email, piiText.phone, piiText.card, piiText.ip])
      assert.ok(all.json.data.rawHtml.includes(v), 'rawHtml as served');
    assert.match(all.json.warning, /redactPII/);

    const some = await api.scrape({ url: site.url('/pii'), redactPII: { entities: ['EMAIL'], replaceStyle: 'mask' } });
    assert.equal(some.status, 200, some.text);
    const md2: string = some.json.data.markdown;
    assert.ok(!md2.includes(piiText.email));
    assert.ok(md2.includes('*'.repeat(piiText.email.length)), md2);
    assert.ok(
      md2.includes(piiText.phone) && md2.includes(piiText.card) && md2.includes(piiText.ip),
      'other entities kept',
    );

    const none = await api.scrape({ url: site.url('/pii') });
    assert.ok(none.json.data.markdown.includes(piiText.email), 'off by default');
    assert.equal(none.json.warning, undefined);
  });
});

describe('scrape metadata', () => {
  test('every field, sourceURL as asked and url after redirects', async () => {
    const a = articles[0];
    const asked = site.url('/redirect/301');
    const res = await api.scrape({ url: asked, maxAge: 0 });
    assert.equal(res.status, 200, res.text);
    const m = res.json.data.metadata;
    const o = site.origin;
    assert.equal(m.title, `${a.title} | Gleaner Gazette`);
    assert.equal(m.description, a.description);
    assert.equal(m.language, 'en');
    assert.equal(m.keywords, a.keywords);
    assert.deepEqual(m.ogLocaleAlternate, ['fr_FR', 'de_DE']);
    assert.equal(m.ogTitle, a.title);
    assert.equal(m.ogDescription, a.description);
    assert.equal(m.ogUrl, `${o}/articles/1`);
    assert.equal(m.ogImage, `${o}/images/article-1.png`);
    assert.equal(m.ogSiteName, 'Gleaner Gazette');
    assert.equal(m.ogLocale, 'en_US');
    assert.equal(m['og:type'], 'article');
    assert.equal(m['twitter:card'], 'summary_large_image');
    assert.equal(m['twitter:site'], '@gleanergazette');
    assert.equal(m['article:section'], a.section);
    assert.equal(m['article:author'], a.author);
    assert.equal(m.publishedTime, a.published);
    assert.equal(m.modifiedTime, a.modified);
    assert.equal(m.robots, 'index, follow');
    assert.equal(m.author, a.author);
    assert.equal(m.favicon, `${o}/favicon.ico`);
    assert.equal(m.canonicalUrl, `${o}/articles/1`);
    assert.equal(m.sourceURL, asked);
    assert.equal(m.url, `${o}/articles/1`);
    assert.equal(m.statusCode, 200);
    assert.equal(m.contentType, 'text/html; charset=utf-8');
    assert.match(m.scrapeId, UUID);
    assert.equal(m.proxyUsed, 'basic');
    assert.equal(m.cacheState, 'miss');
    assert.equal(m.cachedAt, undefined);
    assert.equal(m.creditsUsed, 1);
    assert.equal(m.engine, 'http');
    assert.equal(m.error, undefined);
    assert.equal(m.concurrencyLimited, undefined);
    for (const [k, v] of Object.entries(m)) {
      if (k === 'ogLocaleAlternate' || k === 'article:tag' || k === 'og:locale:alternate')
        assert.ok(Array.isArray(v), k);
      else assert.ok(['string', 'number'].includes(typeof v), `${k}: ${JSON.stringify(v)}`);
    }
    const byId = await api.getScrape(m.scrapeId);
    assert.equal(byId.status, 200);
    assert.deepEqual(byId.json.data, res.json.data);
  });

  test('a page’s own <meta> cannot pose as a pipeline field (error, scrapeId, cacheState, numPages...)', async () => {
    const hostile = createServer((_rq, rs) =>
      rs
        .writeHead(200, { 'content-type': 'text/html' })
        .end(
          '<html><head><title>Hostile</title><meta name="error" content="boom"><meta name="scrapeId" content="fake">' +
            '<meta name="cacheState" content="stale"><meta name="cachedAt" content="yesterday"><meta name="numPages" content="many">' +
            '<meta name="concurrencyLimited" content="yes"><meta name="creditsUsed" content="lots"><meta name="x-custom" content="kept">' +
            '</head><body><p>Plain\u0000 content here.</p></body></html>',
        ),
    );
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}/`;
      const res = await api.scrape({ url, formats: ['markdown', 'rawHtml'] });
      assert.equal(res.status, 200, res.text);
      const m = res.json.data.metadata;
      assert.equal(m.error, undefined);
      assert.match(m.scrapeId, UUID);
      assert.equal(m.cacheState, 'miss');
      assert.equal(m.cachedAt, undefined);
      assert.equal(m.numPages, undefined);
      assert.equal(m.concurrencyLimited, undefined);
      assert.equal(m.creditsUsed, 1);
      assert.equal(m['x-custom'], 'kept');
      // U+0000 is dropped (jsonb cannot store it), so the document is stored and readable by id.
      assert.equal(res.json.data.markdown, 'Plain content here.');
      const byId = await api.getScrape(m.scrapeId);
      assert.equal(byId.status, 200, byId.text);
      assert.deepEqual(byId.json.data, res.json.data);
    } finally {
      hostile.closeAllConnections();
      hostile.close();
    }
  });

  test('a target’s 404 and 500 are successful scrapes with statusCode and error', async () => {
    for (const code of [404, 500]) {
      const res = await api.scrape({ url: site.url(`/status/${code}`) });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.success, true);
      assert.equal(res.json.data.metadata.statusCode, code);
      assert.equal(res.json.data.metadata.error, code === 404 ? '404 Not Found' : '500 Internal Server Error');
      assert.ok(res.json.data.markdown.includes(`This page answered with status ${code}.`));
    }
    const unknown = await api.scrape({ url: site.url('/no/such/page') });
    assert.equal(unknown.json.data.metadata.statusCode, 404);
  });
});

describe('scrape request validation', () => {
  const url = () => site.url('/articles/1');

  test('formats that cannot be produced as asked are refused by name', async () => {
    // The AI formats, changeTracking, branding, audio and video are accepted
    // (test/api/scrape-ai.test.ts, scrape-change-tracking.test.ts, scrape-media.test.ts); json as
    // a bare string is not.
    const formats: [unknown, string][] = [['json', 'json']];
    const before = site.requests.length;
    for (const [format, name] of formats) {
      const res = await api.scrapeRaw({ url: url(), formats: ['markdown', format] });
      assertBadRequest(res, 'body.formats.1', new RegExp(`"${name}"`));
    }
    assert.equal(site.requests.length, before, 'nothing was fetched');
  });

  test('onlyCleanContent is refused under zero data retention; actions are checked; waitFor at most half of timeout', async () => {
    assertBadRequest(
      await api.scrapeRaw({ url: url(), onlyCleanContent: true, zeroDataRetention: true }),
      'body.onlyCleanContent',
    );
    assertBadRequest(
      await api.scrapeRaw({ url: url(), actions: [{ type: 'hover', selector: 'a' }] }),
      'body.actions.0.type',
    );
    assertBadRequest(await api.scrapeRaw({ url: url(), actions: [{ type: 'wait' }] }), 'body.actions.0');
    assertBadRequest(await api.scrapeRaw({ url: url(), actions: [{ type: 'click' }] }), 'body.actions.0.selector');
    assertBadRequest(
      await api.scrape({ url: url(), waitFor: 30_000, actions: [{ type: 'wait', milliseconds: 40_000 }] }),
      'body.actions',
      /60000/,
    );
    assertBadRequest(
      await api.scrapeRaw({ url: url(), formats: ['screenshot', { type: 'screenshot', fullPage: true }] }),
      'body.formats.1',
      /one screenshot/,
    );
    assertBadRequest(
      await api.scrapeRaw({ url: url(), waitFor: 600, timeout: 1000 }),
      'body.waitFor',
      /waitFor must not exceed half of timeout/,
    );
    const ok = await api.scrape({ url: url(), waitFor: 0, actions: [] });
    assert.equal(ok.status, 200, 'waitFor 0 and no actions are fine');
  });

  test('strict body: an unknown key is named; origin and integration are accepted', async () => {
    assertBadRequest(await api.scrapeRaw({ url: url(), surprise: true }), 'body.surprise');
    assertBadRequest(
      await api.scrapeRaw({ url: url(), formats: [{ type: 'markdown', extra: 1 }] }),
      'body.formats.0.extra',
    );
    const res = await api.scrape({ url: url(), origin: 'js-sdk@4.3.0', integration: 'test-suite', fastMode: true });
    assert.equal(res.status, 200, res.text);
  });

  test('timeout out of range, bad URLs, invalid selectors and unknown formats are 400s naming the field', async () => {
    assertBadRequest(await api.scrapeRaw({ url: url(), timeout: 999 }), 'body.timeout');
    assertBadRequest(await api.scrapeRaw({ url: url(), timeout: 300001 }), 'body.timeout');
    assertBadRequest(
      await api.scrapeRaw({ url: url(), includeTags: ['div['] }),
      'body.includeTags.0',
      /not a valid CSS selector/,
    );
    assertBadRequest(await api.scrapeRaw({ url: url(), excludeTags: ['p', 'a[href'] }), 'body.excludeTags.1');
    assertBadRequest(await api.scrapeRaw({ url: url(), formats: ['pdf'] }), 'body.formats.0');
    assertBadRequest(await api.scrapeRaw({ url: 'ftp://127.0.0.1/file' }), 'body.url');
    assertBadRequest(await api.scrapeRaw({}), 'body.url');
    assertBadRequest(await api.scrapeRaw({ url: url(), minAge: 1, lockdown: true }), 'body.minAge');
    assertBadRequest(await api.scrapeRaw({ url: url(), proxy: 'enhanced' }), 'body.proxy');
  });

  test('headers the HTTP client would refuse are 400s naming body.headers, not a 502 of the site (found by test/fuzz)', async () => {
    const before = site.requests.length;
    for (const headers of [
      { ' ': '' },
      { 'X Space': '1' },
      { 'X-É': '1' },
      { 'X-Test': 'a\r\nInjected: 1' },
      { 'X-Test': '€' },
      { 'Transfer-Encoding': 'chunked' },
      { Connection: 'upgrade' },
      { Expect: '100-continue' },
    ]) {
      const res = await api.scrapeRaw({ url: url(), headers });
      assertError(res, 400, 'BAD_REQUEST');
      assert.match(res.json.error, /body\.headers/, JSON.stringify(headers));
    }
    assert.equal(site.requests.length, before, 'nothing was fetched');
    const ok = await api.scrape({ url: url(), headers: { "X-Ok_1!#$%&'*+.^`|~": 'café\tvalue' } });
    assert.equal(ok.status, 200, ok.text);
  });

  test('a key is required', async () => {
    const res = await apiClient({ url: services.get(storeKinds[0])!.url }).scrape({ url: url() });
    assertError(res, 401, 'UNAUTHORIZED');
    assertError(
      await apiClient({ url: services.get(storeKinds[0])!.url }, 'fc-not-a-key').getScrape(randomUUID()),
      401,
      'UNAUTHORIZED',
    );
  });

  test('GET /v2/scrape/{id} needs a uuid', async () => {
    assertBadRequest(await api.getScrape('not-a-uuid'), 'params.id');
  });
});

describe('fetching through the API', () => {
  test('redirects 301/302/303/307/308, absolute, a chain, and a meta refresh', async () => {
    const cases: [string, number][] = [
      ['/redirect/301', 1],
      ['/redirect/302', 2],
      ['/redirect/303', 1],
      ['/redirect/307', 2],
      ['/redirect/308', 3],
      ['/redirect/absolute', 1],
      ['/redirect/chain', 1],
      ['/redirect/meta-refresh', 3],
    ];
    for (const [path, n] of cases) {
      const res = await api.scrape({ url: site.url(path), maxAge: 0 });
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      const m = res.json.data.metadata;
      assert.equal(m.sourceURL, site.url(path), path);
      assert.equal(m.url, site.url(`/articles/${n}`), path);
      assert.equal(m.statusCode, 200);
      assert.ok(res.json.data.markdown.startsWith(`# ${articles[n - 1].title}`), path);
    }
  });

  test('a redirect loop is SCRAPE_TOO_MANY_REDIRECTS', async () => {
    assertError(await api.scrape({ url: site.url('/redirect/loop') }), 502, 'SCRAPE_TOO_MANY_REDIRECTS');
    assertError(await api.scrape({ url: site.url('/redirect/endless') }), 502, 'SCRAPE_TOO_MANY_REDIRECTS');
  });

  test('headers reach the target; the caller’s User-Agent wins', async () => {
    const res = await api.scrape({
      url: site.url('/headers'),
      formats: ['rawHtml'],
      headers: { 'X-Gleaner-Test': 'yes', 'User-Agent': 'GleanerTest/1.0' },
    });
    assert.equal(res.status, 200, res.text);
    const seen = JSON.parse(res.json.data.rawHtml);
    assert.equal(seen['x-gleaner-test'], 'yes');
    assert.equal(seen['user-agent'], 'GleanerTest/1.0');
    assert.equal(seen['accept-language'], 'en-US,en;q=0.9');
    const md = await api.scrape({ url: site.url('/headers'), headers: { 'X-Other': '1' } });
    assert.ok(md.json.data.markdown.startsWith('```json\n{'), 'JSON is fenced markdown');
  });

  test('cookies set along a redirect are sent on the next hop', async () => {
    const res = await api.scrape({ url: site.url('/cookies/set?redirect=1'), formats: ['markdown', 'html'] });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.data.metadata.url, site.url('/cookies/show'));
    assert.ok(res.json.data.markdown.includes('session=gleaner123'), res.json.data.markdown);
    assert.ok(res.json.data.markdown.includes('Cookies received:'));
  });

  test('mobile sends a mobile User-Agent; location.languages sets Accept-Language', async () => {
    const url = freshUrl('/about');
    assert.equal(
      (await api.scrape({ url, mobile: true, location: { country: 'DE', languages: ['de-DE', 'fr'] } })).status,
      200,
    );
    const seen = site.requests.filter((r) => r.path === new URL(url).pathname + new URL(url).search).at(-1)!;
    // Mobile emulation runs in the browser (a real device profile) when Chromium is there.
    assert.match(String(seen.headers['user-agent']), /Mobile|Android/);
    assert.match(String(seen.headers['accept-language']), /^de-DE,fr;q=0\.9/);
    const url2 = freshUrl('/about');
    await api.scrape({ url: url2 });
    const seen2 = site.requests.filter((r) => r.path === new URL(url2).pathname + new URL(url2).search).at(-1)!;
    assert.equal(seen2.headers['user-agent'], DESKTOP_USER_AGENT);
  });

  test('gzip, br and deflate pages are decoded', async () => {
    for (const [path, n] of [
      ['/gzip-page', 1],
      ['/br-page', 2],
      ['/deflate-page', 3],
    ] as const) {
      const res = await api.scrape({ url: site.url(path), formats: ['markdown', 'rawHtml'] });
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      assert.ok(res.json.data.markdown.startsWith(`# ${articles[n - 1].title}\n\n${articles[n - 1].lead}`), path);
      assert.ok(res.json.data.rawHtml.startsWith('<!DOCTYPE html>'), path);
      assert.equal(res.json.data.metadata.title, `${articles[n - 1].title} | Gleaner Gazette`);
    }
  });

  test('charsets: header, meta, Shift_JIS, BOM, windows-1252, mislabelled and double-encoded UTF-8 decode exactly', async () => {
    const cases: [string, string, string][] = [
      ['/charset/latin1', charsetTexts.latin1, 'fr'],
      ['/charset/meta-latin1', charsetTexts.metaLatin1, 'fr'],
      ['/charset/shift_jis', charsetTexts.shiftJis, 'ja'],
      ['/charset/utf8-bom', charsetTexts.utf8Bom, 'de'],
      ['/charset/windows-1252', charsetTexts.windows1252, 'en'],
      ['/charset/utf8-labelled-latin1', charsetTexts.utf8UnderLatin1, 'en'],
      ['/charset/double-encoded', charsetTexts.doubleEncoded, 'en'],
    ];
    for (const [path, text, lang] of cases) {
      const res = await api.scrape({ url: site.url(path), formats: ['markdown', 'rawHtml'] });
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      const md: string = res.json.data.markdown;
      assert.ok(md.split('\n').includes(text), `${path}: ${JSON.stringify(md)}`);
      assert.ok(res.json.data.rawHtml.includes(`<p>${text}</p>`), `${path}: rawHtml decoded`);
      assert.ok(!res.json.data.rawHtml.includes('\ufeff'), `${path}: no BOM`);
      assert.equal(res.json.data.metadata.language, lang);
    }
    // Repair touches only runs holding a C1 control: quoted mojibake is the page's text.
    const quoted = await api.scrape({ url: site.url('/charset/double-encoded') });
    assert.ok(quoted.json.data.markdown.includes('Mojibake looks like "Ã¤" for ä.'), quoted.json.data.markdown);
    const sjis = await api.scrape({ url: site.url('/charset/shift_jis') });
    assert.equal(sjis.json.data.metadata.title, charsetTexts.shiftJis);
  });
});

describe('scrape errors', () => {
  let svc: TestService;
  before(() => {
    svc = services.get(storeKinds[0])!;
  });

  test('a slow target times out with 408 SCRAPE_TIMEOUT, promptly', async () => {
    const started = Date.now();
    assertError(await api.scrape({ url: site.url('/slow?ms=5000'), timeout: 1000 }), 408, 'SCRAPE_TIMEOUT');
    const took = Date.now() - started;
    assert.ok(took >= 900 && took < 4000, `took ${took} ms (the fixture would answer after 5000)`);
  });

  test('a name that never resolves is SCRAPE_DNS_RESOLUTION_ERROR', async () => {
    const res = await api.scrape({ url: 'http://gleaner-no-such-host.invalid/' });
    assertError(res, 502, 'SCRAPE_DNS_RESOLUTION_ERROR');
    assert.match(res.json.error, /gleaner-no-such-host\.invalid/);
    // Under zero data retention the error (which is also logged) does not name the target.
    const quiet = await api.scrape({ url: 'http://gleaner-no-such-host.invalid/', zeroDataRetention: true });
    assertError(quiet, 502, 'SCRAPE_DNS_RESOLUTION_ERROR');
    assert.doesNotMatch(quiet.json.error, /gleaner-no-such-host/);
  });

  test('a refused connection is SCRAPE_CONNECTION_ERROR', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    assertError(await api.scrape({ url: `http://127.0.0.1:${port}/` }), 502, 'SCRAPE_CONNECTION_ERROR');
  });

  test('a self-signed certificate: SCRAPE_SSL_ERROR when verifying, fine by default (skipTlsVerification true)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gleaner-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
          '-days',
          '1',
          '-subj',
          '/CN=127.0.0.1',
        ],
        { stdio: 'ignore' },
      );
      const tls = createHttpsServer(
        { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
        (_rq, rs) =>
          rs
            .writeHead(200, { 'content-type': 'text/html' })
            .end('<html><head><title>Secure</title></head><body><h1>Secure page</h1><p>Over TLS.</p></body></html>'),
      );
      await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
      try {
        const url = `https://127.0.0.1:${(tls.address() as AddressInfo).port}/`;
        assertError(await api.scrape({ url, skipTlsVerification: false }), 502, 'SCRAPE_SSL_ERROR');
        const ok = await api.scrape({ url });
        assert.equal(ok.status, 200, ok.text);
        assert.equal(ok.json.data.markdown, '# Secure page\n\nOver TLS.');
        assert.equal(ok.json.data.metadata.title, 'Secure');
      } finally {
        tls.closeAllConnections();
        tls.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a body over SCRAPE_MAX_BYTES is SCRAPE_RESPONSE_TOO_LARGE', async () => {
    assertError(await api.scrape({ url: site.url('/large?kb=1500') }), 502, 'SCRAPE_RESPONSE_TOO_LARGE');
    const fits = await api.scrape({ url: site.url('/large?kb=100') });
    assert.equal(fits.status, 200);
    assert.ok(fits.json.data.markdown.startsWith('# Large article'));
  });

  test('a file Gleaner cannot convert is 415 SCRAPE_UNSUPPORTED_FILE_ERROR (documents: test/api/scrape-documents.test.ts)', async () => {
    const res = await api.scrape({ url: site.url('/files/image.png') });
    assertError(res, 415, 'SCRAPE_UNSUPPORTED_FILE_ERROR');
    assert.match(res.json.error, /image\/png/);
  });

  test('a target that does not speak HTTP is SCRAPE_SITE_ERROR', async () => {
    const garbage = createNetServer((socket) => socket.end('HELLO THIS IS NOT HTTP\r\n\r\n'));
    await new Promise<void>((r) => garbage.listen(0, '127.0.0.1', r));
    try {
      assertError(
        await api.scrape({ url: `http://127.0.0.1:${(garbage.address() as AddressInfo).port}/` }),
        502,
        'SCRAPE_SITE_ERROR',
      );
    } finally {
      garbage.close();
    }
  });

  test('over the team’s concurrency limit a scrape waits (concurrencyLimited) and a wait past its timeout fails the job', async () => {
    const team = await ensureTeam(svc.db, 'scrape-concurrency');
    const { key } = await createApiKey(svc.db, team.id);
    const mine = apiClient(svc, key);
    const max = svc.config.teamMaxConcurrency;
    const busyUrls = Array.from({ length: max }, () => freshUrl('/slow?ms=2500'));
    const busy = busyUrls.map((url) => mine.scrape({ url }));
    // Every slot is taken once the fixture has seen every slow request.
    await site.requested('every slow request', () => busyUrls.every((u) => hits(u) > 0));
    assert.ok(
      busyUrls.every((u) => hits(u) === 1),
      'the slow requests reached the fixture',
    );
    const impatientUrl = freshUrl('/about');
    const impatient = mine.scrape({ url: impatientUrl, timeout: 1000 });
    const patient = mine.scrape({ url: freshUrl('/about'), timeout: 20_000 });
    assertError(await impatient, 408, 'SCRAPE_TIMEOUT');
    const waited = await patient;
    assert.equal(waited.status, 200, waited.text);
    assert.equal(waited.json.data.metadata.concurrencyLimited, true);
    assert.ok(
      waited.json.data.metadata.concurrencyQueueDurationMs >= 1000,
      String(waited.json.data.metadata.concurrencyQueueDurationMs),
    );
    for (const r of await Promise.all(busy)) {
      assert.equal(r.status, 200);
      assert.equal(r.json.data.metadata.concurrencyLimited, undefined, JSON.stringify(r.json.data.metadata));
    }
    assert.equal(hits(impatientUrl), 0);
    await svc.settled();
    const { rows } = await svc.db.query<{ status: string; error: string | null }>(
      'SELECT status, error FROM jobs WHERE team_id = $1 AND target = $2',
      [team.id, impatientUrl],
    );
    assert.deepEqual(rows, [{ status: 'failed', error: 'SCRAPE_TIMEOUT' }]);
  });

  test('failed scrapes are failed jobs without a document, and the process keeps serving', async () => {
    await svc.settled();
    const { rows } = await svc.db.query<{ status: string; error: string }>(
      `SELECT status, error FROM jobs WHERE endpoint = 'scrape' AND status = 'failed' ORDER BY created_at`,
    );
    const codes = new Set(rows.map((r) => r.error));
    for (const code of [
      'SCRAPE_TIMEOUT',
      'SCRAPE_DNS_RESOLUTION_ERROR',
      'SCRAPE_CONNECTION_ERROR',
      'SCRAPE_SSL_ERROR',
      'SCRAPE_RESPONSE_TOO_LARGE',
      'SCRAPE_UNSUPPORTED_FILE_ERROR',
      'SCRAPE_SITE_ERROR',
    ]) {
      assert.ok(codes.has(code), `${code} recorded: ${[...codes]}`);
    }
    assert.equal((await api('GET', '/health')).status, 200);
    const res = await api.scrape({ url: site.url('/about') });
    assert.equal(res.status, 200);
  });
});

describe('SSRF', () => {
  test('without GLEANER_ALLOW_PRIVATE_NETWORK loopback targets are 403 SCRAPE_BLOCKED_URL and never contacted', async () => {
    const strict = await startTestService({ env: { GLEANER_ALLOW_PRIVATE_NETWORK: 'false' } });
    try {
      const strictApi = apiClient(strict);
      const before = site.requests.length;
      // Loopback only: even if the guard regressed, no traffic could leave the machine.
      for (const url of [
        site.url('/articles/1'),
        `${site.hostOrigin('localhost')}/articles/1`,
        `http://[::1]:${site.port}/`,
        `http://127.0.0.2:${site.port}/`,
      ]) {
        const res = await strictApi.scrape({ url });
        assertError(res, 403, 'SCRAPE_BLOCKED_URL');
        assert.match(res.json.error, /GLEANER_ALLOW_PRIVATE_NETWORK/);
      }
      assert.equal(site.requests.length, before, 'the fixture saw no request');
    } finally {
      await strict.destroy();
    }
    // The services of this file run with the setting on: the same URL works.
    const ok = await api.scrape({ url: site.url('/articles/1') });
    assert.equal(ok.status, 200);
  });

  test('a redirect from an allowed (public) host to a private address is refused', async () => {
    const pub = `http://public.test:${site.port}`;
    // The hook lets the "public" host through: a same-host redirect works.
    const ok = await api('POST', '/test/guarded-scrape', {
      url: `${pub}/redirect/to?url=${encodeURIComponent('/about')}`,
    });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.data.metadata.url, `${pub}/about`);
    assert.ok(ok.json.data.markdown.startsWith('# About the Gleaner Gazette'));
    assert.equal(site.requests.at(-1)!.host, 'public.test');

    // Private targets on loopback only (127.0.0.1, localhost by name, 127.0.0.2), so that a broken
    // guard could still not send traffic off the machine.
    for (const target of [
      site.url('/articles/2'),
      `${site.hostOrigin('localhost')}/articles/2`,
      `http://127.0.0.2:${site.port}/articles/2`,
    ]) {
      const before = site.requests.length;
      const res = await api('POST', '/test/guarded-scrape', {
        url: `${pub}/redirect/to?url=${encodeURIComponent(target)}`,
      });
      assertError(res, 403, 'SCRAPE_BLOCKED_URL');
      assert.equal(site.requests.length, before + 1, `only the redirecting hop reached the fixture (${target})`);
      assert.equal(site.requests.at(-1)!.path.split('?')[0], '/redirect/to');
    }
  });
});

// ---------------------------------------------------------------------------------------------
// Cache, credits, retention and retrieval: on every store.

for (const store of storeKinds) {
  describe(`scrape cache, credits and retrieval on ${store}`, () => {
    let svc: TestService;
    let api: Api;
    before(() => {
      svc = services.get(store)!;
      api = apiClient(svc);
    });

    test('the second scrape is a cache hit with cachedAt; maxAge 0 fetches again', async () => {
      const url = freshUrl();
      const first = await api.scrape({ url });
      assert.equal(first.status, 200, first.text);
      assert.equal(first.json.data.metadata.cacheState, 'miss');
      assert.equal(hits(url), 1);

      const second = await api.scrape({ url, formats: ['markdown', 'links'] });
      assert.equal(second.json.data.metadata.cacheState, 'hit');
      assert.equal(hits(url), 1, 'served from the cache');
      const cachedAt = Date.parse(second.json.data.metadata.cachedAt);
      assert.ok(Math.abs(cachedAt - Date.now()) < 60_000, second.json.data.metadata.cachedAt);
      assert.equal(second.json.data.markdown, first.json.data.markdown, 'same content, transformed again');
      assert.ok(second.json.data.links.length > 5, 'formats of this request apply to the cached page');
      assert.notEqual(second.json.data.metadata.scrapeId, first.json.data.metadata.scrapeId, 'a new job');
      assert.equal(second.json.data.metadata.creditsUsed, 1);

      const forced = await api.scrape({ url, maxAge: 0 });
      assert.equal(forced.json.data.metadata.cacheState, 'miss');
      assert.equal(forced.json.data.metadata.cachedAt, undefined);
      assert.equal(hits(url), 2);
    });

    test('a cached binary body round-trips byte for byte (rawBase64 from the cache)', async () => {
      const url = freshUrl('/files/image.png');
      const miss = await api.scrape({ url, formats: ['rawBase64'] });
      const hit = await api.scrape({ url, formats: ['rawBase64'] });
      assert.equal(miss.json.data.metadata.cacheState, 'miss');
      assert.equal(hit.json.data.metadata.cacheState, 'hit');
      assert.deepEqual(Buffer.from(hit.json.data.rawBase64, 'base64'), allDocuments()['image.png']);
      assert.equal(hit.json.data.metadata.contentType, 'image/png');
      const gz = freshUrl('/gzip-page');
      await api.scrape({ url: gz });
      const gzHit = await api.scrape({ url: gz, formats: ['markdown', 'rawHtml'] });
      assert.equal(gzHit.json.data.metadata.cacheState, 'hit');
      assert.ok(gzHit.json.data.rawHtml.startsWith('<!DOCTYPE html>'), 'the decoded body was cached');
      const latin = freshUrl('/charset/latin1');
      await api.scrape({ url: latin });
      const latinHit = await api.scrape({ url: latin });
      assert.equal(latinHit.json.data.metadata.cacheState, 'hit');
      assert.ok(latinHit.json.data.markdown.includes(charsetTexts.latin1), 'the charset was cached with the body');
    });

    test('storeInCache false stores nothing', async () => {
      const url = freshUrl();
      assert.equal((await api.scrape({ url, storeInCache: false })).json.data.metadata.cacheState, 'miss');
      assert.equal((await api.scrape({ url })).json.data.metadata.cacheState, 'miss', 'nothing was stored');
      assert.equal((await api.scrape({ url })).json.data.metadata.cacheState, 'hit');
      assert.equal(hits(url), 2);
    });

    test('headers make the page the caller’s own: not read from, not written to the cache', async () => {
      const url = freshUrl('/headers');
      const a = await api.scrape({ url, headers: { 'X-Team-Secret': 's3cret' }, formats: ['rawHtml'] });
      assert.equal(a.json.data.metadata.cacheState, 'miss');
      assert.equal(JSON.parse(a.json.data.rawHtml)['x-team-secret'], 's3cret');
      const b = await api.scrape({ url, headers: { 'X-Team-Secret': 's3cret' } });
      assert.equal(b.json.data.metadata.cacheState, 'miss');
      const c = await api.scrape({ url, formats: ['rawHtml'] });
      assert.equal(c.json.data.metadata.cacheState, 'miss', 'the personalised page was not stored');
      assert.equal(JSON.parse(c.json.data.rawHtml)['x-team-secret'], undefined);
      assert.equal(hits(url), 3);
    });

    test('the cache key distinguishes mobile, not fragments', async () => {
      const url = freshUrl();
      assert.equal((await api.scrape({ url })).json.data.metadata.cacheState, 'miss');
      assert.equal((await api.scrape({ url, mobile: true })).json.data.metadata.cacheState, 'miss');
      assert.match(
        String(
          site.requests.filter((r) => r.path === new URL(url).pathname + new URL(url).search).at(-1)!.headers[
            'user-agent'
          ],
        ),
        /Mobile|Android/,
      );
      assert.equal((await api.scrape({ url, mobile: true })).json.data.metadata.cacheState, 'hit');
      assert.equal((await api.scrape({ url })).json.data.metadata.cacheState, 'hit');
      assert.equal(hits(url), 2);
      // The fragment is not part of the key, and one request's fragment never leaks into another's url.
      const withHash = await api.scrape({ url: `${url}#section` });
      assert.equal(withHash.json.data.metadata.cacheState, 'hit');
      assert.equal(withHash.json.data.metadata.sourceURL, `${url}#section`);
      assert.equal(withHash.json.data.metadata.url, `${url}#section`);
      const other = freshUrl();
      const first = await api.scrape({ url: `${other}#team` });
      assert.equal(first.json.data.metadata.cacheState, 'miss');
      assert.equal(first.json.data.metadata.url, `${other}#team`);
      const plain = await api.scrape({ url: other });
      assert.equal(plain.json.data.metadata.cacheState, 'hit');
      assert.equal(plain.json.data.metadata.url, other);
    });

    test('minAge: no copy is 404 SCRAPE_NO_CACHED_DATA without contacting the target; a copy old enough is a hit', async () => {
      const url = freshUrl();
      assertError(await api.scrape({ url, minAge: 1 }), 404, 'SCRAPE_NO_CACHED_DATA');
      assert.equal(hits(url), 0, 'the target was not contacted');
      await api.scrape({ url });
      await new Promise((r) => setTimeout(r, 5));
      const hit = await api.scrape({ url, minAge: 1 });
      assert.equal(hit.status, 200, hit.text);
      assert.equal(hit.json.data.metadata.cacheState, 'hit');
      assertError(await api.scrape({ url, minAge: 3_600_000 }), 404, 'SCRAPE_NO_CACHED_DATA');
      assert.equal(hits(url), 1);
    });

    test('minAge 1 accepts any cached copy, even one older than the default maxAge; an explicit maxAge still caps it', async () => {
      const url = freshUrl();
      await api.scrape({ url });
      await svc.settled();
      await svc.db.query(`UPDATE page_cache SET fetched_at = now() - interval '3 days' WHERE url = $1`, [url]);
      const old = await api.scrape({ url, minAge: 1 });
      assert.equal(old.status, 200, old.text);
      assert.equal(old.json.data.metadata.cacheState, 'hit');
      assert.ok(Date.now() - Date.parse(old.json.data.metadata.cachedAt) > 2.9 * 86_400_000);
      assertError(await api.scrape({ url, minAge: 1, maxAge: 86_400_000 }), 404, 'SCRAPE_NO_CACHED_DATA');
      assert.equal(hits(url), 1);
      const refreshed = await api.scrape({ url });
      assert.equal(
        refreshed.json.data.metadata.cacheState,
        'miss',
        'older than the default maxAge (2 days): fetched again',
      );
      assert.equal(hits(url), 2);
    });

    test('lockdown: a miss is 404 SCRAPE_LOCKDOWN_CACHE_MISS for 1 credit, a hit costs 5; the target is never contacted nor the URL recorded', async () => {
      const url = freshUrl();
      let used = await api.creditsUsed();
      assertError(await api.scrape({ url, lockdown: true }), 404, 'SCRAPE_LOCKDOWN_CACHE_MISS');
      assert.equal(hits(url), 0);
      assert.equal(await api.creditsUsed(), used + 1, 'a lockdown miss costs 1 credit');

      used = await api.creditsUsed();
      const regular = await api.scrape({ url });
      assert.equal(regular.json.data.metadata.creditsUsed, 1);
      assert.equal(await api.creditsUsed(), used + 1, 'a regular scrape costs 1 credit');
      assert.equal(hits(url), 1);

      used = await api.creditsUsed();
      const locked = await api.scrape({ url, lockdown: true });
      assert.equal(locked.status, 200, locked.text);
      assert.equal(locked.json.data.metadata.cacheState, 'hit');
      assert.equal(locked.json.data.metadata.creditsUsed, 5);
      assert.equal(await api.creditsUsed(), used + 5, 'a lockdown hit costs 5 credits');
      assert.equal(hits(url), 1, 'lockdown never contacts the target');
      await svc.settled();
      const { rows } = await svc.db.query<{ credits: number; target: string | null }>(
        'SELECT credits, target FROM jobs WHERE id = $1',
        [locked.json.data.metadata.scrapeId],
      );
      assert.deepEqual(rows[0], { credits: 5, target: null });
      // Lockdown is treated as zero data retention: the document is not kept either.
      assertError(await api.getScrape(locked.json.data.metadata.scrapeId), 404, 'SCRAPE_NOT_FOUND');
      assert.equal((await api.getScrape(regular.json.data.metadata.scrapeId)).status, 200);

      const activity = await api.activity('?endpoint=scrape&limit=100');
      const targets = activity.json.data.map((e: { target: string | null }) => e.target);
      assert.equal(
        targets.filter((t: string | null) => t === url).length,
        1,
        'only the regular scrape recorded the URL',
      );
    });

    test('zeroDataRetention: nothing stored, neither the document nor the page, nor the URL', async () => {
      const url = freshUrl();
      const res = await api.scrape({ url, zeroDataRetention: true });
      assert.equal(res.status, 200, res.text);
      const id = res.json.data.metadata.scrapeId;
      assert.match(id, UUID);
      assertError(await api.getScrape(id), 404, 'SCRAPE_NOT_FOUND');
      assert.equal((await api.scrape({ url })).json.data.metadata.cacheState, 'miss', 'the page was not cached');
      assert.equal(hits(url), 2);
      await svc.settled();
      const { rows } = await svc.db.query<{ target: string | null }>('SELECT target FROM jobs WHERE id = $1', [id]);
      assert.equal(rows[0].target, null);
    });

    test('GET /v2/scrape/{id}: the owner gets the same document; another team and unknown ids get 404', async () => {
      const url = freshUrl();
      const res = await api.scrape({ url, formats: ['markdown', 'links', 'summary'] });
      assert.equal(res.status, 200);
      const id = res.json.data.metadata.scrapeId;
      const mine = await api.getScrape(id);
      assert.equal(mine.status, 200, mine.text);
      assert.equal(mine.json.success, true);
      assert.deepEqual(mine.json.data, res.json.data);

      const other = await ensureTeam(svc.db, `scrape-other-${store}`);
      const { key } = await createApiKey(svc.db, other.id);
      const theirs = await apiClient(svc, key).getScrape(id);
      assertError(theirs, 404, 'SCRAPE_NOT_FOUND');
      assert.ok(!theirs.text.includes(url));
      assertError(await api.getScrape('00000000-0000-4000-8000-000000000000'), 404, 'SCRAPE_NOT_FOUND');
      assertError(await api.getScrape(randomUUID()), 404, 'SCRAPE_NOT_FOUND');
    });

    test('a team without credits gets 402 and the target is not contacted', async () => {
      const team = await ensureTeam(svc.db, `scrape-broke-${store}`);
      await setCreditQuota(svc.db, team.id, 0);
      const { key } = await createApiKey(svc.db, team.id);
      const url = freshUrl();
      assertError(await apiClient(svc, key).scrape({ url }), 402, 'INSUFFICIENT_CREDITS');
      assert.equal(hits(url), 0);
    });

    test('home page scrape still works after all of the above (sanity on this store)', async () => {
      const res = await api.scrape({ url: site.url('/'), maxAge: 0 });
      assert.equal(res.status, 200);
      assert.ok(res.json.data.markdown.startsWith(`# ${homeText.heading}`));
    });
  });
}
