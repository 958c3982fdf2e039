// Sitemaps (src/crawl/sitemap.ts): parsing every supported form, and discovery and reading on
// the fixture site (robots Sitemap line → index → plain + gzipped urlsets) and on scripted
// servers (fallback locations, loops, depth, file and URL caps, deadlines).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { RobotsCache } from '../../src/crawl/robots.ts';
import { SitemapReader, parseSitemap } from '../../src/crawl/sitemap.ts';
import {
  type FixtureSite,
  articles,
  blogPaths,
  sitemapArticlePaths,
  sitemapPagePaths,
  startFixtureSite,
} from '../fixtures/site/index.ts';
import { loopbackEngine, scriptedServer } from './helpers.ts';

const urlset = (locs: string[], extra = '') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">${extra}\n` +
  locs.map((l) => `<url><loc>${l}</loc></url>`).join('\n') +
  '\n</urlset>\n';
const index = (locs: string[]) =>
  `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` +
  locs.map((l) => `<sitemap><loc>${l}</loc></sitemap>`).join('') +
  '</sitemapindex>';

describe('parseSitemap', () => {
  const base = 'https://example.com/sitemap.xml';

  test('urlset with lastmod, entities, CDATA, whitespace and relative locs', async () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://example.com/a</loc><lastmod>2024-01-02</lastmod><changefreq>daily</changefreq></url>
  <url>
    <loc>
      https://example.com/b?x=1&amp;y=2
    </loc>
  </url>
  <url><loc><![CDATA[https://example.com/c]]></loc><lastmod>2024-02-03T04:05:06+00:00</lastmod></url>
  <url><loc>/relative</loc></url>
  <url><loc>mailto:x@example.com</loc></url>
  <url><loc>https://example.com/a</loc></url>
</urlset>`;
    const p = await parseSitemap(Buffer.from(xml), { baseUrl: base });
    assert.equal(p.kind, 'urlset');
    assert.deepEqual(p.entries, [
      { url: 'https://example.com/a', lastmod: '2024-01-02' },
      { url: 'https://example.com/b?x=1&y=2' },
      { url: 'https://example.com/c', lastmod: '2024-02-03T04:05:06+00:00' },
      { url: 'https://example.com/relative' },
    ]);
    assert.equal(p.truncated, false);
  });

  test('namespace prefixes are ignored; image:loc and xhtml:link are not page URLs', async () => {
    const xml = `<sm:urlset xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9" xmlns:image="http://www.google.com/schemas/sitemap-image/1.1" xmlns:xhtml="http://www.w3.org/1999/xhtml">
  <sm:url><sm:loc>https://example.com/page</sm:loc>
    <image:image><image:loc>https://example.com/photo.jpg</image:loc></image:image>
    <xhtml:link rel="alternate" hreflang="de" href="https://example.com/de/page"/>
  </sm:url>
</sm:urlset>`;
    const p = await parseSitemap(Buffer.from(xml), { baseUrl: base });
    assert.deepEqual(p.entries, [{ url: 'https://example.com/page' }]);
  });

  test('sitemap index: child sitemaps, not pages', async () => {
    const p = await parseSitemap(
      Buffer.from(
        '<sitemapindex><sitemap><loc>https://example.com/s1.xml</loc><lastmod>2024-03-01</lastmod></sitemap><sitemap><loc>https://example.com/s2.xml.gz</loc></sitemap></sitemapindex>',
      ),
      { baseUrl: base },
    );
    assert.equal(p.kind, 'sitemapindex');
    assert.deepEqual(p.entries, []);
    assert.deepEqual(p.sitemaps, [
      { url: 'https://example.com/s1.xml', lastmod: '2024-03-01' },
      { url: 'https://example.com/s2.xml.gz' },
    ]);
  });

  test('RSS and Atom feeds give their item links', async () => {
    const rss = await parseSitemap(
      Buffer.from(
        '<rss version="2.0"><channel><link>https://example.com/</link><item><title>A</title><link>https://example.com/post-a</link></item><item><link>https://example.com/post-b</link></item></channel></rss>',
      ),
      { baseUrl: base },
    );
    assert.equal(rss.kind, 'rss');
    assert.deepEqual(
      rss.entries.map((e) => e.url),
      ['https://example.com/post-a', 'https://example.com/post-b'],
    );
    const atom = await parseSitemap(
      Buffer.from(
        '<feed xmlns="http://www.w3.org/2005/Atom"><link href="https://example.com/"/><entry><link rel="self" href="https://example.com/self"/><link href="https://example.com/e1"/><updated>2024-05-06T00:00:00Z</updated></entry></feed>',
      ),
      { baseUrl: base },
    );
    assert.equal(atom.kind, 'atom');
    assert.deepEqual(atom.entries, [{ url: 'https://example.com/e1', lastmod: '2024-05-06T00:00:00Z' }]);
  });

  test('plain-text sitemaps: one URL per line, anything else skipped', async () => {
    const p = await parseSitemap(
      Buffer.from(
        '\uFEFFhttps://example.com/one\r\n\n# not a url\nhttps://example.com/two\nftp://example.com/x\nhttps://example.com/three',
      ),
      {
        baseUrl: base,
      },
    );
    assert.equal(p.kind, 'text');
    assert.deepEqual(
      p.entries.map((e) => e.url),
      ['https://example.com/one', 'https://example.com/two', 'https://example.com/three'],
    );
  });

  test('gzip is recognised by its magic bytes, for XML and text alike', async () => {
    const xml = await parseSitemap(gzipSync(urlset(['https://example.com/z1', 'https://example.com/z2'])), {
      baseUrl: base,
    });
    assert.deepEqual(
      xml.entries.map((e) => e.url),
      ['https://example.com/z1', 'https://example.com/z2'],
    );
    const text = await parseSitemap(gzipSync('https://example.com/t1\nhttps://example.com/t2\n'), { baseUrl: base });
    assert.equal(text.kind, 'text');
    assert.equal(text.entries.length, 2);
  });

  test('a corrupt gzip stream keeps what was read before the damage', async () => {
    const locs = Array.from({ length: 2000 }, (_, i) => `https://example.com/page-${i}-${'x'.repeat(40)}`);
    const gz = gzipSync(urlset(locs));
    const damaged = Buffer.concat([gz.subarray(0, Math.floor(gz.length * 0.6)), Buffer.alloc(64, 0xff)]);
    const p = await parseSitemap(damaged, { baseUrl: base });
    assert.equal(p.truncated, true);
    assert.ok(p.entries.length > 0 && p.entries.length < locs.length, String(p.entries.length));
  });

  test('maxUrls and maxBytes stop the parse; accept filters before counting', async () => {
    const locs = Array.from({ length: 100 }, (_, i) => `https://${i % 2 ? 'other.org' : 'example.com'}/p${i}`);
    const capped = await parseSitemap(Buffer.from(urlset(locs)), { baseUrl: base, maxUrls: 10 });
    assert.equal(capped.entries.length, 10);
    assert.equal(capped.truncated, true);
    const filtered = await parseSitemap(Buffer.from(urlset(locs)), {
      baseUrl: base,
      maxUrls: 10,
      accept: (u) => u.startsWith('https://example.com/'),
    });
    assert.deepEqual(
      filtered.entries.map((e) => e.url),
      locs.filter((l) => l.startsWith('https://example.com/')).slice(0, 10),
    );
    const bytes = await parseSitemap(Buffer.from(urlset(locs)), { baseUrl: base, maxBytes: 1000 });
    assert.equal(bytes.truncated, true);
    assert.ok(bytes.entries.length > 0 && bytes.entries.length < 30, String(bytes.entries.length));
  });

  test('an HTML page (a soft 404) lists nothing', async () => {
    const p = await parseSitemap(
      Buffer.from(
        '<!DOCTYPE html><html><body><a href="https://example.com/x">x</a><url><loc>https://example.com/y</loc></url></body></html>',
      ),
      {
        baseUrl: base,
      },
    );
    assert.equal(p.kind, 'unknown');
    assert.deepEqual(p.entries, []);
  });
});

describe('SitemapReader on the fixture site', () => {
  let site: FixtureSite;
  const http = loopbackEngine();
  before(async () => {
    site = await startFixtureSite();
  });
  after(async () => {
    await site.close();
    await http.close();
  });
  const reader = () => new SitemapReader({ http, robots: new RobotsCache({ http }) });

  test("discovery uses robots.txt's Sitemap line", async () => {
    assert.deepEqual(await reader().discover(site.url('/articles/1')), [site.url('/sitemap_index.xml')]);
  });

  test('index → plain urlset + gzipped urlset (application/gzip): every URL once, with lastmod', async () => {
    const before = site.requests.length;
    const result = await reader().readSite(site.origin);
    assert.deepEqual(
      result.entries.map((e) => e.url),
      [...sitemapPagePaths, ...sitemapArticlePaths].map((p) => site.url(p)),
    );
    for (const e of result.entries.slice(0, sitemapPagePaths.length)) assert.equal(e.lastmod, '2024-03-01');
    for (const [i, a] of articles.entries())
      assert.equal(result.entries[sitemapPagePaths.length + i].lastmod, a.modified.slice(0, 10));
    assert.equal(result.truncated, false);
    assert.deepEqual(
      result.files.map((f) => [new URL(f.url).pathname, f.depth, f.kind, f.urls]),
      [
        ['/sitemap_index.xml', 0, 'sitemapindex', 0],
        ['/sitemap-pages.xml', 1, 'urlset', sitemapPagePaths.length],
        ['/sitemap-articles.xml.gz', 1, 'urlset', sitemapArticlePaths.length],
      ],
    );
    const paths = site.requests.slice(before).map((r) => r.path);
    for (const p of ['/sitemap_index.xml', '/sitemap-pages.xml', '/sitemap-articles.xml.gz'])
      assert.equal(paths.filter((x) => x === p).length, 1, p);
    assert.ok(!paths.includes('/sitemap.xml'), 'fallbacks are not needed when robots.txt names a sitemap');
  });

  test('the blog subdomain has its own robots.txt and sitemap', async () => {
    const blog = site.hostOrigin('blog');
    const result = await reader().readSite(`${blog}/`);
    assert.deepEqual(
      result.entries.map((e) => e.url),
      blogPaths.map((p) => `${blog}${p}`),
    );
  });

  test('caps: maxUrls and maxFiles cut the read and say so', async () => {
    const few = await reader().readSite(site.origin, { maxUrls: 4 });
    assert.deepEqual(
      few.entries.map((e) => e.url),
      sitemapPagePaths.slice(0, 4).map((p) => site.url(p)),
    );
    assert.equal(few.truncated, true);
    const oneFile = await reader().readSite(site.origin, { maxFiles: 2 });
    assert.equal(oneFile.files.length, 2);
    assert.equal(oneFile.entries.length, sitemapPagePaths.length);
    assert.equal(oneFile.truncated, true);
  });

  test('accept filters entries (e.g. to one host)', async () => {
    const result = await reader().readSite(site.origin, {
      accept: (u) => new URL(u).pathname.startsWith('/articles/'),
    });
    assert.deepEqual(
      result.entries.map((e) => new URL(e.url).pathname),
      sitemapArticlePaths,
    );
  });

  test('an SSRF-blocked site: discovery throws SCRAPE_BLOCKED_URL and nothing is requested', async () => {
    const strict = loopbackEngine({ allowPrivateNetwork: false });
    const before = site.requests.length;
    await assert.rejects(
      new SitemapReader({ http: strict, robots: new RobotsCache({ http: strict }) }).readSite(site.origin),
      { code: 'SCRAPE_BLOCKED_URL' },
    );
    assert.equal(site.requests.length, before);
  });
});

describe('SitemapReader on scripted sites', () => {
  const http = loopbackEngine();
  after(() => http.close());
  const reader = () => new SitemapReader({ http, robots: new RobotsCache({ http }) });

  test('no robots.txt: /sitemap.xml and /sitemap_index.xml are tried', async () => {
    const s = await scriptedServer((req, res) => {
      if (req.url === '/sitemap.xml')
        return void res.writeHead(200, { 'content-type': 'text/xml' }).end(urlset(['/a', '/b']));
      res.writeHead(404).end();
    });
    try {
      assert.deepEqual(await reader().discover(s.origin), [`${s.origin}/sitemap.xml`, `${s.origin}/sitemap_index.xml`]);
      const result = await reader().readSite(s.origin);
      assert.deepEqual(
        result.entries.map((e) => e.url),
        [`${s.origin}/a`, `${s.origin}/b`],
      );
      assert.equal(result.files[1].status, 404);
      assert.match(result.files[1].error ?? '', /404/);
    } finally {
      await s.close();
    }
  });

  test('index loops end: each file is fetched once', async () => {
    const s = await scriptedServer((req, res) => {
      const x = (b: string) => res.writeHead(200, { 'content-type': 'application/xml' }).end(b);
      if (req.url === '/robots.txt') return void res.writeHead(200).end('Sitemap: /a.xml\nSitemap: /a.xml#again\n');
      if (req.url === '/a.xml') return x(index(['/b.xml', '/a.xml']));
      if (req.url === '/b.xml') return x(index(['/a.xml', '/pages.xml']));
      if (req.url === '/pages.xml') return x(urlset(['/p1']));
      res.writeHead(404).end();
    });
    try {
      const result = await reader().readSite(s.origin);
      assert.deepEqual(
        result.entries.map((e) => e.url),
        [`${s.origin}/p1`],
      );
      const paths = s.hits.map((h) => h.path).filter((p) => p !== '/robots.txt');
      assert.deepEqual(paths.sort(), ['/a.xml', '/b.xml', '/pages.xml']);
    } finally {
      await s.close();
    }
  });

  test('index depth is limited', async () => {
    // /i0.xml → /i1.xml → ... → /i5.xml → /leaf.xml
    const s = await scriptedServer((req, res) => {
      const m = /^\/i(\d)\.xml$/.exec(req.url ?? '');
      if (m) return void res.writeHead(200).end(index([Number(m[1]) < 5 ? `/i${Number(m[1]) + 1}.xml` : '/leaf.xml']));
      if (req.url === '/leaf.xml') return void res.writeHead(200).end(urlset(['/deep']));
      res.writeHead(404).end();
    });
    try {
      const shallow = await reader().read([`${s.origin}/i0.xml`], { maxDepth: 2 });
      assert.deepEqual(shallow.entries, []);
      assert.equal(shallow.truncated, true);
      assert.deepEqual(
        shallow.files.map((f) => new URL(f.url).pathname),
        ['/i0.xml', '/i1.xml', '/i2.xml'],
      );
      const deep = await reader().read([`${s.origin}/i0.xml`], { maxDepth: 6 });
      assert.deepEqual(
        deep.entries.map((e) => e.url),
        [`${s.origin}/deep`],
      );
    } finally {
      await s.close();
    }
  });

  test('gzipped and plain-text sitemaps whatever their content type', async () => {
    const s = await scriptedServer((req, res) => {
      if (req.url === '/robots.txt') return void res.writeHead(200).end('Sitemap: /s.txt\nSitemap: /s.bin\n');
      if (req.url === '/s.txt')
        return void res.writeHead(200, { 'content-type': 'text/plain' }).end('/not-absolute\nhttp://127.0.0.1/t1\n');
      if (req.url === '/s.bin')
        return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(gzipSync(urlset(['/g1'])));
      res.writeHead(404).end();
    });
    try {
      const result = await reader().readSite(s.origin);
      assert.deepEqual(
        result.entries.map((e) => e.url),
        ['http://127.0.0.1/t1', `${s.origin}/g1`],
      );
      assert.deepEqual(
        result.files.map((f) => f.kind),
        ['text', 'urlset'],
      );
    } finally {
      await s.close();
    }
  });

  test('the signal ends the read: slow files are abandoned, what was read is returned', async () => {
    const s = await scriptedServer((req, res) => {
      if (req.url === '/fast.xml') return void res.writeHead(200).end(urlset(['/f']));
      if (req.url === '/slow.xml') return void setTimeout(() => res.writeHead(200).end(urlset(['/s'])), 1500);
      res.writeHead(404).end();
    });
    try {
      const started = Date.now();
      const result = await reader().read([`${s.origin}/fast.xml`, `${s.origin}/slow.xml`], {
        signal: AbortSignal.timeout(300),
      });
      assert.ok(Date.now() - started < 2000, `${Date.now() - started} ms`);
      assert.deepEqual(
        result.entries.map((e) => e.url),
        [`${s.origin}/f`],
      );
      assert.match(result.files[1].error ?? '', /timed out|abort/i);
    } finally {
      await s.close();
    }
  });

  test('many files: maxFiles bounds the fetches', async () => {
    const s = await scriptedServer((req, res) => {
      if (req.url === '/index.xml')
        return void res.writeHead(200).end(index(Array.from({ length: 20 }, (_, i) => `/part-${i}.xml`)));
      const m = /^\/part-(\d+)\.xml$/.exec(req.url ?? '');
      if (m) return void res.writeHead(200).end(urlset([`/page-${m[1]}`]));
      res.writeHead(404).end();
    });
    try {
      const result = await reader().read([`${s.origin}/index.xml`], { maxFiles: 5 });
      assert.equal(s.hits.length, 5);
      assert.deepEqual(
        result.entries.map((e) => new URL(e.url).pathname),
        ['/page-0', '/page-1', '/page-2', '/page-3'],
      );
      assert.equal(result.truncated, true);
    } finally {
      await s.close();
    }
  });
});
