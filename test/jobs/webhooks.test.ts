// Crawl webhooks end to end: the real service (embedded workers) crawls the fixture site and
// delivers to a receiver on loopback: event types and payload shape, metadata echoed, custom
// headers, signatures under the team's secret, the `events` filter, cancelled, and a failed
// delivery retried (GLEANER_WEBHOOK_RETRY_DELAYS shortened to 1 s) with both attempts recorded.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../../src/cli.ts';
import { Crawler } from '../../src/crawl/crawler.ts';
import type { JobQueue } from '../../src/jobs/queue.ts';
import { listDeliveries, signBody } from '../../src/jobs/webhooks.ts';
import type { FixtureSite } from '../fixtures/site/index.ts';
import type { Api } from '../helpers/api.ts';
import { type TestService, startSiteAndService, stopSiteAndService, storeKinds } from '../helpers/service.ts';
import { type WebhookReceiver, startWebhookReceiver } from '../helpers/webhook-receiver.ts';
import '../helpers/loopback-dns.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

for (const store of storeKinds) {
  describe(`crawl webhooks (${store})`, () => {
    let site: FixtureSite;
    let svc: TestService;
    let api: Api;
    let main: string;
    let receiver: WebhookReceiver;
    let hook: string;
    let secret: string;
    let flakyFailures = 0;

    before(async () => {
      ({ site, svc, api, main } = await startSiteAndService({ store, env: { GLEANER_WEBHOOK_RETRY_DELAYS: '1' } }));
      // /flaky answers 500 once.
      receiver = await startWebhookReceiver((d) => (d.path === '/flaky' && flakyFailures++ === 0 ? 500 : 200));
      hook = receiver.origin;
      const { rows } = await svc.db.query<{ secret: string }>(
        'SELECT webhook_secret AS secret FROM teams WHERE name = $1',
        [svc.config.defaultTeam],
      );
      secret = rows[0].secret;
    });
    after(async () => {
      await stopSiteAndService(svc, site);
      await receiver?.close();
    });

    const of = (id: string) => receiver.received.filter((r) => r.body.id === id);

    test('started, one page event per page, completed: shape, metadata, headers, signature, records', async () => {
      const metadata = { run: 42, tag: 'x' };
      const id = await api.startCrawl({
        url: `${main}/`,
        sitemap: 'skip',
        limit: 4,
        webhook: { url: `${hook}/ok`, headers: { 'x-test-header': 'present' }, metadata },
      });
      const status = await api.waitForCrawl(id);
      assert.equal(status.status, 'completed');
      assert.ok(status.completed >= 1);
      await receiver.until('completed and every page', () => {
        const types = of(id).map((r) => r.body.type);
        return (
          types.includes('crawl.completed') &&
          types.includes('crawl.started') &&
          types.filter((t) => t === 'crawl.page').length >= status.completed
        );
      });
      await sleep(300); // nothing more should come
      const got = of(id);
      const pages = got.filter((r) => r.body.type === 'crawl.page');
      assert.equal(got.filter((r) => r.body.type === 'crawl.started').length, 1);
      assert.equal(got.filter((r) => r.body.type === 'crawl.completed').length, 1);
      assert.equal(pages.length, status.completed, 'one page event per scraped page');
      assert.equal(got.length, pages.length + 2);
      for (const r of got) {
        assert.equal(r.path, '/ok');
        assert.deepEqual(Object.keys(r.body).sort(), ['data', 'id', 'metadata', 'success', 'type', 'webhookId']);
        assert.equal(r.body.success, true);
        assert.deepEqual(r.body.metadata, metadata);
        assert.match(r.body.webhookId, /^[0-9a-f-]{36}$/);
        assert.equal(r.headers['x-test-header'], 'present');
        assert.equal(r.headers['content-type'], 'application/json');
        const expected = `sha256=${createHmac('sha256', secret).update(r.raw).digest('hex')}`;
        assert.equal(r.headers['x-firecrawl-signature'], expected);
        assert.equal(signBody(secret, r.raw), expected);
      }
      assert.equal(new Set(got.map((r) => r.body.webhookId)).size, got.length, 'one webhookId per event');
      for (const r of got.filter((x) => x.body.type !== 'crawl.page')) assert.deepEqual(r.body.data, []);
      const urls = pages.map((p) => {
        assert.equal(p.body.data.length, 1);
        assert.equal(typeof p.body.data[0].markdown, 'string');
        return p.body.data[0].metadata.sourceURL as string;
      });
      assert.deepEqual(new Set(urls), new Set(status.data.map((d: any) => d.metadata.sourceURL)));
      const records = await listDeliveries(svc.db, id);
      assert.equal(records.length, got.length);
      for (const rec of records) {
        assert.equal(rec.statusCode, 200);
        assert.equal(rec.error, null);
        assert.equal(rec.attempt, 1);
        assert.ok(rec.deliveredAt);
        assert.equal(rec.url, `${hook}/ok`);
      }
    });

    test('the CLI prints the team secret', async () => {
      const lines: string[] = [];
      await runCli(['teams', 'secret', '--team', svc.config.defaultTeam], svc.db, (l) => lines.push(l));
      assert.deepEqual(lines, [secret]);
    });

    test('the events filter: only completed; a URL string gets every event', async () => {
      const only = await api.startCrawl({
        url: `${main}/about`,
        sitemap: 'skip',
        limit: 1,
        webhook: { url: `${hook}/ok`, events: ['completed'] },
      });
      const all = await api.startCrawl({ url: `${main}/about`, sitemap: 'skip', limit: 1, webhook: `${hook}/ok` });
      await api.waitForCrawl(only);
      await api.waitForCrawl(all);
      await receiver.until(
        'both completed',
        () =>
          of(only).some((r) => r.body.type === 'crawl.completed') &&
          of(all).some((r) => r.body.type === 'crawl.completed'),
      );
      await receiver.until('every event of the string webhook', () => of(all).length === 3);
      await sleep(500);
      assert.deepEqual(
        of(only).map((r) => r.body.type),
        ['crawl.completed'],
      );
      assert.deepEqual(of(only)[0].body.metadata, {});
      assert.deepEqual(
        of(all)
          .map((r) => r.body.type)
          .sort(),
        ['crawl.completed', 'crawl.page', 'crawl.started'],
      );
    });

    test('page events a dead process left unqueued are queued a minute later, once', async () => {
      const id = await api.startCrawl({ url: `${main}/`, sitemap: 'skip', limit: 3, webhook: `${hook}/ok` });
      assert.equal((await api.waitForCrawl(id)).status, 'completed');
      const pending = async () =>
        (
          await svc.db.query<{ n: number }>(
            'SELECT count(*)::int AS n FROM crawl_pages WHERE crawl_id = $1 AND event_pending',
            [id],
          )
        ).rows[0].n;
      assert.equal(await pending(), 0, 'every recorded page had its event queued');
      // As if the process died between the record and the events: marked, recorded 2 minutes ago.
      const { rows } = await svc.db.query<{ key: string }>(
        `UPDATE crawl_pages SET event_pending = true, updated_at = clock_timestamp() - interval '2 minutes'
         WHERE crawl_id = $1 AND status = 'done' RETURNING url_key AS key`,
        [id],
      );
      assert.ok(rows.length >= 1);
      const sent: { name: string; keys: string[] }[] = [];
      const queue = {
        async sendMany(name: string, jobs: { data: { key?: string } }[]) {
          sent.push({ name, keys: jobs.map((j) => j.data.key!) });
          return [];
        },
      } as unknown as JobQueue;
      const crawler = new Crawler({
        db: svc.db,
        queue,
        log: svc.app.log,
        scraper: { searchIndexer: undefined },
      } as unknown as ConstructorParameters<typeof Crawler>[0]);
      await crawler.resendPageEvents();
      assert.deepEqual(
        sent.map((x) => x.name),
        ['webhook-delivery'],
      );
      assert.deepEqual(sent[0].keys.sort(), rows.map((r) => r.key).sort());
      assert.equal(await pending(), 0);
      await crawler.resendPageEvents();
      assert.equal(sent.length, 1, 'nothing left to send');
    });

    test('cancel sends crawl.cancelled', async () => {
      const id = await api.startCrawl({
        url: `${main}/`,
        sitemap: 'skip',
        limit: 10,
        delay: 5,
        webhook: { url: `${hook}/ok`, events: ['completed'] },
      });
      const res = await api.cancelCrawl(id);
      assert.equal(res.status, 200, res.text);
      await receiver.until('cancelled', () => of(id).some((r) => r.body.type === 'crawl.cancelled'));
      assert.deepEqual(
        of(id).map((r) => r.body.type),
        ['crawl.cancelled'],
      );
    });

    test('a failed delivery (500) is retried after the configured delay; both attempts recorded', async () => {
      const id = await api.startCrawl({
        url: `${main}/about`,
        sitemap: 'skip',
        limit: 1,
        webhook: { url: `${hook}/flaky`, events: ['started'] },
      });
      await receiver.until('the retry', () => of(id).length >= 2);
      const [first, second] = of(id);
      assert.equal(first.raw, second.raw, 'the same payload');
      assert.equal(first.body.type, 'crawl.started');
      assert.equal(first.headers['x-firecrawl-signature'], second.headers['x-firecrawl-signature']);
      assert.ok(second.at - first.at >= 900, `retried after ${second.at - first.at} ms`);
      let records = await listDeliveries(svc.db, id);
      for (let i = 0; records.length < 2 && i < 40; i++) {
        await sleep(50);
        records = await listDeliveries(svc.db, id);
      }
      assert.deepEqual(
        records.map((r) => [r.event, r.attempt, r.statusCode, r.deliveredAt !== null]),
        [
          ['crawl.started', 1, 500, false],
          ['crawl.started', 2, 200, true],
        ],
      );
      assert.equal(records[0].error, 'receiver answered 500');
      assert.equal(records[0].webhookId, records[1].webhookId);
    });
  });
}
