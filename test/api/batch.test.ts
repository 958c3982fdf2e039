// Batch scrape end to end: the real service (embedded workers) against the fixture site, on PGlite
// and, with TEST_DATABASE_URL, on Postgres: documents in the order of the URLs (duplicates
// scraped twice), pagination through `next`, invalid URLs (400 or ignoreInvalidURLs), failed pages
// in errors and a batch where every page fails ending `failed` (and a crawl likewise), appendToId,
// idempotency keys (body and header), cancel, team scoping, batch_scrape.* webhooks signed.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createApiKey, ensureTeam } from '../../src/store/teams.ts';
import type { FixtureSite } from '../fixtures/site/index.ts';
import { type Api, type JobDoc, apiClient } from '../helpers/api.ts';
import { type TestService, startSiteAndService, stopSiteAndService, storeKinds } from '../helpers/service.ts';
import { startWebhookReceiver } from '../helpers/webhook-receiver.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Nothing listens on port 1 of loopback: the connection is refused at once. */
const refused = 'http://127.0.0.1:1/nothing-here';

for (const store of storeKinds) {
  describe(`batch scrape (${store})`, () => {
    let site: FixtureSite;
    let svc: TestService;
    let api: Api;
    let main: string;

    before(
      async () =>
        ({ site, svc, api, main } = await startSiteAndService({ store, env: { GLEANER_WEBHOOK_RETRY_DELAYS: '1' } })),
    );
    after(() => stopSiteAndService(svc, site));

    let firstBatch: string;

    test('documents in the order of the URLs, a URL listed twice scraped twice, scrape options applied', async () => {
      const urls = [
        `${main}/articles/2`,
        `${main}/articles/1`,
        `${main}/about`,
        `${main}/articles/1`,
        `${main}/status/404`,
      ];
      const { id, invalidURLs } = await api.startBatch({ urls, formats: ['markdown', 'html'], onlyMainContent: true });
      assert.equal(invalidURLs, undefined);
      firstBatch = id;
      const status = await api.waitForBatch(id);
      assert.equal(status.status, 'completed');
      assert.equal(status.total, urls.length);
      assert.equal(status.completed, urls.length);
      assert.equal(status.creditsUsed, urls.length);
      assert.ok(status.completedAt);
      const docs = await api.batchDocs(id);
      assert.deepEqual(
        docs.map((d) => d.metadata.sourceURL),
        urls,
      );
      for (const d of docs) {
        assert.equal(typeof d.markdown, 'string');
        assert.equal(typeof d.html, 'string');
        assert.equal(d.links, undefined, 'no links format was asked for and none are followed');
      }
      assert.equal(docs[4].metadata.statusCode, 404, "a target's 404 is a scraped page");
      assert.notEqual(docs[1].metadata.scrapeId, docs[3].metadata.scrapeId);
      assert.match(docs[1].markdown!, /\S/);
      // Not one link of those pages was followed.
      assert.equal(site.requests.filter((r) => r.path === '/articles/3').length, 0);
      // The batch's job in the ledger carries its credits.
      const activity = await api.activity('?endpoint=batch_scrape');
      assert.ok(
        activity.json.data.some((j: { id: string; endpoint: string }) => j.id === id && j.endpoint === 'batch_scrape'),
        activity.text,
      );
      const { rows } = await svc.db.query<{ credits: number; status: string }>(
        'SELECT credits, status FROM jobs WHERE id = $1',
        [id],
      );
      assert.deepEqual(rows[0], { credits: urls.length, status: 'completed' });
      const errors = await api.batchErrors(id);
      assert.equal(errors.status, 200);
      assert.deepEqual(errors.json, { errors: [], robotsBlocked: [] });
    });

    test('pagination through next returns every document once, in order', async () => {
      const full = await api.batchDocs(firstBatch);
      const paged = await api.batchDocs(firstBatch, 2);
      assert.deepEqual(
        paged.map((d) => d.metadata.scrapeId),
        full.map((d) => d.metadata.scrapeId),
      );
      const last = await api.batchStatus(firstBatch, `?skip=${full.length}`);
      assert.equal(last.json.next, null);
    });

    test('invalid URLs: 400 naming the entry, or left out and listed with ignoreInvalidURLs', async () => {
      const bad = await api.batchScrapeRaw({ urls: [`${main}/about`, 'ftp://example.com/x'] });
      assert.equal(bad.status, 400, bad.text);
      assert.match(bad.json.error, /body\.urls\.1/);
      const none = await api.batchScrapeRaw({ urls: ['ftp://a/', 'mailto:x@y.z'], ignoreInvalidURLs: true });
      assert.equal(none.status, 400, none.text);
      assert.match(none.json.error, /body\.urls/);
      const { id, invalidURLs } = await api.startBatch({
        urls: ['ftp://a/', `${main}/about`, 'not a url at all'],
        ignoreInvalidURLs: true,
      });
      assert.deepEqual(invalidURLs, ['ftp://a/', 'not a url at all']);
      await api.waitForBatch(id);
      assert.deepEqual(
        (await api.batchDocs(id)).map((d) => d.metadata.sourceURL),
        [`${main}/about`],
      );
    });

    test('failed pages are listed in errors; a batch whose every page fails ends failed', async () => {
      const { id } = await api.startBatch({ urls: [refused, `${main}/about`] });
      const status = await api.waitForBatch(id);
      assert.equal(status.status, 'completed');
      assert.equal(status.completed, 1);
      const errors = await api.batchErrors(id);
      assert.equal(errors.json.errors.length, 1);
      assert.equal(errors.json.errors[0].url, refused);
      assert.equal(errors.json.errors[0].code, 'SCRAPE_CONNECTION_ERROR');

      const failed = await api.startBatch({ urls: [refused] });
      const end = await api.waitForBatch(failed.id);
      assert.equal(end.status, 'failed');
      assert.ok(end.completedAt);
      assert.deepEqual(end.data, []);
      const { rows } = await svc.db.query<{ status: string; error: string }>(
        'SELECT status, error FROM jobs WHERE id = $1',
        [failed.id],
      );
      assert.equal(rows[0].status, 'failed');
      assert.match(rows[0].error, /SCRAPE_CONNECTION_ERROR/);
    });

    test('a crawl whose start page cannot be fetched ends failed, with crawl.failed carrying the reason', async () => {
      const hook = await startWebhookReceiver();
      try {
        const res = await api.crawl({ url: refused, sitemap: 'skip', webhook: hook.url });
        assert.equal(res.status, 200, res.text);
        const status = await api.waitForCrawl(res.json.id, 20_000);
        assert.equal(status.status, 'failed');
        const errors = (await api.crawlErrors(res.json.id)).json;
        assert.equal(
          errors.errors[0]?.code,
          'ROBOTS_UNREACHABLE',
          'an unreachable robots.txt is a failure, not a robots rule',
        );
        await hook.until('crawl.failed', () => hook.received.some((r) => r.type === 'crawl.failed'), 15_000);
        const failed = hook.received.find((r) => r.type === 'crawl.failed');
        assert.equal(failed?.body.success, false);
        assert.match(failed?.body.error, /ROBOTS_UNREACHABLE/);
        assert.ok(!hook.received.some((r) => r.type === 'crawl.completed'));
      } finally {
        await hook.close();
      }
    });

    test('appendToId adds URLs to a running batch; an ended or foreign batch refuses', async () => {
      const { id } = await api.startBatch({ urls: [`${main}/slow?ms=1500`], maxConcurrency: 1 });
      const added = await api.startBatch({ urls: [`${main}/articles/3`, `${main}/about`], appendToId: id });
      assert.equal(added.id, id);
      const status = await api.waitForBatch(id);
      assert.equal(status.status, 'completed');
      assert.equal(status.total, 3);
      assert.deepEqual(
        (await api.batchDocs(id)).map((d) => d.metadata.sourceURL),
        [`${main}/slow?ms=1500`, `${main}/articles/3`, `${main}/about`],
      );
      const late = await api.batchScrape({ urls: [`${main}/about`], appendToId: id });
      assert.equal(late.status, 409, late.text);
      assert.equal(late.json.code, 'BATCH_SCRAPE_NOT_RUNNING');
      const other = await ensureTeam(svc.db, `batch-append-${store}`);
      const otherApi = apiClient(svc, (await createApiKey(svc.db, other.id)).key);
      const foreign = await otherApi('POST', '/v2/batch/scrape', { urls: [`${main}/about`], appendToId: id });
      assert.equal(foreign.status, 404, foreign.text);
      const withHook = await api.batchScrape({
        urls: [`${main}/about`],
        appendToId: id,
        webhook: 'http://127.0.0.1:9/',
      });
      assert.equal(withHook.status, 400, withHook.text);
    });

    test('idempotency key: a repeat returns the same batch; another body with the key is 409', async () => {
      const body = { urls: [`${main}/articles/1`], idempotencyKey: `key-${store}-1` };
      const a = await api.startBatch(body);
      const b = await api.startBatch(body);
      assert.equal(b.id, a.id);
      const { rows } = await svc.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM crawls WHERE kind = 'batch_scrape' AND id = $1",
        [a.id],
      );
      assert.equal(rows[0].n, 1);
      const other = await api.batchScrape({ ...body, urls: [`${main}/about`] });
      assert.equal(other.status, 409, other.text);
      assert.equal(other.json.code, 'IDEMPOTENCY_KEY_REUSED');
      // The header works too, and two requests at once start one batch.
      const headerBody = { urls: [`${main}/about`] };
      const [x, y] = await Promise.all([
        api.batchScrape(headerBody, { 'x-idempotency-key': `key-${store}-2` }),
        api.batchScrape(headerBody, { 'x-idempotency-key': `key-${store}-2` }),
      ]);
      const ok = [x, y].filter((r) => r.status === 200);
      assert.ok(ok.length >= 1, `${x.text} ${y.text}`);
      for (const r of [x, y]) if (r.status !== 200) assert.equal(r.json.code, 'IDEMPOTENCY_KEY_IN_USE');
      const again = await api.startBatch(headerBody, { 'x-idempotency-key': `key-${store}-2` });
      assert.equal(again.id, ok[0].json.id);
      const mismatch = await api.batchScrape({ ...headerBody, idempotencyKey: 'a' }, { 'x-idempotency-key': 'b' });
      assert.equal(mismatch.status, 400);
      assert.match(mismatch.json.error, /body\.idempotencyKey/);
      await api.waitForBatch(a.id);
      await api.waitForBatch(again.id);
    });

    test('cancel stops new pages within a second; cancelled is terminal', async () => {
      const urls = Array.from({ length: 8 }, (_, i) => `${main}/slow?ms=700&n=${i}`);
      const { id } = await api.startBatch({ urls, maxConcurrency: 1 });
      const seen = () => site.requests.filter((r) => r.path.startsWith('/slow?ms=700&n=')).length;
      await site.requested('the first slow page', () => seen() > 0, 10_000);
      const del = await api.cancelBatch(id);
      assert.equal(del.status, 200, del.text);
      assert.deepEqual(del.json, { status: 'cancelled' });
      await sleep(1000);
      const after = seen();
      await sleep(1500);
      assert.equal(seen(), after, 'no page started after the cancel settled');
      assert.ok(after < urls.length);
      const status = (await api.batchStatus(id)).json;
      assert.equal(status.status, 'cancelled');
      assert.equal(status.next, null);
    });

    test("another team's batch is 404; a crawl id is not a batch id", async () => {
      const other = await ensureTeam(svc.db, `batch-other-${store}`);
      const otherApi = apiClient(svc, (await createApiKey(svc.db, other.id)).key);
      for (const [method, path] of [
        ['GET', `/v2/batch/scrape/${firstBatch}`],
        ['DELETE', `/v2/batch/scrape/${firstBatch}`],
        ['GET', `/v2/batch/scrape/${firstBatch}/errors`],
      ] as const) {
        const res = await otherApi(method, path);
        assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
        assert.equal(res.json.code, 'BATCH_SCRAPE_NOT_FOUND');
      }
      assert.equal((await api.crawlStatus(firstBatch)).status, 404);
      assert.equal((await api.batchStatus(firstBatch)).json.status, 'completed');
    });

    test('400s name the field', async () => {
      const cases: [Record<string, unknown>, RegExp][] = [
        [{}, /body\.urls/],
        [{ urls: [] }, /body\.urls/],
        [{ urls: [`${main}/about`], zeroDataRetention: true }, /body\.zeroDataRetention/],
        [{ urls: [`${main}/about`], bogus: 1 }, /bogus/],
        [{ urls: [`${main}/about`], timeout: 5 }, /body\.timeout/],
        [{ urls: [`${main}/about`], appendToId: 'nope' }, /body\.appendToId/],
        [
          { urls: [`${main}/about`], webhook: { url: `${main}/hook`, events: ['page', 'nope'] } },
          /body\.webhook\.events\.1/,
        ],
        [{ urls: [`${main}/about`], scrapeOptions: { formats: ['markdown'] } }, /scrapeOptions/],
      ];
      for (const [body, field] of cases) {
        const res = await api.batchScrapeRaw(body);
        assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
        assert.equal(res.json.code, 'BAD_REQUEST');
        assert.match(JSON.stringify(res.json), field);
      }
    });

    test('the status stream (WebSocket, key as subprotocol): catchup, a document per page in order of finishing, done', async () => {
      const urls = [`${main}/slow?ms=600&w=1`, `${main}/about`, `${main}/articles/2`];
      const { id } = await api.startBatch({ urls, maxConcurrency: 1 });
      const ws = new WebSocket(`${svc.url.replace('http', 'ws')}/v2/batch/scrape/${id}`, [svc.key]);
      const messages: any[] = [];
      ws.addEventListener('message', (e) => messages.push(JSON.parse(e.data as string)));
      const closed = new Promise<number>((resolve) => ws.addEventListener('close', (e) => resolve(e.code)));
      assert.equal(await closed, 1000);
      assert.equal(ws.protocol, svc.key);
      assert.equal(messages[0].type, 'catchup');
      assert.equal(messages.at(-1).type, 'done');
      assert.equal(messages.at(-1).data.status, 'completed');
      const docs = [...messages[0].data.data, ...messages.filter((m) => m.type === 'document').map((m) => m.data)];
      assert.deepEqual(docs.map((d: JobDoc) => d.metadata.sourceURL).sort(), [...urls].sort());
      // Another team's key gets no data.
      const other = await ensureTeam(svc.db, `batch-ws-${store}`);
      const otherKey = (await createApiKey(svc.db, other.id)).key;
      const foreign = new WebSocket(`${svc.url.replace('http', 'ws')}/v2/batch/scrape/${id}`, [otherKey]);
      const got: any[] = [];
      foreign.addEventListener('message', (e) => got.push(JSON.parse(e.data as string)));
      const code = await new Promise<number>((resolve) => foreign.addEventListener('close', (e) => resolve(e.code)));
      assert.equal(code, 1008);
      assert.deepEqual(
        got.map((m) => [m.type, m.code]),
        [['error', 'BATCH_SCRAPE_NOT_FOUND']],
      );
    });

    test('webhook: batch_scrape.started, one page event per URL, completed; signed under the team secret', async () => {
      const receiver = await startWebhookReceiver();
      const received = receiver.received;
      try {
        const { id } = await api.startBatch({
          urls: [`${main}/articles/1`, refused],
          webhook: { url: receiver.url, metadata: { run: 7 } },
        });
        await api.waitForBatch(id);
        await receiver.until(
          'batch_scrape.completed',
          () => received.some((r) => r.type === 'batch_scrape.completed'),
          15_000,
        );
        const types = received.map((r) => r.type).sort();
        assert.deepEqual(types, [
          'batch_scrape.completed',
          'batch_scrape.page',
          'batch_scrape.page',
          'batch_scrape.started',
        ]);
        const { rows } = await svc.db.query<{ secret: string }>(
          'SELECT webhook_secret AS secret FROM teams WHERE name = $1',
          [svc.config.defaultTeam],
        );
        for (const r of received) {
          assert.equal(r.signature, `sha256=${createHmac('sha256', rows[0].secret).update(r.raw).digest('hex')}`);
          assert.equal(r.body.id, id);
          assert.deepEqual(r.body.metadata, { run: 7 });
        }
        const pages = received.filter((r) => r.type === 'batch_scrape.page');
        const good = pages.find((p) => p.body.success);
        assert.equal(good?.body.data[0].metadata.sourceURL, `${main}/articles/1`);
        const bad = pages.find((p) => !p.body.success);
        assert.deepEqual(bad?.body.data, []);
        assert.ok(bad?.body.error);
      } finally {
        await receiver.close();
      }
    });
  });
}
