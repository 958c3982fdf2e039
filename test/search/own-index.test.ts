// POST /v2/search over the own index, end to end: the real service crawls and scrapes the fixture
// site (PGlite and, with TEST_DATABASE_URL, Postgres), then searches what it stored: the page with
// the word and no other, title hits above body hits, domain filters, limit, Documents with
// scrapeOptions, team scoping, zero data retention, dedup by canonical URL, pruning with the crawl,
// bad input, sources without a backend, the activity listing and the official JS SDK.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { deleteExpiredCrawls } from '../../src/crawl/crawl-expiry.ts';
import { createApiKey, ensureTeam } from '../../src/store/teams.ts';
import { type FixtureSite, articles, docsText, sitemapOnlyText } from '../fixtures/site/index.ts';
import { type Api, apiClient } from '../helpers/api.ts';
import { type TestService, startSiteAndService, stopSiteAndService, storeKinds } from '../helpers/service.ts';
import '../helpers/loopback-dns.ts';

interface Hit {
  url: string;
  title: string;
  description: string;
  position: number;
  markdown?: string;
  metadata?: { sourceURL: string; statusCode: number };
}

for (const store of storeKinds) {
  describe(`search: own index (${store})`, () => {
    let site: FixtureSite;
    let svc: TestService;
    let api: Api;
    let main: string;
    let crawlId: string;

    before(async () => {
      ({ site, svc, api, main } = await startSiteAndService({ store }));
      crawlId = await api.startCrawl({
        url: `${main}/`,
        limit: 40,
        sitemap: 'skip',
        ignoreRobotsTxt: true,
        scrapeOptions: { formats: ['markdown'] },
      });
      const done = await api.waitForCrawl(crawlId, 60_000);
      assert.equal(done.status, 'completed');
    });
    after(() => stopSiteAndService(svc, site));

    const web = async (body: Parameters<Api['search']>[0]): Promise<Hit[]> => {
      const res = await api.search(body);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.success, true);
      return res.json.data.web as Hit[];
    };
    const paths = (hits: Hit[]) => hits.map((h) => new URL(h.url).pathname);

    test('finds the page holding a word, and only it', async () => {
      // "bearer" is only on /docs/api (docsText.api.intro).
      const hits = await web({ query: 'bearer', limit: 10 });
      assert.deepEqual(paths(hits), ['/docs/api']);
      assert.equal(hits[0].position, 1);
      assert.match(hits[0].title, /API Reference/);
      // Stemmed: "tokens" finds "token" in an English page.
      assert.deepEqual(paths(await web({ query: 'bearer tokens' })), ['/docs/api']);
      assert.deepEqual(await web({ query: 'zyzzyva' }), []);
    });

    test('highlights (the default): the description is the passage of the page that holds the query; false: the meta description', async () => {
      // A quote in article 1's body; its meta description says something else.
      const [hit] = await web({ query: 'largest library' });
      assert.equal(new URL(hit.url).pathname, '/articles/1');
      assert.match(hit.description, /largest library ever built/);
      assert.notEqual(hit.description, articles[0].description);
      assert.deepEqual(await web({ query: 'largest library', highlights: true }), [hit]);
      const [plain] = await web({ query: 'largest library', highlights: false });
      assert.equal(plain.url, hit.url);
      assert.equal(plain.description, articles[0].description);
    });

    test('ranks a title hit above body hits', async () => {
      // Article 2's title; the other articles and the home page only link to it.
      const hits = await web({ query: 'without tears', limit: 10 });
      assert.ok(hits.length >= 2, JSON.stringify(hits));
      assert.equal(new URL(hits[0].url).pathname, '/articles/2');
      assert.equal(hits[0].title.startsWith(articles[1].title), true, hits[0].title);
      assert.deepEqual(
        hits.map((h) => h.position),
        hits.map((_, i) => i + 1),
      );
    });

    test('honours limit, includeDomains and excludeDomains; a page is indexed once per canonical URL', async () => {
      assert.equal((await web({ query: 'gleaner' })).length, 5);
      assert.equal((await web({ query: 'gleaner', limit: 2 })).length, 2);
      // The same page under another host name (127.0.0.1), and again under localhost: one row for the latter.
      for (const url of [`${site.origin}/docs/api`, `${main}/docs/api`])
        assert.equal((await api.scrape({ url })).status, 200);
      const both = await web({ query: 'bearer', limit: 10 });
      assert.deepEqual(
        both.map((h) => new URL(h.url).host).sort(),
        [new URL(site.origin).host, new URL(main).host].sort(),
      );
      assert.deepEqual(
        (await web({ query: 'bearer', includeDomains: ['127.0.0.1'] })).map((h) => h.url),
        [`${site.origin}/docs/api`],
      );
      assert.deepEqual(
        (await web({ query: 'bearer', excludeDomains: ['localhost'] })).map((h) => h.url),
        [`${site.origin}/docs/api`],
      );
      assert.deepEqual(
        (await web({ query: 'bearer', includeDomains: ['http://localhost/'] })).map((h) => new URL(h.url).hostname),
        ['localhost'],
      );
    });

    test('scrapeOptions: results come back as Documents, each scrape billed', async () => {
      const res = await api.search({
        query: 'bearer',
        includeDomains: ['localhost'],
        scrapeOptions: { formats: ['markdown'] },
      });
      assert.equal(res.status, 200, res.text);
      const [hit] = res.json.data.web as Hit[];
      assert.equal(hit.url, `${main}/docs/api`);
      assert.equal(hit.position, 1);
      assert.match(hit.title, /API Reference/);
      assert.ok(hit.markdown?.includes(docsText.api.intro), hit.markdown);
      assert.equal(hit.metadata?.statusCode, 200);
      assert.match(hit.description, /bearer token/);
      // 2 credits for the (first 10) results, 1 for the scrape.
      assert.equal(res.json.creditsUsed, 3);
      assert.equal(typeof res.json.id, 'string');
      const activity = await api.activity('?endpoint=search');
      assert.ok(
        activity.json.data.some(
          (j: { id: string; endpoint: string }) => j.id === res.json.id && j.endpoint === 'search',
        ),
        activity.text,
      );
    });

    test('scrapeOptions: the highlight is taken from the scraped markdown; without highlights, the meta description', async () => {
      // A quote in article 2's body (article 2: the SDK's search scrapes it too, below).
      const body = {
        query: 'conservative liberal',
        includeDomains: ['localhost'],
        scrapeOptions: { formats: ['markdown' as const] },
      };
      const [hit] = await web(body);
      assert.equal(new URL(hit.url).pathname, '/articles/2');
      assert.ok(hit.markdown?.includes('be liberal in what you accept'));
      assert.match(hit.description, /conservative in what you send/);
      const [plain] = await web({ ...body, highlights: false });
      assert.equal(plain.description, articles[1].description);
    });

    test("another team does not find the first team's pages", async () => {
      const other = await ensureTeam(svc.db, `search-other-${store}`);
      const otherApi = apiClient(svc, (await createApiKey(svc.db, other.id)).key);
      const res = await otherApi('POST', '/v2/search', { query: 'bearer' });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json.data.web, []);
    });

    test('a zero-data-retention scrape is not indexed; the same scrape without it is', async () => {
      // /sitemap-only is linked from nowhere: the crawl did not see it.
      const phrase = `"${sitemapOnlyText.split(' ').slice(2, 8).join(' ')}"`;
      assert.equal((await api.scrape({ url: `${main}/sitemap-only`, zeroDataRetention: true })).status, 200);
      assert.deepEqual(await web({ query: phrase }), []);
      assert.equal((await api.scrape({ url: `${main}/sitemap-only` })).status, 200);
      assert.deepEqual(paths(await web({ query: phrase })), ['/sitemap-only']);
    });

    test('sources without a backend get a warning naming them, not an error', async () => {
      const res = await api.search({ query: 'bearer', sources: ['web', { type: 'news' }, 'images'] });
      assert.equal(res.status, 200, res.text);
      assert.match(res.json.warning, /news, images/);
      assert.deepEqual(Object.keys(res.json.data), ['web']);
      assert.equal(res.json.data.web.length, 2);
    });

    test('bad input: 400 naming the field', async () => {
      const cases: [unknown, string, RegExp?][] = [
        [{ query: '  ' }, 'body.query'],
        [{}, 'body.query'],
        [{ query: 'x', includeDomains: ['a.com'], excludeDomains: ['b.com'] }, 'body.excludeDomains'],
        [{ query: 'x', sources: ['web', 'videos'] }, 'body.sources.1', /videos/],
        [{ query: 'x', sources: [{ type: 'videos' }] }, 'body.sources.0', /videos/],
        [{ query: 'x', categories: ['cooking'] }, 'body.categories.0', /cooking/],
        [{ query: 'x', tbs: 'qdr:z' }, 'body.tbs'],
        [{ query: 'x', limit: 101 }, 'body.limit'],
        [{ query: 'x', bogus: 1 }, 'body.bogus'],
      ];
      for (const [body, path, message] of cases) {
        const res = await api.searchRaw(body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.json.code, 'BAD_REQUEST');
        const issue = (res.json.details as { path: string; message: string }[]).find((d) => d.path === path);
        assert.ok(issue, `${JSON.stringify(body)}: ${res.text}`);
        if (message) assert.match(issue.message, message);
      }
    });

    test('tbs filters by when the page was scraped', async () => {
      assert.equal((await web({ query: 'bearer', tbs: 'qdr:h' })).length, 2);
      assert.deepEqual(await web({ query: 'bearer', tbs: 'cdr:1,cd_min:1/1/2020,cd_max:12/31/2020' }), []);
    });

    test("the official JS SDK's search() works unchanged", async () => {
      const fc = new Firecrawl({ apiKey: svc.key, apiUrl: svc.url });
      const plain = await fc.search('bearer', { limit: 3, includeDomains: ['localhost'] });
      assert.deepEqual(
        plain.web?.map((h) => ('url' in h ? h.url : undefined)),
        [`${main}/docs/api`],
      );
      const scraped = await fc.search('without tears', { limit: 1, scrapeOptions: { formats: ['markdown'] } });
      const doc = scraped.web?.[0] as { markdown?: string; url?: string };
      assert.ok(doc.markdown?.includes(articles[1].lead), JSON.stringify(doc).slice(0, 300));
    });

    // Last: it removes the crawl.
    test('pruning a crawl removes its index rows with its pages', async () => {
      assert.ok(paths(await web({ query: 'harvest', limit: 20 })).includes('/articles/1'));
      await svc.db.query(`UPDATE crawls SET expires_at = clock_timestamp() - interval '1 second' WHERE id = $1`, [
        crawlId,
      ]);
      assert.equal(await deleteExpiredCrawls(svc.db), 1);
      const { rows } = await svc.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM search_pages WHERE crawl_id = $1',
        [crawlId],
      );
      assert.equal(rows[0].n, 0);
      // Only pages the team scraped on their own are left (/articles/2 by the SDK's search, /docs/api).
      assert.ok(!paths(await web({ query: 'harvest', limit: 20 })).includes('/articles/1'));
      assert.equal((await web({ query: 'bearer' })).length, 2);
    });
  });
}
