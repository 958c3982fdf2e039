// Monitors end to end: the real service (embedded workers, queue) against the fixture site's
// /mutable/ pages, on PGlite and, with TEST_DATABASE_URL, on Postgres: CRUD and validation, team
// scoping, checks (same, changed with a diff, new, removed, error; JSON per-field diffs), skips
// (overlap, no credits), ticks at an injected time, pause/resume, delete, webhooks, pagination.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { createApiKey, ensureTeam, findTeamByName, setCreditQuota } from '../../src/store/teams.ts';
import type { FixtureSite } from '../fixtures/site/index.ts';
import { type Api, type MonitorBody, apiClient } from '../helpers/api.ts';
import { type TestService, startSiteAndService, stopSiteAndService, storeKinds } from '../helpers/service.ts';
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
        [{ ...body(), targets: [{ type: 'search', queries: ['x'] }] }, 'body.targets.0.type'],
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
  });
}
