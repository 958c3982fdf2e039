import assert from 'node:assert/strict';
import { test } from 'node:test';
import { needsRendering } from '../../src/scrape/needs-render.ts';

const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i}`).join(' ');

test('a page without scripts never needs the browser', () => {
  assert.equal(needsRendering('<html><body><div id="root"></div></body></html>'), false);
});

test('an empty SPA mount point with scripts needs the browser', () => {
  assert.equal(
    needsRendering('<html><head><script src="/app.js"></script></head><body><div id="root"></div></body></html>'),
    true,
  );
});

test('a noscript wall needs the browser, whatever else the page says', () => {
  const html = `<html><body><script>x()</script><noscript>Please enable JavaScript to continue.</noscript><p>${words(100)}</p></body></html>`;
  assert.equal(needsRendering(html), true);
});

test('an article with scripts is read as served', () => {
  const html = `<html><head><script>track()</script></head><body><article><p>${words(40)}</p></article><script>more()</script></body></html>`;
  assert.equal(needsRendering(html), false);
});

test('text inside scripts, styles, templates and svg does not count', () => {
  const hidden = words(200);
  const html = `<html><body><script>var s = "${hidden}";</script><style>/* ${hidden} */</style><template>${hidden}</template><svg><text>${hidden}</text></svg><div id="app">Loading…</div></body></html>`;
  assert.equal(needsRendering(html), true);
});

test('whitespace runs, tags and entities count as single spaces', () => {
  // 30 five-letter words: 179 characters with single spaces, below the bar however it is spaced.
  const spaced = Array.from({ length: 30 }, () => 'abcde').join('\n\n   <b> </b> &nbsp; ');
  assert.equal(needsRendering(`<html><body><script></script><p>${spaced}</p></body></html>`), true);
  // 60 such words (360 characters with single spaces) clear it.
  const enough = Array.from({ length: 60 }, () => 'abcde').join('<br>');
  assert.equal(needsRendering(`<html><body><script></script><p>${enough}</p></body></html>`), false);
});

test('only the body counts, and a page without a body tag is read whole', () => {
  const head = `<html><head><title>${words(100)}</title><script></script></head><body><div id="root"></div></body></html>`;
  assert.equal(needsRendering(head), true);
  assert.equal(needsRendering(`<script></script><p>${words(60)}</p>`), false);
});

test('a stray < or & in text is text', () => {
  const html = `<html><body><script></script><p>${Array.from({ length: 50 }, () => 'a < b & c').join(' ')}</p></body></html>`;
  assert.equal(needsRendering(html), false);
});

test('a large page is decided from its first kilobytes', () => {
  const big = `<html><body><script></script>${'<p>' + words(50) + '</p>\n'.repeat(1)}${'<p>filler text here</p>'.repeat(20_000)}</body></html>`;
  const t = performance.now();
  for (let i = 0; i < 50; i++) assert.equal(needsRendering(big), false);
  // Not a timing test: a full scan of the 440 KB page 50 times would take far longer than this bound.
  assert.ok(performance.now() - t < 2_000);
});
