// Judging page changes: the deterministic judge (noise vs content, goal relevance) and the LLM path against a
// scripted OpenAI-compatible server (what is sent, how the answer is mapped, token ledger, fallbacks).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { LlmProvider, type UsageOwner } from '../../src/llm/provider.ts';
import { markdownDiff } from '../../src/monitor/compare.ts';
import { type JudgeInput, judgeChange, judgeDeterministically } from '../../src/monitor/judge.ts';
import { ensureTeam } from '../../src/store/teams.ts';
import type { Db } from '../../src/store/db-types.ts';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.ts';
import { openTestDb } from '../helpers/service.ts';

const URL = 'https://shop.example/item';

function input(previous: string, current: string, goal?: string): JudgeInput {
  return { url: URL, previous, current, diffText: markdownDiff(previous, current, URL).text, goal };
}
const page = (...lines: string[]) => ['# Acme Widget', '', ...lines, '', 'Footer text'].join('\n');
const judge = (previous: string, current: string, goal?: string) =>
  judgeDeterministically(input(previous, current, goal));

describe('deterministic judge: not meaningful', () => {
  const cases: [string, string, string, RegExp][] = [
    ['an ISO date', 'Updated 2025-01-02', 'Updated 2025-03-04', /date or time/],
    ['a date in words', 'Last updated: January 2, 2025', 'Last updated: March 14, 2025', /date or time/],
    ['a day-first date', 'As of 2 Jan 2025', 'As of 15 Feb 2025', /date or time/],
    ['a time', 'Generated at 10:42:07 UTC', 'Generated at 11:03:55 UTC', /date or time/],
    ['a time with am/pm', 'Refreshed 9:15 am', 'Refreshed 4:40 pm', /date or time/],
    ['a relative time', 'Posted 3 minutes ago', 'Posted 2 hours ago', /relative time/],
    ['just now', 'Edited just now', 'Edited 5 mins ago', /relative time/],
    ['a view count', '1,234 views', '1,301 views', /counter/],
    ['a like count', 'Likes: 52', 'Likes: 57', /counter/],
    ['a follower count', '12.3k followers', '12.4k followers', /counter/],
    ['people watching', '7 people watching now', '9 people watching now', /counter/],
    ['a session id', 'session abcdef0123456789abcdef', 'session 0f1e2d3c4b5a69788796a5b4', /session id or token/],
    [
      'a uuid',
      'Request id 3f2b8c1e-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
      'Request id 9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a',
      /token/,
    ],
    [
      'a rotating ad',
      'Advertisement: Try Foo Cola today',
      'Advertisement: Bar Airlines, fly for less',
      /advertisement/,
    ],
    ['a sponsored line', 'Sponsored · Best running shoes 2025', 'Sponsored · Cheap flights to Rome', /advertisement/],
    [
      'an ad-server banner',
      '[![](https://ad.doubleclick.net/b1.png)](https://ad.doubleclick.net/click?c=1)',
      '[![](https://ad.doubleclick.net/b2.png)](https://ad.doubleclick.net/click?c=2)',
      /advertisement/,
    ],
    ['whitespace', 'Some   text', 'Some text', /No content changed|formatting/],
    [
      'a tracking parameter',
      '[More](https://a.example/x?utm_source=a)',
      '[More](https://a.example/x?utm_source=b)',
      /./,
    ],
  ];
  for (const [name, before, after, why] of cases) {
    test(name, () => {
      const j = judge(page(before), page(after));
      assert.equal(j.meaningful, false, `${name}: ${j.reason}`);
      assert.deepEqual(j.meaningfulChanges, []);
      assert.equal(j.confidence, 'high');
      assert.match(j.reason, why);
    });
  }

  test('an added or removed line that is only a date or a counter', () => {
    assert.equal(judge(page('Intro'), page('Intro', '', 'March 3, 2025')).meaningful, false);
    assert.equal(judge(page('Intro', '', '42 comments'), page('Intro')).meaningful, false);
  });

  test('several kinds of noise at once are all named', () => {
    const j = judge(page('Posted 3 minutes ago', '', '1,234 views'), page('Posted 9 minutes ago', '', '1,240 views'));
    assert.equal(j.meaningful, false);
    assert.match(j.reason, /relative time/);
    assert.match(j.reason, /counter/);
  });
});

describe('deterministic judge: meaningful', () => {
  test('a price', () => {
    const j = judge(page('Price: $10.00'), page('Price: $12.50'));
    assert.equal(j.meaningful, true);
    assert.equal(j.confidence, 'high');
    assert.deepEqual(j.meaningfulChanges, [
      { type: 'changed', before: 'Price: $10.00', after: 'Price: $12.50', reason: 'a price changed' },
    ]);
  });

  test('a price beside a changing date is still a price change; a date beside a fixed price is not', () => {
    assert.equal(judge(page('€20 — updated 2 hours ago'), page('€18 — updated 3 hours ago')).meaningful, true);
    assert.equal(judge(page('€20 — updated 2 hours ago'), page('€20 — updated 3 hours ago')).meaningful, false);
  });

  test('stock and availability', () => {
    for (const [before, after] of [
      ['In stock', 'Out of stock'],
      ['Only 3 left in stock', 'Only 1 left in stock'],
      ['Sold out', 'Add to cart'],
    ]) {
      const j = judge(page(before), page(after));
      assert.equal(j.meaningful, true, `${before} → ${after}`);
      assert.equal(j.meaningfulChanges[0].reason, 'stock or availability changed');
      assert.equal(j.confidence, 'high');
    }
  });

  test('text and headings; added and removed paragraphs', () => {
    const text = judge(page('We ship worldwide.'), page('We ship to the EU only.'));
    assert.equal(text.meaningful, true);
    assert.equal(text.confidence, 'medium');
    assert.equal(text.meaningfulChanges[0].reason, 'the text changed');

    const heading = judge('# Old title\n\nBody', '# New title\n\nBody');
    assert.equal(heading.meaningfulChanges[0].reason, 'a heading changed');

    const added = judge(page('Intro'), page('Intro', '', 'A brand new paragraph about returns.'));
    assert.deepEqual(added.meaningfulChanges, [
      { type: 'added', before: '', after: 'A brand new paragraph about returns.', reason: 'the text changed' },
    ]);
    const removed = judge(page('Intro', '', 'Free returns within 30 days.'), page('Intro'));
    assert.equal(removed.meaningfulChanges[0].type, 'removed');
    assert.equal(removed.meaningfulChanges[0].before, 'Free returns within 30 days.');
  });

  test('a real change next to noise: the noise is ignored and named', () => {
    const j = judge(page('Posted 3 minutes ago', '', 'Price: $10'), page('Posted 5 minutes ago', '', 'Price: $11'));
    assert.equal(j.meaningful, true);
    assert.equal(j.meaningfulChanges.length, 1);
    assert.match(j.reason, /ignored 1 relative time/);
  });
});

describe('deterministic judge: the goal', () => {
  const prev = page('Price: $10', '', 'We ship worldwide.');
  const curr = page('Price: $8', '', 'We ship to the EU only.');

  test('changes about the goal are listed, with high confidence', () => {
    const j = judge(prev, curr, 'Tell me when the price drops');
    assert.equal(j.meaningful, true);
    assert.equal(j.confidence, 'high');
    assert.deepEqual(
      j.meaningfulChanges.map((c) => c.before),
      ['Price: $10'],
    );
    assert.match(j.meaningfulChanges[0].reason, /relevant to the goal/);
    assert.match(j.reason, /relevant to the goal/);
  });

  test('goal keywords match the changed words', () => {
    const j = judge(prev, curr, 'shipping to the EU');
    assert.deepEqual(
      j.meaningfulChanges.map((c) => c.after),
      ['We ship to the EU only.'],
    );
    assert.equal(j.confidence, 'high');
  });

  test('content changes unrelated to the goal stay meaningful with low confidence', () => {
    const j = judge(page('We ship worldwide.'), page('We ship to the EU only.'), 'new job openings');
    assert.equal(j.meaningful, true);
    assert.equal(j.confidence, 'low');
    assert.match(j.reason, /none mentions the goal's terms \(job, open\)/);
  });

  test('noise stays noise whatever the goal', () => {
    const j = judge(page('Updated 2025-01-02'), page('Updated 2025-01-03'), 'any update to this page');
    assert.equal(j.meaningful, false);
  });
});

describe('judgeChange', () => {
  let db: Db;
  let cleanup: () => Promise<void>;
  let fake: FakeLlm;
  let owner: UsageOwner;
  let llm: LlmProvider;

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

  test('without an LLM: the deterministic judge and a warning saying so', async () => {
    const unconfigured = new LlmProvider({ config: loadConfig({}).llm, db });
    for (const provider of [undefined, unconfigured]) {
      const r = await judgeChange(input(page('Price: $10'), page('Price: $12')), provider);
      assert.equal(r.judgment.meaningful, true);
      assert.equal(r.judgment.meaningfulChanges[0].reason, 'a price changed');
      assert.match(r.warning ?? '', /no LLM is configured.*deterministic judge/);
      assert.equal(r.usage, undefined);
    }
  });

  test('an empty diffText is computed from previous and current', async () => {
    const r = await judgeChange({ url: URL, previous: page('In stock'), current: page('Sold out'), diffText: '' });
    assert.equal(r.judgment.meaningful, true);
  });

  test('with an LLM: the request carries the goal and the diff under a JSON schema; the answer is mapped', async () => {
    fake.script({
      json: {
        meaningful: true,
        reason: 'The price dropped below the target.',
        confidence: 'high',
        meaningfulChanges: [
          { type: 'changed', before: 'Price: $10', after: 'Price: $8', reason: 'price drop' },
          { type: 'added', before: null, after: 'Sale ends Sunday', reason: 'a sale' },
        ],
      },
      usage: { prompt_tokens: 120, completion_tokens: 30 },
    });
    const i = {
      ...input(page('Price: $10'), page('Price: $8', '', 'Sale ends Sunday'), 'Alert me on price drops'),
      usage: owner,
    };
    const r = await judgeChange(i, llm);
    assert.equal(r.warning, undefined);
    assert.deepEqual(r.judgment, {
      meaningful: true,
      reason: 'The price dropped below the target.',
      confidence: 'high',
      meaningfulChanges: [
        { type: 'changed', before: 'Price: $10', after: 'Price: $8', reason: 'price drop' },
        { type: 'added', before: '', after: 'Sale ends Sunday', reason: 'a sale' },
      ],
    });
    assert.equal(r.usage?.promptTokens, 120);
    assert.equal(r.usage?.completionTokens, 30);

    const body = fake.requests.at(-1)?.body;
    assert.equal(body.model, 'judge-model');
    assert.equal(body.response_format.type, 'json_schema');
    const schema = body.response_format.json_schema.schema;
    assert.deepEqual(schema.required, ['meaningful', 'reason', 'confidence', 'meaningfulChanges']);
    const user = body.messages.find((m: { role: string }) => m.role === 'user').content as string;
    assert.match(user, /<goal>Alert me on price drops<\/goal>/);
    assert.ok(user.includes(i.diffText.trim()), 'the diff is in the prompt');
    assert.match(user, /-Price: \$10\n\+Price: \$8/);
    assert.ok(user.includes(URL));

    // One token-ledger row for the judge's team and job.
    const { rows } = await db.query<{ tokens: number; jobId: string }>(
      'SELECT tokens, job_id AS "jobId" FROM token_usage WHERE team_id = $1',
      [owner.teamId],
    );
    assert.deepEqual(rows, [{ tokens: 150, jobId: owner.jobId }]);
  });

  test('with an LLM and no goal: the prompt says so', async () => {
    fake.script({
      json: { meaningful: false, reason: 'Only a timestamp.', confidence: 'high', meaningfulChanges: [] },
    });
    const r = await judgeChange({ ...input(page('a'), page('b')), usage: owner }, llm);
    assert.deepEqual(r.judgment, {
      meaningful: false,
      reason: 'Only a timestamp.',
      confidence: 'high',
      meaningfulChanges: [],
    });
    const user = fake.requests.at(-1)?.body.messages.at(-1).content as string;
    assert.match(user, /has no goal/);
    assert.doesNotMatch(user, /<goal>/);
  });

  test('an LLM failure falls back to the deterministic judge with a warning carrying the code', async () => {
    fake.script({ status: 500, message: 'overloaded' });
    const r = await judgeChange({ ...input(page('Price: $10'), page('Price: $12')), usage: owner }, llm);
    assert.equal(r.judgment.meaningful, true);
    assert.equal(r.judgment.meaningfulChanges[0].reason, 'a price changed');
    assert.match(r.warning ?? '', /the LLM failed \(LLM_ERROR: .*\); the deterministic judge decided/);
  });

  test('an invalid answer (after its one repair) falls back too', async () => {
    fake.script({ json: { meaningful: 'maybe' } }, { json: { verdict: 'yes' } });
    const r = await judgeChange({ ...input(page('In stock'), page('Sold out')), usage: owner }, llm);
    assert.equal(r.judgment.meaningful, true);
    assert.match(r.warning ?? '', /LLM_INVALID_OUTPUT/);
  });

  test("the check's abort is not swallowed", async () => {
    fake.script({ hang: true });
    const controller = new AbortController();
    const p = judgeChange({ ...input(page('a'), page('b')), usage: owner, signal: controller.signal }, llm);
    setTimeout(() => controller.abort(new Error('check deadline')), 50);
    await assert.rejects(p, /check deadline/);
  });

  test('an LLM judgment without a usage owner is a programming error', async () => {
    await assert.rejects(judgeChange(input(page('a'), page('b')), llm), /input\.usage/);
  });
});

test('the deterministic judge stays fast on huge generated lines', () => {
  const long = (c: string) => `${c}-`.repeat(150_000) + '1'.repeat(100_000);
  const started = Date.now();
  const j = judgeDeterministically(input(page(long('a')), page(long('b'))));
  assert.ok(Date.now() - started < 3_000, `took ${Date.now() - started} ms`);
  assert.equal(j.meaningful, true);
  assert.ok(j.meaningfulChanges[0].before.length <= 501, 'sides are cut');
});
