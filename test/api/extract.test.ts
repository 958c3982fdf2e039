// Extract end to end: the real service (embedded workers) against the fixture site, on PGlite and,
// with TEST_DATABASE_URL, on Postgres. Without an LLM: the schema filled deterministically from
// two pages (merged), processing → completed with a warning, credits per page, a "/*" glob
// expanded with the map (pages under the path only), 400s (enableWebSearch, no prompt/schema,
// invalid URLs without ignoreInvalidURLs), invalidURLs, team scoping, the activity listing. With
// the scripted LLM: one request carrying the schema and every page, data = the reply, tokens in
// the ledger under the extract's job and in /v1/team/token-usage/historical; an LLM failure
// degrades to the deterministic fill with a warning.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EXTRACT_GLOB_MAX_PAGES, EXTRACT_MAX_PAGES } from '../../src/contract/extract.ts';
import { createApiKey, ensureTeam } from '../../src/store/teams.ts';
import { type FixtureSite, articles, productData } from '../fixtures/site/index.ts';
import { type FakeLlm, startFakeLlm } from '../helpers/fake-llm.ts';
import { type Api, apiClient } from '../helpers/api.ts';
import { type TestService, startSiteAndService, stopSiteAndService, storeKinds } from '../helpers/service.ts';
import { selectPages } from '../../src/extract/select-pages.ts';

const schema = {
  type: 'object',
  properties: { name: { type: 'string' }, sku: { type: 'string' }, author: { type: 'string' } },
};

test('selectPages: exact URLs first, at most 50 pages per glob and 100 in all, each page once', () => {
  const glob = (p: string, n: number) => Array.from({ length: n }, (_, i) => `https://site.test/${p}/${i + 1}`);
  const exact = ['https://site.test/a', 'https://site.test/b', 'https://site.test/a#again'];
  const one = selectPages(exact, [glob('g', 80)]);
  assert.deepEqual(one.slice(0, 2), ['https://site.test/a', 'https://site.test/b']);
  assert.equal(one.length, 2 + EXTRACT_GLOB_MAX_PAGES);
  assert.equal(one.at(-1), `https://site.test/g/${EXTRACT_GLOB_MAX_PAGES}`);
  const many = selectPages(exact, [glob('g', 80), glob('h', 80), glob('i', 80)]);
  assert.equal(many.length, EXTRACT_MAX_PAGES);
  assert.equal(new Set(many).size, many.length);
  // A page found by two globs counts once, and only new pages count towards a glob's cap.
  const overlap = selectPages([], [glob('g', 10), [...glob('g', 10), ...glob('k', 60)]]);
  assert.equal(overlap.length, 10 + EXTRACT_GLOB_MAX_PAGES);
});

for (const store of storeKinds) {
  describe(`extract without an LLM (${store})`, () => {
    let site: FixtureSite;
    let svc: TestService;
    let api: Api;
    let main: string;
    let firstId: string;

    before(async () => ({ site, svc, api, main } = await startSiteAndService({ store })));
    after(() => stopSiteAndService(svc, site));

    test('the schema filled from two pages, merged; processing then completed with a warning; credits per page', async () => {
      const urls = [`${main}/products/widget`, `${main}/articles/1`];
      const { id, invalidURLs } = await api.startExtract({
        urls,
        schema,
        prompt: 'The product and the article',
        showSources: true,
      });
      assert.deepEqual(invalidURLs, [], 'ignoreInvalidURLs defaults to true: an empty list');
      firstId = id;
      const { final, seen } = await api.waitForExtract(id);
      assert.equal(seen[0], 'processing');
      assert.equal(final.status, 'completed', JSON.stringify(final));
      assert.equal(final.data.name, productData.name);
      assert.equal(final.data.sku, productData.sku);
      assert.equal(final.data.author, articles[0].author, JSON.stringify(final.data));
      assert.match(
        final.warning,
        /no LLM is configured; the schema was filled from the pages' structured data and labels \(deterministic\)/,
      );
      assert.match(final.warning, /the prompt was not used/);
      assert.deepEqual(final.sources, urls);
      assert.equal(final.creditsUsed, 2);
      assert.equal(final.tokensUsed, 0);
      assert.ok(Date.parse(final.expiresAt) > Date.now() + 23 * 3600_000);
      const { rows } = await svc.db.query<{ credits: number; status: string; endpoint: string }>(
        'SELECT credits, status, endpoint FROM jobs WHERE id = $1',
        [id],
      );
      assert.deepEqual(rows[0], { credits: 2, status: 'completed', endpoint: 'extract' });
      const activity = await api.activity('?endpoint=extract');
      assert.equal(activity.status, 200, activity.text);
      assert.ok(
        activity.json.data.some((j: { id: string; endpoint: string }) => j.id === id && j.endpoint === 'extract'),
        activity.text,
      );
    });

    test('without showSources there are no sources; a prompt alone merges the main structured data', async () => {
      const { id } = await api.startExtract({ urls: [`${main}/products/widget`], prompt: 'What is sold here?' });
      const { final } = await api.waitForExtract(id);
      assert.equal(final.status, 'completed');
      assert.equal(final.sources, undefined);
      assert.equal(final.data.name, productData.name);
      assert.match(final.warning, /no LLM is configured; the prompt needs one/);
    });

    test('a "/*" glob reads the pages under its path only (found with the map), at most the cap', async () => {
      const before = site.requests.length;
      const { id } = await api.startExtract({
        urls: [`${main}/articles/*`],
        schema: { type: 'object', properties: { headline: { type: 'string' } } },
        showSources: true,
      });
      const { final } = await api.waitForExtract(id);
      assert.equal(final.status, 'completed', JSON.stringify(final));
      assert.ok(
        final.sources.length >= 1 && final.sources.length <= EXTRACT_GLOB_MAX_PAGES,
        JSON.stringify(final.sources),
      );
      assert.ok(
        final.sources.every((u: string) => new URL(u).pathname.startsWith('/articles/')),
        JSON.stringify(final.sources),
      );
      assert.deepEqual(
        [...final.sources].sort(),
        [1, 2, 3].map((n) => `${main}/articles/${n}`),
      );
      assert.equal(final.creditsUsed, final.sources.length);
      assert.ok(articles.some((a) => a.title === final.data.headline));
      assert.ok(site.requests.length > before);
    });

    test("a glob over the whole site: its map's pages, each once, after the exact URLs", async () => {
      const { id } = await api.startExtract({
        urls: [`${main}/*`, `${main}/about`],
        prompt: 'titles',
        showSources: true,
        scrapeOptions: { timeout: 10000 },
      });
      const { final } = await api.waitForExtract(id, 120_000);
      assert.equal(final.status, 'completed', JSON.stringify({ ...final, data: undefined }));
      assert.equal(final.sources[0], `${main}/about`, 'exact URLs first');
      assert.ok(final.sources.length <= EXTRACT_GLOB_MAX_PAGES + 1, String(final.sources.length));
      assert.equal(new Set(final.sources).size, final.sources.length, 'each page once');
    });

    test('a glob that matches nothing fails the extract', async () => {
      const { id } = await api.startExtract({
        urls: [`${main}/nothing-here/*`],
        prompt: 'anything',
        ignoreSitemap: true,
      });
      const { final } = await api.waitForExtract(id);
      assert.equal(final.status, 'failed');
      assert.match(final.error, /no page to read/);
    });

    test('every page failing fails the extract with the first error', async () => {
      const { id } = await api.startExtract({ urls: [`${main}/status/404`], prompt: 'anything' });
      const { final } = await api.waitForExtract(id);
      assert.equal(final.status, 'failed');
      assert.match(final.error, /no page could be scraped: .*answered 404/);
      assert.equal(final.data, undefined);
    });

    test('invalid URLs: listed in invalidURLs by default, a 400 naming the entry with ignoreInvalidURLs false', async () => {
      const { id, invalidURLs } = await api.startExtract({ urls: ['ftp://nope', `${main}/products/widget`], schema });
      assert.deepEqual(invalidURLs, ['ftp://nope']);
      assert.equal((await api.waitForExtract(id)).final.status, 'completed');
      const res = await api.extractRaw({ urls: [`${main}/about`, 'ftp://nope'], schema, ignoreInvalidURLs: false });
      assert.equal(res.status, 400, res.text);
      assert.ok(
        res.json.details.some((d: any) => d.path === 'body.urls.1'),
        res.text,
      );
      const none = await api.extractRaw({ urls: ['ftp://nope'], schema });
      assert.equal(none.status, 400);
      assert.ok(
        none.json.details.some((d: any) => d.path === 'body.urls'),
        none.text,
      );
    });

    test('400s name the field: enableWebSearch, no prompt and no schema, an unusable schema, zeroDataRetention', async () => {
      const cases: [Record<string, unknown>, string, RegExp][] = [
        [{ urls: [`${main}/about`], prompt: 'x', enableWebSearch: true }, 'body.enableWebSearch', /POST \/v2\/search/],
        [{ urls: [`${main}/about`] }, 'body.prompt', /prompt, a schema or both/],
        [{ urls: [`${main}/about`], schema: { type: 'nonsense' } }, 'body.schema', /JSON Schema/],
        [
          { urls: [`${main}/about`], prompt: 'x', scrapeOptions: { zeroDataRetention: true } },
          'body.scrapeOptions.zeroDataRetention',
          /stored/,
        ],
        [{ urls: [], prompt: 'x' }, 'body.urls', /./],
        [{ urls: [`${main}/about`], prompt: 'x', agent: {} }, 'body.agent', /./],
      ];
      for (const [body, path, message] of cases) {
        const res = await api.extractRaw(body);
        assert.equal(res.status, 400, `${path}: ${res.text}`);
        assert.ok(
          res.json.details.some((d: any) => d.path === path && message.test(d.message)),
          `${path}: ${res.text}`,
        );
      }
    });

    test("another team's extract is 404 EXTRACT_NOT_FOUND; an unknown id too", async () => {
      const other = await ensureTeam(svc.db, `extract-other-${store}`);
      const otherApi = apiClient(svc, (await createApiKey(svc.db, other.id)).key);
      const res = await otherApi('GET', `/v2/extract/${firstId}`);
      assert.equal(res.status, 404, res.text);
      assert.equal(res.json.code, 'EXTRACT_NOT_FOUND');
      const unknown = await api('GET', '/v2/extract/00000000-0000-4000-8000-000000000000');
      assert.equal(unknown.status, 404);
      assert.equal(unknown.json.code, 'EXTRACT_NOT_FOUND');
      assert.equal((await api('GET', `/v2/extract/${firstId}`)).json.status, 'completed');
    });
  });
}

describe('extract with an LLM (scripted OpenAI-compatible server)', () => {
  let site: FixtureSite;
  let svc: TestService;
  let llm: FakeLlm;
  let api: Api;
  let main: string;
  let keyName: string;

  before(async () => {
    llm = await startFakeLlm();
    ({ site, svc, main } = await startSiteAndService({
      env: { OPENAI_BASE_URL: llm.baseUrl, MODEL_NAME: 'fake-model', LLM_TIMEOUT_MS: '1000', LLM_MAX_RETRIES: '0' },
    }));
    // A team of its own, so the token totals are exactly this file's.
    const team = await ensureTeam(svc.db, 'extract-llm');
    const key = await createApiKey(svc.db, team.id, { name: 'extract-key' });
    keyName = 'extract-key';
    api = apiClient(svc, key.key);
  });
  after(async () => {
    await stopSiteAndService(svc, site);
    await llm?.close();
  });

  test('one request carries the schema, every page and the grounding; data is the reply; tokens in the ledger and the historical usage', async () => {
    const reply = { name: 'Widget (LLM)', sku: 'LLM-1', author: 'From the model' };
    llm.requests.length = 0;
    llm.script({ json: reply, usage: { prompt_tokens: 300, completion_tokens: 40 } });
    const urls = [`${main}/products/widget`, `${main}/articles/1`];
    const { id } = await api.startExtract({ urls, schema, prompt: 'Name the product and the article author' });
    const { final } = await api.waitForExtract(id);
    assert.equal(final.status, 'completed', JSON.stringify(final));
    assert.deepEqual(final.data, reply);
    assert.equal(final.warning, undefined);
    assert.equal(final.tokensUsed, 340);
    assert.equal(final.creditsUsed, 2);
    assert.equal(llm.requests.length, 1, 'one LLM request for all the pages');
    const body = llm.requests[0].body;
    assert.equal(body.response_format.type, 'json_schema');
    assert.deepEqual(body.response_format.json_schema.schema, schema);
    const text = body.messages.map((m: any) => m.content).join('\n');
    for (const u of urls) assert.ok(text.includes(`<source>${u}</source>`), u);
    assert.ok(text.includes(productData.description), 'the product page text');
    assert.ok(text.includes(articles[0].title), 'the article text');
    assert.match(text, /Values already read[^\n]*\n\{[^\n]*"name":"Acme Widget Pro"/);
    assert.match(text, /Task: Name the product and the article author/);

    const { rows } = await svc.db.query<{ tokens: number }>('SELECT tokens FROM token_usage WHERE job_id = $1', [id]);
    assert.deepEqual(
      rows.map((r) => Number(r.tokens)),
      [340],
    );
    const month = `${new Date().toISOString().slice(0, 7)}`;
    const hist = await api('GET', '/v1/team/token-usage/historical');
    assert.equal(hist.status, 200, hist.text);
    const period = hist.json.periods.find((p: any) => p.startDate.startsWith(month));
    assert.equal(period.totalTokens, 340);
    const byKey = await api('GET', '/v1/team/token-usage/historical?byApiKey=true');
    const keyed = byKey.json.periods.find((p: any) => p.startDate.startsWith(month));
    assert.equal(keyed.totalTokens, 340);
    assert.equal(keyed.apiKeyName, keyName);
  });

  test('an LLM failure degrades to the deterministic fill with a warning naming the code; the extract completes', async () => {
    llm.requests.length = 0;
    llm.script({ status: 500, message: 'model exploded' });
    const { id } = await api.startExtract({ urls: [`${main}/products/widget`], schema });
    const { final } = await api.waitForExtract(id);
    assert.equal(final.status, 'completed', JSON.stringify(final));
    assert.equal(final.data.name, productData.name);
    assert.equal(final.data.sku, productData.sku);
    assert.match(
      final.warning,
      /the LLM failed \(LLM_ERROR: [^)]*\); the schema was filled from the pages' structured data/,
    );
    assert.equal(llm.requests.length, 1);
  });
});
