// The changeTracking format on every store: new → same → changed with the exact git-style diff and
// its parsed form, separate histories per tag and per team, removed and re-appearing pages, the
// json mode's field changes, concurrent writers forming one chain, and the bound on large pages.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { jsonChanges, trackChanges, urlKeyForChanges } from '../../src/scrape/formats/change-tracking.ts';
import { MAX_EDIT_DISTANCE, diffLines, unifiedDiff } from '../../src/markdown/diff.ts';
import { readSnapshot, recordSnapshot } from '../../src/store/changes.ts';
import { ensureTeam } from '../../src/store/teams.ts';
import { openTestDb, storeKinds } from '../helpers/service.ts';
import type { Db } from '../../src/store/db-types.ts';

const V1 = `# Pricing

Our plans:

- Basic: $10
- Pro: $20
- Team: $50

Contact sales for more.

Updated weekly.
`;

const V2 = `# Pricing

Our plans:

- Basic: $12
- Pro: $20
- Team: $50

Contact sales for more.

Updated weekly.
Enterprise on request.
`;

const V1_TO_V2 = `--- previous
+++ current
@@ -2,10 +2,11 @@
 
 Our plans:
 
-- Basic: $10
+- Basic: $12
 - Pro: $20
 - Team: $50
 
 Contact sales for more.
 
 Updated weekly.
+Enterprise on request.
`;

describe('unified diff', () => {
  test('hunks: 3 lines of context, close changes merged, far ones split, git-style counts', () => {
    const a = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
    const b = [...a];
    b[1] = 'LINE 2';
    b[17] = 'LINE 18';
    const { text, json } = unifiedDiff(`${a.join('\n')}\n`, `${b.join('\n')}\n`);
    assert.equal(
      text,
      '--- previous\n+++ current\n' +
        '@@ -1,5 +1,5 @@\n line 1\n-line 2\n+LINE 2\n line 3\n line 4\n line 5\n' +
        '@@ -15,6 +15,6 @@\n line 15\n line 16\n line 17\n-line 18\n+LINE 18\n line 19\n line 20\n',
    );
    assert.equal(json.files.length, 1);
    const file = json.files[0];
    assert.equal(file.from, 'previous');
    assert.equal(file.to, 'current');
    assert.equal(file.additions, 2);
    assert.equal(file.deletions, 2);
    assert.deepEqual(
      file.chunks.map((c) => [c.content, c.oldStart, c.oldLines, c.newStart, c.newLines]),
      [
        ['@@ -1,5 +1,5 @@', 1, 5, 1, 5],
        ['@@ -15,6 +15,6 @@', 15, 6, 15, 6],
      ],
    );
    assert.deepEqual(file.chunks[0].changes.slice(0, 3), [
      { type: 'normal', normal: true, ln1: 1, ln2: 1, content: ' line 1' },
      { type: 'del', del: true, ln: 2, content: '-line 2' },
      { type: 'add', add: true, ln: 2, content: '+LINE 2' },
    ]);
    // Changes 6 equal lines apart share a hunk.
    const c = [...a];
    c[1] = 'x';
    c[8] = 'y';
    assert.equal((unifiedDiff(a.join('\n'), c.join('\n')).text.match(/^@@/gm) ?? []).length, 1);
    c[8] = a[8];
    c[9] = 'y';
    assert.equal((unifiedDiff(a.join('\n'), c.join('\n')).text.match(/^@@/gm) ?? []).length, 2);
  });

  test('empty sides, single lines, CRLF, identical texts', () => {
    assert.equal(unifiedDiff('', 'one\n').text, '--- previous\n+++ current\n@@ -0,0 +1 @@\n+one\n');
    assert.equal(unifiedDiff('one\ntwo\n', '').text, '--- previous\n+++ current\n@@ -1,2 +0,0 @@\n-one\n-two\n');
    assert.equal(unifiedDiff('a\r\nb\r\n', 'a\nb\n').text, '');
    assert.deepEqual(unifiedDiff(V1, V1), { text: '', json: { files: [] } });
  });

  test('the edit script is minimal (checked against an LCS table on random inputs)', () => {
    let seed = 7;
    const rnd = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
    for (let t = 0; t < 500; t++) {
      const a = Array.from({ length: Math.floor(rnd() * 14) }, () => 'abcd'[Math.floor(rnd() * 4)]);
      const b = Array.from({ length: Math.floor(rnd() * 14) }, () => 'abcd'[Math.floor(rnd() * 4)]);
      const { ops, exact } = diffLines(a, b);
      assert.ok(exact);
      const L = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
      for (let x = a.length - 1; x >= 0; x--)
        for (let y = b.length - 1; y >= 0; y--)
          L[x][y] = a[x] === b[y] ? L[x + 1][y + 1] + 1 : Math.max(L[x + 1][y], L[x][y + 1]);
      assert.equal(ops.filter((o) => o === 0).length, L[0][0]);
      let i = 0;
      let j = 0;
      const rebuilt: string[] = [];
      for (const o of ops) {
        if (o === 0) {
          assert.equal(a[i], b[j]);
          rebuilt.push(b[j]);
          i++;
          j++;
        } else if (o === 1) i++;
        else rebuilt.push(b[j++]);
      }
      assert.deepEqual(rebuilt, b);
      assert.equal(i, a.length);
    }
  });

  test('large pages are bounded: one change is found fast, a rewrite falls back to a whole replace', () => {
    const big = Array.from({ length: 60_000 }, (_, i) => `Paragraph ${i} of a very long page.`);
    const edited = [...big];
    edited[30_000] = 'Changed paragraph.';
    let t0 = Date.now();
    const one = unifiedDiff(big.join('\n'), edited.join('\n'));
    assert.equal(one.json.files[0].chunks.length, 1);
    assert.equal(one.json.files[0].additions, 1);
    assert.equal(one.json.files[0].deletions, 1);
    assert.ok(Date.now() - t0 < 2000, `one change in ${Date.now() - t0} ms`);

    // Every other line changed: far more edits than the bound.
    const rewritten = big.map((l, i) => (i % 2 ? `${l} (rev 2)` : l));
    t0 = Date.now();
    const { exact, ops } = diffLines(big, rewritten);
    assert.equal(exact, false);
    assert.ok(ops.filter((o) => o !== 0).length > MAX_EDIT_DISTANCE);
    const whole = unifiedDiff(big.join('\n'), rewritten.join('\n'));
    const f = whole.json.files[0];
    // The common prefix (line 0) kept; the middle replaced whole.
    assert.equal(f.chunks.length, 1);
    assert.equal(f.deletions, 59_999);
    assert.equal(f.additions, 59_999);
    assert.ok(Date.now() - t0 < 5000, `rewrite in ${Date.now() - t0} ms`);
  });
});

test('json changes: top-level fields that differ, deep equality, missing sides as null', () => {
  assert.deepEqual(jsonChanges({ a: 1, b: { c: [1, 2] }, d: 'x' }, { a: 1, b: { c: [1, 3] }, e: true }), {
    b: { previous: { c: [1, 2] }, current: { c: [1, 3] } },
    e: { previous: null, current: true },
    d: { previous: 'x', current: null },
  });
  assert.deepEqual(jsonChanges(null, { price: 10 }), { price: { previous: null, current: 10 } });
  assert.deepEqual(jsonChanges({ k: { x: 1, y: 2 } }, { k: { y: 2, x: 1 } }), {});
  assert.deepEqual(jsonChanges('a', 'b'), { value: { previous: 'a', current: 'b' } });
});

test('URL keys: normalised, fragment and trailing slash ignored, query sorted', () => {
  assert.equal(
    urlKeyForChanges('HTTPS://Example.COM:443/a/?b=2&a=1#top'),
    urlKeyForChanges('https://example.com/a?a=1&b=2'),
  );
  assert.notEqual(urlKeyForChanges('https://example.com/a'), urlKeyForChanges('https://example.com/b'));
});

for (const store of storeKinds) {
  describe(`change tracking on ${store}`, () => {
    let db: Db;
    let cleanup: () => Promise<void>;
    let teamA: string;
    let teamB: string;
    before(async () => {
      ({ db, cleanup } = await openTestDb(store));
      teamA = (await ensureTeam(db, 'changes-a')).id;
      teamB = (await ensureTeam(db, 'changes-b')).id;
    });
    after(() => cleanup());

    const at = (s: string) => new Date(`2026-01-0${s}T10:00:00.000Z`);

    test('new → same → changed, with the exact diff', async () => {
      const url = 'https://shop.example/pricing';
      const modes = ['git-diff'] as const;
      const first = await trackChanges({
        db,
        teamId: teamA,
        url,
        markdown: V1,
        statusCode: 200,
        modes,
        scrapedAt: at('1'),
      });
      assert.deepEqual(first, { previousScrapeAt: null, changeStatus: 'new', visibility: 'visible' });

      const second = await trackChanges({
        db,
        teamId: teamA,
        url: 'https://SHOP.example/pricing/#plans',
        markdown: V1,
        statusCode: 200,
        modes,
        scrapedAt: at('2'),
      });
      assert.deepEqual(second, {
        previousScrapeAt: '2026-01-01T10:00:00.000Z',
        changeStatus: 'same',
        visibility: 'visible',
        diff: { text: '', json: { files: [] } },
      });

      const third = await trackChanges({
        db,
        teamId: teamA,
        url,
        markdown: V2,
        statusCode: 200,
        modes,
        scrapedAt: at('3'),
      });
      assert.equal(third.previousScrapeAt, '2026-01-02T10:00:00.000Z');
      assert.equal(third.changeStatus, 'changed');
      assert.equal(third.diff?.text, V1_TO_V2);
      const chunk = third.diff?.json.files[0].chunks[0];
      assert.equal(chunk?.content, '@@ -2,10 +2,11 @@');
      assert.deepEqual(
        chunk?.changes.filter((c) => c.type !== 'normal'),
        [
          { type: 'del', del: true, ln: 5, content: '-- Basic: $10' },
          { type: 'add', add: true, ln: 5, content: '+- Basic: $12' },
          { type: 'add', add: true, ln: 12, content: '+Enterprise on request.' },
        ],
      );

      // Without modes: only the status fields.
      const fourth = await trackChanges({ db, teamId: teamA, url, markdown: V2, statusCode: 200 });
      assert.deepEqual(Object.keys(fourth).sort(), ['changeStatus', 'previousScrapeAt', 'visibility']);
      assert.equal(fourth.changeStatus, 'same');
      assert.equal(fourth.previousScrapeAt, '2026-01-03T10:00:00.000Z');
    });

    test('tags and teams keep separate histories', async () => {
      const url = 'https://tags.example/';
      assert.equal(
        (await trackChanges({ db, teamId: teamA, url, markdown: 'v1', statusCode: 200 })).changeStatus,
        'new',
      );
      assert.equal(
        (await trackChanges({ db, teamId: teamA, url, tag: 'daily', markdown: 'v2', statusCode: 200 })).changeStatus,
        'new',
      );
      assert.equal(
        (await trackChanges({ db, teamId: teamB, url, markdown: 'v3', statusCode: 200 })).changeStatus,
        'new',
      );
      const def = await trackChanges({
        db,
        teamId: teamA,
        url,
        tag: '',
        markdown: 'v1',
        statusCode: 200,
        modes: ['git-diff'],
      });
      assert.equal(def.changeStatus, 'same', "the default history saw v1, not the tag's v2");
      const daily = await trackChanges({
        db,
        teamId: teamA,
        url,
        tag: 'daily',
        markdown: 'v1',
        statusCode: 200,
        modes: ['git-diff'],
      });
      assert.equal(daily.changeStatus, 'changed');
      assert.equal(daily.diff?.text, '--- previous\n+++ current\n@@ -1 +1 @@\n-v2\n+v1\n');
      const b = await trackChanges({ db, teamId: teamB, url, markdown: 'v3', statusCode: 200 });
      assert.equal(b.changeStatus, 'same', 'team B compares with its own scrape only');
    });

    test('removed when the page 404s or comes back empty; new when it reappears', async () => {
      const url = 'https://gone.example/item';
      await trackChanges({ db, teamId: teamA, url, markdown: '# Item\n\nIn stock.', statusCode: 200 });
      const gone = await trackChanges({
        db,
        teamId: teamA,
        url,
        markdown: '# Not Found',
        statusCode: 404,
        modes: ['git-diff'],
      });
      assert.equal(gone.changeStatus, 'removed');
      assert.match(gone.diff?.text ?? '', /^-In stock\.$/m);
      assert.equal(
        (await trackChanges({ db, teamId: teamA, url, markdown: '# Gone', statusCode: 410 })).changeStatus,
        'same',
        'still gone',
      );
      assert.equal(
        (await trackChanges({ db, teamId: teamA, url, markdown: '# Item\n\nBack.', statusCode: 200 })).changeStatus,
        'new',
      );
      assert.equal(
        (await trackChanges({ db, teamId: teamA, url, markdown: '  \n', statusCode: 200 })).changeStatus,
        'removed',
        'empty page',
      );
      assert.equal(
        (await trackChanges({ db, teamId: teamA, url: 'https://gone.example/never', markdown: '', statusCode: 404 }))
          .changeStatus,
        'new',
      );
    });

    test('json mode: field changes against the stored extraction', async () => {
      const url = 'https://json.example/product';
      const modes = ['json'] as const;
      const first = await trackChanges({
        db,
        teamId: teamA,
        url,
        markdown: 'p',
        statusCode: 200,
        modes,
        json: { price: 10, name: 'Widget' },
      });
      assert.equal(first.changeStatus, 'new');
      assert.deepEqual(first.json, {
        price: { previous: null, current: 10 },
        name: { previous: null, current: 'Widget' },
      });
      const second = await trackChanges({
        db,
        teamId: teamA,
        url,
        markdown: 'p2',
        statusCode: 200,
        modes: ['git-diff', 'json'],
        json: { price: 12, name: 'Widget' },
      });
      assert.equal(second.changeStatus, 'changed');
      assert.deepEqual(second.json, { price: { previous: 10, current: 12 } });
      assert.ok(second.diff);
      // A scrape without json mode keeps the stored extraction for the next json-mode scrape.
      await trackChanges({ db, teamId: teamA, url, markdown: 'p2', statusCode: 200 });
      const fourth = await trackChanges({
        db,
        teamId: teamA,
        url,
        markdown: 'p2',
        statusCode: 200,
        modes,
        json: { price: 12, name: 'Widget 2' },
      });
      assert.equal(fourth.changeStatus, 'same');
      assert.deepEqual(fourth.json, { name: { previous: 'Widget', current: 'Widget 2' } });
      assert.deepEqual((await readSnapshot(db, { teamId: teamA, urlKey: urlKeyForChanges(url), tag: '' }))?.json, {
        price: 12,
        name: 'Widget 2',
      });
    });

    test('concurrent writers form one chain: each compares with exactly one predecessor', async () => {
      const key = { teamId: teamA, urlKey: 'https://race.example/', tag: '' };
      const n = 12;
      const results = await Promise.all(
        Array.from({ length: n }, (_, i) => recordSnapshot(db, { ...key, markdown: `v${i}`, statusCode: 200 })),
      );
      const firsts = results.filter((r) => !r.previous);
      assert.equal(firsts.length, 1, 'exactly one writer saw no predecessor');
      const prevs = results.flatMap((r) => (r.previous ? [r.previous.markdown] : []));
      const last = (await readSnapshot(db, key))?.markdown;
      assert.ok(last);
      // Every version but the last is some writer's predecessor, exactly once.
      assert.deepEqual([...prevs, last].sort(), Array.from({ length: n }, (_, i) => `v${i}`).sort());

      const two = await Promise.all([
        trackChanges({ db, teamId: teamB, url: 'https://race2.example/', markdown: 'a', statusCode: 200 }),
        trackChanges({ db, teamId: teamB, url: 'https://race2.example/', markdown: 'b', statusCode: 200 }),
      ]);
      assert.deepEqual(two.map((r) => r.changeStatus).sort(), ['changed', 'new']);
    });
  });
}
