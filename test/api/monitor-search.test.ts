// Monitors' search targets end to end, on the real service: over the own index (fixture pages scraped
// through POST /v2/scrape) and over SearXNG (the scripted stand-in of test/search/searxng-stub.ts). The
// first check records the results; later checks report new, changed (title or description) and removed
// results, judge them against the goal (deterministically: no LLM here) and notify only the relevant
// ones; a failed search removes nothing; searchWindow reaches the backend as its time filter; bad
// targets are refused naming the field.
import assert from 'node:assert/strict';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FixtureSite } from '../fixtures/site/index.ts';
import type { Api, MonitorBody } from '../helpers/api.ts';
import { type TestService, startSiteAndService, stopSiteAndService, storeKinds } from '../helpers/service.ts';
import { type WebhookReceiver, startWebhookReceiver } from '../helpers/webhook-receiver.ts';
import { type SearxngStub, type StubResult, startSearxngStub } from '../search/searxng-stub.ts';
import '../helpers/loopback-dns.ts';

const page = (title: string, description: string, body: string) =>
  `<!DOCTYPE html><html><head><title>${title}</title><meta name="description" content="${description}"></head>` +
  `<body><main><h1>${title}</h1><p>${body}</p></main></body></html>`;

const byUrl = (check: any) => new Map<string, any>(check.pages.map((p: any) => [p.url, p]));
const statuses = (check: any) =>
  Object.fromEntries(check.pages.map((p: any) => [new URL(p.url).pathname, p.status])) as Record<string, string>;

/** The monitor.page deliveries of a check, once the check's every queued event has arrived. */
async function pageEvents(api: Api, receiver: WebhookReceiver, check: any): Promise<any[]> {
  // The notifications are recorded just after the check ends.
  let status = check.notificationStatus;
  for (let i = 0; !status.webhook && i < 100; i++) {
    await new Promise((r) => setTimeout(r, 50));
    status = (await api.monitorCheck(check.monitorId, check.id)).json.data.notificationStatus;
  }
  const queued = status.webhook.events as number;
  const ofCheck = () => receiver.received.filter((d) => d.body.checkId === check.id);
  await receiver.until(`${queued} deliveries of check ${check.id}`, () => ofCheck().length >= queued);
  return ofCheck()
    .filter((d) => d.type === 'monitor.page')
    .map((d) => d.body.data);
}

for (const store of storeKinds) {
  describe(`monitor search targets: own index (${store})`, () => {
    let site: FixtureSite;
    let svc: TestService;
    let api: Api;
    let main: string;
    let receiver: WebhookReceiver;

    before(async () => {
      ({ site, svc, api, main } = await startSiteAndService({ store }));
      receiver = await startWebhookReceiver();
    });
    after(async () => {
      await stopSiteAndService(svc, site);
      await receiver?.close();
    });

    /** Sets a fixture page and scrapes it, which puts it in the team's own index. */
    async function publish(path: string, title: string, description: string, body: string): Promise<string> {
      site.mutable.set(path, { html: page(title, description, body) });
      const res = await api.scrape({ url: `${main}${path}`, formats: ['markdown'], maxAge: 0 });
      assert.equal(res.status, 200, res.text);
      return `${main}${path}`;
    }

    test('first check records the hits; then new, changed and removed hits, only relevant ones notified', async () => {
      const a = await publish('/mutable/wind/a', 'Zephyr 2 launch', 'The Zephyr 2 ships in spring.', 'Zephyr 2.');
      const b = await publish('/mutable/wind/b', 'Zephyr owners club', 'Monthly meetings.', 'Zephyr owners.');
      await publish('/mutable/other', 'Gardening', 'Roses.', 'Nothing about the wind.');
      const m = await api.startMonitor({
        name: 'zephyr news',
        schedule: { text: 'hourly' },
        goal: 'Battery recalls and delays.',
        webhook: { url: receiver.url },
        targets: [{ id: 'web', type: 'search', queries: ['zephyr'] }],
      });
      assert.equal(m.judgeEnabled, true);
      assert.deepEqual(m.targets, [{ id: 'web', type: 'search', queries: ['zephyr'] }]);
      // 2 credits a check (up to 10 results) × 24 checks a day × 30 days.
      assert.equal(m.estimatedCreditsPerMonth, 2 * 24 * 30);

      const first = await api.runCheck(m.id);
      assert.equal(first.status, 'completed', JSON.stringify(first));
      assert.deepEqual(first.summary, { totalPages: 2, same: 0, changed: 0, new: 2, removed: 0, error: 0 });
      assert.deepEqual(statuses(first), { '/mutable/wind/a': 'new', '/mutable/wind/b': 'new' });
      const hitA = byUrl(first).get(a);
      assert.deepEqual(hitA.metadata, { title: 'Zephyr 2 launch', description: 'The Zephyr 2 ships in spring.' });
      assert.deepEqual(hitA.snapshot, { json: hitA.metadata });
      assert.equal(hitA.currentScrapeId, null);
      assert.equal(hitA.judgment.meaningful, false, JSON.stringify(hitA.judgment));
      assert.match(hitA.judgment.warning, /no LLM is configured.*deterministic judge/);
      assert.equal(first.actualCredits, 2);
      assert.equal(first.estimatedCredits, 2);
      const result = first.targetResults[0];
      assert.equal(result.targetId, 'web');
      assert.equal(result.type, 'search');
      assert.equal(result.searchCompleted, true);
      assert.equal(result.resultCount, 2);
      assert.equal(result.searchCredits, 2);
      assert.equal(result.matches, 0);
      assert.equal(result.resultsJudged, 2);
      assert.equal(result.judgeDegraded, true);
      assert.equal(result.backend, 'own index');
      assert.deepEqual(result.queries, [{ query: 'zephyr', results: 2 }]);
      assert.deepEqual(await pageEvents(api, receiver, first), [], 'nothing relevant to the goal yet');

      // A new relevant page, a new irrelevant one, a changed title, a page that no longer matches.
      const c = await publish('/mutable/wind/c', 'Zephyr battery recall', 'Owners are asked to stop.', 'Zephyr.');
      await publish('/mutable/wind/d', 'Zephyr garden party', 'Photos.', 'Zephyr party.');
      await publish('/mutable/wind/a', 'Zephyr 2 launch delayed', 'The Zephyr 2 ships in spring.', 'Zephyr 2.');
      await publish('/mutable/wind/b', 'Owners club', 'Monthly meetings.', 'No longer about the wind.');
      const second = await api.runCheck(m.id);
      assert.equal(second.status, 'completed', JSON.stringify(second));
      assert.deepEqual(second.summary, { totalPages: 4, same: 0, changed: 1, new: 2, removed: 1, error: 0 });
      assert.deepEqual(statuses(second), {
        '/mutable/wind/a': 'changed',
        '/mutable/wind/b': 'removed',
        '/mutable/wind/c': 'new',
        '/mutable/wind/d': 'new',
      });
      const pages = byUrl(second);
      const changed = pages.get(a);
      assert.deepEqual(changed.diff.json, {
        title: { previous: 'Zephyr 2 launch', current: 'Zephyr 2 launch delayed' },
      });
      assert.match(changed.diff.text, /^-Zephyr 2 launch$/m);
      assert.match(changed.diff.text, /^\+Zephyr 2 launch delayed$/m);
      assert.equal(changed.judgment.meaningful, true, JSON.stringify(changed.judgment));
      assert.equal(changed.judgment.meaningfulChanges[0].type, 'changed');
      assert.equal(pages.get(c).judgment.meaningful, true);
      assert.equal(pages.get(c).judgment.meaningfulChanges[0].type, 'added');
      assert.equal(pages.get(`${main}/mutable/wind/d`).judgment.meaningful, false);
      const removed = pages.get(b);
      assert.equal(removed.judgment, null);
      assert.equal(removed.metadata.title, 'Zephyr owners club', 'a removed hit shows what it was');
      assert.equal(second.targetResults[0].matches, 2);

      const events = await pageEvents(api, receiver, second);
      assert.deepEqual(events.map((e) => `${e.status} ${new URL(e.url).pathname}`).sort(), [
        'changed /mutable/wind/a',
        'new /mutable/wind/c',
      ]);
      const newEvent = events.find((e) => e.status === 'new');
      assert.equal(newEvent.isMeaningful, true);
      assert.equal(newEvent.targetId, 'web');
      assert.deepEqual(newEvent.metadata, { title: 'Zephyr battery recall', description: 'Owners are asked to stop.' });
      assert.equal(second.notificationStatus.webhook.events, 3, 'two pages and the completion');

      const third = await api.runCheck(m.id);
      assert.deepEqual(third.summary, { totalPages: 3, same: 3, changed: 0, new: 0, removed: 0, error: 0 });
      assert.deepEqual(await pageEvents(api, receiver, third), []);
      await api.deleteMonitor(m.id);
    });

    test('judging off: every new and changed hit is notified, unjudged', async () => {
      await publish('/mutable/quasar/a', 'Quasar notes', 'Notes.', 'Quasar.');
      const m = await api.startMonitor({
        name: 'quasar',
        schedule: { text: 'hourly' },
        judgeEnabled: false,
        webhook: { url: receiver.url, events: ['monitor.page'] },
        targets: [{ type: 'search', queries: ['quasar'], maxResults: 50 }],
      });
      assert.equal(m.estimatedCreditsPerMonth, 10 * 24 * 30, '50 results cost 10 credits a check');
      const first = await api.runCheck(m.id);
      assert.equal(first.summary.new, 1);
      assert.equal(first.pages[0].judgment, null);
      const events = await pageEvents(api, receiver, first);
      assert.equal(events.length, 1);
      assert.equal(events[0].isMeaningful, true);
      await api.deleteMonitor(m.id);
    });

    test('bad search targets: 400 naming the field; a goal is needed unless judging is off', async () => {
      const body = (target: Record<string, unknown>, over: Record<string, unknown> = {}) => ({
        name: 'bad',
        schedule: { text: 'hourly' },
        goal: 'anything',
        targets: [{ type: 'search', queries: ['x'], ...target }],
        ...over,
      });
      const cases: [unknown, string][] = [
        [body({ queries: [] }), 'body.targets.0.queries'],
        [body({ queries: Array.from({ length: 13 }, (_, i) => `q${i}`) }), 'body.targets.0.queries'],
        [body({ queries: ['ok', '  '] }), 'body.targets.0.queries.1'],
        [body({ queries: ['x'.repeat(257)] }), 'body.targets.0.queries.0'],
        [body({ queries: undefined }), 'body.targets.0.queries'],
        [body({ includeDomains: ['a.example'], excludeDomains: ['b.example'] }), 'body.targets.0.excludeDomains'],
        [body({ searchWindow: '2h' }), 'body.targets.0.searchWindow'],
        [body({ maxResults: 0 }), 'body.targets.0.maxResults'],
        [body({ maxResults: 51 }), 'body.targets.0.maxResults'],
        [body({ depth: 'deep' }), 'body.targets.0'],
        [body({}, { goal: undefined }), 'body.goal'],
        [body({}, { goal: '   ' }), 'body.goal'],
      ];
      for (const [b, field] of cases) {
        const res = await api.createMonitorRaw(b);
        assert.equal(res.status, 400, `${JSON.stringify(b)} -> ${res.text}`);
        assert.equal(res.json.code, 'BAD_REQUEST');
        assert.ok(
          res.json.details.some((d: { path: string }) => d.path === field || d.path.startsWith(`${field}.`)),
          `${field} not named: ${res.text}`,
        );
      }
      // Judging off: no goal needed. Clearing the goal later needs judging off too.
      const off = await api.startMonitor(body({}, { goal: undefined, judgeEnabled: false }) as MonitorBody);
      assert.equal(off.judgeEnabled, false);
      const on = await api.startMonitor(body({}) as MonitorBody);
      const cleared = await api.updateMonitorRaw(on.id, { goal: null });
      assert.equal(cleared.status, 400, cleared.text);
      assert.ok(
        cleared.json.details.some((d: { path: string }) => d.path === 'body.goal'),
        cleared.text,
      );
      assert.equal((await api.updateMonitorRaw(on.id, { goal: null, judgeEnabled: false })).status, 200);
      assert.equal((await api.updateMonitorRaw(off.id, { name: 'still off' })).status, 200);
      await api.deleteMonitor(off.id);
      await api.deleteMonitor(on.id);
    });
  });
}

describe('monitor search targets: SearXNG', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: Api;
  let stub: SearxngStub;
  let receiver: WebhookReceiver;
  /** What the stub answers, by query (the `site:` part included). */
  let answers: Record<string, StubResult[]> = {};
  /** Queries answered HTTP 502 (by a proxy in front of the stub, which fails all queries or none). */
  const failing = new Set<string>();
  let proxy: Server;

  before(async () => {
    stub = await startSearxngStub();
    stub.results = (category, pageno, q) => (category === 'general' && pageno === 1 ? (answers[q] ?? []) : []);
    proxy = createServer((req, res) => {
      const u = new URL(req.url ?? '/', 'http://proxy');
      if (failing.has(u.searchParams.get('q') ?? '')) {
        res.writeHead(502).end('bad gateway');
        return;
      }
      fetch(`${stub.url}${u.pathname}${u.search}`).then(
        async (r) => res.writeHead(r.status, { 'content-type': 'application/json' }).end(await r.text()),
        () => res.writeHead(500).end(),
      );
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const searxngUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    receiver = await startWebhookReceiver();
    ({ site, svc, api } = await startSiteAndService({ env: { SEARXNG_URL: searxngUrl } }));
  });
  after(async () => {
    await stopSiteAndService(svc, site);
    proxy?.closeAllConnections();
    await new Promise((resolve) => proxy?.close(resolve));
    await stub?.close();
    await receiver?.close();
  });

  const hit = (path: string, title: string, content: string, host = 'news.example'): StubResult => ({
    url: `https://${host}${path}`,
    title,
    content,
  });

  test('queries merged and capped, searchWindow as time_range, diffed check to check, a failed search removes nothing', async () => {
    answers = {
      'acme release': [
        hit('/1', 'Acme 3.0 released', 'The third major version.'),
        hit('/spam', 'Acme deals', 'Cheap.', 'spam.example'),
        hit('/2', 'Acme roadmap', 'What comes next.'),
        hit('/4', 'Acme 3.0 reviews', 'Mixed.'),
      ],
      'acme launch': [
        hit('/1', 'Acme 3.0 released', 'The third major version.'),
        hit('/3', 'Acme launch party', 'Cake.'),
      ],
    };
    const m = await api.startMonitor({
      name: 'acme',
      schedule: { text: 'every 30 minutes' },
      goal: 'Security fixes.',
      webhook: { url: receiver.url },
      targets: [
        {
          type: 'search',
          queries: ['acme release', 'acme launch'],
          searchWindow: '7d',
          maxResults: 3,
          excludeDomains: ['https://www.spam.example/'],
        },
      ],
    });
    stub.requests.length = 0;
    const first = await api.runCheck(m.id);
    assert.equal(first.status, 'completed', JSON.stringify(first));
    // Rank by rank across the queries, /1 once, spam.example left out, cut at 3 (not /4).
    assert.deepEqual(
      first.pages.map((p: any) => p.url),
      ['https://news.example/1', 'https://news.example/2', 'https://news.example/3'],
    );
    assert.deepEqual(first.summary, { totalPages: 3, same: 0, changed: 0, new: 3, removed: 0, error: 0 });
    const firstPages = stub.requests.filter((r) => r.get('pageno') === '1');
    assert.deepEqual(firstPages.map((r) => `${r.get('q')} ${r.get('time_range')} ${r.get('categories')}`).sort(), [
      'acme launch week general',
      'acme release week general',
    ]);
    const result = first.targetResults[0];
    assert.equal(result.backend, 'SearXNG');
    assert.deepEqual(result.queries, [
      { query: 'acme release', results: 3 },
      { query: 'acme launch', results: 2 },
    ]);
    assert.equal(first.actualCredits, 2);

    // /2's description changes (relevant), /3 is gone, /5 is new (relevant), /1 stays.
    answers = {
      'acme release': [
        hit('/1', 'Acme 3.0 released', 'The third major version.'),
        hit('/2', 'Acme roadmap', 'Security fixes first.'),
      ],
      'acme launch': [hit('/5', 'Acme 3.0.1 security fix', 'Patch now.')],
    };
    const second = await api.runCheck(m.id);
    assert.deepEqual(statuses(second), { '/1': 'same', '/2': 'changed', '/3': 'removed', '/5': 'new' });
    const changed = byUrl(second).get('https://news.example/2');
    assert.deepEqual(changed.diff.json, {
      description: { previous: 'What comes next.', current: 'Security fixes first.' },
    });
    assert.equal(changed.judgment.meaningful, true);
    const events = await pageEvents(api, receiver, second);
    assert.deepEqual(events.map((e) => `${e.status} ${e.url}`).sort(), [
      'changed https://news.example/2',
      'new https://news.example/5',
    ]);

    // SearXNG fails: the check fails and nothing is taken as removed.
    stub.status = 500;
    const failed = await api.runCheck(m.id);
    stub.status = 200;
    assert.equal(failed.status, 'failed', JSON.stringify(failed));
    assert.match(failed.error, /SearXNG answered HTTP 500/);
    assert.equal(failed.targetResults[0].searchCompleted, false);
    assert.deepEqual(failed.summary, { totalPages: 0, same: 0, changed: 0, new: 0, removed: 0, error: 0 });
    assert.equal(failed.actualCredits, 0);
    const again = await api.runCheck(m.id);
    assert.deepEqual(statuses(again), { '/1': 'same', '/2': 'same', '/5': 'same' });

    // One query fails: the other's results are compared, none taken as removed, the check partial.
    failing.add('acme launch');
    const partial = await api.runCheck(m.id);
    failing.clear();
    assert.equal(partial.status, 'partial', JSON.stringify(partial));
    assert.equal(partial.error, null);
    assert.match(partial.targetResults[0].error, /1 of 2 queries failed: .*HTTP 502/);
    assert.deepEqual(statuses(partial), { '/1': 'same', '/2': 'same' });
    assert.deepEqual(
      partial.targetResults[0].queries.map((q: any) => Boolean(q.error)),
      [false, true],
    );
    assert.deepEqual(statuses(await api.runCheck(m.id)), { '/1': 'same', '/2': 'same', '/5': 'same' });

    await api.deleteMonitor(m.id);
  });

  test('one include domain narrows the query with site:; 5m and 15m windows still reach the backend as a day', async () => {
    answers = { 'beta site:news.example': [hit('/b', 'Beta', 'Beta news.')] };
    const m = await api.startMonitor({
      name: 'beta',
      schedule: { text: 'hourly' },
      goal: 'beta',
      targets: [{ type: 'search', queries: ['beta'], searchWindow: '5m', includeDomains: ['news.example'] }],
    });
    stub.requests.length = 0;
    const first = await api.runCheck(m.id);
    assert.equal(first.status, 'completed', JSON.stringify(first));
    assert.deepEqual(
      first.pages.map((p: any) => p.url),
      ['https://news.example/b'],
    );
    assert.equal(stub.requests[0].get('time_range'), 'day');
    await api.deleteMonitor(m.id);
  });
});
