// BrowserSessions without a browser: billing arithmetic, and the sessions of a process that died
// (it stopped renewing them) closed by another process, billed up to their last sign of life.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import { BrowserSessions, sessionCredits } from '../../src/interact/sessions.ts';
import { SessionLauncher } from '../../src/interact/session-browser.ts';
import { insertBrowserSession } from '../../src/store/browser-sessions.ts';
import { createJob } from '../../src/store/jobs.ts';
import { createApiKey, ensureTeam } from '../../src/store/teams.ts';
import { openTestDb, storeKinds } from '../helpers/service.ts';

test('browser time: 2 credits per minute, prorated by the second, rounded up to whole credits', () => {
  assert.equal(sessionCredits(0), 0);
  assert.equal(sessionCredits(1), 1);
  assert.equal(sessionCredits(30_000), 1);
  assert.equal(sessionCredits(30_001), 2); // 31 s → 1.03 credits
  assert.equal(sessionCredits(60_000), 2);
  assert.equal(sessionCredits(10 * 60_000), 20);
  assert.equal(sessionCredits(10 * 60_000 + 500), 21);
});

for (const store of storeKinds) {
  describe(`lost sessions (${store})`, () => {
    test('a session whose process stopped renewing it is ended by another process, billed to its last sign of life', async () => {
      const { db, cleanup } = await openTestDb(store);
      const sessions = new BrowserSessions({
        db,
        launcher: new SessionLauncher({ executablePath: '/nonexistent', allowPrivateNetwork: false, spares: 0 }),
        startRunner: () => Promise.reject(new Error('no code here')),
        runPrompt: () => Promise.reject(new Error('no prompts here')),
        makeAccess: () => ({ cdp: 'a', view: 'b', interactive: 'c' }),
        urlsOf: () => ({ cdpUrl: 'ws://x', liveViewUrl: 'http://x', interactiveLiveViewUrl: 'http://x' }),
        log: { warn: () => undefined, error: () => undefined },
        perTeam: 10,
        perProcess: 10,
        openConcurrency: 2,
        interactIdleMs: 600_000,
        replayTtlMs: 3_600_000,
        renewMs: 50,
      });
      try {
        const team = await ensureTeam(db, `lost-${randomUUID()}`);
        const key = await createApiKey(db, team.id);
        const id = randomUUID();
        await createJob(db, { id, teamId: team.id, apiKeyId: key.id, endpoint: 'browser', status: 'active' });
        await insertBrowserSession(
          db,
          {
            id,
            teamId: team.id,
            apiKeyId: key.id,
            kind: 'browser',
            scrapeJobId: null,
            instance: 'a-process-that-died',
            streamWebView: true,
            ttlSeconds: 600,
            activityTtlSeconds: 300,
            cdpUrl: 'ws://x',
            liveViewUrl: 'http://x',
            interactiveLiveViewUrl: 'http://x',
          },
          10,
        );
        // Its last sign of life 95 s after it started, long ago.
        await db.query(
          `UPDATE browser_sessions SET created_at = now() - interval '1 hour',
             seen_at = now() - interval '1 hour' + interval '95 seconds' WHERE id = $1`,
          [id],
        );
        // A scrape replay past the replay window (1 h here) and a fresh one.
        const oldScrape = randomUUID();
        const newScrape = randomUUID();
        for (const job of [oldScrape, newScrape]) {
          await createJob(db, { id: job, teamId: team.id, apiKeyId: key.id, endpoint: 'scrape', status: 'completed' });
          await db.query(`INSERT INTO scrape_replays (job_id, team_id, replay) VALUES ($1, $2, '{}')`, [job, team.id]);
        }
        await db.query(`UPDATE scrape_replays SET created_at = now() - interval '2 hours' WHERE job_id = $1`, [
          oldScrape,
        ]);
        sessions.start();
        const deadline = Date.now() + 5000;
        let row: { status: string; end_reason: string; duration_ms: string; credits: number } | undefined;
        while (Date.now() < deadline) {
          row = (
            await db.query<{ status: string; end_reason: string; duration_ms: string; credits: number }>(
              'SELECT status, end_reason, duration_ms::text, credits FROM browser_sessions WHERE id = $1',
              [id],
            )
          ).rows[0];
          if (row.status === 'destroyed') break;
          await new Promise((r) => setTimeout(r, 25));
        }
        assert.equal(row?.status, 'destroyed');
        assert.equal(row?.end_reason, 'lost');
        assert.equal(Number(row?.duration_ms), 95_000);
        assert.equal(row?.credits, sessionCredits(95_000));
        const job = (
          await db.query<{ status: string; credits: number }>('SELECT status, credits FROM jobs WHERE id = $1', [id])
        ).rows[0];
        assert.deepEqual(job, { status: 'failed', credits: sessionCredits(95_000) });
        const charged = (
          await db.query<{ credits: number }>('SELECT credits FROM credit_usage WHERE job_id = $1', [id])
        ).rows;
        assert.deepEqual(charged, [{ credits: sessionCredits(95_000) }]);
        // The same round pruned the expired replay and kept the fresh one.
        const replays = await db.query<{ job_id: string }>('SELECT job_id FROM scrape_replays WHERE team_id = $1', [
          team.id,
        ]);
        assert.deepEqual(
          replays.rows.map((r) => r.job_id),
          [newScrape],
        );
      } finally {
        await sessions.close();
        await cleanup();
      }
    });
  });
}
