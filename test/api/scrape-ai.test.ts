// The AI formats of POST /v2/scrape end to end (README "AI formats"): json, summary, question /
// query → answer, highlights, product, menu and onlyCleanContent. Without an LLM (the default
// service) each answers from its deterministic extractor with a warning naming that path; with
// an LLM (a scripted OpenAI-compatible server started here) we assert on what is sent (the page,
// the schema, the grounding) and what is returned, and on failures: malformed JSON then repair,
// a 429 then success, a timeout (degrades to the deterministic result with a warning).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.ts';
import { type Api, type ApiResponse, apiClient } from '../helpers/api.ts';
import { type TestService, startTestService } from '../helpers/service.ts';

const fixtures = join(import.meta.dirname, '..', 'extractors', 'fixtures');

const productLd = {
  '@context': 'https://schema.org',
  '@type': 'Product',
  name: 'Oak Letter Rack',
  sku: 'RACK-7',
  description: 'A letter rack of solid oak with five slots.',
  brand: { '@type': 'Brand', name: 'Woodworks' },
  offers: { '@type': 'Offer', price: '49.99', priceCurrency: 'USD', availability: 'https://schema.org/InStock' },
};

const pages: Record<string, string> = {
  '/product': `<!doctype html><html lang="en"><head><title>Oak Letter Rack</title>
<script type="application/ld+json">${JSON.stringify(productLd)}</script></head><body>
<main><h1>Oak Letter Rack</h1><p>A letter rack of solid oak with five slots. Holds a whole sheaf of letters.</p>
<table><tr><th>Weight</th><td>1.2 kg</td></tr><tr><th>Material</th><td>Oak</td></tr></table></main></body></html>`,
  '/article': `<!doctype html><html lang="en"><head><title>Barn owls of the valley</title></head><body><main>
<h1>Barn owls of the valley</h1>
<p>Barn owls hunt at dusk over the meadows of the valley. They find voles by sound alone, even in complete darkness.</p>
<p>Share on Twitter</p>
<h2>Nesting</h2>
<p>The owls nest in old barns and hollow trees. A pair raises four to six owlets each spring.</p>
<ul><li>Eggs: four to six</li><li>Incubation: about thirty days</li></ul>
<p>Follow us</p>
<p>The valley's owl population has doubled since the nest boxes were installed in 2015.</p>
<p>All rights reserved</p>
</main></body></html>`,
  '/bistro': readFileSync(join(fixtures, 'bistro.html'), 'utf8'),
  '/group': readFileSync(join(fixtures, 'group.html'), 'utf8'),
  '/pancakes': readFileSync(join(fixtures, 'pancakes.html'), 'utf8'),
};

let site: Server;
let origin: string;
let unique = 0;
/** A URL no other test asked for (cache-free; the server ignores the query). */
const url = (path: string) => `${origin}${path}?u=${++unique}`;

before(async () => {
  site = createServer((req, res) => {
    const body = pages[new URL(req.url ?? '/', 'http://x').pathname];
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body ?? 'not found');
  });
  await new Promise<void>((r) => site.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((r) => site.close(() => r())));

function ok(res: ApiResponse): any {
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.success, true);
  return res.json.data;
}

describe('AI formats without an LLM (deterministic paths)', () => {
  let svc: TestService;
  let api: Api;
  before(async () => {
    svc = await startTestService();
    api = apiClient(svc);
  });
  after(() => svc.destroy());

  test('json with a schema on a JSON-LD product page fills the fields', async () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        price: { type: 'number' },
        sku: { type: 'string' },
        brand: { type: 'string' },
        weight: { type: 'string' },
        warranty: { type: 'string' },
      },
    };
    const data = ok(await api.scrape({ url: url('/product'), formats: [{ type: 'json', schema }] }));
    assert.equal(data.json.name, 'Oak Letter Rack');
    assert.equal(data.json.price, 49.99);
    assert.equal(data.json.sku, 'RACK-7');
    assert.equal(data.json.brand, 'Woodworks');
    assert.equal(data.json.weight, '1.2 kg');
    assert.equal(data.json.warranty, undefined);
    assert.equal(data.markdown, undefined, 'markdown only when asked');
    assert.match(
      data.warning,
      /json: no LLM is configured; filled from the page's structured data and labels \(deterministic\)/,
    );
    assert.match(data.warning, /missing \/warranty/);
    assert.equal(data.metadata.creditsUsed, 1);
  });

  test('json on a Recipe page (JSON-LD @graph) and a prompt-only json', async () => {
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        author: { type: 'string' },
        ingredients: { type: 'array', items: { type: 'string' } },
      },
    };
    const data = ok(await api.scrape({ url: url('/pancakes'), formats: [{ type: 'json', schema }] }));
    assert.deepEqual(data.json, {
      name: 'Fluffy Pancakes',
      author: 'Jane Baker',
      ingredients: ['200 g flour', '2 eggs', '300 ml milk'],
    });

    const p = ok(await api.scrape({ url: url('/pancakes'), formats: [{ type: 'json', prompt: 'the recipe' }] }));
    assert.equal(p.json['@type'], 'Recipe');
    assert.equal(p.json.name, 'Fluffy Pancakes');
    assert.match(p.warning, /json: no LLM is configured; the prompt needs one; the page's main structured data/);
  });

  test('product: the spec shape from a ProductGroup; an empty product on a page without product data', async () => {
    const data = ok(await api.scrape({ url: url('/group'), formats: ['product'] }));
    assert.equal(data.product.title, 'Basic Tee');
    assert.equal(data.product.brand, 'Cotton Co');
    assert.equal(data.product.variants.length, 2);
    const red = data.product.variants.find((v: any) => v.sku === 'TEE-R-M');
    assert.deepEqual(red.price, { amount: 15, currency: 'USD', formatted: '$15.00' });
    assert.equal(red.sale.originalPrice.amount, 20);
    assert.deepEqual(red.availability, { inStock: true, text: 'in stock' });
    assert.match(
      data.warning,
      /product: no LLM is configured; read from the page's schema.org \/ OpenGraph product data \(deterministic\)/,
    );

    const none = ok(await api.scrape({ url: url('/article'), formats: ['product'] }));
    assert.deepEqual(none.product.variants, []);
    assert.match(none.warning, /product: no LLM is configured; the page has no schema.org or OpenGraph product data/);
  });

  test('menu: sections, prices, dietary and merchant from microdata; isMenu false elsewhere', async () => {
    const data = ok(await api.scrape({ url: url('/bistro'), formats: ['menu', 'markdown'] }));
    const menu = data.menu;
    assert.equal(menu.isMenu, true);
    assert.deepEqual(menu.merchant, { name: 'Bistro Verde', type: 'Restaurant' });
    assert.equal(menu.currency, 'EUR');
    assert.ok(menu.confidence >= 0.9);
    const soup = menu.sections.flatMap((s: any) => s.items).find((i: any) => i.name === 'Onion Soup');
    assert.equal(soup.price.amount, 9.5);
    assert.deepEqual(soup.dietary, ['vegetarian']);
    assert.equal(typeof data.markdown, 'string');
    assert.match(data.warning, /menu: no LLM is configured; read from the page's schema.org Menu data/);

    const none = ok(await api.scrape({ url: url('/product'), formats: ['menu'] }));
    assert.deepEqual(none.menu, { isMenu: false, sections: [], confidence: 0, sourceUrl: none.metadata.url });
    assert.match(
      none.warning,
      /menu: no LLM is configured; the page has no schema.org Menu data \(deterministic\): isMenu is false/,
    );
  });

  test('question and the deprecated query answer from BM25; highlights', async () => {
    const data = ok(
      await api.scrape({
        url: url('/article'),
        formats: [
          { type: 'question', question: 'How many owlets does a pair raise?' },
          { type: 'highlights', query: 'nest boxes population' },
        ],
      }),
    );
    assert.match(data.answer, /A pair raises four to six owlets/);
    assert.match(data.highlights, /nest boxes were installed in 2015/);
    assert.match(
      data.warning,
      /answer: no LLM is configured; the passage of the page that best matches the question was returned \(BM25, extractive\)/,
    );
    assert.match(
      data.warning,
      /highlights: no LLM is configured; the passages that best match the query were returned \(BM25, extractive\)/,
    );

    const q = ok(
      await api.scrape({ url: url('/article'), formats: [{ type: 'query', prompt: 'How do barn owls find voles?' }] }),
    );
    assert.match(q.answer, /by sound alone/);
  });

  test('onlyCleanContent removes boilerplate and keeps headings and lists; summary stays extractive', async () => {
    const plain = ok(await api.scrape({ url: url('/article'), formats: ['markdown'] }));
    assert.match(plain.markdown, /Share on Twitter/);
    const data = ok(
      await api.scrape({ url: url('/article'), formats: ['markdown', 'summary'], onlyCleanContent: true }),
    );
    for (const gone of ['Share on Twitter', 'Follow us', 'All rights reserved'])
      assert.ok(!data.markdown.includes(gone), data.markdown);
    assert.match(data.markdown, /## Nesting/);
    assert.match(data.markdown, /Eggs: four to six/);
    assert.match(
      data.warning,
      /onlyCleanContent: no LLM is configured; 3 boilerplate block\(s\) removed deterministically/,
    );
    assert.match(data.warning, /summary: no LLM is configured; an extractive summary/);
    assert.ok(!data.summary.includes('Share on'), data.summary);
  });

  test('400s: json without options, an unusable schema, onlyCleanContent under zero data retention', async () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ formats: ['json'] }, 'body.formats.0', /needs \{type: "json", schema/],
      [{ formats: [{ type: 'json' }] }, 'body.formats.0', /"json"/],
      [
        { formats: ['markdown', { type: 'json', schema: { type: 'nonsense' } }] },
        'body.formats.1.schema',
        /JSON Schema/,
      ],
      [{ onlyCleanContent: true, zeroDataRetention: true }, 'body.onlyCleanContent', /zeroDataRetention/],
      [{ formats: ['changeTracking'] }, 'body.formats', /changeTracking requires markdown/],
    ];
    for (const [body, path, message] of cases) {
      const res = await api.scrape({ url: url('/article'), ...body });
      assert.equal(res.status, 400, res.text);
      assert.ok(
        res.json.details.some((d: any) => d.path === path && message.test(d.message)),
        `${path}: ${res.text}`,
      );
    }
  });
});

describe('AI formats with an LLM (scripted OpenAI-compatible server)', () => {
  let svc: TestService;
  let llm: FakeLlm;
  let api: Api;
  const userText = (i: number) => llm.requests[i].body.messages.map((m: any) => m.content).join('\n');

  before(async () => {
    llm = await startFakeLlm();
    svc = await startTestService({
      env: { OPENAI_BASE_URL: llm.baseUrl, MODEL_NAME: 'fake-model', LLM_TIMEOUT_MS: '1000', LLM_MAX_RETRIES: '1' },
    });
    api = apiClient(svc);
  });
  after(async () => {
    await svc.destroy();
    await llm.close();
  });

  test('json: the request carries the schema, the page and the deterministic grounding; data.json is the reply; tokens in the ledger', async () => {
    const schema = {
      type: 'object',
      properties: { name: { type: 'string' }, price: { type: 'number' }, slots: { type: 'integer' } },
      required: ['name'],
    };
    const reply = { name: 'Oak Letter Rack', price: 49.99, slots: 5 };
    llm.requests.length = 0;
    llm.script({ json: reply, usage: { prompt_tokens: 120, completion_tokens: 30 } });
    const res = await api.scrape({
      url: url('/product'),
      formats: [{ type: 'json', schema, prompt: 'How many slots?' }],
    });
    const data = ok(res);
    assert.deepEqual(data.json, reply);
    assert.equal(data.warning, undefined);
    assert.equal(llm.requests.length, 1);
    const body = llm.requests[0].body;
    assert.equal(body.model, 'fake-model');
    assert.equal(body.response_format.type, 'json_schema');
    assert.deepEqual(body.response_format.json_schema.schema, schema);
    const text = userText(0);
    assert.match(text, /<page>[\s\S]*holds a whole sheaf of letters[\s\S]*<\/page>/i);
    assert.match(text, /Task: How many slots\?/);
    assert.match(text, /Values already read[^\n]*\n\{"name":"Oak Letter Rack","price":49.99\}/);
    assert.equal(data.metadata.creditsUsed, 1);

    await svc.settled();
    const { rows } = await svc.db.query<{ tokens: number }>('SELECT tokens FROM token_usage WHERE job_id = $1', [
      data.metadata.scrapeId,
    ]);
    assert.deepEqual(
      rows.map((r) => Number(r.tokens)),
      [150],
    );
  });

  test('json: a malformed reply gets one repair request', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
    llm.requests.length = 0;
    llm.script({ content: '{"name": "Oak Letter Rack",' }, { json: { name: 'Oak Letter Rack' } });
    const data = ok(await api.scrape({ url: url('/product'), formats: [{ type: 'json', schema }] }));
    assert.deepEqual(data.json, { name: 'Oak Letter Rack' });
    assert.equal(llm.requests.length, 2);
    assert.match(userText(1), /not usable[\s\S]*not valid JSON/);
    await svc.settled();
    const { rows } = await svc.db.query('SELECT 1 FROM token_usage WHERE job_id = $1', [data.metadata.scrapeId]);
    assert.equal(rows.length, 2, 'the repair request is in the ledger too');
  });

  test('a 429 is retried, then the answer is used', async () => {
    llm.requests.length = 0;
    llm.script({ status: 429, headers: { 'retry-after-ms': '50' } }, { content: 'They nest in old barns.' });
    const data = ok(
      await api.scrape({
        url: url('/article'),
        formats: [{ type: 'question', question: 'How many owlets does a pair raise?' }],
      }),
    );
    assert.equal(data.answer, 'They nest in old barns.');
    assert.equal(llm.requests.length, 2);
    assert.match(userText(1), /Question: How many owlets does a pair raise\?/);
    assert.match(userText(1), /match the question best[^\n]*\n- The owls nest in old barns and hollow trees/);
  });

  test('a timeout degrades to the deterministic result with a warning naming LLM_TIMEOUT', async () => {
    const schema = { type: 'object', properties: { name: { type: 'string' }, sku: { type: 'string' } } };
    llm.requests.length = 0;
    llm.script({ hang: true });
    const data = ok(await api.scrape({ url: url('/product'), formats: [{ type: 'json', schema }] }));
    assert.deepEqual(data.json, { name: 'Oak Letter Rack', sku: 'RACK-7' });
    assert.match(
      data.warning,
      /json: the LLM failed \(LLM_TIMEOUT: [^)]*\); filled from the page's structured data and labels \(deterministic\)/,
    );
    assert.equal(llm.requests.length, 1, 'timeouts are not retried');
  });

  test('onlyCleanContent over the LLM output limit: skipped with a warning, the original markdown kept', async () => {
    const small = await startTestService({
      env: { OPENAI_BASE_URL: llm.baseUrl, MODEL_NAME: 'fake-model', LLM_MAX_OUTPUT_TOKENS: '16' },
    });
    try {
      llm.requests.length = 0;
      const res = await apiClient(small).scrape({ url: url('/article'), onlyCleanContent: true });
      const data = ok(res);
      const plain = ok(await apiClient(small).scrape({ url: url('/article') }));
      assert.equal(data.markdown, plain.markdown, 'the original markdown, not a cleaned one');
      assert.match(
        data.warning,
        /onlyCleanContent: the markdown \(\d+ characters\) exceeds the LLM's output limit \(16 tokens\); the clean-up was skipped and the original markdown kept/,
      );
      assert.equal(llm.requests.length, 0);
    } finally {
      await small.destroy();
    }
  });

  test('summary, answer (directQuote), highlights and onlyCleanContent through the LLM', async () => {
    llm.requests.length = 0;
    const cleaned = '# Barn owls of the valley\n\nBarn owls hunt at dusk.';
    llm.script(
      { content: cleaned },
      { content: 'Barn owls hunt at dusk.' },
      { content: '"They find voles by sound alone"' },
      { json: { highlights: ['A pair raises four to six owlets each spring.'] } },
    );
    const data = ok(
      await api.scrape({
        url: url('/article'),
        onlyCleanContent: true,
        formats: [
          'markdown',
          'summary',
          { type: 'query', prompt: 'How do owls find voles?', mode: 'directQuote' },
          { type: 'highlights', query: 'owlets' },
        ],
      }),
    );
    assert.equal(data.markdown, cleaned);
    assert.equal(data.summary, 'Barn owls hunt at dusk.');
    assert.equal(data.answer, '"They find voles by sound alone"');
    assert.equal(data.highlights, 'A pair raises four to six owlets each spring.');
    assert.equal(data.warning, undefined);
    assert.equal(llm.requests.length, 4);
    // The clean-up ran first, on the deterministically cleaned markdown; the others read its output.
    assert.match(userText(0), /leftover navigation/);
    assert.ok(!userText(0).includes('Share on Twitter'));
    const texts = [1, 2, 3].map(userText);
    assert.ok(texts.every((t) => t.includes('Barn owls hunt at dusk.') && !t.includes('Nesting')));
    assert.ok(texts.some((t) => /verbatim quote/.test(t)));
    assert.ok(texts.some((t) => /Summarise this page/.test(t)));
    assert.ok(llm.requests.some((r) => r.body.response_format?.json_schema?.schema?.properties?.highlights));
  });

  test('product and menu: confident structured data needs no LLM; otherwise the LLM fills the spec shape', async () => {
    llm.requests.length = 0;
    const d = ok(await api.scrape({ url: url('/bistro'), formats: ['menu'] }));
    assert.equal(d.menu.isMenu, true);
    assert.match(
      d.warning,
      /menu: read from the page's schema.org Menu data \(deterministic\); the LLM was not needed/,
    );
    assert.equal(llm.requests.length, 0);

    const product = {
      title: 'Barn owl nest box',
      variants: [{ price: { amount: 30, currency: 'USD', formatted: '$30.00' }, sku: null }],
      brand: null,
    };
    llm.script({ json: product });
    const p = ok(await api.scrape({ url: url('/article'), formats: ['product'] }));
    assert.deepEqual(p.product, {
      title: 'Barn owl nest box',
      variants: [{ price: { amount: 30, currency: 'USD', formatted: '$30.00' } }],
      url: p.metadata.url,
    });
    assert.equal(llm.requests.length, 1);
    assert.equal(llm.requests[0].body.response_format.json_schema.schema.required[0], 'variants');
  });

  test('an LLM error other than a timeout also degrades (LLM_ERROR after the retries)', async () => {
    llm.requests.length = 0;
    llm.script({ status: 500 }, { status: 500 });
    const data = ok(await api.scrape({ url: url('/article'), formats: ['summary'] }));
    assert.ok(data.summary.length > 20);
    assert.match(
      data.warning,
      /summary: the LLM failed \(LLM_ERROR: [^)]*\); an extractive summary of the page was returned/,
    );
  });
});
