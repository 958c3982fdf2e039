// POST /v2/search with SearXNG (SEARXNG_URL) against a scripted stand-in speaking its JSON format:
// web, news and images mapped; the request's tbs, country/location, domains, categories and limit
// sent or applied; results scraped with scrapeOptions; a backend that is down, refuses JSON or is
// too slow gives a clear error (or a warning when another source answered), and the service goes on.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Firecrawl from '@mendable/firecrawl-js';
import { type FixtureSite, docsText } from '../fixtures/site/index.ts';
import { type Api, apiClient } from '../helpers/api.ts';
import { type TestService, startSiteAndService, startTestService, stopSiteAndService } from '../helpers/service.ts';
import { type SearxngStub, type StubResult, startSearxngStub } from './searxng-stub.ts';
import '../helpers/loopback-dns.ts';

/** Ten general results a page: site1.example … with every third on github.com. */
function general(pageno: number, q: string): StubResult[] {
  return Array.from({ length: 10 }, (_, i) => {
    const n = (pageno - 1) * 10 + i + 1;
    const host = n % 3 === 0 ? 'github.com' : `site${n}.example`;
    return {
      url: `https://${host}/${encodeURIComponent(q)}/${n}`,
      title: `Result ${n}`,
      content: `About ${q}, number ${n}`,
    };
  });
}

describe('search: SearXNG backend', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: Api;
  let main: string;
  let stub: SearxngStub;

  before(async () => {
    stub = await startSearxngStub();
    ({ site, svc, api, main } = await startSiteAndService({ env: { SEARXNG_URL: stub.url } }));
  });
  after(async () => {
    await stopSiteAndService(svc, site);
    await stub.close();
  });

  const reset = () => {
    stub.requests.length = 0;
    stub.status = 200;
    stub.delayMs = 0;
    stub.broken = false;
    stub.results = (category, pageno, q) => (category === 'general' ? general(pageno, q) : []);
  };

  test('web results mapped, with time range and language passed on', async () => {
    reset();
    const res = await api.search({ query: 'gleaning', limit: 3, tbs: 'qdr:w', country: 'de' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.data.web, [
      {
        url: 'https://site1.example/gleaning/1',
        title: 'Result 1',
        description: 'About gleaning, number 1',
        position: 1,
      },
      {
        url: 'https://site2.example/gleaning/2',
        title: 'Result 2',
        description: 'About gleaning, number 2',
        position: 2,
      },
      { url: 'https://github.com/gleaning/3', title: 'Result 3', description: 'About gleaning, number 3', position: 3 },
    ]);
    assert.equal(res.json.creditsUsed, 2);
    assert.equal(stub.requests.length, 1);
    const sent = Object.fromEntries(stub.requests[0]);
    assert.deepEqual(sent, {
      q: 'gleaning',
      format: 'json',
      categories: 'general',
      pageno: '1',
      time_range: 'week',
      language: 'de-DE',
    });
    // location names a country when country is absent.
    reset();
    await api.search({ query: 'x', location: 'Lyon,France' });
    assert.equal(stub.requests[0].get('language'), 'fr-FR');
  });

  test('news and images mapped to their own arrays', async () => {
    reset();
    stub.results = (category) =>
      category === 'news'
        ? [
            {
              url: 'https://news.example/a',
              title: 'Gleaners win',
              content: 'A short snippet',
              publishedDate: '2026-11-20T10:00:00',
              thumbnail: 'https://news.example/a.jpg',
            },
          ]
        : category === 'images'
          ? [
              {
                url: 'https://photos.example/page',
                title: 'A field',
                content: '',
                img_src: 'https://photos.example/field.jpg',
                resolution: '1920 x 1080',
              },
            ]
          : [];
    const res = await api.search({ query: 'gleaners', sources: [{ type: 'news' }, 'images'] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.data, {
      news: [
        {
          url: 'https://news.example/a',
          title: 'Gleaners win',
          snippet: 'A short snippet',
          date: '2026-11-20T10:00:00',
          imageUrl: 'https://news.example/a.jpg',
          position: 1,
        },
      ],
      images: [
        {
          url: 'https://photos.example/page',
          title: 'A field',
          description: '',
          imageUrl: 'https://photos.example/field.jpg',
          imageWidth: 1920,
          imageHeight: 1080,
          position: 1,
        },
      ],
    });
    assert.deepEqual([...new Set(stub.requests.map((r) => r.get('categories')))].sort(), ['images', 'news']);
  });

  test('domain filters, categories and limit over several result pages', async () => {
    reset();
    const limited = await api.search({ query: 'q', limit: 15 });
    assert.equal(limited.json.data.web.length, 15);
    assert.deepEqual(
      stub.requests.map((r) => r.get('pageno')),
      ['1', '2'],
    );
    reset();
    const gh = await api.search({ query: 'q', includeDomains: ['github.com'], limit: 4 });
    assert.deepEqual(
      gh.json.data.web.map((h: { url: string; position: number }) => [new URL(h.url).host, h.position]),
      [
        ['github.com', 1],
        ['github.com', 2],
        ['github.com', 3],
        ['github.com', 4],
      ],
    );
    assert.equal(stub.requests[0].get('q'), 'q site:github.com');
    reset();
    const noGh = await api.search({ query: 'q', excludeDomains: ['github.com'], limit: 10 });
    assert.equal(noGh.json.data.web.length, 10);
    assert.ok(noGh.json.data.web.every((h: { url: string }) => !h.url.includes('github.com')));
    reset();
    const cat = await api.search({ query: 'q', categories: ['github'], limit: 2 });
    assert.deepEqual(
      cat.json.data.web.map((h: { category: string }) => h.category),
      ['github', 'github'],
    );
  });

  test('scrapeOptions scrape the results through the pipeline', async () => {
    reset();
    stub.results = (category) =>
      category === 'general'
        ? [
            { url: `${main}/docs/api`, title: 'API', content: 'docs' },
            { url: 'mailto:nobody@example.com', title: 'odd', content: '' },
          ]
        : [];
    const res = await api.search({ query: 'api bearer', scrapeOptions: { formats: ['markdown'] } });
    assert.equal(res.status, 200, res.text);
    const [doc, odd] = res.json.data.web;
    assert.ok(doc.markdown.includes(docsText.api.intro));
    assert.equal(doc.title, 'API');
    // Highlights (the default): the scraped page's passage for the query.
    assert.equal(doc.description, docsText.api.intro);
    assert.equal(doc.metadata.sourceURL, `${main}/docs/api`);
    assert.equal(odd.url, 'mailto:nobody@example.com');
    assert.equal(odd.markdown, undefined);
    assert.equal(res.json.creditsUsed, 3);
    // Without highlights: the scraped page's meta description; unscraped, SearXNG's snippet.
    const plain = await api.search({ query: 'api', highlights: false, scrapeOptions: { formats: ['markdown'] } });
    assert.equal(plain.json.data.web[0].description, docsText.api.intro);
    const unscraped = await api.search({ query: 'api', highlights: false });
    assert.equal(unscraped.json.data.web[0].description, 'docs');
    const ignoring = await api.search({ query: 'api', ignoreInvalidURLs: true });
    assert.deepEqual(
      ignoring.json.data.web.map((h: { url: string }) => h.url),
      [`${main}/docs/api`],
    );
  });

  test('a failing backend: a clear error, the service goes on', async () => {
    reset();
    stub.status = 403;
    const refused = await api.search({ query: 'q' });
    assert.equal(refused.status, 502, refused.text);
    assert.equal(refused.json.code, 'SEARCH_BACKEND_ERROR');
    assert.match(refused.json.error, /json/i);
    reset();
    stub.broken = true;
    const broken = await api.search({ query: 'q' });
    assert.equal(broken.status, 502, broken.text);
    assert.match(broken.json.error, /not JSON/);
    reset();
    stub.delayMs = 2500;
    const slow = await api.search({ query: 'q', timeout: 1000 });
    assert.equal(slow.status, 408, slow.text);
    assert.equal(slow.json.code, 'SEARCH_TIMEOUT');
    reset();
    const fine = await api.search({ query: 'q', limit: 1 });
    assert.equal(fine.status, 200, fine.text);
    assert.equal(fine.json.data.web.length, 1);
  });

  test("the official JS SDK's search() reads web and news", async () => {
    reset();
    stub.results = (category, pageno, q) =>
      category === 'news' ? [{ url: 'https://news.example/b', title: 'News', content: 'n' }] : general(pageno, q);
    const fc = new Firecrawl({ apiKey: svc.key, apiUrl: svc.url });
    const out = await fc.search('sdk', { limit: 2, sources: ['web', 'news'] });
    assert.deepEqual(
      out.web?.map((h) => ('url' in h ? h.url : '')),
      ['https://site1.example/sdk/1', 'https://site2.example/sdk/2'],
    );
    assert.equal((out.news?.[0] as { url: string }).url, 'https://news.example/b');
  });
});

describe('search: SearXNG down, web from the own index', () => {
  let svc: TestService;
  let api: Api;

  before(async () => {
    // A port nobody listens on.
    const gone = await startSearxngStub();
    await gone.close();
    svc = await startTestService({ env: { SEARXNG_URL: gone.url, SEARCH_WEB_BACKEND: 'index' } });
    api = apiClient(svc);
  });
  after(() => svc.destroy());

  test('news fails with a warning naming it; web still answers', async () => {
    const res = await api.search({ query: 'anything', sources: ['web', 'news'] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json.data, { web: [], news: [] });
    assert.match(
      res.json.warning,
      /news results failed \(SearXNG\): SearXNG at http:\/\/127\.0\.0\.1:\d+ did not answer/,
    );
    const only = await api.search({ query: 'anything', sources: ['news'] });
    assert.equal(only.status, 502, only.text);
    assert.equal(only.json.code, 'SEARCH_BACKEND_ERROR');
  });
});
