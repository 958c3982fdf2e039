// A single scrape answers first and stores after (src/scrape/pending-writes.ts): the document,
// the charge and the job's completion, and the page-cache copy. These tests slow the storage
// statement down on purpose and show that nothing a caller can observe changes: the team's next
// request sees everything, GET /v2/scrape/{id} waits for it (in this process and in another one
// sharing the database), and a graceful stop stores it before the database closes.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PendingWrites } from '../../src/scrape/pending-writes.ts';
import { type FixtureSite, startFixtureSite } from '../fixtures/site/index.ts';
import { apiClient } from '../helpers/api.ts';
import { type TestService, startTestService, storeKinds } from '../helpers/service.ts';

const STORE_DELAY_MS = 400;

/** Holds back every "finish a scrape" statement of `svc` by STORE_DELAY_MS; counts them as they end. */
function slowDownStorage(svc: TestService): { finished: () => number } {
  let finished = 0;
  const query = svc.db.query.bind(svc.db);
  svc.db.query = (async (text: string, params?: unknown[]) => {
    if (!text.trimStart().startsWith('WITH charge AS')) return query(text, params);
    await new Promise((r) => setTimeout(r, STORE_DELAY_MS));
    try {
      return await query(text, params);
    } finally {
      finished++;
    }
  }) as typeof svc.db.query;
  return { finished: () => finished };
}

describe('PendingWrites', () => {
  test('waits by team, job and cache key; forgets what has settled; drains everything', async () => {
    const w = new PendingWrites();
    let release!: () => void;
    const write = new Promise<void>((r) => (release = r));
    w.track(write, { teamId: 't1', jobId: 'j1' });
    w.track(Promise.resolve(), { teamId: 't2', cacheKey: 'k' });
    assert.ok(w.forTeam('t1'));
    assert.ok(w.forJob('j1'));
    assert.equal(w.forTeam('t3'), undefined);
    assert.equal(w.forJob('j2'), undefined);
    let drained = false;
    const draining = w.drain().then(() => (drained = true));
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(drained, false, 'drain waits for the open write');
    assert.equal(w.forCacheKey('k'), undefined, 'a settled write is forgotten');
    release();
    await draining;
    assert.equal(w.size, 0);
    assert.equal(w.forTeam('t1'), undefined);
    assert.equal(w.forJob('j1'), undefined);
  });
});

for (const store of storeKinds) {
  describe(`a scrape stored after its answer, on ${store}`, () => {
    let site: FixtureSite;
    before(async () => {
      site = await startFixtureSite();
    });
    after(async () => {
      await site.close();
    });

    test('the answer does not wait for storage, and the team’s next requests see it all', async () => {
      const svc = await startTestService({ store });
      try {
        const slow = slowDownStorage(svc);
        const call = apiClient(svc);
        const usage = async () => (await call('GET', '/v2/team/credit-usage')).json.data.creditsUsed as number;
        const before = await usage();
        const url = site.url(`/articles/1?storage=${Date.now()}`);
        const res = await call.scrape({ url });
        assert.equal(res.status, 200, res.text);
        assert.equal(slow.finished(), 0, 'answered before the document was stored');
        const id = res.json.data.metadata.scrapeId;

        // The document, waited for.
        const got = await call('GET', `/v2/scrape/${id}`);
        assert.equal(got.status, 200, got.text);
        assert.deepEqual(got.json.data, res.json.data);
        assert.equal(slow.finished(), 1);

        // Credits and activity, right after another scrape.
        const second = await call.scrape({ url, maxAge: 0 });
        assert.equal(second.status, 200);
        assert.equal(slow.finished(), 1, 'the second answer did not wait either');
        assert.equal((await usage()) - before, 2, 'both charges visible to the next request');
        assert.equal(slow.finished(), 2);
        const activity = await call('GET', '/v2/team/activity?endpoint=scrape&limit=5');
        const job = activity.json.data.find((j: { id: string }) => j.id === second.json.data.metadata.scrapeId);
        assert.ok(job, activity.text);

        // The page-cache copy: the next scrape of the URL is a hit.
        const third = await call.scrape({ url });
        assert.equal(third.json.data.metadata.cacheState, 'hit');
      } finally {
        await svc.destroy();
      }
    });

    test('a graceful stop stores what was answered before the database closes', async () => {
      const first = await startTestService({ store });
      try {
        const slow = slowDownStorage(first);
        const url = site.url(`/articles/2?stop=${Date.now()}`);
        const res = await apiClient(first).scrape({ url });
        assert.equal(res.status, 200, res.text);
        assert.equal(slow.finished(), 0);
        await first.stop();
        assert.equal(slow.finished(), 1, 'stored during the stop');
        const again = await startTestService({ store, shareWith: first });
        try {
          const got = await apiClient(again)('GET', `/v2/scrape/${res.json.data.metadata.scrapeId}`);
          assert.equal(got.status, 200, got.text);
          assert.equal(got.json.data.markdown, res.json.data.markdown);
          const { rows } = await again.db.query<{ status: string; credits: number }>(
            'SELECT status, credits FROM jobs WHERE id = $1',
            [res.json.data.metadata.scrapeId],
          );
          assert.deepEqual(rows[0], { status: 'completed', credits: 1 });
        } finally {
          await again.destroy();
        }
      } finally {
        await first.destroy();
      }
    });

    if (store === 'postgres') {
      test('another process sharing the database waits for a document still being stored', async () => {
        const a = await startTestService({ store });
        const b = await startTestService({ store, shareWith: a });
        try {
          slowDownStorage(a);
          const res = await apiClient(a).scrape({ url: site.url(`/articles/3?other=${Date.now()}`) });
          assert.equal(res.status, 200, res.text);
          const got = await apiClient(b)('GET', `/v2/scrape/${res.json.data.metadata.scrapeId}`);
          assert.equal(got.status, 200, got.text);
          assert.deepEqual(got.json.data, res.json.data);
        } finally {
          await b.destroy();
          await a.destroy();
        }
      });
    }
  });
}
