// Search ranking of map links (src/crawl/rank.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rankByRelevance, scoreLink, tokenize } from '../../src/crawl/rank.ts';

const order = (items: { url: string; title?: string; description?: string }[], term: string) =>
  rankByRelevance(items, term).map((r) => r.item.url);

test('tokenize: lower-case words of letters and digits, unicode-aware', () => {
  assert.deepEqual(tokenize('Getting-Started_guide/v2 Café'), ['getting', 'started', 'guide', 'v2', 'café']);
  assert.deepEqual(tokenize('  --  '), []);
});

test('exact word matches rank before partial ones, then by score, then discovery order', () => {
  const items = [
    { url: 'https://x.test/' },
    { url: 'https://x.test/pricing-plans' }, // no match: "pricing" does not contain "price"
    { url: 'https://x.test/docs/price' }, // exact in path
    { url: 'https://x.test/prices' }, // partial (prices ⊃ price)
    { url: 'https://x.test/about', title: 'Our price list' }, // exact in title
    { url: 'https://x.test/contact', description: 'ask for a price' }, // exact in description only
  ];
  assert.deepEqual(order(items, 'price'), [
    'https://x.test/docs/price',
    'https://x.test/about',
    'https://x.test/contact',
    'https://x.test/prices',
    'https://x.test/',
    'https://x.test/pricing-plans',
  ]);
});

test('non-matching links are kept after the matches, in their original order', () => {
  const items = ['/a', '/b', '/docs', '/c'].map((p) => ({ url: `https://x.test${p}` }));
  assert.deepEqual(
    order(items, 'docs'),
    ['/docs', '/a', '/b', '/c'].map((p) => `https://x.test${p}`),
  );
});

test('more term words matched exactly rank higher; a phrase match adds to the score', () => {
  const items = [
    { url: 'https://x.test/started' },
    { url: 'https://x.test/guide', title: 'Started getting' },
    { url: 'https://x.test/docs/getting-started' },
  ];
  assert.deepEqual(order(items, 'Getting Started'), [
    'https://x.test/docs/getting-started',
    'https://x.test/guide',
    'https://x.test/started',
  ]);
  const phrase = scoreLink({ url: 'https://x.test/docs/getting-started' }, ['getting', 'started']);
  const noPhrase = scoreLink({ url: 'https://x.test/started/getting' }, ['getting', 'started']);
  assert.equal(phrase.exact, 2);
  assert.ok(phrase.score > noPhrase.score);
});

test('subdomain labels and query words count as URL words; percent-escapes are decoded', () => {
  assert.equal(
    order([{ url: 'https://x.test/a' }, { url: 'https://blog.x.test/a' }], 'blog')[0],
    'https://blog.x.test/a',
  );
  assert.equal(
    order([{ url: 'https://x.test/a' }, { url: 'https://x.test/a?tag=news' }], 'news')[0],
    'https://x.test/a?tag=news',
  );
  assert.equal(
    order([{ url: 'https://x.test/a' }, { url: 'https://x.test/caf%C3%A9' }], 'café')[0],
    'https://x.test/caf%C3%A9',
  );
  assert.equal(scoreLink({ url: 'https://www.x.test/' }, ['www']).score, 0, 'www is not a word of the site');
});

test('an empty term leaves the order unchanged', () => {
  const items = [{ url: 'https://x.test/b' }, { url: 'https://x.test/a' }];
  assert.deepEqual(order(items, ' - '), ['https://x.test/b', 'https://x.test/a']);
});
