// Comparing checks: normalisation (whitespace, tracking parameters, nonces), hashes and statuses, the markdown
// diff (git-style text and its parse-diff-shaped parse) and the per-field JSON diff.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parsePatch } from 'diff';
import { classify, contentHash, jsonDiff, markdownDiff, normalizeForCompare } from '../../src/monitor/compare.ts';
import { MAX_EDIT_DISTANCE as MAX_EDIT_LENGTH } from '../../src/markdown/diff.ts';

const same = (a: string, b: string) => assert.equal(normalizeForCompare(a), normalizeForCompare(b), `${a} vs ${b}`);
const differ = (a: string, b: string) =>
  assert.notEqual(normalizeForCompare(a), normalizeForCompare(b), `${a} vs ${b}`);

test('whitespace runs, trailing spaces, blank-line runs and line endings do not count', () => {
  same('# Title\n\nSome   text\there.  \n', '# Title\r\n\r\n\r\n\r\nSome text here.');
  same('a\u00a0b', 'a b');
  same('\n\nx\n\n', 'x');
  assert.equal(normalizeForCompare('  a  \n\n\n\n b \n'), 'a\n\nb');
  differ('one two', 'onetwo');
  differ('line one\nline two', 'line one line two');
});

test('tracking query strings are removed from URLs; the rest of the URL stays', () => {
  same(
    '[Shop](https://shop.example/item?id=42&utm_source=news&utm_medium=email)',
    '[Shop](https://shop.example/item?id=42&utm_source=twitter&utm_campaign=x)',
  );
  same('https://a.example/p?gclid=abc', 'https://a.example/p?fbclid=IwAR123');
  same('see https://a.example/p?ref=home.', 'see https://a.example/p.');
  same('[x](https://a.example/?mc_eid=1&mc_cid=2&msclkid=3&_hsenc=4)', '[x](https://a.example/)');
  same('[rel](/path?utm_content=a)', '[rel](/path)');
  assert.equal(normalizeForCompare('<https://a.example/p?id=1&utm_source=x#top>'), '<https://a.example/p?id=1#top>');
  // Parameters that choose the content are kept.
  differ('https://a.example/item?id=42', 'https://a.example/item?id=43');
  differ('https://a.example/search?q=shoes&page=2', 'https://a.example/search?q=shoes&page=3');
});

test('nonces, cache-busters, session ids and signed-URL tokens are removed', () => {
  same('![](https://cdn.example/a.png?v=3f9a8c1d2e)', '![](https://cdn.example/a.png?v=9b8a7c6d5e)');
  same('![](https://cdn.example/a.png?_=1700000000123)', '![](https://cdn.example/a.png?_=1700000999999)');
  same('![](https://cdn.example/app.3f9a8c1d2e4b6a7c.js)', '![](https://cdn.example/app.0011223344556677.js)');
  same(
    '![](https://bucket.s3.amazonaws.com/i.jpg?X-Amz-Date=20250101T000000Z&X-Amz-Signature=abcdef0123456789&X-Amz-Expires=300)',
    '![](https://bucket.s3.amazonaws.com/i.jpg?X-Amz-Date=20250102T000000Z&X-Amz-Signature=fedcba9876543210&X-Amz-Expires=300)',
  );
  same(
    '[login](https://a.example/login;?sessionid=abc123&nonce=zzz)',
    '[login](https://a.example/login;?sessionid=def456&nonce=yyy)',
  );
  same('csrf_token: 8f14e45fceea167a5a36dedd4bea2543', 'csrf_token: c9f0f895fb98ab9159f51fd0297e236d');
  same('<input name="nonce" value="x"> nonce=AbCdEf123456', '<input name="nonce" value="x"> nonce=ZyXwVu987654');
  // A version that is a word is content.
  differ('https://a.example/docs?version=stable', 'https://a.example/docs?version=beta');
  // Text that merely looks like a number is content.
  differ('Order 1234567890123', 'Order 1234567890124');
});

test('real changes are kept', () => {
  differ('Price: $10', 'Price: $12');
  differ('In stock', 'Out of stock');
  differ('# Hello', '# Goodbye');
  differ('[a](https://a.example/one)', '[a](https://a.example/two)');
});

test('contentHash: stable, short, different for different content', () => {
  const h = contentHash(normalizeForCompare('hello'));
  assert.match(h, /^[0-9a-f]{32}$/);
  assert.equal(h, contentHash('hello'));
  assert.notEqual(h, contentHash('hello!'));
  assert.equal(contentHash(normalizeForCompare('a  b\n')), contentHash(normalizeForCompare('a b')));
});

test('classify: error wins, then new, removed, same, changed', () => {
  assert.equal(classify('h1', 'h1'), 'same');
  assert.equal(classify('h1', 'h2'), 'changed');
  assert.equal(classify(undefined, 'h2'), 'new');
  assert.equal(classify(null, 'h2'), 'new');
  assert.equal(classify('h1', undefined), 'removed');
  assert.equal(classify('h1', 'h1', 'SCRAPE_SITE_ERROR'), 'error');
  assert.equal(classify(undefined, undefined, new Error('boom')), 'error');
  assert.equal(classify('h1', 'h2', null), 'changed');
  assert.equal(classify('h1', 'h2', ''), 'changed');
  assert.equal(classify(undefined, undefined), 'same');
});

test('markdownDiff: git-style unified text, one hunk per change area', () => {
  const url = 'https://shop.example/item';
  const prev = '# Item\n\nPrice: $10\n\nIn stock\n';
  const curr = '# Item\n\nPrice: $12\n\nIn stock\n\nNew: free shipping';
  const d = markdownDiff(prev, curr, url);
  assert.equal(
    d.text,
    [
      `diff --git a/${url} b/${url}`,
      `--- a/${url}`,
      `+++ b/${url}`,
      '@@ -1,5 +1,7 @@',
      ' # Item',
      ' ',
      '-Price: $10',
      '+Price: $12',
      ' ',
      ' In stock',
      '+',
      '+New: free shipping',
      '',
    ].join('\n'),
  );
  assert.doesNotMatch(d.text, /No newline at end of file/);
  // What a client's own parser reads back.
  const parsed = parsePatch(d.text);
  assert.equal(parsed.length, 1);
  assert.equal(parsed[0].hunks[0].newLines, 7);
});

test('markdownDiff: the parsed form is parse-diff shaped: files, chunks, changes with line numbers', () => {
  const prev = Array.from({ length: 30 }, (_, i) => `line ${i + 1}`).join('\n');
  const lines = prev.split('\n');
  lines[2] = 'line three';
  lines.splice(25, 1);
  const d = markdownDiff(prev, lines.join('\n'), 'https://a.example/');
  const [file] = d.json.files;
  assert.equal(d.json.files.length, 1);
  assert.equal(file.from, 'https://a.example/');
  assert.equal(file.to, 'https://a.example/');
  assert.equal(file.additions, 1);
  assert.equal(file.deletions, 2);
  assert.equal(file.chunks.length, 2, 'two change areas far apart: two hunks');
  const [first, second] = file.chunks;
  assert.equal(first.content, '@@ -1,6 +1,6 @@');
  assert.deepEqual([first.oldStart, first.oldLines, first.newStart, first.newLines], [1, 6, 1, 6]);
  assert.deepEqual(first.changes[0], { type: 'normal', normal: true, ln1: 1, ln2: 1, content: ' line 1' });
  assert.deepEqual(first.changes[2], { type: 'del', del: true, ln: 3, content: '-line 3' });
  assert.deepEqual(first.changes[3], { type: 'add', add: true, ln: 3, content: '+line three' });
  assert.equal(second.content, '@@ -23,7 +23,6 @@');
  assert.deepEqual(
    second.changes.find((c) => c.type === 'del'),
    { type: 'del', del: true, ln: 26, content: '-line 26' },
  );
  // The text's hunk headers match the parsed ones.
  assert.ok(d.text.includes(`${first.content}\n`) && d.text.includes(`${second.content}\n`));
  assert.equal(JSON.parse(JSON.stringify(d.json)).files[0].chunks.length, 2, 'plain JSON');
});

test('markdownDiff: equal texts (line endings aside) give no diff; a one-line count is written as git does', () => {
  assert.deepEqual(markdownDiff('a\nb\n', 'a\r\nb', 'u'), { text: '', json: { files: [] } });
  const d = markdownDiff('a', 'b', 'u');
  assert.match(d.text, /^@@ -1 \+1 @@$/m);
  assert.equal(d.json.files[0].chunks[0].content, '@@ -1 +1 @@');
  const fromEmpty = markdownDiff('', 'x\ny', 'u');
  assert.match(fromEmpty.text, /^@@ -0,0 \+1,2 @@$/m);
  assert.equal(fromEmpty.json.files[0].additions, 2);
});

test('markdownDiff: texts too different for an edit script are reported as one replaced block', () => {
  const n = MAX_EDIT_LENGTH + 500;
  const prev = ['head', ...Array.from({ length: n }, (_, i) => `old ${i}`), 'tail'].join('\n');
  const curr = ['head', ...Array.from({ length: n }, (_, i) => `new ${i}`), 'tail'].join('\n');
  const started = Date.now();
  const d = markdownDiff(prev, curr, 'u');
  assert.ok(Date.now() - started < 10_000);
  const [file] = d.json.files;
  assert.equal(file.deletions, n);
  assert.equal(file.additions, n);
  assert.equal(file.chunks.length, 1);
  assert.equal(file.chunks[0].content, `@@ -1,${n + 2} +1,${n + 2} @@`);
  assert.deepEqual(parsePatch(d.text)[0].hunks[0].oldLines, n + 2, 'the text parses back');
});

test('jsonDiff: changed fields only, by dotted path into nested objects; arrays as values', () => {
  const prev = {
    title: 'Shoe',
    price: { amount: 10, currency: 'USD' },
    tags: ['a', 'b'],
    stock: { warehouse: { count: 3 } },
    gone: 'x',
  };
  const curr = {
    title: 'Shoe',
    price: { amount: 12, currency: 'USD' },
    tags: ['a', 'b', 'c'],
    stock: { warehouse: { count: 3 } },
    added: true,
  };
  assert.deepEqual(jsonDiff(prev, curr), {
    'price.amount': { previous: 10, current: 12 },
    tags: { previous: ['a', 'b'], current: ['a', 'b', 'c'] },
    gone: { previous: 'x', current: null },
    added: { previous: null, current: true },
  });
  assert.deepEqual(jsonDiff(prev, structuredClone(prev)), {});
  // Key order does not matter; arrays compare element by element (order does).
  assert.deepEqual(jsonDiff({ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 }), {});
  assert.deepEqual(jsonDiff({ l: [{ x: 1 }] }, { l: [{ x: 2 }] }), {
    l: { previous: [{ x: 1 }], current: [{ x: 2 }] },
  });
  // An object replaced by a scalar is reported at that path.
  assert.deepEqual(jsonDiff({ p: { a: 1 } }, { p: 'n/a' }), { p: { previous: { a: 1 }, current: 'n/a' } });
});

test('jsonDiff: a first extraction reports every field; non-objects compare as `value`', () => {
  assert.deepEqual(jsonDiff(null, { a: 1, b: { c: 2 } }), {
    a: { previous: null, current: 1 },
    b: { previous: null, current: { c: 2 } },
  });
  assert.deepEqual(jsonDiff({ a: 1 }, undefined), { a: { previous: 1, current: null } });
  assert.deepEqual(jsonDiff(1, 2), { value: { previous: 1, current: 2 } });
  assert.deepEqual(jsonDiff([1], [1]), {});
  assert.deepEqual(jsonDiff(undefined, null), {});
});

test('normalisation stays linear on pathological input (long token-like runs, huge URLs)', () => {
  const slug = 'a-'.repeat(100_000);
  const digits = '1'.repeat(200_000);
  const started = Date.now();
  normalizeForCompare(`${slug}\nhttps://a.example/${slug}?q=${digits}&utm_source=x\n${digits}`);
  assert.ok(Date.now() - started < 2_000, `took ${Date.now() - started} ms`);
});
