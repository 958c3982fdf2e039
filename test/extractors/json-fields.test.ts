import assert from 'node:assert/strict';
import { test } from 'node:test';
import { productPage } from '../fixtures/site/pages.ts';
import { fillJsonSchema, words } from '../../src/extractors/json-fields.ts';
import { ctx, fixture, load } from './helpers.ts';

test('product schema from JSON-LD, spec table and text labels; never invents', () => {
  const { doc, sd } = load(productPage(ctx));
  const r = fillJsonSchema({
    schema: {
      type: 'object',
      properties: {
        title: { type: 'string' },
        price: { type: 'number' },
        currency: { type: 'string' },
        inStock: { type: 'boolean' },
        brand: { type: 'string' },
        rating: { type: 'number' },
        review_count: { type: 'integer' },
        weight: { type: 'string' },
        warranty: { type: ['string', 'null'] },
        color: { type: 'string', enum: ['red', 'green'] },
      },
      required: ['title'],
    },
    structured: sd,
    doc,
    markdown: 'SKU: WID-001 · Brand: Acme',
  });
  assert.deepEqual(r.data, {
    title: 'Acme Widget Pro',
    price: 49.99,
    currency: 'USD',
    inStock: true,
    brand: 'Acme',
    rating: 4.6,
    review_count: 128,
    weight: '1.2 kg',
    warranty: null,
  });
  assert.deepEqual(r.missing, ['/warranty', '/color']);
  assert.ok(r.filled.includes('/weight'));
});

test('recipe: arrays, author via @id, date format, nested object, ajv drops misfits', () => {
  const { doc, sd } = load(fixture('pancakes.html'));
  const r = fillJsonSchema({
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        author: { type: 'string' },
        publishedAt: { type: 'string', format: 'date' },
        ingredients: { type: 'array', items: { type: 'string' } },
        instructions: { type: 'array', items: { type: 'string' } },
        nutrition: { type: 'object', properties: { calories: { type: 'number' } } },
        servings: { type: 'string', maxLength: 3 },
      },
    },
    structured: sd,
    doc,
  });
  assert.deepEqual(r.data, {
    name: 'Fluffy Pancakes',
    author: 'Jane Baker',
    publishedAt: '2024-05-01',
    ingredients: ['200 g flour', '2 eggs', '300 ml milk'],
    instructions: ['Whisk everything.', 'Fry in a hot pan.'],
    nutrition: { calories: 250 },
  });
  assert.ok(r.missing.includes('/servings'));
  assert.ok(!r.filled.includes('/servings'));
});

test('arrays of objects from a table; label: value text; title from h1', () => {
  const html = `<h1>Price list</h1><table><tr><th>Plan</th><th>Price</th></tr><tr><td>Basic</td><td>$9</td></tr><tr><td>Pro</td><td>$1,299.00</td></tr></table>`;
  const { doc, sd } = load(html);
  const r = fillJsonSchema({
    schema: {
      type: 'object',
      properties: {
        title: { type: 'string' },
        plans: {
          type: 'array',
          items: { type: 'object', properties: { plan: { type: 'string' }, price: { type: 'number' } } },
        },
        support: { type: 'string' },
      },
    },
    structured: sd,
    doc,
    markdown: '# Price list\n\nSupport: email only\n',
  });
  assert.deepEqual(r.data, {
    title: 'Price list',
    plans: [
      { plan: 'Basic', price: 9 },
      { plan: 'Pro', price: 1299 },
    ],
    support: 'email only',
  });
  assert.deepEqual(r.missing, []);
});

test('words()', () => {
  assert.equal(words('publishedAt'), 'published at');
  assert.equal(words('review_count'), 'review count');
});
