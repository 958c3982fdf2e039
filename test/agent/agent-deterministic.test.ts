// The agent without an LLM, end to end on PGlite and, with TEST_DATABASE_URL, Postgres: pages
// scraped first are in the own index, and a lookup question is answered from it (the best passage,
// with a warning that a deterministic agent answered); a schema is filled from the pages'
// structured data; strictConstrainToURLs keeps it to the given pages; maxCredits stops it; a
// prompt the index has nothing for fails with AGENT_NOTHING_FOUND.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type FixtureSite, productData } from '../fixtures/site/index.ts';
import type { Api } from '../helpers/api.ts';
import { type TestService, startSiteAndService, stopSiteAndService, storeKinds } from '../helpers/service.ts';
import { keyTerms } from '../../src/agent/deterministic.ts';
import { addZephyrPages, startAgent, waitForAgent, zephyr } from './helpers.ts';

test('keyTerms: the content words of a question, each once', () => {
  assert.deepEqual(keyTerms('Who founded the Zephyr observatory? Please find the founder of Zephyr.'), [
    'founded',
    'zephyr',
    'observatory',
    'founder',
  ]);
  assert.deepEqual(keyTerms('What is it?'), []);
});

for (const store of storeKinds) {
  describe(`agent without an LLM (${store})`, () => {
    let site: FixtureSite;
    let svc: TestService;
    let api: Api;
    let main: string;

    before(async () => {
      ({ site, svc, api, main } = await startSiteAndService({ store }));
      addZephyrPages(site);
      // The own index holds what the team scraped.
      for (const path of [zephyr.history, zephyr.people, zephyr.outside, '/products/widget', '/about']) {
        const res = await api.scrape({ url: `${main}${path}`, formats: ['markdown'] });
        assert.equal(res.status, 200, res.text);
      }
      await svc.settled();
    });
    after(() => stopSiteAndService(svc, site));

    test('a lookup question answered from the own index, with a warning saying a deterministic agent answered', async () => {
      const id = await startAgent(api, { prompt: 'Who founded the Zephyr observatory?' });
      const { final, seen } = await waitForAgent(api, id);
      assert.equal(seen[0], 'processing');
      assert.equal(final.status, 'completed', JSON.stringify(final));
      assert.match(final.data.answer, /founded by Ada Quill/);
      assert.ok(final.data.sources.includes(`${main}${zephyr.people}`), JSON.stringify(final.data));
      assert.match(
        final.warning,
        /^no LLM is configured; a deterministic agent answered: searched for "founded or zephyr or observatory"/,
      );
      assert.match(final.warning, /the answer is the best matching passages \(BM25\)/);
      assert.equal(final.model, undefined);
      assert.equal(final.actions[0].action, 'search');
      assert.ok(!final.sources.includes(`${main}${zephyr.outside}`), 'the unrelated page is not in the index hits');
      const search = final.actions[0];
      const scrapes = final.actions.filter((a: any) => a.action === 'scrape');
      assert.equal(final.creditsUsed, search.creditsUsed + scrapes.length);
      assert.equal(search.creditsUsed, 2);
    });

    test('a schema filled from the structured data of the pages the index found', async () => {
      const id = await startAgent(api, {
        prompt: 'Acme Widget Pro product details',
        schema: { type: 'object', properties: { name: { type: 'string' }, sku: { type: 'string' } } },
      });
      const { final } = await waitForAgent(api, id);
      assert.equal(final.status, 'completed', JSON.stringify(final));
      assert.deepEqual(final.data, { name: productData.name, sku: productData.sku });
      assert.match(final.warning, /a deterministic agent answered: .*the schema was filled from their structured data/);
    });

    test('strictConstrainToURLs: only the given page (and pages under it) is read', async () => {
      const history = `${main}${zephyr.history}`;
      const id = await startAgent(api, {
        prompt: 'Who founded the Zephyr observatory?',
        urls: [history],
        strictConstrainToURLs: true,
      });
      const { final } = await waitForAgent(api, id);
      assert.equal(final.status, 'completed', JSON.stringify(final));
      assert.deepEqual(final.sources, [history]);
      assert.doesNotMatch(final.data.answer, /Ada Quill/, 'the page that names the founder is outside the scope');
      assert.match(final.data.answer, /Zephyr observatory/);
    });

    test('maxCredits stops it: the given pages read, the search refused, a warning says so', async () => {
      const id = await startAgent(api, {
        prompt: 'Who founded the Zephyr observatory?',
        urls: [`${main}${zephyr.history}`, `${main}${zephyr.people}`],
        maxCredits: 2,
      });
      const { final } = await waitForAgent(api, id);
      assert.equal(final.status, 'completed', JSON.stringify(final));
      assert.equal(final.creditsUsed, 2);
      assert.deepEqual(
        final.actions.map((a: any) => [a.action, a.ok]),
        [
          ['scrape', true],
          ['scrape', true],
          ['search', false],
        ],
      );
      assert.match(final.actions[2].error, /maxCredits reached/);
      assert.match(final.warning, /stopped at maxCredits \(2\)/);
      assert.match(final.data.answer, /Ada Quill/);
    });

    test('nothing in the index for the prompt: failed with AGENT_NOTHING_FOUND', async () => {
      const id = await startAgent(api, { prompt: 'quantum chromodynamics lattice gauge theory' });
      const { final } = await waitForAgent(api, id);
      assert.equal(final.status, 'failed', JSON.stringify(final));
      assert.match(final.error, /^AGENT_NOTHING_FOUND: no page to answer from: the index has no page matching/);
    });
  });
}
