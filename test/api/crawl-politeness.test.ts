// Crawl politeness end to end (src/crawl/politeness.ts), on PGlite and, with TEST_DATABASE_URL,
// Postgres: robots.txt Crawl-delay spaces request starts to a host (measured from the fixture
// site's request log), also across two crawls of the host; ignoreRobotsTxt skips it; the per-host
// concurrency cap (measured as requests in flight at the fixture); and the default settings leave
// a crawl of a host without Crawl-delay at full speed.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { FixtureSite, RecordedRequest } from '../fixtures/site/index.ts';
import { type Api, type CrawlBody, apiClient } from '../helpers/api.ts';
import {
  type TestService,
  startSiteAndService,
  startTestService,
  stopSiteAndService,
  storeKinds,
} from '../helpers/service.ts';
import '../helpers/loopback-dns.ts';
import { maxInFlight } from '../helpers/polling.ts';

/** Crawl-delay of the hosts these tests crawl (others keep the fixture's 1 s). */
const CRAWL_DELAY = 0.5;
/**
 * Starts are reserved just before the scrape; the fixture sees the request after the scrape
 * pipeline's own set-up (cache lookup, job record: tens of ms, more on a busy PGlite), so the gaps
 * it measures may fall short of the interval by that much.
 */
const SLACK_MS = 120;

/** Page requests (not robots.txt) to `host`, in arrival order. */
const pagesOf = (site: FixtureSite, host: string): RecordedRequest[] =>
  site.requests.filter((r) => r.host === host && r.path.startsWith('/generated/'));

const gaps = (reqs: RecordedRequest[]) => reqs.slice(1).map((r, i) => r.at - reqs[i].at);

for (const store of storeKinds) {
  describe(`crawl politeness (${store})`, () => {
    let site: FixtureSite;
    let svc: TestService;
    let api: Api;

    before(async () => {
      const hosts = ['delay', 'together', 'ignore', 'cancel', 'map'].map((h) => `${h}-${store}.localhost`);
      // The defaults of a deployment (the test helper turns Crawl-delay off for the other tests).
      ({ site, svc, api } = await startSiteAndService({
        store,
        env: { GLEANER_MAX_CRAWL_DELAY: '' },
        site: {
          crawlDelays: { ...Object.fromEntries(hosts.map((h) => [h, CRAWL_DELAY])), [`fast-${store}.localhost`]: null },
        },
      }));
    });
    after(() => stopSiteAndService(svc, site));

    /** A crawl of the whole host, without its sitemap. */
    const crawl = (call: Api, body: CrawlBody) =>
      call.startCrawl({ sitemap: 'skip', crawlEntireDomain: true, ...body });

    test('robots.txt Crawl-delay spaces the request starts to the host', async () => {
      const host = `delay-${store}.localhost`;
      // 6 pages: the later ones are more than 3 s away when admitted, so they go back to the queue.
      const id = await crawl(api, { url: `http://${host}:${site.port}/generated/1?total=6` });
      const status = await api.waitForCrawl(id);
      assert.equal(status.status, 'completed');
      assert.equal(status.completed, 6);
      const reqs = pagesOf(site, host);
      assert.equal(reqs.length, 6, 'each page fetched once');
      const g = gaps(reqs);
      assert.ok(
        g.every((x) => x >= CRAWL_DELAY * 1000 - SLACK_MS),
        `gaps ${g.join(', ')} ms`,
      );
      // …and not much more than asked for (the handed-back pages come on time).
      assert.ok(
        reqs.at(-1)!.at - reqs[0].at < 5 * CRAWL_DELAY * 1000 + 2500,
        `span ${reqs.at(-1)!.at - reqs[0].at} ms`,
      );
    });

    test("map's shallow crawl takes the same turns: Crawl-delay spaces its page fetches", async () => {
      const host = `map-${store}.localhost`;
      const start = `http://${host}:${site.port}/generated/1?total=30`;
      const res = await api('POST', '/v2/map', { url: start, sitemap: 'skip' });
      assert.equal(res.status, 200, res.text);
      const crawled = pagesOf(site, host).filter((r) => r.path !== '/generated/1?total=30');
      assert.ok(crawled.length >= 2, `the shallow crawl fetched pages: ${crawled.map((r) => r.path).join(' ')}`);
      // Starts are reserved interval apart; one that arrives late (a busy store) may come close to
      // the next, so the schedule is checked cumulatively: the i-th start never runs ahead of it.
      const since = crawled.map((r) => r.at - crawled[0].at);
      assert.ok(
        since.every((x, i) => x >= i * CRAWL_DELAY * 1000 - SLACK_MS),
        `starts at ${since.join(', ')} ms`,
      );
      // Pages whose turn was too far off were not fetched, but their links are still listed.
      const listed = new Set(res.json.links.map((l: { url: string } | string) => (typeof l === 'string' ? l : l.url)));
      assert.ok(listed.size > crawled.length, `${listed.size} links listed, ${crawled.length} pages fetched`);
    });

    test('two crawls of one host at once share its Crawl-delay', async () => {
      const host = `together-${store}.localhost`;
      const origin = `http://${host}:${site.port}`;
      const [a, b] = await Promise.all([
        crawl(api, { url: `${origin}/generated/1?total=4` }),
        crawl(api, { url: `${origin}/generated/1?total=3` }),
      ]);
      for (const id of [a, b]) assert.equal((await api.waitForCrawl(id)).status, 'completed');
      const reqs = pagesOf(site, host);
      assert.equal(reqs.length, 7);
      assert.ok(reqs.some((r) => r.path.includes('total=4')) && reqs.some((r) => r.path.includes('total=3')));
      const g = gaps(reqs);
      assert.ok(
        g.every((x) => x >= CRAWL_DELAY * 1000 - SLACK_MS),
        `gaps ${g.join(', ')} ms`,
      );
    });

    test('cancel stops pages waiting for their turn (slept or handed back to the queue)', async () => {
      const host = `cancel-${store}.localhost`;
      const id = await crawl(api, { url: `http://${host}:${site.port}/generated/1?total=40` });
      await sleep(1700);
      assert.ok(pagesOf(site, host).length >= 2, 'under way');
      const del = await api.cancelCrawl(id);
      assert.equal(del.status, 200, del.text);
      await sleep(1000);
      const seen = pagesOf(site, host).length;
      // Past the turns that were slept and the reservations handed back to the queue.
      await sleep(2500);
      assert.equal(pagesOf(site, host).length, seen, 'no page fetched after the cancel settled');
      assert.ok(seen < 10, `${seen} pages`);
    });

    test('ignoreRobotsTxt: no Crawl-delay', async () => {
      const host = `ignore-${store}.localhost`;
      const id = await crawl(api, { url: `http://${host}:${site.port}/generated/1?total=12`, ignoreRobotsTxt: true });
      assert.equal((await api.waitForCrawl(id)).completed, 12);
      const reqs = pagesOf(site, host);
      assert.equal(reqs.length, 12);
      const span = reqs.at(-1)!.at - reqs[0].at;
      assert.ok(span < (11 * CRAWL_DELAY * 1000) / 2, `12 pages in ${span} ms`);
      assert.ok(!site.requests.some((r) => r.host === host && r.path === '/robots.txt'), 'robots.txt not even read');
    });

    test('default settings: a host without Crawl-delay is crawled at full speed, several requests at once', async () => {
      const host = `fast-${store}.localhost`;
      const t0 = Date.now();
      const id = await crawl(api, { url: `http://${host}:${site.port}/generated/1?total=60&ms=50` });
      assert.equal((await api.waitForCrawl(id)).completed, 60);
      const ms = Date.now() - t0;
      const reqs = pagesOf(site, host);
      assert.equal(reqs.length, 60);
      assert.ok(maxInFlight(reqs) > 2, `in flight at most ${maxInFlight(reqs)}`);
      assert.ok(ms < 10_000, `60 pages of 50 ms took ${ms} ms`);
      const { rows } = await svc.db.query('SELECT 1 FROM host_politeness WHERE host LIKE $1', [`${host}%`]);
      assert.equal(rows.length, 0, 'no interval: the database is not asked');
      console.log(
        `# crawl politeness (${store}), defaults: 60 pages of 50 ms in ${ms} ms, at most ${maxInFlight(reqs)} in flight`,
      );
    });

    test('GLEANER_HOST_MAX_CONCURRENCY caps the requests in flight to one host', async () => {
      const capped = await startTestService({ store, env: { GLEANER_HOST_MAX_CONCURRENCY: '2' } });
      try {
        const host = `capped-${store}.localhost`;
        const id = await crawl(apiClient(capped), {
          url: `http://${host}:${site.port}/generated/1?total=12&ms=150`,
          ignoreRobotsTxt: true,
        });
        assert.equal((await apiClient(capped).waitForCrawl(id)).completed, 12);
        const reqs = pagesOf(site, host);
        assert.equal(reqs.length, 12);
        assert.equal(maxInFlight(reqs), 2);
      } finally {
        await capped.destroy();
      }
    });

    test('GLEANER_HOST_MIN_INTERVAL_MS spaces every host, robots.txt or not', async () => {
      const spaced = await startTestService({ store, env: { GLEANER_HOST_MIN_INTERVAL_MS: '400' } });
      try {
        const host = `spaced-${store}.localhost`;
        const id = await crawl(apiClient(spaced), {
          url: `http://${host}:${site.port}/generated/1?total=6`,
          ignoreRobotsTxt: true,
        });
        assert.equal((await apiClient(spaced).waitForCrawl(id)).completed, 6);
        const g = gaps(pagesOf(site, host));
        assert.equal(g.length, 5);
        assert.ok(
          g.every((x) => x >= 400 - SLACK_MS),
          `gaps ${g.join(', ')} ms`,
        );
      } finally {
        await spaced.destroy();
      }
    });
  });
}
