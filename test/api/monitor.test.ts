// Monitors end to end: the real service (embedded workers, queue) against the fixture site's
// /mutable/ pages, on PGlite and, with TEST_DATABASE_URL, on Postgres: CRUD and validation, team
// scoping, checks (same, changed with a diff, new, removed, error; JSON per-field diffs), skips
// (overlap, no credits), ticks at an injected time, pause/resume, delete, webhooks, pagination.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { MonitorScheduler } from '../../src/monitor/scheduler.ts';
import { pruneMonitorChecks } from '../../src/store/monitors.ts';
import { createApiKey, ensureTeam, findTeamByName, setCreditQuota } from '../../src/store/teams.ts';
import type { FixtureSite } from '../fixtures/site/index.ts';
import { type Api, type MonitorBody, apiClient } from '../helpers/api.ts';
import {
  type TestService,
  startSiteAndService,
  startTestService,
  stopSiteAndService,
  storeKinds,
} from '../helpers/service.ts';
import { type WebhookReceiver, startWebhookReceiver } from '../helpers/webhook-receiver.ts';
import '../helpers/loopback-dns.ts';

const page = (title: string, body: string, links: string[] = []) =>
  `<!DOCTYPE html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${body}</p>` +
  links.map((l) => `<p><a href="${l}">${l}</a></p>`).join('') +
  '</main></body></html>';

for (const store of storeKinds) {
  describe(`monitors (${store})`, () => {
    let site: FixtureSite;
    let svc: TestService;
    let api: Api;
    let main: string;
    let receiver: WebhookReceiver;
    let flaky = 0;

    before(async () => {
      ({ site, svc, api, main } = await startSiteAndService({ store, env: { GLEANER_WEBHOOK_RETRY_DELAYS: '1' } }));
      // /flaky answers 500 to its first delivery.
      receiver = await startWebhookReceiver((d) => (d.path === '/flaky' && flaky++ === 0 ? 500 : 200));
    });
    after(async () => {
      await stopSiteAndService(svc, site);
      await receiver?.close();
    });

    const body = (over: Partial<MonitorBody> = {}): MonitorBody => ({
      name: 'watch',
      schedule: { text: 'every 30 minutes', timezone: 'UTC' },
      targets: [{ type: 'scrape', urls: [`${main}/mutable/a`] }],
      ...over,
    });

    /** Sends one 'monitor-tick' job run at `now` and waits for its end. */
    async function tick(now: Date): Promise<void> {
      const id = await svc.queue.send('monitor-tick', { now: now.toISOString() });
      assert.ok(id);
      for (let i = 0; i < 300; i++) {
        const job = await svc.queue.getJob('monitor-tick', id);
        if (job?.state === 'completed') return;
        assert.notEqual(job?.state, 'failed', JSON.stringify(job?.output));
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.fail('the tick did not run');
    }

    test('create, get, list, update, delete: 200 {success, data}, schedule text answered as cron', async () => {
      const m = await api.startMonitor(
        body({ goal: 'price changes', webhook: { url: `${receiver.url}`, events: ['monitor.page'] } }),
      );
      assert.equal(m.status, 'active');
      assert.deepEqual(m.schedule, { cron: '*/30 * * * *', timezone: 'UTC', text: 'every 30 minutes' });
      assert.ok(Date.parse(m.nextRunAt) > Date.now());
      assert.equal(new Date(m.nextRunAt).getUTCMinutes() % 30, 0);
      assert.equal(m.targets.length, 1);
      assert.ok(m.targets[0].id);
      assert.equal(m.judgeEnabled, true, 'judging is on by default with a goal');
      assert.equal(m.retentionDays, 30);
      assert.equal(m.estimatedCreditsPerMonth, 1440);
      assert.equal(m.currentCheckId, null);

      const got = await api.getMonitor(m.id);
      assert.equal(got.status, 200);
      assert.deepEqual(got.json, { success: true, data: m });
      const list = await api.listMonitors('?limit=100');
      assert.equal(list.status, 200);
      assert.ok(list.json.data.some((x: { id: string }) => x.id === m.id));

      const paused = await api.updateMonitor(m.id, { status: 'paused', name: 'renamed', origin: 'js-sdk@4.42.0' });
      assert.equal(paused.status, 200, paused.text);
      assert.equal(paused.json.data.status, 'paused');
      assert.equal(paused.json.data.name, 'renamed');
      assert.equal(paused.json.data.nextRunAt, null);
      const run = await api.runMonitor(m.id);
      assert.equal(run.status, 409);
      assert.equal(run.json.code, 'MONITOR_PAUSED');
      const resumed = await api.updateMonitor(m.id, {
        status: 'active',
        schedule: { cron: '0 9 * * 1-5', timezone: 'Europe/Paris' },
      });
      assert.equal(resumed.status, 200, resumed.text);
      assert.equal(resumed.json.data.schedule.cron, '0 9 * * 1-5');
      const next = new Date(resumed.json.data.nextRunAt);
      const paris = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' });
      assert.equal(paris.format(next), '09:00', 'next run computed in the timezone');

      const del = await api.deleteMonitor(m.id);
      assert.equal(del.status, 200);
      assert.deepEqual(del.json, { success: true });
      assert.equal((await api.getMonitor(m.id)).status, 404);
      assert.equal((await api.deleteMonitor(m.id)).status, 404);
    });

    test('bad input: 400 naming the field', async () => {
      const cases: [unknown, string][] = [
        [body({ schedule: { cron: 'not a cron' } }), 'body.schedule.cron'],
        [body({ schedule: { text: 'whenever you like' } }), 'body.schedule.text'],
        [body({ schedule: { text: 'hourly', timezone: 'Mars/Olympus' } }), 'body.schedule.timezone'],
        [body({ schedule: { cron: '* * * * *' } }), 'body.schedule.cron'],
        [body({ schedule: { text: 'every 2 minutes' } }), 'body.schedule.text'],
        [body({ schedule: { cron: '0 * * * *', text: 'hourly' } }), 'body.schedule'],
        [body({ targets: [] }), 'body.targets'],
        [{ ...body(), targets: [{ type: 'search', queries: [] }] }, 'body.targets.0.queries'],
        [{ ...body(), targets: [{ type: 'teleport', urls: ['https://example.com/'] }] }, 'body.targets.0.type'],
        [{ ...body(), unknownField: 1 }, 'body.unknownField'],
        [{ ...body(), targets: [{ type: 'scrape', urls: ['ftp://x'] }] }, 'body.targets.0.urls.0'],
        [{ schedule: { text: 'hourly' }, targets: body().targets }, 'body.name'],
      ];
      for (const [b, field] of cases) {
        const res = await api.createMonitorRaw(b);
        assert.equal(res.status, 400, `${JSON.stringify(b)} -> ${res.text}`);
        assert.equal(res.json.success, false);
        assert.equal(res.json.code, 'BAD_REQUEST');
        assert.ok(
          res.json.details.some((d: { path: string }) => d.path.startsWith(field)),
          `${field} not named: ${res.text}`,
        );
      }
      const m = await api.startMonitor(body());
      const bad = await api.updateMonitorRaw(m.id, { schedule: { text: 'every 1 minutes' } });
      assert.equal(bad.status, 400);
      assert.match(bad.text, /5 minutes/);
      const badStatus = await api.updateMonitorRaw(m.id, { status: 'deleted' });
      assert.equal(badStatus.status, 400);
      await api.deleteMonitor(m.id);
    });

    test("unknown ids and another team's monitor: 404", async () => {
      const m = await api.startMonitor(body());
      const other = await ensureTeam(svc.db, `monitor-other-${store}`);
      const otherApi = apiClient(svc, (await createApiKey(svc.db, other.id)).key);
      const unknown = '00000000-0000-4000-8000-000000000000';
      for (const [client, id] of [
        [otherApi, m.id],
        [api, unknown],
        [api, 'mon_abc123'],
      ] as const) {
        for (const res of [
          await client.getMonitor(id),
          await client.updateMonitor(id, { name: 'x' }),
          await client.runMonitor(id),
          await client.monitorChecks(id),
          await client.monitorCheck(id, unknown),
          await client.deleteMonitor(id),
        ]) {
          assert.equal(res.status, 404, res.text);
          assert.equal(res.json.code, 'MONITOR_NOT_FOUND');
        }
      }
      assert.equal((await otherApi.listMonitors()).json.data.length, 0);
      const missingCheck = await api.monitorCheck(m.id, unknown);
      assert.equal(missingCheck.status, 404);
      assert.equal(missingCheck.json.code, 'MONITOR_CHECK_NOT_FOUND');
      await api.deleteMonitor(m.id);
    });

    test('checks: new, then same and changed (with a git-style diff), removed when the target drops a URL, error for a 500', async () => {
      site.mutable.set('/mutable/a', { html: page('Page A', 'The price is 10 euros.') });
      site.mutable.set('/mutable/b', { html: page('Page B', 'Nothing moves here.') });
      const [a, b, broken] = [`${main}/mutable/a`, `${main}/mutable/b`, `${main}/status/500`];
      const m = await api.startMonitor(
        body({ goal: 'prices', targets: [{ id: 't1', type: 'scrape', urls: [a, b, broken] }] }),
      );
      const first = await api.runCheck(m.id);
      assert.equal(first.status, 'partial');
      assert.equal(first.trigger, 'manual');
      assert.deepEqual(first.summary, { totalPages: 3, same: 0, changed: 0, new: 2, removed: 0, error: 1 });
      const byUrl = (check: any) => new Map<string, any>(check.pages.map((p: any) => [p.url, p]));
      let pages = byUrl(first);
      assert.equal(pages.get(a).status, 'new');
      assert.equal(pages.get(broken).status, 'error');
      assert.equal(pages.get(broken).statusCode, 500);
      assert.match(pages.get(broken).error, /500/);
      assert.equal(first.billingStatus, 'confirmed');
      assert.equal(first.actualCredits, 3);
      assert.ok(first.startedAt && first.finishedAt);
      const fetchedA = site.requests.filter((r) => r.path === '/mutable/a').length;

      site.mutable.set('/mutable/a', { html: page('Page A', 'The price is 12 euros.') });
      const second = await api.runCheck(m.id);
      assert.equal(
        site.requests.filter((r) => r.path === '/mutable/a').length,
        fetchedA + 1,
        'a check fetches fresh (never from the page cache)',
      );
      pages = byUrl(second);
      assert.deepEqual(second.summary, { totalPages: 3, same: 1, changed: 1, new: 0, removed: 0, error: 1 });
      const changed = pages.get(a);
      assert.equal(changed.status, 'changed');
      assert.match(changed.diff.text, /^\+.*12 euros/m);
      assert.match(changed.diff.text, /^-.*10 euros/m);
      assert.match(changed.diff.text, /^@@ /m);
      assert.ok(changed.diff.json.files[0].chunks[0].changes.some((c: any) => c.type === 'add'));
      assert.equal(changed.previousScrapeId, pages.get(a).previousScrapeId);
      assert.ok(
        changed.currentScrapeId && changed.previousScrapeId && changed.currentScrapeId !== changed.previousScrapeId,
      );
      assert.equal(typeof changed.judgment.meaningful, 'boolean');
      assert.ok(['high', 'medium', 'low'].includes(changed.judgment.confidence));
      assert.equal(pages.get(b).status, 'same');
      assert.equal(pages.get(b).diff, null);

      // Whitespace alone is not a change.
      site.mutable.set('/mutable/b', { html: page('Page B', 'Nothing    moves here.  ') });
      const updated = await api.updateMonitor(m.id, { targets: [{ id: 't1', type: 'scrape', urls: [a, b] }] });
      assert.equal(updated.status, 200, updated.text);
      const third = await api.runCheck(m.id);
      assert.equal(third.status, 'completed');
      assert.deepEqual(third.summary, { totalPages: 3, same: 2, changed: 0, new: 0, removed: 1, error: 0 });
      assert.equal(byUrl(third).get(broken).status, 'removed');

      const got = await api.getMonitor(m.id);
      assert.deepEqual(got.json.data.lastCheckSummary, third.summary);
      assert.equal(got.json.data.currentCheckId, null);
      const checks = await api.monitorChecks(m.id);
      assert.equal(checks.status, 200);
      assert.deepEqual(
        checks.json.data.map((c: any) => c.id),
        [third.id, second.id, first.id],
      );
      assert.equal(checks.json.data[0].pages, undefined, 'the list has no pages');
      const partial = await api.monitorChecks(m.id, '?status=partial&limit=1');
      assert.deepEqual(
        partial.json.data.map((c: any) => c.id),
        [second.id],
      );

      // Checks are in the jobs ledger: activity and credits.
      const activity = await api.activity('?endpoint=monitor');
      assert.equal(activity.status, 200, activity.text);
      const ids = activity.json.data.map((e: any) => e.id);
      for (const c of [first, second, third]) assert.ok(ids.includes(c.id), `${c.id} in ${ids}`);
      await api.deleteMonitor(m.id);
    });

    test('crawl targets: new pages, same, a new page, a page gone', async () => {
      const index = (links: string[]) => ({ html: page('Site', `An index of ${links.length} pages.`, links) });
      site.mutable.set('/mutable/site/', index(['/mutable/site/p1']));
      site.mutable.set('/mutable/site/p1', { html: page('P1', 'First page.') });
      const m = await api.startMonitor(
        body({
          targets: [{ type: 'crawl', url: `${main}/mutable/site/`, crawlOptions: { sitemap: 'skip', limit: 10 } }],
        }),
      );
      const usedBefore = await api.creditsUsed();
      const first = await api.runCheck(m.id);
      assert.equal(first.status, 'completed', JSON.stringify(first));
      assert.deepEqual(first.summary, { totalPages: 2, same: 0, changed: 0, new: 2, removed: 0, error: 0 });
      // The crawl's pages are charged once, on the crawl's job; the check reports them.
      assert.equal(first.actualCredits, 2);
      assert.equal((await api.creditsUsed()) - usedBefore, 2);
      assert.equal(first.targetResults[0].type, 'crawl');
      assert.ok(first.targetResults[0].crawlId);

      site.mutable.set('/mutable/site/', index(['/mutable/site/p1', '/mutable/site/p2']));
      site.mutable.set('/mutable/site/p2', { html: page('P2', 'Second page.') });
      const second = await api.runCheck(m.id);
      const status = (check: any) =>
        Object.fromEntries(check.pages.map((p: any) => [new URL(p.url).pathname, p.status]));
      assert.deepEqual(status(second), {
        '/mutable/site/': 'changed',
        '/mutable/site/p1': 'same',
        '/mutable/site/p2': 'new',
      });

      site.mutable.set('/mutable/site/', index(['/mutable/site/p2']));
      site.mutable.delete('/mutable/site/p1');
      const third = await api.runCheck(m.id);
      assert.deepEqual(status(third), {
        '/mutable/site/': 'changed',
        '/mutable/site/p1': 'removed',
        '/mutable/site/p2': 'same',
      });
      await api.deleteMonitor(m.id);
    });

    test('JSON monitors: per-field previous/current and snapshot.json', async () => {
      const product = (price: string) => ({
        html:
          `<!DOCTYPE html><html><head><title>Lamp</title><script type="application/ld+json">` +
          JSON.stringify({
            '@context': 'https://schema.org',
            '@type': 'Product',
            name: 'Lamp',
            offers: { '@type': 'Offer', price, priceCurrency: 'EUR' },
          }) +
          `</script></head><body><main><h1>Lamp</h1><p>Name: Lamp</p><p>Price: ${price} EUR</p></main></body></html>`,
      });
      site.mutable.set('/mutable/lamp', product('20'));
      const schema = { type: 'object', properties: { name: { type: 'string' }, price: { type: 'string' } } };
      const m = await api.startMonitor(
        body({
          targets: [
            {
              type: 'scrape',
              urls: [`${main}/mutable/lamp`],
              scrapeOptions: { formats: [{ type: 'changeTracking', modes: ['json'], schema }] },
            },
          ],
        }),
      );
      const first = await api.runCheck(m.id);
      assert.equal(first.pages[0].status, 'new');
      assert.ok(first.pages[0].snapshot.json, JSON.stringify(first.pages[0]));
      site.mutable.set('/mutable/lamp', product('25'));
      const second = await api.runCheck(m.id);
      const p = second.pages[0];
      assert.equal(p.status, 'changed', JSON.stringify(second));
      assert.equal(p.diff.text, undefined);
      const fields = Object.values(p.diff.json) as { previous: unknown; current: unknown }[];
      assert.ok(fields.length >= 1, JSON.stringify(p.diff));
      assert.ok(
        fields.some((f) => String(f.previous).includes('20') && String(f.current).includes('25')),
        JSON.stringify(p.diff),
      );
      assert.deepEqual(p.snapshot.json, second.pages[0].snapshot.json);
      await api.deleteMonitor(m.id);
    });

    /** The checks of a monitor as stored (whatever the API shows). */
    const storedChecks = async (id: string) =>
      (
        await svc.db.query<{ id: string; status: string; trigger: string; scheduledFor: Date }>(
          `SELECT id, status, trigger, scheduled_for AS "scheduledFor" FROM monitor_checks WHERE monitor_id = $1
           ORDER BY created_at`,
          [id],
        )
      ).rows;

    test('a scheduled tick runs one check per tick and advances nextRunAt; paused and deleted monitors are not run', async () => {
      site.mutable.set('/mutable/tick', { html: page('Tick', 'Scheduled.') });
      const m = await api.startMonitor(body({ targets: [{ type: 'scrape', urls: [`${main}/mutable/tick`] }] }));
      const due = new Date(Date.parse(m.nextRunAt) + 1000);
      await tick(due);
      await tick(due); // the same tick again (another process): no second check
      let checks = await storedChecks(m.id);
      assert.equal(checks.length, 1);
      assert.equal(checks[0].trigger, 'scheduled');
      assert.equal(new Date(checks[0].scheduledFor).toISOString(), m.nextRunAt);
      const done = await api.waitForCheck(m.id, checks[0].id);
      assert.equal(done.status, 'completed');
      assert.equal(done.summary.new, 1);
      const after = (await api.getMonitor(m.id)).json.data;
      assert.equal(Date.parse(after.nextRunAt), Date.parse(m.nextRunAt) + 30 * 60_000);
      assert.ok(after.lastRunAt);

      // Paused: a tick past its next run starts nothing; resumed, the next run counts from now.
      await api.updateMonitor(m.id, { status: 'paused' });
      await tick(new Date(Date.parse(after.nextRunAt) + 1000));
      assert.equal((await storedChecks(m.id)).length, 1);
      const resumed = (await api.updateMonitor(m.id, { status: 'active' })).json.data;
      assert.ok(Date.parse(resumed.nextRunAt) > Date.now());

      // Deleted: gone with its checks, and no tick brings it back.
      await api.deleteMonitor(m.id);
      await tick(new Date(Date.parse(resumed.nextRunAt) + 1000));
      checks = await storedChecks(m.id);
      assert.equal(checks.length, 0);
    });

    test('skips: a tick while the check runs records skipped_overlap; no credits records skipped_no_credits (run: 402)', async () => {
      const m = await api.startMonitor(body({ targets: [{ type: 'scrape', urls: [`${main}/slow?ms=2500`] }] }));
      const run = await api.runMonitor(m.id);
      assert.equal(run.status, 200, run.text);
      const again = await api.runMonitor(m.id);
      assert.equal(again.status, 409);
      assert.equal(again.json.code, 'MONITOR_CHECK_RUNNING');
      await tick(new Date(Date.parse(m.nextRunAt) + 1000));
      const skipped = (await storedChecks(m.id)).filter((c) => c.status === 'skipped_overlap');
      assert.equal(skipped.length, 1);
      const view = (await api.monitorChecks(m.id, '?status=skipped_overlap')).json.data;
      assert.equal(view.length, 1);
      assert.equal(view[0].trigger, 'scheduled');
      assert.equal(view[0].billingStatus, 'not_applicable');
      assert.deepEqual(view[0].summary, { totalPages: 0, same: 0, changed: 0, new: 0, removed: 0, error: 0 });
      assert.equal((await api.waitForCheck(m.id, run.json.data.id)).status, 'completed');

      const team = await findTeamByName(svc.db, svc.config.defaultTeam);
      await setCreditQuota(svc.db, team!.id, 0);
      try {
        const next = (await api.getMonitor(m.id)).json.data.nextRunAt;
        await tick(new Date(Date.parse(next) + 1000));
        const noCredits = (await storedChecks(m.id)).filter((c) => c.status === 'skipped_no_credits');
        assert.equal(noCredits.length, 1);
        const refused = await api.runMonitor(m.id);
        assert.equal(refused.status, 402);
        assert.equal(refused.json.code, 'INSUFFICIENT_CREDITS');
      } finally {
        await setCreditQuota(svc.db, team!.id, null);
      }
      await api.deleteMonitor(m.id);
    });

    test('a check lost for hours (its job gone) is failed by the next tick, which then runs', async () => {
      site.mutable.set('/mutable/lost', { html: page('Lost', 'Still here.') });
      const m = await api.startMonitor(body({ targets: [{ type: 'scrape', urls: [`${main}/mutable/lost`] }] }));
      const lost = '11111111-1111-4111-8111-111111111111';
      await svc.db.query(
        `INSERT INTO monitor_checks (id, monitor_id, team_id, status, trigger, updated_at)
         SELECT $1, id, team_id, 'running', 'manual', now() - interval '5 hours' FROM monitors WHERE id = $2`,
        [lost, m.id],
      );
      await svc.db.query('UPDATE monitors SET current_check_id = $1 WHERE id = $2', [lost, m.id]);
      await tick(new Date(Date.parse(m.nextRunAt) + 1000));
      const checks = await storedChecks(m.id);
      assert.equal(checks.length, 2, JSON.stringify(checks));
      const lostCheck = (await api.monitorCheck(m.id, lost)).json.data;
      assert.equal(lostCheck.status, 'failed');
      assert.equal(lostCheck.billingStatus, 'released');
      const started = checks.find((c) => c.id !== lost)!;
      assert.equal(started.trigger, 'scheduled');
      assert.equal((await api.waitForCheck(m.id, started.id)).status, 'completed');
      await api.deleteMonitor(m.id);
    });

    test('webhooks: monitor.page per changed page and monitor.check.completed, signed, retried', async () => {
      const { rows } = await svc.db.query<{ secret: string }>(
        'SELECT webhook_secret AS secret FROM teams WHERE name = $1',
        [svc.config.defaultTeam],
      );
      const secret = rows[0].secret;
      site.mutable.set('/mutable/hook', { html: page('Hook', 'Version one.') });
      const m = await api.startMonitor(
        body({
          goal: 'any text change',
          targets: [{ type: 'scrape', urls: [`${main}/mutable/hook`] }],
          webhook: { url: `${receiver.origin}/flaky`, metadata: { team: 'qa' }, headers: { 'x-extra': 'yes' } },
        }),
      );
      await api.runCheck(m.id);
      site.mutable.set('/mutable/hook', { html: page('Hook', 'Version two, with more text.') });
      const check = await api.runCheck(m.id);
      const of = () => receiver.received.filter((r) => r.body.monitorId === m.id);
      await receiver.until('both checks completed and the changed page', () => {
        const types = of()
          .filter((d) => d.body.checkId === check.id)
          .map((d) => d.type);
        return types.includes('monitor.check.completed') && types.includes('monitor.page');
      });
      for (const d of of()) {
        assert.equal(d.signature, `sha256=${createHmac('sha256', secret).update(d.raw).digest('hex')}`);
        assert.equal(d.headers['x-extra'], 'yes');
        assert.deepEqual(d.body.metadata, { team: 'qa' });
        assert.ok(d.body.webhookId);
      }
      const pageEvent = of().find((d) => d.type === 'monitor.page' && d.body.checkId === check.id)!;
      assert.equal(pageEvent.body.data.status, 'changed');
      assert.equal(pageEvent.body.data.url, `${main}/mutable/hook`);
      assert.equal(typeof pageEvent.body.data.isMeaningful, 'boolean');
      assert.equal(pageEvent.body.data.isMeaningful, pageEvent.body.data.judgment.meaningful);
      assert.match(pageEvent.body.data.diff.text, /Version two/);
      const completed = of().find((d) => d.type === 'monitor.check.completed' && d.body.checkId === check.id)!;
      assert.deepEqual(completed.body.data.summary, check.summary);
      // The first delivery of all was refused (500) and delivered again, with the same webhookId.
      const first = of()[0];
      await receiver.until(
        'the retry',
        () => of().filter((d) => d.body.webhookId === first.body.webhookId).length >= 2,
      );
      await receiver.until('all deliveries', () => of().length >= 5);
      const status = (await api.monitorCheck(m.id, check.id)).json.data.notificationStatus;
      assert.equal(status.webhook.status, 'queued');
      assert.equal(status.webhook.events, 2);
      assert.equal(status.webhook.delivered, 2);
      assert.deepEqual(status.email, { status: 'disabled' });
      await api.deleteMonitor(m.id);
    });

    test("a check's pages: following next returns every page exactly once; status filter", async () => {
      const urls = Array.from({ length: 7 }, (_, i) => `${main}/mutable/many/${i}`);
      urls.forEach((u, i) => site.mutable.set(new URL(u).pathname, { html: page(`Many ${i}`, `Page number ${i}.`) }));
      const m = await api.startMonitor(body({ targets: [{ type: 'scrape', urls: [...urls, `${main}/status/500`] }] }));
      const check = await api.runCheck(m.id);
      const all = await api.checkPages(m.id, check.id, '?limit=3');
      assert.equal(all.length, 8);
      assert.equal(new Set(all.map((p) => p.id)).size, 8);
      assert.deepEqual(new Set(all.map((p) => p.url)), new Set([...urls, `${main}/status/500`]));
      const firstPage = await api.monitorCheck(m.id, check.id, '?limit=3');
      assert.match(firstPage.json.next, /[?&]skip=3/);
      const last = await api.monitorCheck(m.id, check.id, '?limit=3&skip=6');
      assert.equal(last.json.next, null);
      assert.equal(last.json.data.pages.length, 2);
      const errors = await api.checkPages(m.id, check.id, '?limit=1&status=error');
      assert.deepEqual(
        errors.map((p) => p.status),
        ['error'],
      );
      await api.deleteMonitor(m.id);
    });

    test('ticks racing in two processes on one database start exactly one check per monitor and tick', async () => {
      // Postgres: a second service (its own pools) on the same schema; PGlite: one database, two schedulers.
      const other = store === 'postgres' ? await startTestService({ store, shareWith: svc }) : svc;
      try {
        site.mutable.set('/mutable/race', { html: page('Race', 'Once per tick.') });
        const monitors = [];
        for (let i = 0; i < 4; i++)
          monitors.push(
            await api.startMonitor(body({ targets: [{ type: 'scrape', urls: [`${main}/mutable/race`] }] })),
          );
        const now = new Date(Math.max(...monitors.map((m) => Date.parse(m.nextRunAt))) + 1000);
        const schedulers = [svc, other, svc, other].map(
          (s) => new MonitorScheduler({ db: s.db, queue: s.queue, log: s.app.log }),
        );
        await Promise.all(schedulers.map((sch) => sch.tick(now)));
        for (const m of monitors) {
          const checks = await storedChecks(m.id);
          assert.equal(checks.length, 1, JSON.stringify(checks));
          assert.equal((await api.waitForCheck(m.id, checks[0].id)).status, 'completed');
        }
        for (const m of monitors) await api.deleteMonitor(m.id);
      } finally {
        if (other !== svc) await other.stop();
      }
    });

    test('retention: old checks are pruned with their pages; contents still referred to are kept', async () => {
      site.mutable.set('/mutable/keep', { html: page('Keep', 'First text.') });
      const m = await api.startMonitor(
        body({ retentionDays: 1, targets: [{ type: 'scrape', urls: [`${main}/mutable/keep`] }] }),
      );
      await api.runCheck(m.id);
      site.mutable.set('/mutable/keep', { html: page('Keep', 'Second text.') });
      await api.runCheck(m.id);
      const contents = async () =>
        (
          await svc.db.query<{ n: number }>('SELECT count(*)::int AS n FROM monitor_contents WHERE monitor_id = $1', [
            m.id,
          ])
        ).rows[0].n;
      assert.equal(await contents(), 2);
      assert.equal(await pruneMonitorChecks(svc.db, new Date(Date.now() + 2 * 86_400_000)), 2);
      assert.equal((await storedChecks(m.id)).length, 0);
      assert.equal(await contents(), 1, 'the current content stays');
      const next = await api.runCheck(m.id);
      assert.equal(next.pages[0].status, 'same');
      await api.deleteMonitor(m.id);
    });
  });
}
