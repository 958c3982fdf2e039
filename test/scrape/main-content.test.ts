// Main-content extraction against the hand-checked corpus in test/scrape/main-content/pages:
// each NN-kind.html has NN-kind.expected.txt, the text a reader would call the page's main
// content (title and body; no navigation, sidebars, footers, ads, comments unless the comments
// are the content). Score: token-level F1 (lowercase words, multiset counts) of our output's text.
// The same corpus feeds bench/main-content.bench.ts, which compares with Mozilla Readability.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, test } from 'node:test';
import { parseDocument } from 'htmlparser2';
import { cleanDocument } from '../../src/scrape/transform/clean.ts';
import { blockText, tokenF1 } from './main-content/score.ts';

const dir = new URL('./main-content/pages/', import.meta.url).pathname;
const pages = readdirSync(dir)
  .filter((f) => f.endsWith('.html'))
  .sort();

describe('main content: corpus F1', () => {
  const scores: number[] = [];

  test('the corpus has at least 15 pages, each with its expected text', () => {
    assert.ok(pages.length >= 15, `${pages.length} pages`);
    for (const f of pages)
      assert.ok(readFileSync(dir + f.replace(/\.html$/, '.expected.txt'), 'utf8').trim().length > 100, f);
  });

  for (const f of pages) {
    test(f, () => {
      const html = readFileSync(dir + f, 'utf8');
      const expected = readFileSync(dir + f.replace(/\.html$/, '.expected.txt'), 'utf8');
      const got = blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
      const { precision, recall, f1 } = tokenF1(got, expected);
      scores.push(f1);
      assert.ok(
        f1 >= 0.8,
        `${f}: F1 ${f1.toFixed(3)} (precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)})\n--- got ---\n${got}`,
      );
    });
  }

  test('mean F1 ≥ 0.90', () => {
    assert.equal(scores.length, pages.length);
    const mean = scores.reduce((a, b) => a + b, 0) / scores.length;
    assert.ok(mean >= 0.9, `mean F1 ${mean.toFixed(3)}`);
  });
});

describe('main content: scoring helpers', () => {
  test('tokenF1 counts multisets of lowercase words', () => {
    assert.deepEqual(tokenF1('The cat the CAT', 'the cat'), { precision: 0.5, recall: 1, f1: 2 / 3 });
    assert.equal(tokenF1('', 'x').f1, 0);
    assert.equal(tokenF1('', '').f1, 1);
  });

  test('blockText keeps block boundaries', () => {
    const doc = parseDocument('<table><tr><td>a</td><td>b</td></tr></table><p>one <b>two</b></p>x<br>y');
    assert.equal(blockText(doc.children), 'a\nb\none two\nx\ny');
  });
});
