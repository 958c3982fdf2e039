import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answerQuestion, highlights, highlightsText, splitPassages, tokenize } from '../../src/extractors/bm25.ts';
import { stem } from '../../src/extractors/stem.ts';

const md = `# Acme Widget

The widget gathers grain quickly.

## Shipping

Orders ship within two business days from our Zürich warehouse.

## Pricing

| Plan | Price |
|---|---|
| Basic | $9 |

- Returns are accepted for 30 days.
- Café owners get a discount.
`;

test('passages with heading context', () => {
  const ps = splitPassages(md);
  assert.deepEqual(
    ps.map((p) => [p.kind, p.heading, p.text]),
    [
      ['paragraph', 'Acme Widget', 'The widget gathers grain quickly.'],
      ['paragraph', 'Acme Widget > Shipping', 'Orders ship within two business days from our Zürich warehouse.'],
      ['row', 'Acme Widget > Pricing', 'Plan: Basic; Price: $9'],
      ['item', 'Acme Widget > Pricing', 'Returns are accepted for 30 days.'],
      ['item', 'Acme Widget > Pricing', 'Café owners get a discount.'],
    ],
  );
});

test('tokenizer: stopwords, accents, stemming', () => {
  assert.deepEqual(tokenize('The cafés are shipping Orders'), ['cafe', 'ship', 'order']);
  assert.equal(stem('running'), 'run');
  assert.equal(stem('policies'), 'policy');
});

test('answerQuestion picks the passage and reports confidence', () => {
  const a = answerQuestion(md, 'How fast do orders ship?');
  assert.equal(a.answer, 'Orders ship within two business days from our Zürich warehouse.');
  assert.ok(a.confidence > 0.5 && a.confidence <= 1, String(a.confidence));
  assert.deepEqual(answerQuestion(md, 'zebra'), { answer: '', confidence: 0, passages: [] });
});

test('highlights: top-k in page order', () => {
  const h = highlights(md, 'cafe discount returns', 2);
  assert.deepEqual(
    h.map((p) => p.index),
    [3, 4],
  );
  assert.equal(highlightsText(md, 'warehouse', 1), 'Orders ship within two business days from our Zürich warehouse.');
});
