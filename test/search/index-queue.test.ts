// The own index's queues (src/store/search-index.ts indexQueued and catchUpTeam,
// src/store/search-indexer.ts): a recorded crawl page and a stored scrape are queued, not indexed;
// the background step indexes the queues; a search first indexes its team's queued pages (and no
// other team's), so a search right after a crawl or a scrape finds them; the queues and the index
// are pruned with the crawl or the stored scrape; a hit's highlight is read from the crawl page or
// the stored scrape it was indexed from; of two queued copies of one URL the newer is kept.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { SearchIndexer } from '../../src/store/search-indexer.ts';
import type { Db } from '../../src/store/db-types.ts';
import { createJob } from '../../src/store/jobs.ts';
import { finishScrape } from '../../src/store/pages.ts';
import { OwnIndexBackend } from '../../src/search/own-index.ts';
import { type SearchEntry, catchUpTeam, searchIndex } from '../../src/store/search-index.ts';
import { ensureTeam } from '../../src/store/teams.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { openTestDb, storeKinds } from '../helpers/service.ts';

const silent = { debug() {}, info() {}, warn() {}, error() {} };

for (const store of storeKinds) {
  describe(`search index queue (${store})`, () => {
    let db: Db;
    let cleanup: () => Promise<void>;
    let teamId: string;
    let otherTeam: string;

    before(async () => {
      ({ db, cleanup } = await openTestDb(store));
      teamId = (await ensureTeam(db, `queue-${store}`)).id;
      otherTeam = (await ensureTeam(db, `queue-other-${store}`)).id;
    });
    after(() => cleanup?.());

    /** A crawl of the team's whose every page is done. */
    async function crawl(team = teamId): Promise<string> {
      const job = await createJob(db, { teamId: team, apiKeyId: null, endpoint: 'crawl', status: 'completed' });
      await db.query(
        `INSERT INTO crawls (id, team_id, kind, url, options, page_limit, public_url, status, expires_at, seeding)
         VALUES ($1, $2, 'crawl', 'https://q.example/', '{}', 10, 'http://127.0.0.1', 'completed', clock_timestamp() + interval '1 day', false)`,
        [job.id, team],
      );
      return job.id;
    }

    /** A done page of the crawl under `key`, queued for the index as a page's record queues it. */
    async function page(
      crawlId: string,
      key: string,
      url: string,
      title: string,
      markdown: string,
      team = teamId,
    ): Promise<void> {
      await db.query(
        `INSERT INTO crawl_pages (crawl_id, url_key, url, depth, status, document) VALUES ($1, $2, $2, 0, 'done', $3::jsonb)`,
        [crawlId, key, JSON.stringify({ markdown, metadata: { title, url, statusCode: 200 } })],
      );
      const entry: SearchEntry = {
        key: url,
        url,
        host: 'q.example',
        title,
        description: 'The meta.',
        config: 'english',
      };
      await db.query(`INSERT INTO search_queue (crawl_id, page_key, team_id, entry) VALUES ($1, $2, $3, $4::jsonb)`, [
        crawlId,
        key,
        team,
        JSON.stringify(entry),
      ]);
    }

    /** A finished scrape of the team, stored and queued for the index as a scrape's storing statement does. */
    async function scrape(url: string, title: string, markdown: string, team = teamId): Promise<string> {
      const job = await createJob(db, { teamId: team, apiKeyId: null, endpoint: 'scrape', status: 'active' });
      await finishScrape(db, {
        jobId: job.id,
        teamId: team,
        apiKeyId: null,
        credits: 1,
        json: JSON.stringify({ markdown, metadata: { title, url, statusCode: 200 } }),
        searchEntry: { key: url, url, host: 'q.example', title, description: 'A scrape.', config: 'english' },
      });
      return job.id;
    }
    const scrapesQueued = async (team = teamId) =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM search_scrape_queue WHERE team_id = $1', [team]))
        .rows[0].n;

    const find = async (text: string) =>
      (await searchIndex(db, { teamId, text, limit: 10, withText: true })).map((h) => ({
        url: h.url,
        markdown: h.markdown,
      }));
    const queued = async (crawlId: string) =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM search_queue WHERE crawl_id = $1', [crawlId]))
        .rows[0].n;

    test("a queued page is not in the index; a search indexes its team's queue first, and finds it", async () => {
      const id = await crawl();
      // Redirected: the page's key is the URL asked for, its entry the final URL's.
      await page(id, 'https://q.example/old', 'https://q.example/walrus', 'Walrus facts', 'The walrus eats clams.');
      const other = await crawl(otherTeam);
      await page(other, 'https://q.example/w2', 'https://q.example/w2', 'Walrus too', 'Walrus.', otherTeam);
      assert.deepEqual(await find('walrus'), []);
      // The search path (POST /v2/search's own index backend), with highlights.
      const backend = new OwnIndexBackend(db);
      const hits = await backend.search({
        teamId,
        query: 'walrus clams',
        source: 'web',
        limit: 5,
        highlights: true,
        signal: new AbortController().signal,
      });
      assert.deepEqual(
        hits.map((h) => [h.url, h.description]),
        [['https://q.example/walrus', 'The walrus eats clams.']],
      );
      assert.equal(await queued(id), 0);
      // The other team's page is left to the background step.
      assert.equal(await queued(other), 1);
      // The hit's text comes from the crawl page it was indexed from (its own key).
      assert.deepEqual(await find('walrus clams'), [
        { url: 'https://q.example/walrus', markdown: 'The walrus eats clams.' },
      ]);
    });

    test('the background step indexes the queue in batches until it is empty', async () => {
      const id = await crawl();
      for (let i = 0; i < 70; i++)
        await page(id, `https://q.example/p${i}`, `https://q.example/p${i}`, `Narwhal ${i}`, `Tusk number ${i}.`);
      const indexer = new SearchIndexer(db, silent);
      indexer.poke();
      // Throttled: a batch of 32, a pause, the next.
      for (const end = Date.now() + 20_000; (await queued(id)) > 0; await sleep(20))
        assert.ok(Date.now() < end, 'the queue is not emptied');
      await indexer.stop();
      assert.equal((await searchIndex(db, { teamId, text: 'narwhal', limit: 100 })).length, 70);
    });

    test('a crawl that goes takes its queued and indexed pages with it', async () => {
      const id = await crawl();
      await page(id, 'https://q.example/a', 'https://q.example/a', 'Dugong', 'Seagrass.');
      await page(id, 'https://q.example/b', 'https://q.example/b', 'Dugong two', 'More seagrass.');
      assert.equal(await catchUpTeam(db, teamId, 10_000), 2);
      // Indexed: a, b; still queued: c.
      await page(id, 'https://q.example/c', 'https://q.example/c', 'Dugong three', 'Queued.');
      assert.equal((await find('dugong')).length, 2);
      await db.query('DELETE FROM crawls WHERE id = $1', [id]);
      assert.equal(await queued(id), 0);
      assert.deepEqual(await find('dugong'), []);
    });

    test('a stored scrape is queued, not indexed; a search indexes it first and reads its highlight from the stored scrape', async () => {
      const id = await scrape('https://q.example/manatee', 'Manatee notes', 'The manatee grazes slowly.');
      await scrape('https://q.example/manatee-other', 'Manatee elsewhere', 'Manatee.', otherTeam);
      assert.equal(await scrapesQueued(), 1);
      assert.deepEqual(await find('manatee'), []);
      assert.equal(await catchUpTeam(db, teamId, 10_000), 1);
      assert.equal(await scrapesQueued(), 0);
      assert.equal(await scrapesQueued(otherTeam), 1);
      assert.deepEqual(await find('manatee grazes'), [
        { url: 'https://q.example/manatee', markdown: 'The manatee grazes slowly.' },
      ]);
      const { rows } = await db.query<{ scrapeId: string; crawlId: string | null }>(
        `SELECT scrape_id AS "scrapeId", crawl_id AS "crawlId" FROM search_pages WHERE team_id = $1 AND url_key = $2`,
        [teamId, 'https://q.example/manatee'],
      );
      assert.deepEqual(rows, [{ scrapeId: id, crawlId: null }]);
      // A stored scrape that goes takes its queued and indexed page with it.
      const later = await scrape('https://q.example/manatee2', 'Manatee again', 'Queued manatee.');
      await db.query('DELETE FROM scrape_results WHERE job_id = ANY($1::uuid[])', [[id, later]]);
      assert.equal(await scrapesQueued(), 0);
      assert.deepEqual(await find('manatee'), []);
    });

    test('a crawl page and a scrape of one URL queued together: one index row, the newer copy', async () => {
      const id = await crawl();
      await page(id, 'https://q.example/seal', 'https://q.example/seal', 'Seal (crawled)', 'Crawled seal.');
      await sleep(5);
      await scrape('https://q.example/seal', 'Seal (scraped)', 'Scraped seal.');
      const indexer = new SearchIndexer(db, silent);
      indexer.poke();
      for (const end = Date.now() + 20_000; (await queued(id)) + (await scrapesQueued()) > 0; await sleep(20))
        assert.ok(Date.now() < end, 'the queues are not emptied');
      await indexer.stop();
      assert.deepEqual(await find('seal'), [{ url: 'https://q.example/seal', markdown: 'Scraped seal.' }]);
    });
  });
}
