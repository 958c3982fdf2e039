import assert from 'node:assert/strict';
import { test } from 'node:test';
import { productPage } from '../fixtures/site/pages.ts';
import { findByType, localName, parseLenientJson } from '../../src/extractors/structured-data.ts';
import { ctx, fixture, load } from './helpers.ts';

test('JSON-LD and microdata of the fixture product page', () => {
  const { sd } = load(productPage(ctx));
  assert.deepEqual(
    sd.items.map((i) => [i.type, i.source]),
    [
      ['Product', 'json-ld'],
      ['Product', 'microdata'],
    ],
  );
  const md = sd.items[1].properties;
  assert.equal(md.name, 'Acme Widget Pro');
  assert.equal(md.image, 'http://shop.test/images/widget.png');
  assert.deepEqual(md.brand, { '@type': 'Brand', name: 'Acme' });
  assert.deepEqual(md.offers, {
    '@type': 'Offer',
    priceCurrency: 'USD',
    price: '49.99',
    availability: 'https://schema.org/InStock',
  });
  assert.deepEqual(md.aggregateRating, { '@type': 'AggregateRating', ratingValue: '4.6', reviewCount: '128' });
  assert.equal(sd.openGraph['product:price:amount'], '49.99');
  assert.equal(sd.openGraph['og:type'], 'product');
  assert.equal(sd.errors, 0);
});

test('lenient JSON-LD: comments, trailing commas, entities, @graph, @id references; broken block counted', () => {
  const { sd } = load(fixture('pancakes.html'));
  assert.deepEqual(
    sd.items.map((i) => i.type),
    ['WebSite', 'Person', 'Recipe'],
  );
  assert.equal(sd.errors, 1);
  const r = sd.items[2].properties;
  assert.deepEqual(r.author, { '@type': 'Person', '@id': 'https://example.com/#jane', name: 'Jane Baker' });
  assert.equal(r.description, 'Light & fluffy pancakes in 20 minutes.');
  assert.deepEqual(r.recipeIngredient, ['200 g flour', '2 eggs', '300 ml milk']);
  assert.deepEqual(parseLenientJson('{"a": [1, 2,], /* c */ "b": "x\ny",}'), { a: [1, 2], b: 'x\ny' });
  assert.equal(parseLenientJson('{nope'), undefined);
});

test('microdata: nested items, itemref, itemid, values per element', () => {
  const { sd } = load(`<div itemscope itemtype="https://schema.org/Event" itemref="loc">
    <span itemprop="name">Harvest Fair</span><time itemprop="startDate" datetime="2024-09-01T10:00">Sept 1</time>
    <a itemprop="url" href="/fair">More</a><data itemprop="maximumAttendeeCapacity" value="300">three hundred</data></div>
    <div id="loc" itemprop="location" itemscope itemtype="http://schema.org/Place"><span itemprop="name">Mill Yard</span></div>`);
  assert.equal(sd.items.length, 1);
  assert.deepEqual(sd.items[0].properties, {
    name: 'Harvest Fair',
    startDate: '2024-09-01T10:00',
    url: 'http://shop.test/fair',
    maximumAttendeeCapacity: '300',
    location: { '@type': 'Place', name: 'Mill Yard' },
  });
  const bistro = load(fixture('bistro.html')).sd;
  assert.equal(findByType(bistro, 'MenuItem').length, 3);
  assert.equal(findByType(bistro, 'MenuItem')[0].node['@id'], 'http://shop.test/page#soup');
});

test('RDFa Lite: vocab/typeof/property, nested typeof, separate top-level items', () => {
  const { sd } = load(fixture('rdfa-product.html'));
  assert.deepEqual(
    sd.items.map((i) => [i.type, i.source]),
    [
      ['Product', 'rdfa'],
      ['Person', 'rdfa'],
    ],
  );
  assert.deepEqual(sd.items[0].properties.offers, {
    '@type': 'Offer',
    priceCurrency: 'GBP',
    price: '1,299.00',
    availability: 'https://schema.org/PreOrder',
  });
  assert.equal(sd.items[0].properties.image, 'http://shop.test/img/stool.jpg');
  assert.equal(localName('schema:Product'), 'Product');
  assert.equal(localName('http://schema.org/Product/'), 'Product');
});
