// POST /v2/map end to end: the real service against the fixture site, for every option
// (sitemap include/skip/only, includeSubdomains, ignoreQueryParameters, limit, search, timeout),
// titles, robots.txt, the job and credit ledger, SSRF refusal and validation errors.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findTeamByName, setCreditQuota } from '../../src/store/teams.ts';
import {
  type FixtureSite,
  articles,
  blogPaths,
  blogPosts,
  disallowedPages,
  linkedPages,
  sitemapArticlePaths,
  sitemapOnlyPages,
  sitemapPagePaths,
} from '../fixtures/site/index.ts';
import { scriptedServer } from '../crawl/helpers.ts';
import { type Api, type MapBody, apiClient } from '../helpers/api.ts';
import { type TestService, startSiteAndService, startTestService, stopSiteAndService } from '../helpers/service.ts';
import '../helpers/loopback-dns.ts';
import { urlKey } from '../../src/net/url-key.ts';

type Link = { url: string; title?: string; description?: string };

let site: FixtureSite;
let svc: TestService;
let api: Api;
let main: string; // http://localhost:PORT
let blog: string; // http://blog.localhost:PORT

before(async () => {
  ({ site, svc, api, main } = await startSiteAndService());
  blog = site.hostOrigin('blog');
});
after(() => stopSiteAndService(svc, site));

async function map(body: MapBody): Promise<Link[]> {
  const res = await api.map(body);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.json.success, true);
  assert.ok(Array.isArray(res.json.links));
  return res.json.links as Link[];
}

const urls = (links: Link[]) => links.map((l) => l.url);
const m = (p: string) => `${main}${p}`;
const b = (p: string) => `${blog}${p}`;
const stripQuery = (p: string) => p.split('?')[0];
const assertUnique = (links: Link[]) => {
  const keys = links.map((l) => urlKey(l.url));
  assert.equal(new Set(keys).size, keys.length, `duplicates in ${urls(links).join(' ')}`);
};
const requestsSince = (n: number) => site.requests.slice(n);

describe('sources and scope', () => {
  test('default: the start page, its links, the sitemaps and a shallow crawl; subdomains included; each URL once', async () => {
    const before = site.requests.length;
    const links = await map({ url: `${main}/` });
    const got = new Set(urls(links));
    assert.equal(links[0].url, m('/'), 'the start page comes first');
    for (const p of new Set(linkedPages.map(stripQuery))) assert.ok(got.has(m(p)), `linked page ${p}`);
    for (const p of [...sitemapPagePaths, ...sitemapArticlePaths, ...sitemapOnlyPages])
      assert.ok(got.has(m(p)), `sitemap page ${p}`);
    for (const p of blogPaths) assert.ok(got.has(b(p)), `blog page ${p}`);
    // Disallowed pages are listed (they are public links) but never fetched.
    for (const p of disallowedPages) assert.ok(got.has(m(p)), `disallowed page ${p} listed`);
    assertUnique(links);
    for (const u of got) {
      const host = new URL(u).hostname;
      assert.ok(host === 'localhost' || host === 'blog.localhost', `off-site link ${u}`);
      assert.ok(!new URL(u).search, `query kept in ${u}`);
      assert.ok(!new URL(u).hash, `fragment kept in ${u}`);
    }
    const fetched = requestsSince(before);
    for (const p of disallowedPages)
      assert.ok(!fetched.some((r) => r.path === p), `${p} was fetched despite robots.txt`);
    // One robots.txt per origin, each sitemap file once, no page twice.
    assert.equal(fetched.filter((r) => r.path === '/robots.txt' && r.host === 'localhost').length <= 1, true);
    const pageFetches = fetched
      .filter((r) => !/^\/(robots\.txt|sitemap)/.test(r.path))
      .map((r) => `${r.host}${r.path}`);
    assert.equal(new Set(pageFetches).size, pageFetches.length, `pages fetched twice: ${pageFetches.join(' ')}`);
    assert.ok(pageFetches.length <= 51, 'the shallow crawl is bounded');
    assert.ok(
      fetched.some((r) => r.path === '/sitemap-articles.xml.gz'),
      'the gzipped sitemap was read',
    );
  });

  test('titles and descriptions come from the pages fetched', async () => {
    const links = await map({ url: `${main}/` });
    const byUrl = new Map(links.map((l) => [l.url, l]));
    const home = byUrl.get(m('/'))!;
    assert.equal(home.title, 'Gleaner Gazette — News for Web Gleaners');
    assert.equal(home.description, 'Stories, guides and tools for people who collect the web.');
    for (const a of articles) {
      const link = byUrl.get(m(`/articles/${a.n}`))!;
      assert.equal(link.title, `${a.title} | Gleaner Gazette`);
      assert.equal(link.description, a.description);
    }
    // Depth 2: start page → blog home → post.
    assert.equal(
      byUrl.get(b(`/posts/${blogPosts[0].slug}`))?.title,
      `${blogPosts[0].title} | Gleaner Engineering Blog`,
    );
    // A page only listed in the sitemap was never fetched: no title is made up.
    assert.equal(byUrl.get(m('/sitemap-only'))?.title, undefined);
    assert.equal(byUrl.get(m('/private/secret'))?.title, undefined);
  });

  test('sitemap "skip": no sitemap is read, sitemap-only pages are missing', async () => {
    const before = site.requests.length;
    const links = await map({ url: `${main}/`, sitemap: 'skip' });
    const got = new Set(urls(links));
    for (const p of sitemapOnlyPages) assert.ok(!got.has(m(p)), p);
    for (const p of ['/about', '/articles/1', '/docs/api']) assert.ok(got.has(m(p)), p);
    assert.ok(!requestsSince(before).some((r) => r.path.startsWith('/sitemap')), 'no sitemap file requested');
  });

  test('sitemap "only": exactly the sitemap URLs, no page fetched', async () => {
    const before = site.requests.length;
    const links = await map({ url: `${main}/`, sitemap: 'only' });
    assert.deepEqual(urls(links), [...sitemapPagePaths, ...sitemapArticlePaths].map(m));
    assert.ok(links.every((l) => l.title === undefined));
    const paths = requestsSince(before).map((r) => r.path);
    assert.ok(
      paths.every((p) => p === '/robots.txt' || p.startsWith('/sitemap')),
      paths.join(' '),
    );
  });

  test('includeSubdomains false keeps to the start host', async () => {
    const links = await map({ url: `${main}/`, includeSubdomains: false });
    assert.ok(links.length > 10);
    assert.ok(
      links.every((l) => new URL(l.url).hostname === 'localhost'),
      urls(links).join(' '),
    );
  });

  test('a subdomain start URL relates to its parent site', async () => {
    const links = await map({ url: `${blog}/`, sitemap: 'skip' });
    const got = new Set(urls(links));
    for (const p of blogPaths) assert.ok(got.has(b(p)), p);
    assert.ok(got.has(m('/')), 'the parent site is the same registrable domain');
    const own = await map({ url: `${blog}/`, sitemap: 'skip', includeSubdomains: false });
    assert.ok(own.every((l) => new URL(l.url).hostname === 'blog.localhost'));
  });

  test('127.0.0.1 and blog.localhost are different sites', async () => {
    const links = await map({ url: `${site.origin}/`, sitemap: 'skip' });
    assert.ok(links.length > 5);
    assert.ok(
      links.every((l) => new URL(l.url).hostname === '127.0.0.1'),
      urls(links).join(' '),
    );
  });

  test('ignoreQueryParameters false keeps query variants (parameters sorted)', async () => {
    const links = await map({ url: `${main}/`, ignoreQueryParameters: false, includeSubdomains: false });
    const got = new Set(urls(links));
    assert.ok(got.has(m('/products/widget?color=blue&size=m')));
    assert.ok(got.has(m('/products/widget')));
    const dropped = await map({ url: `${main}/`, includeSubdomains: false });
    assert.ok(urls(dropped).every((u) => !u.includes('?')));
  });

  test('limit cuts the list', async () => {
    const links = await map({ url: `${main}/`, limit: 3 });
    assert.equal(links.length, 3);
    assert.equal(links[0].url, m('/'));
    assert.equal((await map({ url: `${main}/`, limit: 1, sitemap: 'only' })).length, 1);
  });

  test('a start URL that redirects is listed by its target', async () => {
    const links = await map({ url: `${main}/redirect/301`, sitemap: 'skip', includeSubdomains: false });
    assert.equal(links[0].url, m('/articles/1'));
    assert.ok(!urls(links).includes(m('/redirect/301')));
  });
});

describe('search', () => {
  test('ranks matching links first, exact word matches before partial ones; the rest follow', async () => {
    const all = await map({ url: `${main}/`, includeSubdomains: false });
    const links = await map({ url: `${main}/`, includeSubdomains: false, search: 'widget' });
    assert.equal(links[0].url, m('/products/widget'));
    assert.equal(links.length, all.length, 'non-matching links are kept after the matches');
    assert.deepEqual(new Set(urls(links)), new Set(urls(all)));

    const docs = await map({ url: `${main}/`, includeSubdomains: false, search: 'getting started' });
    assert.equal(docs[0].url, m('/docs/getting-started'));

    const byPath = await map({ url: `${main}/`, includeSubdomains: false, search: 'articles' });
    const firstThree = urls(byPath).slice(0, 3).sort();
    assert.deepEqual(firstThree, ['/articles/1', '/articles/2', '/articles/3'].map(m));

    const limited = await map({ url: `${main}/`, includeSubdomains: false, search: 'api', limit: 1 });
    assert.deepEqual(urls(limited), [m('/docs/api')]);
  });

  test('titles count: a term only in a title finds the page', async () => {
    // Words of the articles' titles are not in their URLs (/articles/N).
    assert.match(articles[0].title, /Harvest/);
    assert.match(articles[2].title, /Politeness/);
    assert.equal(
      (await map({ url: `${main}/`, includeSubdomains: false, search: 'harvest' }))[0].url,
      m('/articles/1'),
    );
    assert.equal(
      (await map({ url: `${main}/`, includeSubdomains: false, search: 'POLITENESS rules' }))[0].url,
      m('/articles/3'),
    );
  });
});

describe('timeout', () => {
  test('expiring before the start page answers: 408 MAP_TIMEOUT, promptly', async () => {
    const started = Date.now();
    const res = await api.map({ url: `${main}/slow?ms=5000`, timeout: 500 });
    assert.equal(res.status, 408, res.text);
    assert.equal(res.json.code, 'MAP_TIMEOUT');
    assert.equal(res.json.success, false);
    assert.ok(Date.now() - started < 2500, `${Date.now() - started} ms`);
  });

  test('slow pages found on the way do not fail the map: it answers in time with what it found', async () => {
    const slow = await scriptedServer((req, res) => {
      if (req.url === '/') {
        // The start page itself takes a while: the crawl's budget counts from the request's start.
        const home =
          '<html><head><title>Home</title></head><body><a href="/slow-a">A</a> <a href="/slow-b">B</a> <a href="/fast">F</a></body></html>';
        return void setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end(home), 600);
      }
      if (req.url === '/fast')
        return void res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Fast page</title>');
      if (req.url?.startsWith('/slow-'))
        return void setTimeout(
          () => res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Slow</title>'),
          4000,
        );
      res.writeHead(404).end();
    });
    try {
      const started = Date.now();
      const links = await map({ url: `${slow.origin}/`, timeout: 1500 });
      // 200, not 408: the crawl stopped at 80% of the timeout and the slow pages were abandoned.
      // (Wall time includes the job ledger writes after the deadline's race; allow for a busy machine.)
      const took = Date.now() - started;
      assert.ok(took < 3500, `${took} ms`);
      const byUrl = new Map(links.map((l) => [new URL(l.url).pathname, l]));
      assert.deepEqual([...byUrl.keys()].sort(), ['/', '/fast', '/slow-a', '/slow-b']);
      assert.equal(byUrl.get('/fast')?.title, 'Fast page');
      assert.equal(byUrl.get('/slow-a')?.title, undefined);
    } finally {
      await slow.close();
    }
  });

  test('a generous timeout changes nothing', async () => {
    const links = await map({ url: `${main}/`, timeout: 30_000, includeSubdomains: false });
    assert.ok(urls(links).includes(m('/sitemap-only')));
  });
});

describe('ledger, credits and errors', () => {
  test('each call is a "map" job costing 1 credit', async () => {
    const before = await api.creditsUsed();
    await map({ url: `${main}/`, sitemap: 'only', origin: 'js-sdk@4.0.0', integration: 'test' });
    assert.equal((await api.creditsUsed()) - before, 1);
    const activity = await api.activity('?endpoint=map&limit=1');
    assert.equal(activity.status, 200);
    assert.equal(activity.json.data[0].endpoint, 'map');
    assert.equal(activity.json.data[0].target, `${main}/`);
  });

  test('402 when the team has no credits left, before any request to the site', async () => {
    const team = (await findTeamByName(svc.db, 'default'))!;
    await setCreditQuota(svc.db, team.id, 0);
    try {
      const before = site.requests.length;
      const res = await api.map({ url: `${main}/` });
      assert.equal(res.status, 402);
      assert.equal(res.json.code, 'INSUFFICIENT_CREDITS');
      assert.equal(site.requests.length, before);
    } finally {
      await setCreditQuota(svc.db, team.id, null);
    }
  });

  test('400s name the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'body.url'],
      [{ url: 'ftp://example.com/' }, 'body.url'],
      [{ url: `${main}/`, sitemap: 'sometimes' }, 'body.sitemap'],
      [{ url: `${main}/`, limit: 0 }, 'body.limit'],
      [{ url: `${main}/`, limit: 100_001 }, 'body.limit'],
      [{ url: `${main}/`, limit: 2.5 }, 'body.limit'],
      [{ url: `${main}/`, timeout: 0 }, 'body.timeout'],
      [{ url: `${main}/`, includeSubdomains: 'yes' }, 'body.includeSubdomains'],
      [{ url: `${main}/`, ignoreSitemap: true }, 'body.ignoreSitemap'],
      [{ url: `${main}/`, location: { country: 'USA' } }, 'body.location.country'],
    ];
    for (const [body, path] of cases) {
      const res = await api.mapRaw(body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.json.code, 'BAD_REQUEST');
      assert.ok(
        res.json.details.some((d: { path: string }) => d.path === path),
        `${JSON.stringify(body)} → ${JSON.stringify(res.json.details)}`,
      );
    }
  });

  test('accepts limit 100000, location and a bare host name', async () => {
    const links = await map({
      url: `${main}/`,
      sitemap: 'only',
      limit: 100_000,
      location: { country: 'de', languages: ['de-DE'] },
    });
    assert.ok(links.length > 0);
  });

  test('a start page that cannot be reached, with nothing else found: the error of the fetch', async () => {
    const res = await api.map({ url: 'http://no-such-host.localhost.invalid/' });
    assert.equal(res.status, 502, res.text);
    assert.equal(res.json.code, 'SCRAPE_DNS_RESOLUTION_ERROR');
  });
});

describe('SSRF', () => {
  let strict: TestService;
  before(async () => {
    strict = await startTestService({ env: { GLEANER_ALLOW_PRIVATE_NETWORK: 'false' } });
  });
  after(() => strict?.destroy());

  test('private and loopback targets are refused with 403 and never contacted', async () => {
    const call = apiClient(strict);
    const before = site.requests.length;
    const bodies: MapBody[] = [
      { url: `${site.origin}/` },
      { url: `${main}/` },
      { url: `${main}/`, sitemap: 'only' },
      { url: `${blog}/`, sitemap: 'skip' },
      { url: 'http://169.254.169.254/latest/meta-data/' },
    ];
    for (const body of bodies) {
      const res = await call.map(body);
      assert.equal(res.status, 403, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.json.code, 'SCRAPE_BLOCKED_URL');
    }
    assert.equal(site.requests.length, before, 'the fixture saw no request');
  });
});
