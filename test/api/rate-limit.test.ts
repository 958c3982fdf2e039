// Per-team rate limits by route class: 429 with Retry-After, one team's limit never touches
// another's, and processes sharing one Postgres share the counters.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createApiKey, ensureTeam } from '../../src/store/teams.ts';
import { apiClient } from '../helpers/api.ts';
import { startTestService, storeKinds } from '../helpers/service.ts';

for (const store of storeKinds) {
  describe(`rate limits on ${store}`, () => {
    test('the limit of a class gives 429 with Retry-After, per team and per class', async () => {
      const svc = await startTestService({ store, env: { GLEANER_RATE_LIMITS: 'account=3' } });
      try {
        const call = apiClient(svc);
        for (let i = 0; i < 3; i++) {
          const ok = await call('GET', '/v2/team/activity');
          assert.equal(ok.status, 200);
          assert.equal(ok.headers.get('x-ratelimit-limit'), '3');
          assert.equal(ok.headers.get('x-ratelimit-remaining'), String(2 - i));
        }
        const limited = await call('GET', '/v2/team/credit-usage');
        assert.equal(limited.status, 429);
        assert.equal(limited.json.success, false);
        assert.equal(limited.json.code, 'RATE_LIMITED');
        const retryAfter = Number(limited.headers.get('retry-after'));
        assert.ok(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`);

        const other = await ensureTeam(svc.db, 'other');
        const otherCall = apiClient(svc, (await createApiKey(svc.db, other.id)).key);
        assert.equal((await otherCall('GET', '/v2/team/activity')).status, 200, 'another team has its own budget');
        assert.equal(
          (await apiClient({ url: svc.url })('GET', '/health')).status,
          200,
          'public routes are not limited',
        );
      } finally {
        await svc.destroy();
      }
    });
  });
}

if (storeKinds.includes('postgres')) {
  test('two processes on one Postgres share a team’s limit', async () => {
    const env = { GLEANER_RATE_LIMITS: 'account=4' };
    const first = await startTestService({ store: 'postgres', env });
    const second = await startTestService({ store: 'postgres', env, shareWith: first });
    try {
      const a = apiClient(first);
      const b = apiClient(second);
      const statuses = [];
      for (const call of [a, b, a, b, a, b]) statuses.push((await call('GET', '/v2/team/activity')).status);
      assert.deepEqual(statuses, [200, 200, 200, 200, 429, 429]);
    } finally {
      await second.stop();
      await first.destroy();
    }
  });
}
