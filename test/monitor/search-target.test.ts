// Search targets without a service: the queries' merge (rank by rank, deduplicated by canonical URL,
// capped at maxResults), what each query is sent (limit, domains, searchWindow as tbs), failed queries,
// a result's compared content and diff, and the deterministic and LLM judging of search results (the
// LLM against a scripted OpenAI-compatible server).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { LlmProvider, type UsageOwner } from '../../src/llm/provider.ts';
import { canonicalHitUrl } from '../../src/monitor/compare.ts';
import { type SearchHitToJudge, judgeSearchHitDeterministically, judgeSearchHits } from '../../src/monitor/judge.ts';
import {
  type MonitorSearch,
  type MonitorSearchHit,
  type MonitorSearchQuery,
  SEARCH_WINDOW_TBS,
  hitContent,
  hitDiff,
  runSearchTarget,
} from '../../src/monitor/search-target.ts';
import { parseTbs } from '../../src/search/tbs.ts';
import type { StoredTarget } from '../../src/store/monitors.ts';
import type { Db } from '../../src/store/db-types.ts';
import { ensureTeam } from '../../src/store/teams.ts';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.ts';
import { openTestDb } from '../helpers/service.ts';

const hit = (n: number | string, title = `Title ${n}`): MonitorSearchHit => ({
  url: `https://news.example/${n}`,
  title,
  description: `About ${n}.`,
});

/** A search answering from `answers` by query (an Error is thrown), recording what it was asked. */
function fakeSearch(
  answers: Record<string, MonitorSearchHit[] | Error>,
): MonitorSearch & { asked: MonitorSearchQuery[] } {
  const asked: MonitorSearchQuery[] = [];
  return {
    name: 'fake',
    asked,
    credits: (n) => Math.ceil(n / 10) * 2,
    async search(q) {
      asked.push(q);
      const a = answers[q.query] ?? [];
      if (a instanceof Error) throw a;
      return a.slice(0, q.limit);
    },
  };
}

const target = (over: Record<string, unknown>): StoredTarget => ({ id: 't', type: 'search', queries: ['a'], ...over });
const signal = new AbortController().signal;

describe('runSearchTarget', () => {
  test('merges rank by rank across queries, one result per canonical URL, at most maxResults', async () => {
    const search = fakeSearch({
      a: [hit(1), hit(2), hit(3), hit(4)],
      b: [{ ...hit(1), url: 'https://news.example/1?utm_source=feed#top' }, hit(5), hit(6)],
    });
    const run = await runSearchTarget(search, target({ queries: ['a', 'b'], maxResults: 4 }), 'team', signal);
    assert.deepEqual(
      run.hits.map((h) => h.url),
      ['https://news.example/1', 'https://news.example/2', 'https://news.example/5', 'https://news.example/3'],
    );
    assert.deepEqual(run.hits[0].queries, ['a', 'b']);
    assert.deepEqual(run.hits[2].queries, ['b']);
    assert.equal(run.hits[2].position, 2);
    assert.deepEqual(run.queries, [
      { query: 'a', results: 4 },
      { query: 'b', results: 3 },
    ]);
    assert.equal(run.failed, 0);
    // Each query may fill the whole cap on its own.
    assert.deepEqual(
      search.asked.map((q) => q.limit),
      [4, 4],
    );
  });

  test("sends the target's domains, the teamId and searchWindow as tbs (default 24h, 10 results)", async () => {
    const search = fakeSearch({});
    await runSearchTarget(search, target({}), 'team-1', signal);
    await runSearchTarget(search, target({ searchWindow: '15m', excludeDomains: ['spam.example'] }), 'team-1', signal);
    await runSearchTarget(search, target({ searchWindow: '7d', includeDomains: ['news.example'] }), 'team-1', signal);
    const [plain, minutes, week] = search.asked;
    assert.equal(plain.teamId, 'team-1');
    assert.equal(plain.tbs, 'qdr:d');
    assert.equal(plain.limit, 10);
    assert.equal(plain.includeDomains, undefined);
    assert.equal(minutes.tbs, 'qdr:n15');
    assert.deepEqual(minutes.excludeDomains, ['spam.example']);
    assert.equal(week.tbs, 'qdr:w');
    assert.deepEqual(week.includeDomains, ['news.example']);
  });

  test("every searchWindow is a tbs the search reads: the window's start, and a range covering it", () => {
    const now = new Date('2026-01-10T12:00:00Z');
    const expected: Record<string, [number, string]> = {
      '5m': [5 * 60_000, 'day'],
      '15m': [15 * 60_000, 'day'],
      '1h': [3_600_000, 'day'],
      '6h': [6 * 3_600_000, 'day'],
      '24h': [24 * 3_600_000, 'day'],
      '7d': [7 * 24 * 3_600_000, 'week'],
    };
    for (const [window, tbs] of Object.entries(SEARCH_WINDOW_TBS)) {
      const t = parseTbs(tbs, now);
      assert.ok(t?.since, `${window} → ${tbs}`);
      assert.equal(now.getTime() - t.since.getTime(), expected[window][0], `${window} → ${tbs}`);
      assert.equal(t.range, expected[window][1], `${window} → ${tbs}`);
    }
  });

  test('a failing query is reported and the others still answer; the check abort is not swallowed', async () => {
    const search = fakeSearch({ a: [hit(1)], b: new Error('SearXNG answered HTTP 502') });
    const run = await runSearchTarget(search, target({ queries: ['a', 'b'] }), 'team', signal);
    assert.deepEqual(
      run.hits.map((h) => h.url),
      ['https://news.example/1'],
    );
    assert.equal(run.failed, 1);
    assert.deepEqual(run.queries[1], { query: 'b', results: 0, error: 'SearXNG answered HTTP 502' });

    const controller = new AbortController();
    controller.abort(new Error('check deadline'));
    await assert.rejects(
      runSearchTarget(fakeSearch({ a: new Error('aborted') }), target({}), 'team', controller.signal),
      /aborted/,
    );
  });
});

describe("a result's content and diff", () => {
  test('canonical URLs drop fragments and tracking parameters only', () => {
    assert.equal(canonicalHitUrl('https://a.example/x?utm_medium=rss&id=7#c'), 'https://a.example/x?id=7');
    assert.equal(canonicalHitUrl('https://a.example/x?q=a%20b'), 'https://a.example/x?q=a%20b');
    assert.equal(canonicalHitUrl('not a url'), 'not a url');
  });

  test('title and description compared after normalisation; the diff as mixed monitors give it', () => {
    assert.equal(
      hitContent({ title: ' Acme  3.0 ', description: 'Out\n now.' }),
      hitContent({ title: 'Acme 3.0', description: 'Out\nnow.' }),
    );
    const before = hitContent({ title: 'Acme 3.0', description: 'Out now.' });
    const after = hitContent({ title: 'Acme 3.0', description: 'Out now, with a security fix.' });
    assert.notEqual(before, after);
    const diff = hitDiff(before, after, 'https://news.example/1');
    assert.deepEqual(diff.json, { description: { previous: 'Out now.', current: 'Out now, with a security fix.' } });
    assert.match(diff.text, /^diff --git a\/https:\/\/news\.example\/1/m);
    assert.match(diff.text, /^-Out now\.$/m);
    assert.match(diff.text, /^\+Out now, with a security fix\.$/m);
  });
});

const newHit = (title: string, description = '', url = 'https://news.example/a'): SearchHitToJudge => ({
  url,
  status: 'new',
  title,
  description,
  queries: ['acme'],
});

describe('judging search results deterministically', () => {
  const goal = 'Security fixes and price drops.';

  test("a new result is relevant when its title, description or URL mentions the goal's terms", () => {
    const inTitle = judgeSearchHitDeterministically(newHit('Acme 3.0.1 security fix'), goal);
    assert.equal(inTitle.meaningful, true);
    assert.equal(inTitle.confidence, 'high');
    assert.match(inTitle.reason, /secur/);
    assert.deepEqual(inTitle.meaningfulChanges[0].type, 'added');
    const inUrl = judgeSearchHitDeterministically(newHit('Acme 3.0.1', '', 'https://a.example/security-fixes'), goal);
    assert.equal(inUrl.meaningful, true);
    const price = judgeSearchHitDeterministically(newHit('Acme Pro now $9'), goal);
    assert.equal(price.meaningful, true, 'a goal about prices takes a price');
    const off = judgeSearchHitDeterministically(newHit('Acme garden party', 'Photos.'), goal);
    assert.equal(off.meaningful, false);
    assert.deepEqual(off.meaningfulChanges, []);
    assert.match(off.reason, /none of the goal's terms/);
  });

  test('a changed result: only dates or counters changed is not meaningful; a relevant change is', () => {
    const changed = (before: string, after: string): SearchHitToJudge => ({
      ...newHit(after),
      status: 'changed',
      previous: { title: before, description: '' },
    });
    const dates = judgeSearchHitDeterministically(
      changed('Security fix, 2026-01-02, 120 views', 'Security fix, 2026-01-03, 180 views'),
      goal,
    );
    assert.equal(dates.meaningful, false);
    assert.match(dates.reason, /non-content/);
    const real = judgeSearchHitDeterministically(changed('Acme 3.0', 'Acme 3.0 security fix'), goal);
    assert.equal(real.meaningful, true);
    assert.equal(real.meaningfulChanges[0].type, 'changed');
    assert.equal(real.meaningfulChanges[0].before, 'Acme 3.0');
  });

  test('without a goal every new result counts', () => {
    assert.equal(judgeSearchHitDeterministically(newHit('Anything'), undefined).meaningful, true);
  });
});

describe('judgeSearchHits', () => {
  let db: Db;
  let cleanup: () => Promise<void>;
  let fake: FakeLlm;
  let owner: UsageOwner;
  let llm: LlmProvider;
  const hits = [newHit('Acme 3.0.1 security fix'), newHit('Acme garden party', 'Photos.', 'https://news.example/b')];

  before(async () => {
    ({ db, cleanup } = await openTestDb('pglite'));
    fake = await startFakeLlm();
    const team = await ensureTeam(db, `t-${randomUUID()}`);
    owner = { teamId: team.id, apiKeyId: null, jobId: randomUUID() };
    const config = loadConfig({ OPENAI_BASE_URL: fake.baseUrl, MODEL_NAME: 'judge-model', LLM_MAX_RETRIES: '0' }).llm;
    llm = new LlmProvider({ config, db, retryBaseMs: 10 });
  });
  after(async () => {
    await fake.close();
    await cleanup();
  });

  test('without an LLM: the deterministic judge for each, and a warning saying so', async () => {
    const r = await judgeSearchHits({ goal: 'security fixes', hits });
    assert.deepEqual(
      r.judgments.map((j) => j.meaningful),
      [true, false],
    );
    assert.match(r.warning ?? '', /no LLM is configured.*deterministic judge/);
    assert.deepEqual(await judgeSearchHits({ goal: 'x', hits: [] }, llm), { judgments: [] });
  });

  test('with an LLM: all results in one request carrying the goal; verdicts mapped by index', async () => {
    fake.script({
      json: {
        results: [
          { index: 2, meaningful: true, reason: 'A party is news to this goal.', confidence: 'low' },
          { index: 1, meaningful: false, reason: 'Already known.', confidence: 'medium' },
        ],
      },
    });
    const requests = fake.requests.length;
    const r = await judgeSearchHits({ goal: 'Security fixes', hits, usage: owner }, llm);
    assert.equal(fake.requests.length, requests + 1, 'one request for every result');
    assert.equal(r.warning, undefined);
    assert.deepEqual(r.judgments[0], {
      meaningful: false,
      reason: 'Already known.',
      confidence: 'medium',
      meaningfulChanges: [],
    });
    assert.equal(r.judgments[1].meaningful, true);
    assert.deepEqual(r.judgments[1].meaningfulChanges, [
      { type: 'added', before: '', after: 'Acme garden party — Photos.', reason: 'A party is news to this goal.' },
    ]);
    const user = fake.requests.at(-1)?.body.messages.at(-1).content as string;
    assert.match(user, /<goal>Security fixes<\/goal>/);
    assert.match(user, /1\. \[new\] https:\/\/news\.example\/a\n {3}title: Acme 3\.0\.1 security fix/);
    assert.match(user, /2\. \[new\] https:\/\/news\.example\/b/);
    assert.match(user, /found by: "acme"/);
  });

  test('a result the LLM left out, and an LLM failure, fall back to the deterministic judge with a warning', async () => {
    fake.script({ json: { results: [{ index: 2, meaningful: false, reason: 'Off topic.', confidence: 'high' }] } });
    const partial = await judgeSearchHits({ goal: 'security fixes', hits, usage: owner }, llm);
    assert.equal(partial.judgments[0].meaningful, true, 'decided deterministically');
    assert.equal(partial.judgments[1].reason, 'Off topic.');
    assert.match(partial.warning ?? '', /did not judge 1 of the results/);

    fake.script({ status: 500, message: 'overloaded' });
    const failed = await judgeSearchHits({ goal: 'security fixes', hits, usage: owner }, llm);
    assert.deepEqual(
      failed.judgments.map((j) => j.meaningful),
      [true, false],
    );
    assert.match(failed.warning ?? '', /the LLM failed \(LLM_ERROR: .*\); the deterministic judge decided/);
  });
});
