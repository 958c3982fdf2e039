// Crawls end to end: the real service (embedded workers) against the fixture site, on PGlite and,
// with TEST_DATABASE_URL, on Postgres: the link graph crawled once per page, robots.txt, sitemap
// modes, limit and maxDiscoveryDepth exact, include/exclude, pagination through `next`, cancel,
// team scoping, validation and the options refused by name. Webhooks: test/jobs/webhooks.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey, ensureTeam } from '../../src/store/teams.ts';
import {
  type FixtureSite,
  blogPaths,
  disallowedPages,
  generatedLinks,
  linkedPages,
  sitemapArticlePaths,
  sitemapOnlyPages,
  sitemapPagePaths,
} from '../fixtures/site/index.ts';
import { type Api, type JobDoc, apiClient } from '../helpers/api.ts';
import {
  type TestService,
  startSiteAndService,
  startTestService,
  stopSiteAndService,
  storeKinds,
} from '../helpers/service.ts';
import '../helpers/loopback-dns.ts';
import { urlKey } from '../../src/net/url-key.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const store of storeKinds) {
  describe(`crawl (${store})`, () => {
    let site: FixtureSite;
    let svc: TestService;
    let api: Api;
    let main: string;

    before(async () => ({ site, svc, api, main } = await startSiteAndService({ store })));
    after(() => stopSiteAndService(svc, site));

    const keys = (docs: JobDoc[]) => docs.map((d) => urlKey(d.metadata.sourceURL)!);
    const mainKeys = (paths: string[]) => paths.map((p) => urlKey(`${main}${p}`)!);
    const assertOnce = (docs: JobDoc[]) => {
      const k = keys(docs);
      assert.equal(new Set(k).size, k.length, `duplicates: ${k.join(' ')}`);
    };

    /** Pages of /generated/?total=T reachable from page 1 within `depth` links. */
    function generatedWithin(depth: number, total: number): Set<number> {
      const seen = new Set([1]);
      let level = [1];
      for (let d = 0; d < depth; d++) {
        const next: number[] = [];
        for (const n of level) {
          for (const m of generatedLinks(n, total)) {
            if (seen.has(m)) continue;
            seen.add(m);
            next.push(m);
          }
        }
        level = next;
      }
      return seen;
    }

    let siteCrawl: string;

    test('the fixture site: every linked robots-allowed page exactly once, markdown by default', async () => {
      siteCrawl = await api.startCrawl({ url: `${main}/`, sitemap: 'skip' });
      const status = await api.waitForCrawl(siteCrawl);
      assert.equal(status.status, 'completed');
      assert.ok(status.completedAt && status.expiresAt && status.createdAt);
      assert.equal(typeof status.duration, 'number');
      const docs = await api.crawlDocs(siteCrawl);
      assertOnce(docs);
      assert.deepEqual(new Set(keys(docs)), new Set(mainKeys(linkedPages)));
      assert.equal(status.completed, docs.length);
      assert.equal(status.creditsUsed, docs.length);
      for (const d of docs) {
        assert.equal(typeof d.markdown, 'string');
        assert.equal(d.links, undefined, 'links were not asked for');
        assert.ok(d.metadata.scrapeId);
      }
      assert.equal(new Set(docs.map((d) => d.metadata.scrapeId)).size, docs.length, 'one scrapeId per page');
      // One job in the ledger (endpoint crawl) carries the crawl's credits.
      const activity = await api.activity('?endpoint=crawl');
      assert.ok(
        activity.json.data.some((j: { id: string; endpoint: string }) => j.id === siteCrawl && j.endpoint === 'crawl'),
      );
      const { rows } = await svc.db.query<{ credits: number; status: string }>(
        'SELECT credits, status FROM jobs WHERE id = $1',
        [siteCrawl],
      );
      assert.deepEqual(rows[0], { credits: docs.length, status: 'completed' });
      assert.ok(docs.find((d) => d.metadata.sourceURL === `${main}/articles/1`)?.markdown?.length);
      // Robots-disallowed pages are reported, never fetched.
      const errors = await api.crawlErrors(siteCrawl);
      assert.equal(errors.status, 200, errors.text);
      assert.equal(errors.json.success, undefined);
      assert.deepEqual(
        errors.json.robotsBlocked,
        disallowedPages.map((p) => `${main}${p}`),
      );
      assert.ok(Array.isArray(errors.json.errors));
      assert.ok(!site.requests.some((r) => r.path.startsWith('/private/secret')));
    });

    test('pagination through next with a small limit returns every page exactly once', async () => {
      const full = await api.crawlDocs(siteCrawl);
      const paged = await api.crawlDocs(siteCrawl, 3);
      assertOnce(paged);
      assert.deepEqual(keys(paged), keys(full));
      const last = await api.crawlStatus(siteCrawl, `?skip=${full.length}`);
      assert.equal(last.json.data.length, 0);
      assert.equal(last.json.next, null, 'a completed crawl with nothing left has no next');
    });

    test('sitemap include adds sitemap-only pages; only: sitemap URLs alone', async () => {
      const inc = await api.startCrawl({ url: `${main}/`, scrapeOptions: { formats: ['links'] } });
      assert.equal((await api.waitForCrawl(inc)).status, 'completed');
      const docs = await api.crawlDocs(inc);
      assertOnce(docs);
      const got = new Set(keys(docs));
      for (const k of mainKeys([...linkedPages, ...sitemapOnlyPages])) assert.ok(got.has(k), `${k} missing`);
      assert.ok(
        docs.every((d) => Array.isArray(d.links) && d.markdown === undefined),
        'formats as asked',
      );

      const only = await api.startCrawl({ url: `${main}/`, sitemap: 'only', maxDiscoveryDepth: 0 });
      assert.equal((await api.waitForCrawl(only)).status, 'completed');
      const onlyDocs = await api.crawlDocs(only);
      assertOnce(onlyDocs);
      assert.deepEqual(new Set(keys(onlyDocs)), new Set(mainKeys([...sitemapPagePaths, ...sitemapArticlePaths])));
    });

    test('limit is exact', async () => {
      const id = await api.startCrawl({
        url: `${main}/generated/1?total=200`,
        sitemap: 'skip',
        crawlEntireDomain: true,
        limit: 17,
      });
      const status = await api.waitForCrawl(id);
      const docs = await api.crawlDocs(id);
      assertOnce(docs);
      assert.equal(docs.length, 17);
      assert.equal(status.total, 17);
      assert.equal(status.completed, 17);
    });

    test('maxDiscoveryDepth is exact', async () => {
      for (const depth of [0, 1, 2, 5]) {
        const id = await api.startCrawl({
          url: `${main}/generated/1?total=200`,
          sitemap: 'skip',
          crawlEntireDomain: true,
          maxDiscoveryDepth: depth,
        });
        await api.waitForCrawl(id);
        const docs = await api.crawlDocs(id);
        assertOnce(docs);
        const expected = [...generatedWithin(depth, 200)].map((n) => urlKey(`${main}/generated/${n}?total=200`)!);
        assert.deepEqual(new Set(keys(docs)), new Set(expected), `depth ${depth}`);
      }
    });

    test(
      'two processes on one Postgres: every page exactly once, limit exact',
      { skip: store !== 'postgres' && 'needs Postgres' },
      async () => {
        const second = await startTestService({ store, shareWith: svc });
        try {
          const id = await api.startCrawl({
            url: `${main}/generated/1?total=200`,
            sitemap: 'skip',
            crawlEntireDomain: true,
            maxDiscoveryDepth: 4,
          });
          await api.waitForCrawl(id);
          const docs = await api.crawlDocs(id);
          assertOnce(docs);
          const expected = [...generatedWithin(4, 200)].map((n) => urlKey(`${main}/generated/${n}?total=200`)!);
          assert.deepEqual(new Set(keys(docs)), new Set(expected));
          const limited = await api.startCrawl({
            url: `${main}/generated/1?total=200`,
            sitemap: 'skip',
            crawlEntireDomain: true,
            limit: 23,
          });
          const status = await api.waitForCrawl(limited);
          assert.equal((await api.crawlDocs(limited)).length, 23);
          assert.equal(status.creditsUsed, 23);
        } finally {
          await second.destroy();
        }
      },
    );

    test('without crawlEntireDomain only pages below the start path are followed', async () => {
      const id = await api.startCrawl({ url: `${main}/docs/api`, sitemap: 'skip' });
      await api.waitForCrawl(id);
      assert.deepEqual(keys(await api.crawlDocs(id)), mainKeys(['/docs/api']));
    });

    test('includePaths and excludePaths', async () => {
      const inc = await api.startCrawl({ url: `${main}/`, sitemap: 'skip', includePaths: ['^/articles/'] });
      await api.waitForCrawl(inc);
      assert.deepEqual(
        new Set(keys(await api.crawlDocs(inc))),
        new Set(mainKeys(['/', '/articles/1', '/articles/2', '/articles/3'])),
      );

      const exc = await api.startCrawl({ url: `${main}/`, sitemap: 'skip', excludePaths: ['^/articles/', 'widget'] });
      await api.waitForCrawl(exc);
      const expected = linkedPages.filter((p) => !p.startsWith('/articles/') && !p.includes('widget'));
      assert.deepEqual(new Set(keys(await api.crawlDocs(exc))), new Set(mainKeys(expected)));

      const full = await api.startCrawl({
        url: `${main}/`,
        sitemap: 'skip',
        includePaths: ['localhost:\\d+/about$'],
        regexOnFullURL: true,
      });
      await api.waitForCrawl(full);
      assert.deepEqual(new Set(keys(await api.crawlDocs(full))), new Set(mainKeys(['/', '/about'])));
    });

    test('a catastrophic includePaths pattern against long URLs: the crawl ends promptly, the service keeps answering', async () => {
      // `(a+)+$` backtracks exponentially on a run of a's followed by another character: on a
      // backtracking engine one such URL blocks the event loop for good. RE2 is linear.
      // The start URL is checked against includePaths too: it ends in an `a`.
      const base = '/mutable/redos/a';
      const hit = `${base}/${'a'.repeat(1000)}`;
      const misses = [40, 2000, 8000].map((n) => `${base}/${'a'.repeat(n)}!`);
      const links = [hit, ...misses].map((p) => `<a href="${p}">link</a>`).join('\n');
      site.mutable.set(base, { html: `<html><body><h1>Long links</h1>${links}</body></html>` });
      for (const p of [hit, ...misses]) site.mutable.set(p, { html: '<html><body><p>leaf</p></body></html>' });
      try {
        const startedAt = Date.now();
        const id = await api.startCrawl({ url: `${main}${base}`, sitemap: 'skip', includePaths: ['(a+)+$'] });
        const health = await api('GET', '/health');
        assert.equal(health.status, 200, health.text);
        const done = await api.waitForCrawl(id, 10_000);
        assert.equal(done.status, 'completed', JSON.stringify(done).slice(0, 500));
        assert.ok(Date.now() - startedAt < 10_000, `took ${Date.now() - startedAt} ms`);
        const got = keys(await api.crawlDocs(id));
        assert.deepEqual(new Set(got), new Set(mainKeys([base, hit])), got.map((k) => k.slice(0, 80)).join(' '));
        assert.equal((await api('GET', '/health')).status, 200);
      } finally {
        for (const p of [base, hit, ...misses]) site.mutable.delete(p);
      }
    });

    test('allowSubdomains follows links to other hosts of the site', async () => {
      const blog = site.hostOrigin('blog');
      const id = await api.startCrawl({ url: `${main}/`, sitemap: 'skip', allowSubdomains: true });
      await api.waitForCrawl(id);
      const docs = await api.crawlDocs(id);
      assertOnce(docs);
      const expected = [...mainKeys(linkedPages), ...blogPaths.map((p) => urlKey(`${blog}${p}`)!)];
      assert.deepEqual(new Set(keys(docs)), new Set(expected));
    });

    test('ignoreRobotsTxt fetches disallowed pages', async () => {
      const id = await api.startCrawl({
        url: `${main}/`,
        sitemap: 'skip',
        ignoreRobotsTxt: true,
        includePaths: ['^/private/'],
      });
      await api.waitForCrawl(id);
      const got = new Set(keys(await api.crawlDocs(id)));
      assert.ok(got.has(mainKeys(['/private/secret'])[0]));
      assert.deepEqual((await api.crawlErrors(id)).json.robotsBlocked, []);
    });

    test('cancel stops new pages; active lists running crawls; next while running', async () => {
      const id = await api.startCrawl({
        url: `${main}/generated/1?total=2000`,
        sitemap: 'skip',
        crawlEntireDomain: true,
        delay: 0.2,
      });
      const running = await api.crawlStatus(id);
      assert.equal(running.json.status, 'scraping');
      assert.equal(running.json.completedAt, undefined);
      assert.ok(running.json.next, 'next is present while the crawl runs');
      const active = await api('GET', '/v2/crawl/active');
      assert.equal(active.status, 200, active.text);
      assert.ok(
        active.json.crawls.some((c: { id: string; url: string }) => c.id === id && c.url.includes('/generated/1')),
      );
      assert.ok((await api('GET', '/v2/crawl/ongoing')).json.crawls.some((c: { id: string }) => c.id === id));
      await sleep(700);
      const del = await api.cancelCrawl(id);
      assert.equal(del.status, 200, del.text);
      assert.deepEqual(del.json, { status: 'cancelled' });
      await sleep(1000);
      const seen = site.requests.filter((r) => r.path.startsWith('/generated/')).length;
      await sleep(1500);
      assert.equal(
        site.requests.filter((r) => r.path.startsWith('/generated/')).length,
        seen,
        'no page fetched after the cancel settled',
      );
      const status = await api.crawlStatus(id);
      assert.equal(status.json.status, 'cancelled');
      assert.ok(status.json.completedAt);
      assert.ok(status.json.completed < 20, `delay paced the crawl: ${status.json.completed}`);
      assert.ok(!(await api('GET', '/v2/crawl/active')).json.crawls.some((c: { id: string }) => c.id === id));
    });

    test('pages that fail are listed in errors with their code; a crawl that scraped nothing ends failed', async () => {
      const id = await api.startCrawl({ url: `${main}/redirect/loop`, sitemap: 'skip' });
      const status = await api.waitForCrawl(id);
      assert.equal(status.status, 'failed');
      assert.ok(status.completedAt);
      assert.equal(status.completed, 0);
      assert.equal(status.creditsUsed, 0);
      assert.deepEqual(status.data, []);
      const errors = (await api.crawlErrors(id)).json;
      assert.equal(errors.errors.length, 1);
      const [e] = errors.errors;
      assert.equal(e.url, `${main}/redirect/loop`);
      assert.equal(e.code, 'SCRAPE_TOO_MANY_REDIRECTS');
      assert.ok(e.id && e.error && !Number.isNaN(Date.parse(e.timestamp)));
    });

    test("another team's crawl is 404; unknown ids are 404", async () => {
      const other = await ensureTeam(svc.db, `crawl-other-${store}`);
      const otherApi = apiClient(svc, (await createApiKey(svc.db, other.id)).key);
      for (const [method, path] of [
        ['GET', `/v2/crawl/${siteCrawl}`],
        ['DELETE', `/v2/crawl/${siteCrawl}`],
        ['GET', `/v2/crawl/${siteCrawl}/errors`],
      ] as const) {
        const res = await otherApi(method, path);
        assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
        assert.equal(res.json.success, false);
      }
      assert.equal((await api('GET', '/v2/crawl/00000000-0000-4000-8000-000000000000')).status, 404);
      assert.equal((await api.crawlStatus(siteCrawl)).json.status, 'completed', 'the owner still sees it');
    });

    test('400s name the field; options not supported yet are refused by name', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ url: `${main}/`, includePaths: ['['] }, 'body.includePaths.0'],
        [{ url: `${main}/`, includePaths: ['^/blog/', '(?<=/)secret'] }, 'body.includePaths.1'],
        [{ url: `${main}/`, excludePaths: ['(draft)-\\1'] }, 'body.excludePaths.0'],
        [{ url: `${main}/`, excludePaths: ['^/(?!blog)'] }, 'body.excludePaths.0'],
        [{ url: `${main}/`, limit: 0 }, 'limit'],
        [{ url: `${main}/`, delay: 61 }, 'delay'],
        [{ url: `${main}/`, sitemap: 'sometimes' }, 'sitemap'],
        [{ url: `${main}/`, unknownOption: true }, 'unknownOption'],
        [{ url: `${main}/`, scrapeOptions: { formats: ['json'] } }, 'formats'],
        [{ url: `${main}/`, webhook: { url: 'ftp://example.com/hook' } }, 'body.webhook.url'],
        [{ url: `${main}/`, webhook: 'not a url' }, 'body.webhook'],
        [
          { url: `${main}/`, webhook: { url: 'https://example.com/hook', events: ['page', 'finished'] } },
          'body.webhook.events.1',
        ],
        [{ url: `${main}/`, prompt: 'crawl the blog' }, 'prompt'],
        [{ url: `${main}/`, zeroDataRetention: true }, 'zeroDataRetention'],
        [{ url: 'ftp://example.com/' }, 'url'],
      ];
      for (const [body, field] of cases) {
        const res = await api.crawlRaw(body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.json.code, 'BAD_REQUEST');
        assert.ok(res.text.includes(field), `${field} not named in ${res.text}`);
      }
      // SDK labels and newer keys are accepted.
      const ok = await api.crawl({
        url: `${main}/about`,
        sitemap: 'skip',
        origin: 'js-sdk@4.0.0',
        integration: 'test',
        stopOnContent: true,
      });
      assert.equal(ok.status, 200, ok.text);
      await api.waitForCrawl(ok.json.id);
    });
  });
}
