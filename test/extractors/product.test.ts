import assert from 'node:assert/strict';
import { test } from 'node:test';
import { productPage } from '../fixtures/site/pages.ts';
import { extractProduct, parseAmount } from '../../src/extractors/product.ts';
import { extractStructuredData } from '../../src/extractors/structured-data.ts';
import { ctx, fixture, load } from './helpers.ts';

test('fixture /products/widget → the spec Product shape', () => {
  const { doc, sd } = load(productPage(ctx), 'http://shop.test/products/widget');
  assert.deepEqual(extractProduct(sd, { url: 'http://shop.test/products/widget', doc }), {
    title: 'Acme Widget Pro',
    url: 'http://shop.test/products/widget',
    brand: 'Acme',
    description: 'A sturdy widget for gathering, sorting and storing grain.',
    variants: [
      {
        availability: { inStock: true, text: 'in stock' },
        id: 'WID-001',
        sku: 'WID-001',
        title: 'Acme Widget Pro',
        price: { amount: 49.99, currency: 'USD', formatted: '$49.99' },
        images: [{ url: 'http://shop.test/images/widget.png', alt: 'Acme Widget Pro' }],
      },
    ],
  });
});

test('ProductGroup variants with values, sale price and availability', () => {
  const { doc, sd } = load(fixture('group.html'));
  const p = extractProduct(sd, { url: 'http://shop.test/tee', doc })!;
  assert.equal(p.title, 'Basic Tee');
  assert.equal(p.brand, 'Cotton Co');
  assert.equal(p.category, 'Clothing > Shirts');
  assert.equal(p.variants.length, 2);
  assert.deepEqual(p.variants[0].values, { color: 'Red', size: 'M' });
  assert.deepEqual(p.variants[0].sale, { originalPrice: { amount: 20, currency: 'USD', formatted: '$20.00' } });
  assert.deepEqual(p.variants[0].images, [{ url: 'https://shop.example/tee.jpg', alt: 'A plain tee' }]);
  assert.deepEqual(p.variants[1].availability, { inStock: false, text: 'sold out' });
  assert.equal(p.variants[1].sku, 'TEE-B-L');
});

test('RDFa product completed from OpenGraph product:* tags', () => {
  const { doc, sd } = load(fixture('rdfa-product.html'));
  const p = extractProduct(sd, { doc })!;
  assert.equal(p.brand, 'Woodworks');
  assert.equal(p.category, 'Furniture');
  assert.deepEqual(p.variants[0].price, { amount: 1299, currency: 'GBP', formatted: '£1,299.00' });
  assert.deepEqual(p.variants[0].availability, { inStock: false, text: 'pre-order' });
});

test('OpenGraph only; nothing → undefined', () => {
  const { sd } = load(`<head><meta property="og:type" content="og:product"><meta property="og:title" content="Lamp">
    <meta property="product:price:amount" content="12.5"><meta property="product:price:currency" content="EUR">
    <meta property="product:availability" content="out of stock"></head>`);
  assert.deepEqual(extractProduct(sd), {
    title: 'Lamp',
    variants: [
      {
        price: { amount: 12.5, currency: 'EUR', formatted: '€12.50' },
        availability: { inStock: false, text: 'out of stock' },
        title: 'Lamp',
      },
    ],
  });
  assert.equal(extractProduct(extractStructuredData(load('<p>hello</p>').doc)), undefined);
});

test('parseAmount', () => {
  assert.equal(parseAmount('$1,299.00'), 1299);
  assert.equal(parseAmount('1.299,50 €'), 1299.5);
  assert.equal(parseAmount('12,5'), 12.5);
  assert.equal(parseAmount('free'), undefined);
});
