// The service's foundation through its HTTP API, on every store: auth, errors, activity,
// usage, credits (402), rate limits (429) and team isolation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ensureCredits } from '../../src/billing/credits.ts';
import { createJob, getTeamJob, updateJob } from '../../src/store/jobs.ts';
import { createApiKey, ensureTeam, findCallerByKey, revokeApiKey, setCreditQuota } from '../../src/store/teams.ts';
import { recordUsage } from '../../src/store/usage.ts';
import { type Api, apiClient } from '../helpers/api.ts';
import { type TestService, startTestService, storeKinds } from '../helpers/service.ts';

for (const store of storeKinds) {
  describe(`foundation API on ${store}`, () => {
    let svc: TestService;
    let call: Api;
    // A second team with its own key, to prove isolation.
    let otherKey: string;
    let otherTeamId: string;
    let teamId: string;

    before(async () => {
      svc = await startTestService({
        store,
        configure(app) {
          // Routes that exercise shared mechanisms no issue-2 endpoint reaches yet: a billable
          // route using the real credit guard, a failing route, and a body-taking route.
          app.post('/test/billable', async (request) => {
            await ensureCredits(svc.db, request.caller.teamId, 1);
            return { success: true };
          });
          app.get('/test/boom', async () => {
            throw new Error('secret internal detail');
          });
          app.post('/test/echo', async (request) => ({ success: true, body: request.body }));
        },
      });
      call = apiClient(svc);
      const caller = await findCallerByKey(svc.db, svc.key);
      teamId = caller!.teamId;
      const other = await ensureTeam(svc.db, 'other-team');
      otherTeamId = other.id;
      otherKey = (await createApiKey(svc.db, other.id)).key;
    });
    after(() => svc.destroy());

    test('health and readiness need no key', async () => {
      const anon = apiClient({ url: svc.url });
      assert.deepEqual((await anon('GET', '/health')).json, { status: 'ok' });
      const ready = await anon('GET', '/ready');
      assert.equal(ready.status, 200);
      assert.equal(ready.json.database, store);
    });

    test('401 without a key, with a wrong key, with a malformed header, with a revoked key', async () => {
      for (const headers of [
        {} as Record<string, string>,
        { authorization: 'Bearer fc-wrong-key' },
        { authorization: 'Basic abc' },
        { authorization: 'Bearer' },
      ]) {
        const res = await apiClient({ url: svc.url })('GET', '/v2/team/activity', undefined, headers);
        assert.equal(res.status, 401, JSON.stringify(headers));
        assert.equal(res.json.success, false);
        assert.equal(res.json.code, 'UNAUTHORIZED');
        assert.match(res.json.error, /key/i);
      }
      const team = await ensureTeam(svc.db, 'revoked-team');
      const { id, key } = await createApiKey(svc.db, team.id);
      assert.equal((await apiClient(svc, key)('GET', '/v2/team/activity')).status, 200);
      await revokeApiKey(svc.db, id);
      // A valid key is remembered for 2 s (src/api/auth.ts): revocation takes effect after that.
      await sleep(2100);
      assert.equal((await apiClient(svc, key)('GET', '/v2/team/activity')).status, 401);
    });

    test('keys are stored hashed, never in plain text', async () => {
      const { rows } = await svc.db.query<{ key_hash: string; key_preview: string }>(
        'SELECT key_hash, key_preview FROM api_keys',
      );
      assert.ok(rows.length > 0);
      for (const r of rows) {
        assert.match(r.key_hash, /^[0-9a-f]{64}$/);
        assert.notEqual(r.key_hash, svc.key);
        assert.ok(!r.key_preview.includes(svc.key.slice(6, -4)), 'preview hides the middle of the key');
      }
    });

    test('every response carries a request id; a sane caller id is kept', async () => {
      const res = await call('GET', '/v2/team/activity', undefined, { 'x-request-id': 'trace-123' });
      assert.equal(res.headers.get('x-request-id'), 'trace-123');
      const res2 = await call('GET', '/v2/team/activity');
      assert.match(res2.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/);
    });

    test('validation errors are 400 and name the field', async () => {
      const cases: [string, string][] = [
        ['/v2/team/activity?limit=0', 'query.limit'],
        ['/v2/team/activity?limit=101', 'query.limit'],
        ['/v2/team/activity?limit=abc', 'query.limit'],
        ['/v2/team/activity?endpoint=bogus', 'query.endpoint'],
        ['/v2/team/activity?surprise=1', 'query.surprise'],
        ['/v2/team/activity?cursor=not-a-cursor', 'query.cursor'],
        ['/v1/team/token-usage/historical?byApiKey=maybe', 'query.byApiKey'],
      ];
      for (const [path, field] of cases) {
        const res = await call('GET', path);
        assert.equal(res.status, 400, path);
        assert.equal(res.json.success, false);
        assert.equal(res.json.code, 'BAD_REQUEST');
        assert.ok(res.json.error.includes(field), `${path}: ${res.json.error}`);
        assert.ok(
          res.json.details.some((d: { path: string }) => d.path === field),
          `${path}: ${JSON.stringify(res.json.details)}`,
        );
      }
    });

    test('malformed JSON is 400, oversized bodies 413, unknown routes JSON 404', async () => {
      const bad = await call('POST', '/test/echo', '{"a":', {});
      assert.equal(bad.status, 400);
      assert.equal(bad.json.code, 'BAD_REQUEST');
      const big = await call('POST', '/test/echo', JSON.stringify({ s: 'x'.repeat(11 * 1024 * 1024) }));
      assert.equal(big.status, 413);
      assert.equal(big.json.code, 'PAYLOAD_TOO_LARGE');
      const missing = await call('GET', '/v2/nothing-here');
      assert.equal(missing.status, 404);
      assert.deepEqual(Object.keys(missing.json).sort(), ['code', 'error', 'success']);
      assert.equal(missing.json.code, 'NOT_FOUND');
    });

    test('an unexpected error is 500 UNKNOWN_ERROR without the stack or message', async () => {
      const res = await call('GET', '/test/boom');
      assert.equal(res.status, 500);
      assert.equal(res.json.code, 'UNKNOWN_ERROR');
      assert.ok(!res.text.includes('secret internal detail'));
      assert.ok(!res.text.includes('.ts:'));
      assert.equal((await call('GET', '/health')).status, 200, 'the process is still up');
    });

    test('activity lists the team’s jobs of the last 24 h, newest first, filtered by endpoint', async () => {
      const old = await createJob(svc.db, {
        teamId,
        apiKeyId: null,
        endpoint: 'scrape',
        target: 'https://old.example/',
      });
      await svc.db.query(`UPDATE jobs SET created_at = now() - interval '25 hours' WHERE id = $1`, [old.id]);
      const mine = [];
      for (const endpoint of ['scrape', 'crawl', 'scrape', 'map'] as const) {
        mine.push(
          await createJob(svc.db, { teamId, apiKeyId: null, endpoint, target: `https://site.example/${endpoint}` }),
        );
      }
      await createJob(svc.db, {
        teamId: otherTeamId,
        apiKeyId: null,
        endpoint: 'scrape',
        target: 'https://other.example/',
      });

      const all = await call('GET', '/v2/team/activity');
      assert.equal(all.status, 200);
      const ids = all.json.data.map((e: { id: string }) => e.id);
      assert.deepEqual(ids.slice(0, 4), mine.map((j) => j.id).reverse());
      assert.ok(!ids.includes(old.id), 'older than 24 h is not listed');
      assert.ok(
        all.json.data.every((e: { target: string }) => e.target !== 'https://other.example/'),
        "another team's jobs never appear",
      );
      assert.deepEqual(Object.keys(all.json.data[0]).sort(), ['api_version', 'created_at', 'endpoint', 'id', 'target']);
      assert.equal(all.json.data[0].api_version, 'v2');

      const scrapes = await call('GET', '/v2/team/activity?endpoint=scrape');
      assert.deepEqual(
        scrapes.json.data.map((e: { id: string }) => e.id),
        [mine[2].id, mine[0].id],
      );
      assert.equal(scrapes.json.has_more, false);
      assert.equal(scrapes.json.cursor, null);
    });

    test('activity cursor never skips or repeats entries while new jobs arrive', async () => {
      const team = await ensureTeam(svc.db, `paging-${store}`);
      const { key } = await createApiKey(svc.db, team.id);
      const pager = apiClient(svc, key);
      const before: string[] = [];
      for (let i = 0; i < 23; i++)
        before.push((await createJob(svc.db, { teamId: team.id, apiKeyId: null, endpoint: 'batch_scrape' })).id);
      // Two jobs in the same instant: creation order still decides.
      const tie = new Date();
      for (let i = 0; i < 2; i++) {
        const j = await createJob(svc.db, { teamId: team.id, apiKeyId: null, endpoint: 'batch_scrape' });
        await svc.db.query('UPDATE jobs SET created_at = $2 WHERE id = $1', [j.id, tie]);
        before.push(j.id);
      }
      const seen: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const res: Awaited<ReturnType<typeof pager>> = await pager(
          'GET',
          `/v2/team/activity?limit=4${cursor ? `&cursor=${cursor}` : ''}`,
        );
        assert.equal(res.status, 200);
        assert.ok(res.json.data.length <= 4);
        seen.push(...res.json.data.map((e: { id: string }) => e.id));
        cursor = res.json.cursor;
        assert.equal(res.json.has_more, cursor !== null);
        // New activity arrives between every page.
        await createJob(svc.db, { teamId: team.id, apiKeyId: null, endpoint: 'batch_scrape' });
        pages++;
      } while (cursor && pages < 50);
      assert.equal(new Set(seen).size, seen.length, 'no entry repeats');
      assert.deepEqual(new Set(seen), new Set(before), 'every entry that existed at the start is seen once');
    });

    test('another team’s job reads as missing', async () => {
      const job = await createJob(svc.db, { teamId: otherTeamId, apiKeyId: null, endpoint: 'crawl' });
      assert.equal(await getTeamJob(svc.db, teamId, job.id), undefined);
      assert.equal((await getTeamJob(svc.db, otherTeamId, job.id))?.id, job.id);
      const otherView = await apiClient(svc, otherKey)('GET', '/v2/team/activity');
      assert.ok(otherView.json.data.some((e: { id: string }) => e.id === job.id));
      const myView = await call('GET', '/v2/team/activity?endpoint=crawl');
      assert.ok(!myView.json.data.some((e: { id: string }) => e.id === job.id));
    });

    test('token usage is per calendar month and per key with byApiKey', async () => {
      const team = await ensureTeam(svc.db, `tokens-${store}`);
      const a = await createApiKey(svc.db, team.id, { name: 'key-a' });
      const b = await createApiKey(svc.db, team.id, { name: 'key-b' });
      const add = (keyId: string, amount: number, at: string) =>
        recordUsage(svc.db, 'tokens', { teamId: team.id, apiKeyId: keyId, jobId: null, amount, at: new Date(at) });
      await add(a.id, 100, '2026-09-03T10:00:00Z');
      await add(b.id, 50, '2026-09-30T23:59:59Z');
      await add(a.id, 7, '2026-10-01T00:00:00Z');
      await add(b.id, 1000, '2026-10-15T12:00:00Z');
      await recordUsage(svc.db, 'tokens', {
        teamId: otherTeamId,
        apiKeyId: null,
        jobId: null,
        amount: 99999,
        at: new Date('2026-10-02T00:00:00Z'),
      });
      const tokens = apiClient(svc, a.key);

      for (const path of ['/v1/team/token-usage/historical', '/v2/team/token-usage/historical']) {
        const res = await tokens('GET', path);
        assert.equal(res.status, 200);
        const byMonth = Object.fromEntries(res.json.periods.map((p: any) => [p.startDate, p]));
        assert.equal(byMonth['2026-09-01T00:00:00.000Z'].totalTokens, 150);
        assert.equal(byMonth['2026-09-01T00:00:00.000Z'].endDate, '2026-09-30T23:59:59.999Z');
        assert.equal(byMonth['2026-10-01T00:00:00.000Z'].totalTokens, 1007);
        assert.equal(byMonth['2026-10-01T00:00:00.000Z'].tokensUsed, 1007);
        assert.ok(res.json.periods.every((p: any) => p.apiKey === undefined));
      }

      const split = await tokens('GET', '/v1/team/token-usage/historical?byApiKey=true');
      const rows = split.json.periods
        .map((p: any) => `${p.startDate.slice(0, 7)} ${p.apiKeyName} ${p.totalTokens}`)
        .sort();
      assert.deepEqual(rows, ['2026-09 key-a 100', '2026-09 key-b 50', '2026-10 key-a 7', '2026-10 key-b 1000']);
      assert.ok(split.json.periods.every((p: any) => p.apiKey === (p.apiKeyName === 'key-a' ? a.preview : b.preview)));
      assert.ok(
        split.json.periods.every((p: any) => !p.apiKey.includes(a.key.slice(8, -4))),
        'keys are shown redacted',
      );
    });

    test('credit usage, quota and 402 when it is spent', async () => {
      const team = await ensureTeam(svc.db, `credits-${store}`);
      const { key, id: keyId } = await createApiKey(svc.db, team.id);
      const billing = apiClient(svc, key);

      const unlimited = await billing('GET', '/v2/team/credit-usage');
      assert.equal(unlimited.json.data.unlimited, true);
      assert.equal((await billing('POST', '/test/billable', {})).status, 200);

      await setCreditQuota(svc.db, team.id, 10);
      const job = await createJob(svc.db, { teamId: team.id, apiKeyId: keyId, endpoint: 'scrape' });
      await recordUsage(svc.db, 'credits', { teamId: team.id, apiKeyId: keyId, jobId: job.id, amount: 9 });
      await recordUsage(svc.db, 'credits', {
        teamId: team.id,
        apiKeyId: keyId,
        jobId: null,
        amount: 500,
        at: new Date('2020-01-15T00:00:00Z'),
      });
      const usage = await billing('GET', '/v2/team/credit-usage');
      assert.deepEqual(
        { ...usage.json.data, billingPeriodStart: undefined, billingPeriodEnd: undefined },
        {
          remainingCredits: 1,
          planCredits: 10,
          creditsUsed: 9,
          unlimited: false,
          billingPeriodStart: undefined,
          billingPeriodEnd: undefined,
        },
      );
      assert.equal((await getTeamJob(svc.db, team.id, job.id))?.credits, 9, 'the job records its credits');
      assert.equal((await billing('POST', '/test/billable', {})).status, 200, 'one credit left');

      await recordUsage(svc.db, 'credits', { teamId: team.id, apiKeyId: keyId, jobId: null, amount: 1 });
      const refused = await billing('POST', '/test/billable', {});
      assert.equal(refused.status, 402);
      assert.equal(refused.json.success, false);
      assert.equal(refused.json.code, 'INSUFFICIENT_CREDITS');
      assert.match(refused.json.error, /credit/i);

      const history = await billing('GET', '/v2/team/credit-usage/historical');
      const months = Object.fromEntries(history.json.periods.map((p: any) => [p.startDate.slice(0, 7), p.creditsUsed]));
      assert.equal(months['2020-01'], 500);
      assert.equal(months[new Date().toISOString().slice(0, 7)], 10);
      assert.equal((await call('POST', '/test/billable', {})).status, 200, 'other teams are unaffected');
    });

    test('concurrency and queue status count the team’s jobs', async () => {
      const team = await ensureTeam(svc.db, `queue-${store}`);
      const { key } = await createApiKey(svc.db, team.id);
      const q = apiClient(svc, key);
      const a = await createJob(svc.db, { teamId: team.id, apiKeyId: null, endpoint: 'crawl', status: 'active' });
      await createJob(svc.db, { teamId: team.id, apiKeyId: null, endpoint: 'scrape', status: 'queued' });
      await createJob(svc.db, { teamId: team.id, apiKeyId: null, endpoint: 'scrape', status: 'queued' });
      const done = await createJob(svc.db, { teamId: team.id, apiKeyId: null, endpoint: 'scrape', status: 'active' });
      await updateJob(svc.db, done.id, { status: 'completed' });
      const conc = await q('GET', '/v2/concurrency-check');
      assert.equal(conc.json.concurrency, 1);
      assert.equal(conc.json.maxConcurrency, 10);
      assert.deepEqual(conc.json.data, { concurrency: 1, maxConcurrency: 10 });
      const status = await q('GET', '/v2/team/queue-status');
      assert.equal(status.json.jobsInQueue, 3);
      assert.equal(status.json.activeJobsInQueue, 1);
      assert.equal(status.json.waitingJobsInQueue, 2);
      assert.ok(status.json.mostRecentSuccess);
      await updateJob(svc.db, a.id, { status: 'failed', error: 'boom' });
      assert.equal((await q('GET', '/v2/concurrency-check')).json.concurrency, 0);
    });
  });
}
