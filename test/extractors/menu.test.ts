import assert from 'node:assert/strict';
import { test } from 'node:test';
import { extractMenu } from '../../src/extractors/menu.ts';
import { fixture, load } from './helpers.ts';

test('microdata Restaurant → Menu with flattened nested sections', () => {
  const { sd } = load(fixture('bistro.html'), 'http://bistro.test/menu');
  const m = extractMenu(sd, { url: 'http://bistro.test/menu' });
  assert.equal(m.isMenu, true);
  assert.equal(m.confidence, 0.95);
  assert.deepEqual(m.merchant, { name: 'Bistro Verde', type: 'Restaurant' });
  assert.equal(m.currency, 'EUR');
  assert.equal(m.sourceUrl, 'http://bistro.test/menu');
  assert.deepEqual(
    m.sections.map((s) => [s.name, s.items.map((i) => i.name)]),
    [
      ['Starters', ['Onion Soup']],
      ['Mains', ['Steak Frites']],
      ['Mains > Vegetarian', ['Mushroom Risotto']],
    ],
  );
  assert.equal(m.sections[0].description, 'Small plates to share');
  assert.deepEqual(m.sections[0].items[0], {
    name: 'Onion Soup',
    id: 'http://bistro.test/menu#soup',
    description: 'Gratinated with comté',
    price: { amount: 9.5, currency: 'EUR', formatted: '€9.50' },
    availability: { inStock: true, text: 'in stock' },
    dietary: ['vegetarian'],
    calories: 320,
    sourceUrl: 'http://bistro.test/menu',
  });
  const risotto = m.sections[2].items[0];
  assert.deepEqual(risotto.dietary, ['vegan', 'gluten free']);
  assert.deepEqual(risotto.availability, { inStock: false, text: 'out of stock' });
  assert.deepEqual(risotto.images, [{ url: 'http://bistro.test/img/risotto.jpg', alt: 'Mushroom Risotto' }]);
  assert.deepEqual(m.sections[1].items[0].identifiers, { merchantItemId: 'SF-01' });
});

test('JSON-LD Menu with direct items and add-ons; no menu → isMenu false', () => {
  const { sd } =
    load(`<script type="application/ld+json">{"@context":"https://schema.org","@type":"Menu","name":"Drinks",
    "hasMenuItem":[{"@type":"MenuItem","name":"Latte","offers":{"@type":"Offer","price":"3.20","priceCurrency":"GBP"},
    "menuAddOn":[{"@type":"MenuItem","name":"Oat milk","offers":{"@type":"Offer","price":"0.40"}}]}]}</script>`);
  const m = extractMenu(sd);
  assert.deepEqual(
    m.sections.map((s) => s.name),
    ['Drinks'],
  );
  assert.equal(m.confidence, 0.9);
  assert.equal(m.currency, 'GBP');
  assert.deepEqual(m.sections[0].items[0].optionGroups, [
    { name: 'Add-ons', options: [{ name: 'Oat milk', price: { amount: 0.4, currency: 'GBP', formatted: '£0.40' } }] },
  ]);
  assert.deepEqual(extractMenu(load('<p>no menu</p>').sd), { isMenu: false, sections: [], confidence: 0 });
});
