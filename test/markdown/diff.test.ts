// The shared diff of change tracking and monitors: plain and git headers over one hunk format, the parse matching
// the text (also for an empty side), both bounds and what happens past them, speed on a long page, and the JSON
// field diff's two path styles with their corners.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePatch } from 'diff';
import {
  MAX_DIFF_LINES,
  MAX_EDIT_DISTANCE,
  deepEqual,
  diffLines,
  jsonFieldChanges,
  splitLines,
  unifiedDiff,
} from '../../src/markdown/diff.ts';

test('plain headers by default; git headers name a/FROM and b/TO while the parse keeps the bare names', () => {
  const plain = unifiedDiff('a\nb\nc\n', 'a\nB\nc\n');
  assert.equal(plain.text, '--- previous\n+++ current\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n');
  assert.deepEqual([plain.json.files[0].from, plain.json.files[0].to], ['previous', 'current']);
  const url = 'https://shop.example/item?id=1';
  const git = unifiedDiff('a\nb\nc\n', 'a\nB\nc\n', { from: url, to: url, git: true });
  assert.equal(git.text, `diff --git a/${url} b/${url}\n--- a/${url}\n+++ b/${url}\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n`);
  assert.deepEqual([git.json.files[0].from, git.json.files[0].to], [url, url]);
  assert.deepEqual(git.json.files[0].chunks, plain.json.files[0].chunks);
  // A client's parser reads the text back to the same hunks.
  const [parsed] = parsePatch(git.text);
  assert.equal(parsed.hunks.length, 1);
  assert.deepEqual(parsed.hunks[0].lines, [' a', '-b', '+B', ' c']);
});

test('the parse matches the text, an empty side included ("-0,0" as git and parse-diff write it)', () => {
  for (const [a, b] of [
    ['', 'x\ny'],
    ['x\ny\n', ''],
    ['one', 'two'],
  ]) {
    const d = unifiedDiff(a, b);
    const headers = d.text.split('\n').filter((l) => l.startsWith('@@'));
    assert.deepEqual(
      headers,
      d.json.files[0].chunks.map((c) => c.content),
    );
  }
  const fromEmpty = unifiedDiff('', 'x\ny').json.files[0].chunks[0];
  assert.deepEqual(
    [fromEmpty.content, fromEmpty.oldStart, fromEmpty.oldLines, fromEmpty.newStart, fromEmpty.newLines],
    ['@@ -0,0 +1,2 @@', 0, 0, 1, 2],
  );
  assert.equal(unifiedDiff('one', 'two').json.files[0].chunks[0].content, '@@ -1 +1 @@');
});

test('line endings and the final newline do not count', () => {
  assert.deepEqual(splitLines('a\r\nb\rc\n'), ['a', 'b', 'c']);
  assert.deepEqual(splitLines(''), []);
  assert.deepEqual(unifiedDiff('a\r\nb', 'a\nb\n'), { text: '', json: { files: [] } });
  assert.doesNotMatch(unifiedDiff('a', 'b').text, /No newline/);
});

test('past MAX_EDIT_DISTANCE the differing middle is replaced whole, with 3 lines of context each side', () => {
  const n = MAX_EDIT_DISTANCE;
  const head = ['h1', 'h2', 'h3', 'h4', 'h5'];
  const tail = ['t1', 't2', 't3', 't4'];
  const a = [...head, ...Array.from({ length: n }, (_, i) => `old ${i}`), ...tail];
  const b = [...head, ...Array.from({ length: n }, (_, i) => `new ${i}`), ...tail];
  const { ops, exact } = diffLines(a, b);
  assert.equal(exact, false);
  assert.equal(ops.filter((o) => o === 1).length, n);
  assert.equal(ops.filter((o) => o === 2).length, n);
  const [file] = unifiedDiff(a.join('\n'), b.join('\n')).json.files;
  assert.equal(file.chunks.length, 1);
  assert.equal(file.chunks[0].content, `@@ -3,${n + 6} +3,${n + 6} @@`);
  assert.deepEqual(
    file.chunks[0].changes.slice(0, 4).map((c) => c.content),
    [' h3', ' h4', ' h5', '-old 0'],
  );
  assert.equal(file.chunks[0].changes.at(-1)?.content, ' t3');
});

test('past MAX_DIFF_LINES in the differing middle no edit script is searched, however few the edits', () => {
  const a = Array.from({ length: MAX_DIFF_LINES + 10 }, (_, i) => `line ${i}`);
  const b = [...a];
  b[0] = 'first';
  b[b.length - 1] = 'last';
  const { exact } = diffLines(a, b);
  assert.equal(exact, false);
  const [file] = unifiedDiff(a.join('\n'), b.join('\n')).json.files;
  assert.deepEqual([file.additions, file.deletions, file.chunks.length], [a.length, a.length, 1]);
  // Just within the bound the two edits are found.
  const c = a.slice(0, MAX_DIFF_LINES);
  const d = [...c];
  d[0] = 'first';
  d[d.length - 1] = 'last';
  assert.equal(diffLines(c, d).exact, true);
  assert.equal(unifiedDiff(c.join('\n'), d.join('\n')).json.files[0].chunks.length, 2);
});

test('two 20,000-line texts with scattered edits diff fast', () => {
  let seed = 3;
  const rnd = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const a = Array.from({ length: 20_000 }, (_, i) => `Paragraph ${i} of a long page with some words.`);
  const b = [...a];
  // Replaced, deleted and inserted lines in turn: both sides stay within MAX_DIFF_LINES.
  for (let k = 0; k < 600; k++) {
    const i = Math.floor(rnd() * (b.length - 1));
    if (k % 3 === 0) b[i] = `Edited ${k}`;
    else if (k % 3 === 1) b.splice(i, 1);
    else b.splice(i, 0, `Inserted ${k}`);
  }
  const started = Date.now();
  const { ops, exact } = diffLines(a, b);
  const d = unifiedDiff(a.join('\n'), b.join('\n'));
  assert.ok(Date.now() - started < 2000, `${Date.now() - started} ms`);
  assert.ok(exact);
  assert.equal(ops.filter((o) => o === 2).length - ops.filter((o) => o === 1).length, b.length - a.length);
  assert.ok(d.json.files[0].chunks.length > 100);
});

test('json field changes, top-level paths (change tracking): current fields first; a non-object side has no fields', () => {
  const top = (p: unknown, c: unknown) => jsonFieldChanges(p, c, { paths: 'top-level' });
  const out = top({ a: 1, b: { c: 1, d: 2 }, gone: 'x' }, { a: 1, b: { c: 2, d: 2 }, added: true });
  assert.deepEqual(out, {
    b: { previous: { c: 1, d: 2 }, current: { c: 2, d: 2 } },
    added: { previous: null, current: true },
    gone: { previous: 'x', current: null },
  });
  assert.deepEqual(Object.keys(out), ['b', 'added', 'gone']);
  assert.deepEqual(top('text', { x: 1 }), { x: { previous: null, current: 1 } });
  assert.deepEqual(top([1], [2]), { value: { previous: [1], current: [2] } });
  assert.deepEqual(top(undefined, null), {});
});

test('json field changes, nested paths (monitors): dotted paths, previous fields first; object against a value', () => {
  const nested = (p: unknown, c: unknown) => jsonFieldChanges(p, c, { paths: 'nested' });
  const out = nested({ a: 1, b: { c: 1, d: 2 }, gone: 'x' }, { a: 1, b: { c: 2, d: 2 }, added: true });
  assert.deepEqual(out, {
    'b.c': { previous: 1, current: 2 },
    gone: { previous: 'x', current: null },
    added: { previous: null, current: true },
  });
  assert.deepEqual(Object.keys(out), ['b.c', 'gone', 'added']);
  assert.deepEqual(nested('text', { x: 1 }), { value: { previous: 'text', current: { x: 1 } } });
  assert.deepEqual(nested(null, { x: { y: 1 } }), { x: { previous: null, current: { y: 1 } } });
  assert.deepEqual(nested([1], [1]), {});
});

test('deepEqual: key order and undefined-valued keys do not count, array order does', () => {
  assert.ok(deepEqual({ a: 1, b: [1, { c: 2 }] }, { b: [1, { c: 2 }], a: 1 }));
  assert.ok(deepEqual({ a: 1, u: undefined }, { a: 1 }));
  assert.ok(!deepEqual([1, 2], [2, 1]));
  assert.ok(!deepEqual({ a: null }, {}));
  assert.ok(!deepEqual([1], { 0: 1 }));
});
