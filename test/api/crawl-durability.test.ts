// Crawls survive their processes: on Postgres, a crawl run by two worker processes (`npm run
// worker`) of which one is killed (SIGKILL) while it holds pages completes with every page exactly
// once; on PGlite, a crawl outlives a graceful stop of the whole service and a SIGKILL of a
// service process, resuming when the service starts again on the same data.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type FixtureSite, startFixtureSite } from '../fixtures/site/index.ts';
import { type Api, type CrawlBody, apiClient } from '../helpers/api.ts';
import { type NodeProcess, startNode } from '../helpers/process.ts';
import { type TestService, newTestKey, startTestService, testEnv } from '../helpers/service.ts';
import { urlKey } from '../../src/net/url-key.ts';
import { waitUntil } from '../helpers/polling.ts';

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
});

/** `node <script>`, killed at the end of the file if still running. */
function spawnNode(script: string, env: Record<string, string>): NodeProcess {
  const p = startNode(script, [], env);
  cleanups.push(() => p.kill());
  return p;
}

async function startCrawl(api: Api, url: string, extra: Omit<CrawlBody, 'url'> = {}): Promise<string> {
  return api.startCrawl({ url, sitemap: 'skip', crawlEntireDomain: true, ...extra });
}

async function statusOf(api: Api, id: string): Promise<any> {
  const res = await api.crawlStatus(id, '?limit=1');
  assert.equal(res.status, 200, res.text);
  return res.json;
}

/** The crawl completed with exactly the pages /generated/1..total, each once (data and crawl_pages). */
async function assertEveryPageOnce(
  api: Api,
  id: string,
  origin: string,
  total: number,
  query: (sql: string, params: unknown[]) => Promise<any[]>,
) {
  const status = await statusOf(api, id);
  assert.equal(status.status, 'completed');
  assert.equal(status.total, total);
  assert.equal(status.completed, total);
  assert.equal(status.creditsUsed, total, 'each page charged once');
  const docs = await api.crawlDocs(id, 25);
  const keys = docs.map((d) => urlKey(d.metadata.sourceURL)!);
  assert.equal(new Set(keys).size, keys.length, 'no page twice in the data');
  const expected = Array.from({ length: total }, (_, i) =>
    urlKey(`${origin}/generated/${i + 1}?total=${total}&ms=${PAGE_MS}`)!,
  );
  assert.deepEqual(new Set(keys), new Set(expected));
  const [counts] = await query(
    `SELECT count(*)::int AS n, count(DISTINCT url)::int AS urls, count(*) FILTER (WHERE status = 'done')::int AS done FROM crawl_pages WHERE crawl_id = $1`,
    [id],
  );
  assert.deepEqual(counts, { n: total, urls: total, done: total });
}

/** Each page answers after this long, so the crawls are mid-way when processes stop. */
const PAGE_MS = 300;

describe('crawl durability', () => {
  let site: FixtureSite;
  before(async () => {
    site = await startFixtureSite();
  });
  after(async () => {
    await site?.close();
  });

  test(
    'two worker processes on Postgres, one killed (SIGKILL) holding pages: the crawl completes with every page exactly once',
    { skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL (a Postgres shared by the processes)' },
    async () => {
      // The API process runs no jobs: the two workers do all the crawling.
      const svc: TestService = await startTestService({ store: 'postgres', env: { GLEANER_WORKERS: '0' } });
      cleanups.push(() => svc.destroy());
      const api = apiClient(svc);
      const workerEnv = {
        ...svc.env,
        GLEANER_WORKERS: '4',
        GLEANER_CRAWL_CONCURRENCY: '4',
        GLEANER_ALLOW_PRIVATE_NETWORK: 'true',
        GLEANER_MAX_CRAWL_DELAY: '0',
      };
      const [victim, survivor] = [spawnNode('src/worker.ts', workerEnv), spawnNode('src/worker.ts', workerEnv)];
      await Promise.all([victim.line('gleaner worker ready'), survivor.line('gleaner worker ready')]);

      const total = 120;
      const origin = site.hostOrigin('localhost');
      const id = await startCrawl(api, `${origin}/generated/1?total=${total}&ms=${PAGE_MS}`);
      await waitUntil(
        'the crawl to be under way',
        async () => ((await statusOf(api, id)).completed >= 15 ? true : undefined),
        30_000,
      );
      victim.child.kill('SIGKILL');
      const killedAt = new Date();
      await victim.exit;
      // Pages the victim held: leased before the kill (their lease ends within one lease of it:
      // the survivor's claims and renewals after the kill end later) and still queued well after
      // the survivor's own (300 ms) pages of that moment ended.
      await sleep(2000);
      const { rows: held } = await svc.db.query<{ id: string }>(
        `SELECT id FROM crawl_pages WHERE crawl_id = $1 AND status = 'queued' AND lease_until > clock_timestamp()
           AND lease_until <= $2::timestamptz + interval '30 seconds'`,
        [id, killedAt],
      );
      assert.ok(held.length > 0, 'the killed worker was running pages');
      assert.ok((await statusOf(api, id)).status === 'scraping', 'killed mid-crawl');

      await waitUntil(
        'the crawl to complete',
        async () => ((await statusOf(api, id)).status === 'completed' ? true : undefined),
        90_000,
      );
      const recoveredS = (Date.now() - killedAt.getTime()) / 1000;
      await assertEveryPageOnce(api, id, origin, total, async (sql, params) => (await svc.db.query(sql, params)).rows);
      const fetched = site.requests.filter(
        (r) => r.path.startsWith('/generated/') && r.path.includes(`total=${total}`),
      ).length;
      console.log(
        `# crawl on 2 worker processes (postgres): one SIGKILLed holding ${held.length} pages; all ${total} pages done once, ` +
          `${recoveredS.toFixed(1)} s after the kill (${fetched - total} pages fetched again)`,
      );
      survivor.child.kill('SIGTERM');
      assert.equal(await survivor.exit, 0);
    },
  );

  test('PGlite: a graceful stop of the service mid-crawl, then a start on the same data: the crawl resumes and completes, every page once', async () => {
    const first = await startTestService({ store: 'pglite' });
    cleanups.push(() => first.destroy());
    const total = 30;
    const origin = site.hostOrigin('localhost');
    const id = await startCrawl(apiClient(first), `${origin}/generated/1?total=${total}&ms=${PAGE_MS}`, {
      delay: 0.15,
    });
    await waitUntil(
      'the crawl to be under way',
      async () => ((await statusOf(apiClient(first), id)).completed >= 5 ? true : undefined),
      30_000,
    );
    await first.stop();
    const second = await startTestService({ store: 'pglite', shareWith: first });
    cleanups.push(() => second.destroy());
    const api = apiClient(second);
    const before = await statusOf(api, id);
    assert.equal(before.status, 'scraping', 'stopped mid-crawl');
    assert.ok(before.completed < total, `${before.completed} of ${total} done before the restart`);
    await waitUntil(
      'the crawl to complete',
      async () => ((await statusOf(api, id)).status === 'completed' ? true : undefined),
      30_000,
    );
    await assertEveryPageOnce(api, id, origin, total, async (sql, params) => (await second.db.query(sql, params)).rows);
  });

  test('PGlite: a service process killed (SIGKILL) mid-crawl, then started again on the same data: the crawl completes, every page once', async () => {
    const { env: storeEnv, cleanup } = await testEnv('pglite');
    cleanups.push(cleanup);
    const key = newTestKey();
    const env = {
      ...storeEnv,
      PORT: '0',
      GLEANER_API_KEY: key,
      GLEANER_ALLOW_PRIVATE_NETWORK: 'true',
      GLEANER_MAX_CRAWL_DELAY: '0',
    };
    const urlOf = async (p: NodeProcess) => JSON.parse(await p.line('gleaner ready')).url as string;
    const first = spawnNode('src/server.ts', env);
    const base1 = await urlOf(first);
    const total = 30;
    const origin = site.hostOrigin('localhost');
    const id = await startCrawl(apiClient({ url: base1 }, key), `${origin}/generated/1?total=${total}&ms=${PAGE_MS}`, {
      delay: 0.15,
    });
    await waitUntil(
      'the crawl to be under way',
      async () => ((await statusOf(apiClient({ url: base1 }, key), id)).completed >= 5 ? true : undefined),
      30_000,
    );
    first.child.kill('SIGKILL');
    await first.exit;

    const second = spawnNode('src/server.ts', env);
    const base2 = await urlOf(second);
    const api = apiClient({ url: base2 }, key);
    assert.equal((await statusOf(api, id)).status, 'scraping', 'killed mid-crawl');
    await waitUntil(
      'the crawl to complete',
      async () => ((await statusOf(api, id)).status === 'completed' ? true : undefined),
      45_000,
    );
    // crawl_pages through the API's view: total, completed and the data; the table is checked by the graceful case.
    const status = await statusOf(api, id);
    assert.equal(status.total, total);
    assert.equal(status.completed, total);
    assert.equal(status.creditsUsed, total);
    const keys = (await api.crawlDocs(id, 25)).map((d) => urlKey(d.metadata.sourceURL)!);
    assert.equal(new Set(keys).size, keys.length, 'no page twice in the data');
    assert.equal(keys.length, total);
    second.child.kill('SIGTERM');
    assert.equal(await second.exit, 0);
  });
});
