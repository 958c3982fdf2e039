// robots.txt: parsing rules (src/crawl/robots.ts parseRobotsTxt) and the per-origin cache
// against the fixture site and scripted servers: one fetch per origin, 4xx → allow all,
// 5xx/429/unreachable → disallow all, SSRF-blocked origins, TTLs.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_ROBOTS_USER_AGENT, RobotsCache, parseRobotsTxt } from '../../src/crawl/robots.ts';
import { type FixtureSite, disallowedPages, linkedPages, startFixtureSite } from '../fixtures/site/index.ts';
import { loopbackEngine, scriptedServer } from './helpers.ts';

describe('parseRobotsTxt', () => {
  const text = [
    '# comment',
    'User-agent: *',
    'Disallow: /private/',
    'Allow: /private/public-note',
    'Disallow: /*.pdf$',
    'Disallow: /search*q=',
    'Disallow: /tmp$',
    'Crawl-delay: 2.5',
    '',
    'User-agent: BadBot',
    'Disallow: /',
    '',
    'User-agent: Gleaner',
    'Disallow: /no-gleaner',
    'Crawl-delay: 1',
    '',
    'Sitemap: https://example.com/sitemap_index.xml',
    'Sitemap: /relative-sitemap.xml',
  ].join('\n');
  const r = parseRobotsTxt('https://example.com/robots.txt', text);
  const other = 'OtherBot';

  test('Disallow and Allow: the longest match wins, Allow wins ties', () => {
    assert.equal(r.isAllowed('https://example.com/private/secret', other), false);
    assert.equal(r.isAllowed('https://example.com/private/public-note', other), true);
    assert.equal(r.isAllowed('https://example.com/public', other), true);
  });

  test('wildcards and $ anchors', () => {
    assert.equal(r.isAllowed('https://example.com/files/report.pdf', other), false);
    assert.equal(
      r.isAllowed('https://example.com/files/report.pdf?x=1', other),
      true,
      '$ anchors at the end of path+query',
    );
    assert.equal(r.isAllowed('https://example.com/search?page=1&q=x', other), false);
    assert.equal(r.isAllowed('https://example.com/search?page=1', other), true);
    assert.equal(r.isAllowed('https://example.com/tmp', other), false);
    assert.equal(r.isAllowed('https://example.com/tmp/x', other), true);
  });

  test('groups by user agent, case-insensitively, version stripped; * otherwise', () => {
    assert.equal(r.isAllowed('https://example.com/anything', 'BadBot'), false);
    assert.equal(r.isAllowed('https://example.com/anything', 'badbot/2.1'), false);
    // Our own group replaces *: /private/ is not disallowed for Gleaner, /no-gleaner is.
    assert.equal(r.isAllowed('https://example.com/no-gleaner'), false);
    assert.equal(r.isAllowed('https://example.com/private/secret', DEFAULT_ROBOTS_USER_AGENT), true);
    assert.equal(r.isAllowed('https://example.com/no-gleaner', other), true);
  });

  test('crawl delay per group', () => {
    assert.equal(r.crawlDelay(other), 2.5);
    assert.equal(r.crawlDelay('Gleaner'), 1);
    assert.equal(r.crawlDelay('BadBot'), undefined);
  });

  test('Sitemap lines, made absolute, in order', () => {
    assert.deepEqual(r.sitemaps, ['https://example.com/sitemap_index.xml', 'https://example.com/relative-sitemap.xml']);
  });

  test('URLs of another origin are not governed by these rules', () => {
    assert.equal(r.isAllowed('https://other.example/private/secret', other), true);
  });

  test('an empty file allows everything', () => {
    const empty = parseRobotsTxt('https://example.com/robots.txt', '');
    assert.equal(empty.isAllowed('https://example.com/x'), true);
    assert.deepEqual(empty.sitemaps, []);
  });
});

describe('RobotsCache on the fixture site', () => {
  let site: FixtureSite;
  before(async () => {
    site = await startFixtureSite();
  });
  after(() => site.close());

  const robotsFetches = (host = '127.0.0.1') =>
    site.requests.filter((r) => r.path === '/robots.txt' && r.host === host).length;

  test('fetched once per origin, also under concurrent use', async () => {
    const cache = new RobotsCache({ http: loopbackEngine() });
    const before = robotsFetches();
    const [a, b] = await Promise.all([cache.get(site.url('/a')), cache.get(site.url('/b'))]);
    await cache.get(site.url('/c?x=1'));
    assert.equal(robotsFetches() - before, 1);
    assert.equal(a, b);
    assert.equal(a.status, 'ok');
    assert.equal(a.httpStatus, 200);
    assert.equal(a.origin, site.origin);
    assert.deepEqual(a.sitemaps, [site.url('/sitemap_index.xml')]);
  });

  test("the fixture's rules: Disallow /private/, Allow /private/public-note, Crawl-delay 1, BadBot", async () => {
    const cache = new RobotsCache({ http: loopbackEngine() });
    const r = await cache.get(site.origin);
    for (const p of linkedPages) assert.equal(r.isAllowed(site.url(p)), true, p);
    for (const p of disallowedPages) assert.equal(r.isAllowed(site.url(p)), false, p);
    assert.equal(await cache.isAllowed(site.url('/private/public-note')), true);
    assert.equal(await cache.isAllowed(site.url('/private/secret')), false);
    assert.equal(r.crawlDelay(), 1);
    assert.equal(r.isAllowed(site.url('/about'), 'BadBot'), false);
    assert.equal(r.isAllowed(site.url('/about'), 'BadBot/1.0'), false);
  });

  test('each host is its own origin: blog.localhost has its own robots.txt', async () => {
    const cache = new RobotsCache({ http: loopbackEngine() });
    const blog = await cache.get(`${site.hostOrigin('blog')}/posts/x`);
    assert.equal(blog.status, 'ok');
    assert.equal(blog.isAllowed(`${site.hostOrigin('blog')}/private/anything`), true);
    assert.deepEqual(blog.sitemaps, [`${site.hostOrigin('blog')}/sitemap.xml`]);
    assert.equal(robotsFetches('blog.localhost') >= 1, true);
  });

  test('expires after its TTL and is fetched again', async () => {
    const cache = new RobotsCache({ http: loopbackEngine(), ttlMs: 100 });
    const before = robotsFetches();
    await cache.get(site.origin);
    await cache.get(site.origin);
    assert.equal(robotsFetches() - before, 1);
    await sleep(150);
    await cache.get(site.origin);
    assert.equal(robotsFetches() - before, 2);
  });

  test('an SSRF-blocked origin is "blocked" and disallows everything, without any request', async () => {
    const cache = new RobotsCache({ http: loopbackEngine({ allowPrivateNetwork: false }) });
    const before = site.requests.length;
    const r = await cache.get(site.url('/about'));
    assert.equal(r.status, 'blocked');
    assert.match(r.error ?? '', /Blocked/);
    assert.equal(r.isAllowed(site.url('/about')), false);
    assert.equal(site.requests.length, before);
  });

  test("a caller's signal stops the wait, not the shared fetch", async () => {
    const cache = new RobotsCache({ http: loopbackEngine() });
    await assert.rejects(cache.get(site.origin, { signal: AbortSignal.abort(new Error('stop')) }), /stop/);
    const r = await cache.get(site.origin);
    assert.equal(r.status, 'ok');
  });
});

describe('RobotsCache: how answers map to rules', () => {
  let status = 200;
  let body = 'User-agent: *\nDisallow: /x\n';
  let server: Awaited<ReturnType<typeof scriptedServer>>;
  before(async () => {
    server = await scriptedServer((req, res) => {
      if (req.url === '/robots.txt' && status === 301)
        return void res.writeHead(301, { location: '/real-robots.txt' }).end();
      if (req.url === '/real-robots.txt')
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end('User-agent: *\nDisallow: /moved\n');
      res.writeHead(status, { 'content-type': 'text/plain' }).end(body);
    });
  });
  after(() => server.close());

  async function outcome(s: number, b = body) {
    status = s;
    body = b;
    return new RobotsCache({ http: loopbackEngine() }).get(server.origin);
  }

  test('2xx: the rules; a byte order mark is ignored', async () => {
    const r = await outcome(200, '\uFEFFUser-agent: *\nDisallow: /x\n');
    assert.equal(r.status, 'ok');
    assert.equal(r.isAllowed(`${server.origin}/x`), false);
    assert.equal(r.isAllowed(`${server.origin}/y`), true);
  });

  test('404 and every other 4xx but 429: no robots.txt, everything allowed', async () => {
    for (const s of [404, 401, 403, 410, 451]) {
      const r = await outcome(s, 'User-agent: *\nDisallow: /\n');
      assert.equal(r.status, 'missing', String(s));
      assert.equal(r.httpStatus, s);
      assert.equal(r.isAllowed(`${server.origin}/anything`), true, String(s));
    }
  });

  test('5xx and 429: unreachable, everything disallowed', async () => {
    for (const s of [500, 502, 503, 429]) {
      const r = await outcome(s);
      assert.equal(r.status, 'unreachable', String(s));
      assert.equal(r.isAllowed(`${server.origin}/anything`), false, String(s));
      assert.deepEqual(r.sitemaps, []);
    }
  });

  test('a redirected robots.txt applies to the origin asked for', async () => {
    const r = await outcome(301);
    assert.equal(r.status, 'ok');
    assert.equal(r.isAllowed(`${server.origin}/moved`), false);
    assert.equal(r.isAllowed(`${server.origin}/x`), true);
  });

  test('no answer (connection refused): unreachable, disallowed; cached only briefly', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const cache = new RobotsCache({ http: loopbackEngine(), unreachableTtlMs: 50 });
    const first = await cache.get(`http://127.0.0.1:${port}/`);
    assert.equal(first.status, 'unreachable');
    assert.match(first.error ?? '', /SCRAPE_CONNECTION_ERROR/);
    assert.equal(first.isAllowed(`http://127.0.0.1:${port}/a`), false);
    assert.equal(await cache.get(`http://127.0.0.1:${port}/`), first, 'reused within its short TTL');
    await sleep(80);
    assert.notEqual(await cache.get(`http://127.0.0.1:${port}/`), first, 'asked again after it');
  });
});
