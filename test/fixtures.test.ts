// The fixture website (test/fixtures/site): routes, hosts, redirects, statuses, timing, charsets,
// compression, generated pages and the generated documents (PDF structure, ZIP packages).
// Only loopback addresses are contacted: 127.0.0.1, localhost and *.localhost (resolved to
// 127.0.0.1 by lookupLocalhost).
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, crc32, gunzipSync, inflateSync } from 'node:zlib';
import {
  buildPng,
  buildReportPdf,
  buildTextPdf,
  documentTexts,
  readZip,
  textPdfPageLines,
} from './fixtures/site/documents.ts';
import {
  type FixtureSite,
  articleInlineText,
  articles,
  blogPaths,
  charsetTexts,
  disallowedPages,
  encodeShiftJis,
  generatedLinks,
  homeText,
  jsText,
  linkedPages,
  lookupLocalhost,
  productData,
  sitemapArticlePaths,
  sitemapOnlyPages,
  sitemapPagePaths,
  startFixtureSite,
} from './fixtures/site/index.ts';

// ---------------------------------------------------------------------------------------------
// helpers
// ---------------------------------------------------------------------------------------------

interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A plain HTTP/1.1 GET without decompression, resolving *.localhost to 127.0.0.1. */
function rawGet(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers, lookup: lookupLocalhost, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/** Minimal XML well-formedness check: balanced tags, a single root, no stray `<` or bare `&`. */
function assertWellFormedXml(text: string, label: string): void {
  const s = text
    .replace(/^\uFEFF/, '')
    .replace(/<\?[\s\S]*?\?>/g, '')
    .replace(/<!--[\s\S]*?-->/g, '')
    .replace(/<!DOCTYPE[^>]*>/gi, '')
    .replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, '');
  const re =
    /<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+\s*=\s*(?:"[^"<]*"|'[^'<]*'))*)\s*(\/?)>|<|&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/g;
  const stack: string[] = [];
  let roots = 0;
  for (const m of s.matchAll(re)) {
    if (m[2] === undefined) assert.fail(`${label}: stray '${m[0]}' at ${m.index}: ${s.slice(m.index, m.index + 40)}`);
    const [, closing, name, , selfClosing] = m;
    if (closing) {
      assert.equal(stack.pop(), name, `${label}: unexpected </${name}>`);
    } else {
      if (stack.length === 0) roots++;
      if (!selfClosing) stack.push(name);
    }
  }
  assert.deepEqual(stack, [], `${label}: unclosed elements`);
  assert.equal(roots, 1, `${label}: expected exactly one root element`);
}

function hrefs(html: string): string[] {
  return [...html.matchAll(/<a\b[^>]*?\shref="([^"]*)"/g)].map((m) =>
    m[1].replace(/&amp;/g, '&').replace(/&quot;/g, '"'),
  );
}

function locs(xml: string): string[] {
  return [...xml.matchAll(/<loc>([^<]+)<\/loc>/g)].map((m) => m[1]);
}

function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else if (c !== '\r') field += c;
  }
  if (field || row.length) rows.push([...row, field]);
  return rows;
}

/** Checks PDF structure: header, startxref → xref, every in-use xref offset at "N G obj",
 * stream /Length values, trailer. Returns object bodies by number. */
function checkPdf(pdf: Buffer, label: string): { objects: Map<number, string>; trailer: string } {
  const text = pdf.toString('latin1');
  assert.ok(text.startsWith('%PDF-1.4\n'), `${label}: header`);
  assert.ok(text.endsWith('%%EOF\n'), `${label}: %%EOF`);
  const sx = text.lastIndexOf('startxref');
  const xrefAt = Number(
    text
      .slice(sx + 'startxref'.length)
      .trim()
      .split(/\s+/)[0],
  );
  assert.equal(text.slice(xrefAt, xrefAt + 5), 'xref\n', `${label}: startxref points at xref`);
  const lines = text.slice(xrefAt).split('\n');
  const [first, count] = lines[1].split(' ').map(Number);
  assert.equal(first, 0);
  const objects = new Map<number, string>();
  for (let i = 0; i < count; i++) {
    const entry = lines[2 + i] + '\n';
    assert.equal(entry.length, 20, `${label}: xref entry ${i} is 20 bytes`);
    const [off, gen, kind] = entry.trim().split(' ');
    if (i === 0) {
      assert.equal(kind, 'f');
      continue;
    }
    assert.equal(kind, 'n');
    const at = Number(off);
    const head = `${i} ${Number(gen)} obj\n`;
    assert.equal(text.slice(at, at + head.length), head, `${label}: xref offset of object ${i}`);
    const end = text.indexOf('\nendobj\n', at);
    objects.set(i, text.slice(at + head.length, end));
  }
  const trailer = text.slice(text.indexOf('trailer', xrefAt), sx);
  assert.match(trailer, new RegExp(`/Size ${count}\\b`));
  assert.match(trailer, /\/Root 1 0 R/);
  for (const [n, body] of objects) {
    const sm = body.match(/^<< \/Length (\d+)[^>]*>>\nstream\n/);
    if (!sm) continue;
    const dataEnd = sm[0].length + Number(sm[1]);
    assert.equal(body.slice(dataEnd), '\nendstream', `${label}: /Length of object ${n}`);
  }
  return { objects, trailer };
}

function streamData(body: string): Buffer {
  const sm = body.match(/^<< \/Length (\d+)([^>]*)>>\nstream\n/)!;
  const raw = Buffer.from(body.slice(sm[0].length, sm[0].length + Number(sm[1])), 'latin1');
  return sm[2].includes('/FlateDecode') ? inflateSync(raw) : raw;
}

// ---------------------------------------------------------------------------------------------

describe('fixture site', () => {
  let site: FixtureSite;
  const get = (path: string, init?: RequestInit): Promise<Response> => fetch(site.url(path), init);
  const html = async (path: string): Promise<string> => {
    const res = await get(path);
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8', path);
    return res.text();
  };

  before(async () => {
    site = await startFixtureSite();
  });
  after(async () => {
    await site.close();
  });

  test('origin, url() and hostOrigin()', () => {
    assert.match(site.origin, /^http:\/\/127\.0\.0\.1:\d+$/);
    assert.equal(site.origin, `http://127.0.0.1:${site.port}`);
    assert.equal(site.url('/a?b=1'), `${site.origin}/a?b=1`);
    assert.equal(site.url('a'), `${site.origin}/a`);
    assert.equal(site.hostOrigin('blog'), `http://blog.localhost:${site.port}`);
    assert.equal(site.hostOrigin('localhost'), `http://localhost:${site.port}`);
  });

  test('home page has every kind of link, and requests are recorded', async () => {
    const res = await get('/', { headers: { 'x-fixture-test': 'home' } });
    const page = await res.text();
    assert.ok(page.includes(`<h1>${homeText.heading}</h1>`));
    const links = hrefs(page);
    for (const expected of [
      '/articles/1',
      'articles/2',
      `${site.origin}/articles/3`,
      '/articles/1#comments',
      '/products/widget?color=blue&size=m',
      'mailto:editor@example.com?subject=Hello',
      'https://example.com/',
      '//example.org/partners',
      `${site.hostOrigin('blog')}/`,
      '/private/secret',
    ]) {
      assert.ok(links.includes(expected), `home links to ${expected}`);
    }
    const recorded = site.requests.find((r) => r.path === '/' && r.headers['x-fixture-test'] === 'home');
    assert.ok(recorded);
    assert.equal(recorded.method, 'GET');
    assert.equal(recorded.host, '127.0.0.1');
    assert.ok(recorded.headers['user-agent']);
    assert.ok(recorded.at > 0);
  });

  test('linkedPages is exactly the same-origin link graph from "/" (robots.txt respected)', async () => {
    const seen = new Set<string>(['/']);
    const queue = ['/'];
    const disallowed = (p: string): boolean => p.startsWith('/private/') && !p.startsWith('/private/public-note');
    const blocked = new Set<string>();
    while (queue.length) {
      const path = queue.shift()!;
      const page = await html(path);
      for (const href of hrefs(page)) {
        const u = new URL(href, site.url(path));
        if (u.origin !== site.origin) continue;
        const p = u.pathname + u.search;
        if (disallowed(p)) {
          blocked.add(p);
          continue;
        }
        if (!seen.has(p)) {
          seen.add(p);
          queue.push(p);
        }
      }
    }
    assert.deepEqual([...seen].sort(), [...linkedPages].sort());
    assert.deepEqual([...blocked], disallowedPages);
    for (const p of sitemapOnlyPages) assert.ok(!seen.has(p));
  });

  test('articles carry full boilerplate, metadata and rich content', async () => {
    for (const a of articles) {
      const page = await html(`/articles/${a.n}`);
      const url = site.url(`/articles/${a.n}`);
      assert.ok(page.startsWith('<!DOCTYPE html>\n<html lang="en">'));
      for (const needle of [
        `<title>${a.title} | Gleaner Gazette</title>`,
        `<meta name="description" content="${a.description}">`,
        `<meta name="keywords" content="${a.keywords}">`,
        `<link rel="canonical" href="${url}">`,
        '<link rel="icon" href="/favicon.ico"',
        `<meta property="og:title" content="${a.title}">`,
        `<meta property="og:url" content="${url}">`,
        `<meta property="og:image" content="${site.origin}/images/article-${a.n}.png">`,
        '<meta property="og:site_name" content="Gleaner Gazette">',
        '<meta property="og:locale" content="en_US">',
        '<meta name="twitter:card" content="summary_large_image">',
        `<meta property="article:published_time" content="${a.published}">`,
        '<div class="cookie-banner" id="cookie-consent"',
        '<div class="ad-banner"',
        '<header class="site-header">',
        '<nav class="main-nav"',
        '<aside class="sidebar">',
        'Related posts',
        '<footer class="site-footer">',
        '&copy; 2024 Gleaner Gazette',
        '<pre><code class="language-js">',
        '<td colspan="2">',
        'srcset="/images/photo-400.png 400w',
        `<img src="${site.origin}/images/diagram-${a.n}.png"`,
        '<img src="/images/article-',
        '<img src="data:image/png;base64,',
        '<blockquote',
        '<abbr title=',
        '&amp;',
        '&nbsp;',
        '&mdash;',
        '&eacute;',
        `<h1 itemprop="headline">${a.title}</h1>`,
        `<h2 id="why">${a.h2[0]}</h2>`,
        `<h3 id="choosing">${a.h3}</h3>`,
        `<p class="lead">${a.lead}</p>`,
      ]) {
        assert.ok(page.includes(needle), `article ${a.n} contains ${needle}`);
      }
      assert.equal(page.match(/og:locale:alternate/g)?.length, 2);
      assert.match(page, /<ol class="steps">[\s\S]*?<ul>[\s\S]*?<ol>/, 'three-level ordered/unordered nesting');
      assert.match(page, /<ul class="tips">\s*<li>[^<]*<ul>\s*<li>[^<]*<ul>/, 'three-level unordered nesting');
      const ld = JSON.parse(page.match(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/)![1]);
      assert.equal(ld['@type'], 'Article');
      assert.equal(ld.headline, a.title);
      assert.equal(ld.author.name, a.author);
      assert.equal(ld.datePublished, a.published);
      const dataUri = page.match(/src="data:image\/png;base64,([^"]+)"/)![1];
      assert.deepEqual([...Buffer.from(dataUri, 'base64').subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
      // The inline-formatting paragraph, with markup and entities stripped, matches its text.
      const inline = page.match(/<p>(A [^\n]*team agrees\.)<\/p>/)![1];
      const plain = inline
        .replace(/<[^>]+>/g, '')
        .replace(/&mdash;/g, '—')
        .replace(/&eacute;/g, 'é')
        .replace(/&nbsp;/g, '\u00a0')
        .replace(/&amp;/g, '&');
      assert.equal(plain, articleInlineText(a));
    }
    const img = await get('/images/article-1.png');
    assert.equal(img.headers.get('content-type'), 'image/png');
    assert.deepEqual([...new Uint8Array(await img.arrayBuffer()).subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  });

  test('section pages: blog pagination, docs, product, forum', async () => {
    const blog1 = await html('/blog/');
    assert.ok(hrefs(blog1).includes('/blog/page/2'));
    const blog2 = await html('/blog/page/2');
    assert.ok(hrefs(blog2).includes('/blog/'));
    const docs = await html('/docs/getting-started');
    assert.ok(
      docs.includes('<nav class="docs-sidebar"') && docs.includes('<code class="language-bash">npm install -g gleaner'),
    );
    assert.ok((await html('/docs/api')).includes('<code class="language-json">'));
    const product = await html('/products/widget');
    const ld = JSON.parse(product.match(/<script type="application\/ld\+json">([\s\S]*?)<\/script>/)![1]);
    assert.equal(ld['@type'], 'Product');
    assert.equal(ld.name, productData.name);
    assert.equal(ld.sku, productData.sku);
    assert.equal(ld.offers.price, productData.price);
    assert.equal(ld.offers.priceCurrency, productData.currency);
    assert.equal(ld.offers.availability, 'https://schema.org/InStock');
    assert.ok(product.includes('itemtype="https://schema.org/Product"'));
    assert.ok(product.includes(`<span itemprop="price" content="${productData.price}">`));
    const forum = await html('/forum/thread-1');
    assert.equal(forum.match(/class="forum-post"/g)?.length, 4);
    assert.equal((await get('/docs/nope')).status, 404);
    assert.equal((await get('/articles/4')).status, 404);
  });

  test('blog.localhost is a separate site chosen by the Host header', async () => {
    const blog = site.hostOrigin('blog');
    const home = await rawGet(`${blog}/`);
    assert.equal(home.status, 200);
    const page = home.body.toString();
    assert.ok(page.includes('<h1>Gleaner Engineering Blog</h1>'));
    assert.ok(hrefs(page).includes(`http://localhost:${site.port}/`), 'links back to the parent domain');
    for (const p of blogPaths) assert.equal((await rawGet(`${blog}${p}`)).status, 200, p);
    assert.equal((await rawGet(`${blog}/articles/1`)).status, 404);
    assert.ok(site.requests.some((r) => r.host === 'blog.localhost' && r.path === '/'));
    // The same via 127.0.0.1 with an explicit Host header.
    const viaHost = await rawGet(`${site.origin}/posts/hello-world`, { host: `blog.localhost:${site.port}` });
    assert.equal(viaHost.status, 200);
    assert.ok(viaHost.body.toString().includes('Hello from the Engineering Blog'));
    // localhost itself serves the main site, with URLs on that origin.
    const main = await fetch(`${site.hostOrigin('localhost')}/articles/1`);
    assert.ok((await main.text()).includes(`<link rel="canonical" href="http://localhost:${site.port}/articles/1">`));
    const robots = (await rawGet(`${blog}/robots.txt`)).body.toString();
    assert.match(robots, /^User-agent: \*\nAllow: \//);
  });

  test('robots.txt', async () => {
    const res = await get('/robots.txt');
    assert.equal(res.headers.get('content-type'), 'text/plain; charset=utf-8');
    const text = await res.text();
    for (const line of ['User-agent: *', 'Disallow: /private/', 'Allow: /private/public-note', 'Crawl-delay: 1']) {
      assert.ok(text.split('\n').includes(line), line);
    }
    assert.ok(text.includes(`\nSitemap: ${site.origin}/sitemap_index.xml\n`));
    assert.ok(site.requests.some((r) => r.path === '/robots.txt'));
  });

  test('sitemaps: index, plain, gzipped, full', async () => {
    const index = await get('/sitemap_index.xml');
    assert.equal(index.headers.get('content-type'), 'application/xml; charset=utf-8');
    const indexXml = await index.text();
    assertWellFormedXml(indexXml, 'sitemap_index');
    assert.ok(indexXml.includes('<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'));
    assert.deepEqual(locs(indexXml), [site.url('/sitemap-pages.xml'), site.url('/sitemap-articles.xml.gz')]);

    const pagesXml = await (await get('/sitemap-pages.xml')).text();
    assertWellFormedXml(pagesXml, 'sitemap-pages');
    assert.deepEqual(
      locs(pagesXml),
      sitemapPagePaths.map((p) => site.url(p)),
    );
    assert.equal(pagesXml.match(/<lastmod>\d{4}-\d{2}-\d{2}<\/lastmod>/g)?.length, sitemapPagePaths.length);

    const gz = await get('/sitemap-articles.xml.gz');
    assert.equal(gz.headers.get('content-type'), 'application/gzip');
    assert.equal(gz.headers.get('content-encoding'), null);
    const gzBytes = Buffer.from(await gz.arrayBuffer());
    assert.deepEqual([...gzBytes.subarray(0, 2)], [0x1f, 0x8b]);
    const articlesXml = gunzipSync(gzBytes).toString('utf8');
    assertWellFormedXml(articlesXml, 'sitemap-articles');
    assert.ok(articlesXml.includes('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'));
    assert.deepEqual(
      locs(articlesXml),
      sitemapArticlePaths.map((p) => site.url(p)),
    );
    assert.ok(articlesXml.includes('<lastmod>2024-03-05</lastmod>'));

    const fullXml = await (await get('/sitemap.xml')).text();
    assertWellFormedXml(fullXml, 'sitemap');
    const all = locs(fullXml);
    assert.deepEqual(
      all,
      [...sitemapPagePaths, ...sitemapArticlePaths].map((p) => site.url(p)),
    );
    for (const loc of all) assert.equal((await fetch(loc)).status, 200, loc);
  });

  test('redirects', async () => {
    const manual = async (path: string): Promise<[number, string | null]> => {
      const res = await get(path, { redirect: 'manual' });
      await res.arrayBuffer();
      return [res.status, res.headers.get('location')];
    };
    assert.deepEqual(await manual('/redirect/301'), [301, '/articles/1']);
    assert.deepEqual(await manual('/redirect/302'), [302, '/articles/2']);
    assert.deepEqual(await manual('/redirect/307'), [307, '/articles/2']);
    assert.deepEqual(await manual('/redirect/308'), [308, '/articles/3']);
    assert.deepEqual(await manual('/redirect/absolute'), [302, site.url('/articles/1')]);
    assert.deepEqual(await manual('/blog'), [301, '/blog/']);
    assert.deepEqual(await manual('/redirect/to-blog'), [302, `${site.hostOrigin('blog')}/`]);

    // A chain of exactly three hops, then a page.
    let path = '/redirect/chain';
    let hops = 0;
    for (;;) {
      const [status, location] = await manual(path);
      if (status !== 301 && status !== 302 && status !== 307) {
        assert.equal(status, 200);
        break;
      }
      path = location!;
      hops++;
    }
    assert.equal(hops, 3);
    assert.equal(path, '/articles/1');
    const followed = await get('/redirect/chain');
    assert.equal(followed.status, 200);
    assert.equal(followed.url, site.url('/articles/1'));
    await followed.arrayBuffer();

    assert.deepEqual(await manual('/redirect/loop'), [302, '/redirect/loop/b']);
    assert.deepEqual(await manual('/redirect/loop/b'), [302, '/redirect/loop']);
    await assert.rejects(get('/redirect/loop'), TypeError);
    assert.deepEqual(await manual('/redirect/endless?n=5'), [302, '/redirect/endless?n=6']);

    const meta = await html('/redirect/meta-refresh');
    assert.ok(meta.includes('<meta http-equiv="refresh" content="0; url=/articles/3">'));

    // Open redirect to anything (for SSRF-on-redirect tests): the target is never fetched here.
    const target = 'http://169.254.169.254/latest/meta-data/';
    assert.deepEqual(await manual(`/redirect/to?url=${encodeURIComponent(target)}`), [302, target]);
    assert.deepEqual(await manual(`/redirect/to?url=${encodeURIComponent('https://example.com/')}&status=301`), [
      301,
      'https://example.com/',
    ]);
    assert.equal((await get('/redirect/to')).status, 400);
  });

  test('status codes', async () => {
    for (const code of [200, 400, 401, 403, 404, 410, 418, 429, 451, 500, 502, 503, 599]) {
      const res = await get(`/status/${code}`, { redirect: 'manual' });
      assert.equal(res.status, code);
      assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
      assert.ok((await res.text()).includes(`<h1>${code} `));
    }
    assert.equal((await get('/status/429')).headers.get('retry-after'), '1');
    assert.equal((await get('/status/503')).headers.get('retry-after'), '1');
    const noContent = await get('/status/204');
    assert.equal(noContent.status, 204);
    assert.equal((await noContent.arrayBuffer()).byteLength, 0);
    const unknown = await get('/no/such/page');
    assert.equal(unknown.status, 404);
    assert.ok((await unknown.text()).includes('404 — Page not found'));
    assert.equal((await get('/status/700')).status, 404);
  });

  test('/slow waits, /slow-body trickles', async () => {
    let t0 = Date.now();
    const slow = await get('/slow?ms=150');
    assert.ok((await slow.text()).includes('Answered after 150 ms'));
    assert.ok(Date.now() - t0 >= 140);

    t0 = Date.now();
    const trickle = await get('/slow-body?ms=300');
    const headersAfter = Date.now() - t0;
    assert.equal(trickle.status, 200);
    assert.ok(headersAfter < 250, `headers after ${headersAfter} ms`);
    const body = await trickle.text();
    assert.ok(body.includes('Chunk 10 of 10') && body.endsWith('</html>\n'));
    assert.ok(Date.now() - t0 >= 280);

    // An aborted slow request does not break anything.
    const controller = new AbortController();
    const pending = get('/slow?ms=10000', { signal: controller.signal });
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(pending, { name: 'AbortError' });
  });

  test('charsets', async () => {
    const bytes = async (path: string): Promise<[string | null, Buffer]> => {
      const res = await get(path);
      return [res.headers.get('content-type'), Buffer.from(await res.arrayBuffer())];
    };
    const [latinType, latin] = await bytes('/charset/latin1');
    assert.equal(latinType, 'text/html; charset=ISO-8859-1');
    assert.ok(latin.includes(Buffer.from([0x63, 0x61, 0x66, 0xe9]))); // "café" in Latin-1
    assert.ok(new TextDecoder('iso-8859-1').decode(latin).includes(charsetTexts.latin1));
    assert.throws(() => new TextDecoder('utf-8', { fatal: true }).decode(latin));

    const [metaType, meta] = await bytes('/charset/meta-latin1');
    assert.equal(metaType, 'text/html');
    assert.ok(meta.toString('latin1').includes('<meta charset="iso-8859-1">'));
    assert.ok(new TextDecoder('iso-8859-1').decode(meta).includes(charsetTexts.metaLatin1));

    const [sjisType, sjis] = await bytes('/charset/shift_jis');
    assert.equal(sjisType, 'text/html; charset=Shift_JIS');
    assert.ok(new TextDecoder('shift_jis').decode(sjis).includes(charsetTexts.shiftJis));
    assert.throws(() => new TextDecoder('utf-8', { fatal: true }).decode(sjis));
    for (const ch of charsetTexts.shiftJis) assert.equal(new TextDecoder('shift_jis').decode(encodeShiftJis(ch)), ch);

    const [bomType, bom] = await bytes('/charset/utf8-bom');
    assert.equal(bomType, 'text/html');
    assert.deepEqual([...bom.subarray(0, 3)], [0xef, 0xbb, 0xbf]);
    assert.ok(!bom.toString('utf8').includes('charset'));
    const bomText = new TextDecoder('utf-8').decode(bom);
    assert.ok(bomText.startsWith('<!DOCTYPE html>') && bomText.includes(charsetTexts.utf8Bom));

    const [cpType, cp] = await bytes('/charset/windows-1252');
    assert.equal(cpType, 'text/html; charset=windows-1252');
    for (const b of [0x93, 0x94, 0x80]) assert.ok(cp.includes(b), `byte 0x${b.toString(16)}`);
    assert.ok(new TextDecoder('windows-1252').decode(cp).includes(charsetTexts.windows1252));
  });

  test('compressed pages', async () => {
    const gz = await rawGet(site.url('/gzip-page'));
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.ok(gunzipSync(gz.body).toString().includes(`<h1 itemprop="headline">${articles[0].title}</h1>`));
    const br = await rawGet(site.url('/br-page'));
    assert.equal(br.headers['content-encoding'], 'br');
    assert.ok(brotliDecompressSync(br.body).toString().includes(`<h1 itemprop="headline">${articles[1].title}</h1>`));
    const df = await rawGet(site.url('/deflate-page'));
    assert.equal(df.headers['content-encoding'], 'deflate');
    assert.ok(inflateSync(df.body).toString().includes(articles[2].title));
    // fetch decodes transparently.
    assert.ok((await (await get('/gzip-page')).text()).includes(articles[0].title));
    assert.ok((await (await get('/br-page')).text()).includes(articles[1].title));
  });

  test('large and generated pages', async () => {
    const large = await html('/large?kb=50');
    const size = Buffer.byteLength(large);
    assert.ok(size >= 50 * 1024 && size < 50 * 1024 + 4096, `size ${size}`);
    assert.ok(large.endsWith('</html>\n'));
    assert.equal(await html('/large?kb=50'), large);
    const big = Buffer.byteLength(await html('/large'));
    assert.ok(big >= 200 * 1024 && big < 200 * 1024 + 4096);

    const g1 = await html('/generated/1');
    assert.deepEqual(
      hrefs(g1),
      generatedLinks(1, 2000).map((m) => `/generated/${m}`),
    );
    assert.ok(g1.includes('<h1>Generated page 1</h1>'));
    assert.equal((await get('/generated/2000')).status, 200);
    assert.equal((await get('/generated/2001')).status, 404);
    assert.equal((await get('/generated/0')).status, 404);
    const g5 = await html('/generated/5?total=10');
    for (const href of hrefs(g5)) {
      const m = href.match(/^\/generated\/(\d+)\?total=10$/);
      assert.ok(m && Number(m[1]) <= 10, href);
    }
    assert.equal((await get('/generated/11?total=10')).status, 404);
    // The whole 10-page generated site is reachable from page 1.
    const seen = new Set(['/generated/1?total=10']);
    const queue = [...seen];
    while (queue.length) {
      for (const href of hrefs(await html(queue.shift()!))) {
        if (!seen.has(href)) {
          seen.add(href);
          queue.push(href);
        }
      }
    }
    assert.equal(seen.size, 10);
    const other = await startFixtureSite({ generatedTotal: 3 });
    try {
      assert.equal((await fetch(other.url('/generated/3'))).status, 200);
      assert.equal((await fetch(other.url('/generated/4'))).status, 404);
    } finally {
      await other.close();
    }
  });

  test('JavaScript-rendered and interactive pages', async () => {
    const jsOnly = await html('/js-only');
    assert.match(jsOnly, /<body>\s*<div id="root"><\/div>\s*<script>/);
    assert.ok(jsOnly.includes('setTimeout(') && jsOnly.includes(jsText.heading));
    assert.ok(!jsOnly.includes(`<h1>${jsText.heading}</h1>`), 'heading markup only exists after scripts run');
    const spa = await html('/js-spa');
    assert.ok(spa.includes(`<noscript>${jsText.noscript}</noscript>`) && spa.includes('<div id="app"></div>'));
    const data = await (await get('/api/spa-data')).json();
    assert.deepEqual(data, { heading: jsText.spaHeading, items: jsText.spaItems });
    assert.ok((await html('/interactive/click-to-load')).includes('<button type="button" id="load-more">'));
    assert.ok((await html('/interactive/infinite-scroll')).includes("window.addEventListener('scroll'"));
    const form = await html('/interactive/form');
    assert.ok(form.includes('<input id="name"') && form.includes('id="submit"'));
    assert.ok((await html('/interactive/form?name=Ada')).includes('<p id="greeting">Hello, Ada</p>'));
    assert.ok((await html('/interactive/form?name=%3Cb%3E')).includes('Hello, &lt;b&gt;'));
  });

  test('/headers echoes request headers; cookies are set and shown', async () => {
    const echoed = (await (
      await get('/headers', { headers: { 'x-gleaner-test': 'yes', 'accept-language': 'fr' } })
    ).json()) as Record<string, string>;
    assert.equal(echoed['x-gleaner-test'], 'yes');
    assert.equal(echoed['accept-language'], 'fr');
    assert.equal(echoed.host, `127.0.0.1:${site.port}`);

    const set = await get('/cookies/set');
    assert.equal(set.headers.get('set-cookie'), 'session=gleaner123; Path=/; HttpOnly; SameSite=Lax');
    assert.ok((await set.text()).includes('Cookie set: session=gleaner123'));
    const custom = await get('/cookies/set?name=theme&value=dark&redirect=1', { redirect: 'manual' });
    assert.equal(custom.status, 302);
    assert.equal(custom.headers.get('location'), '/cookies/show');
    assert.ok(custom.headers.get('set-cookie')!.startsWith('theme=dark;'));
    const shown = await (await get('/cookies/show', { headers: { cookie: 'session=gleaner123; theme=dark' } })).text();
    assert.ok(shown.includes('<pre id="cookies">session=gleaner123; theme=dark</pre>'));
    assert.ok((await html('/cookies/show')).includes('No cookies received.'));
  });

  test('documents: content types, magic bytes, ZIP packages', async () => {
    const file = async (path: string): Promise<[string | null, Buffer, Headers]> => {
      const res = await get(path);
      assert.equal(res.status, 200, path);
      return [res.headers.get('content-type'), Buffer.from(await res.arrayBuffer()), res.headers];
    };
    const PK = [0x50, 0x4b, 0x03, 0x04];
    const zips: Record<string, [string, string[]]> = {
      '/files/report.docx': [
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        [
          '[Content_Types].xml',
          '_rels/.rels',
          'word/document.xml',
          'word/_rels/document.xml.rels',
          'word/styles.xml',
          'word/numbering.xml',
        ],
      ],
      '/files/report.xlsx': [
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        [
          '[Content_Types].xml',
          '_rels/.rels',
          'xl/workbook.xml',
          'xl/_rels/workbook.xml.rels',
          'xl/worksheets/sheet1.xml',
          'xl/worksheets/sheet2.xml',
          'xl/sharedStrings.xml',
        ],
      ],
      '/files/slides.pptx': [
        'application/vnd.openxmlformats-officedocument.presentationml.presentation',
        [
          '[Content_Types].xml',
          'ppt/presentation.xml',
          'ppt/slides/slide1.xml',
          'ppt/slides/slide2.xml',
          'ppt/slides/slide3.xml',
          'ppt/notesSlides/notesSlide2.xml',
          'ppt/slideMasters/slideMaster1.xml',
          'ppt/slideLayouts/slideLayout1.xml',
          'ppt/theme/theme1.xml',
        ],
      ],
      '/files/book.epub': [
        'application/epub+zip',
        [
          'mimetype',
          'META-INF/container.xml',
          'OEBPS/content.opf',
          'OEBPS/nav.xhtml',
          'OEBPS/chapter1.xhtml',
          'OEBPS/chapter2.xhtml',
          'OEBPS/chapter3.xhtml',
        ],
      ],
      '/files/document.odt': [
        'application/vnd.oasis.opendocument.text',
        ['mimetype', 'META-INF/manifest.xml', 'content.xml'],
      ],
      '/files/spreadsheet.ods': [
        'application/vnd.oasis.opendocument.spreadsheet',
        ['mimetype', 'META-INF/manifest.xml', 'content.xml'],
      ],
      '/files/presentation.odp': [
        'application/vnd.oasis.opendocument.presentation',
        ['mimetype', 'META-INF/manifest.xml', 'content.xml'],
      ],
    };
    const entriesByPath: Record<string, Map<string, string>> = {};
    for (const [path, [type, required]] of Object.entries(zips)) {
      const [ct, body] = await file(path);
      assert.equal(ct, type, path);
      assert.deepEqual([...body.subarray(0, 4)], PK, path);
      const entries = readZip(body);
      const names = entries.map((e) => e.name);
      for (const r of required) assert.ok(names.includes(r), `${path} has ${r}`);
      if (names.includes('mimetype')) {
        assert.equal(entries[0].name, 'mimetype', `${path}: mimetype first`);
        assert.equal(entries[0].method, 0, `${path}: mimetype stored`);
        assert.equal(entries[0].data.toString(), type);
        assert.equal(body.toString('latin1', 30, 38), 'mimetype'); // name right after the first local header
      }
      const texts = new Map<string, string>();
      for (const e of entries) {
        if (/\.(xml|rels|opf|xhtml|ncx)$/.test(e.name)) {
          const s = e.data.toString('utf8');
          assertWellFormedXml(s, `${path}:${e.name}`);
          texts.set(e.name, s);
        }
      }
      entriesByPath[path] = texts;
    }
    const docx = entriesByPath['/files/report.docx'].get('word/document.xml')!;
    for (const h of documentTexts.docx.headings) assert.ok(docx.includes(`>${h.text}<`), h.text);
    assert.ok(
      docx.includes('<w:numId w:val="1"/>') && docx.includes('<w:tbl>') && docx.includes('<w:hyperlink r:id="rId3"'),
    );
    assert.ok(
      entriesByPath['/files/report.docx'].get('word/_rels/document.xml.rels')!.includes(documentTexts.docx.link.href),
    );
    const workbook = entriesByPath['/files/report.xlsx'].get('xl/workbook.xml')!;
    assert.ok(workbook.includes('<sheet name="Sales"') && workbook.includes('<sheet name="Inventory"'));
    const shared = entriesByPath['/files/report.xlsx'].get('xl/sharedStrings.xml')!;
    for (const s of ['Region', 'North', 'WID-001', 'In Stock']) assert.ok(shared.includes(`>${s}<`), s);
    assert.ok(
      entriesByPath['/files/report.xlsx'].get('xl/worksheets/sheet1.xml')!.includes('<f>SUM(D2:D5)</f><v>9396.5</v>'),
    );
    const pptx = entriesByPath['/files/slides.pptx'];
    documentTexts.pptx.slides.forEach((s, i) =>
      assert.ok(pptx.get(`ppt/slides/slide${i + 1}.xml`)!.includes(`<a:t>${s.title}</a:t>`)),
    );
    assert.ok(pptx.get('ppt/notesSlides/notesSlide2.xml')!.includes(documentTexts.pptx.slides[1].notes!));
    const epub = entriesByPath['/files/book.epub'];
    assert.match(epub.get('OEBPS/content.opf')!, /<spine toc="ncx"><itemref idref="ch1"\/>/);
    documentTexts.epub.chapters.forEach((c, i) =>
      assert.ok(epub.get(`OEBPS/chapter${i + 1}.xhtml`)!.includes(`<h1>${c.title}</h1>`)),
    );

    // PDF, corrupt PDF, misleading names and types.
    const [pdfType, pdf] = await file('/files/report.pdf');
    assert.equal(pdfType, 'application/pdf');
    assert.equal(pdf.toString('latin1', 0, 5), '%PDF-');
    const [dlType, dl] = await file('/download/report');
    assert.equal(dlType, 'application/pdf');
    assert.ok(dl.equals(pdf));
    const [binType, bin] = await file('/files/report.bin');
    assert.equal(binType, 'application/octet-stream');
    assert.ok(bin.equals(pdf));
    const [htmlType, pdfAsHtml] = await file('/files/pdf-as-html');
    assert.equal(htmlType, 'text/html');
    assert.ok(pdfAsHtml.equals(pdf));
    const [, attachment, attHeaders] = await file('/download/attachment');
    assert.equal(attHeaders.get('content-disposition'), 'attachment; filename="quarterly-report.pdf"');
    assert.ok(attachment.equals(pdf));
    const [docBinType, docBin] = await file('/files/document.bin');
    assert.equal(docBinType, 'application/octet-stream');
    assert.deepEqual([...docBin.subarray(0, 4)], PK);
    const [noType, sheet] = await file('/download/spreadsheet');
    assert.equal(noType, null);
    assert.deepEqual([...sheet.subarray(0, 4)], PK);
    const [, corrupt] = await file('/files/corrupt.pdf');
    assert.equal(corrupt.toString('latin1', 0, 5), '%PDF-');
    assert.ok(corrupt.length < pdf.length && !corrupt.includes('%%EOF') && !corrupt.includes('startxref'));

    const [pngType, png] = await file('/files/image.png');
    assert.equal(pngType, 'image/png');
    assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    assert.equal(png.toString('latin1', 12, 16), 'IHDR');
    assert.equal(png.readUInt32BE(16), 16);
    assert.equal(png.readUInt32BE(20), 16);
    assert.equal(png.readUInt32BE(29), crc32(png.subarray(12, 29)), 'IHDR CRC');

    const [csvType, csv] = await file('/files/data.csv');
    assert.equal(csvType, 'text/csv; charset=utf-8');
    assert.deepEqual(parseCsv(csv.toString('utf8')), documentTexts.csv.rows);
    assert.ok(csv.toString('utf8').includes('"Gadget ""Pro"""'));

    const [genType, gen] = await file('/files/generated.pdf?pages=5');
    assert.equal(genType, 'application/pdf');
    assert.match(gen.toString('latin1'), /\/Count 5 /);
    const [, genXlsx] = await file('/files/generated.xlsx?sheets=2&rows=10');
    assert.equal(readZip(genXlsx).filter((e) => e.name.startsWith('xl/worksheets/')).length, 2);
  });

  test('PDF: xref offsets, stream lengths, pages, text operators, Info', () => {
    const report = buildReportPdf();
    const { objects, trailer } = checkPdf(report, 'report.pdf');
    assert.match(trailer, /\/Info 5 0 R/);
    const info = objects.get(5)!;
    assert.ok(
      info.includes(`/Title (${documentTexts.pdf.title})`) && info.includes(`/Author (${documentTexts.pdf.author})`),
    );
    assert.match(objects.get(2)!, /\/Type \/Pages \/Kids \[6 0 R 8 0 R 10 0 R\] \/Count 3/);
    assert.ok(objects.get(3)!.includes('/BaseFont /Helvetica '));
    const page1 = streamData(objects.get(7)!).toString('latin1');
    assert.ok(page1.includes(`/F2 24 Tf 72 720 Td (${documentTexts.pdf.title}) Tj`), 'big title');
    assert.ok(page1.includes('caf\\351'), 'WinAnsi é as an octal escape');
    const page2 = streamData(objects.get(9)!).toString('latin1');
    assert.ok(page2.includes('[(Reg) 15 (ion)] TJ'));
    assert.ok(objects.get(11)!.includes('/FlateDecode'));
    const page3 = streamData(objects.get(11)!).toString('latin1');
    assert.ok(page3.includes('(Conclusion) Tj'));
    assert.ok(page3.includes('(Questions \\(and corrections\\) go to the operations team.) Tj'));

    const bench = buildTextPdf(12);
    const checked = checkPdf(bench, 'bench.pdf');
    assert.match(checked.objects.get(2)!, /\/Count 12 /);
    const last = streamData(checked.objects.get(6 + 2 * 11 + 1)!).toString('latin1');
    assert.ok(last.includes(`(${textPdfPageLines(12)[0]}) Tj`));
    assert.ok(buildTextPdf(12).equals(bench), 'deterministic');
    assert.ok(buildReportPdf().equals(report), 'deterministic');
    assert.ok(buildPng(4, 4, 1).equals(buildPng(4, 4, 1)));
  });

  test('close() resolves promptly with pending slow requests and idle keep-alive connections', async () => {
    const other = await startFixtureSite();
    await (await fetch(other.url('/'))).text(); // leaves an idle keep-alive connection
    const slow = fetch(other.url('/slow')).then(
      () => 'answered',
      () => 'failed',
    );
    const trickle = fetch(other.url('/slow-body?ms=60000')).then(
      (r) =>
        r.text().then(
          () => 'answered',
          () => 'failed',
        ),
      () => 'failed',
    );
    await other.requested(
      'both slow requests',
      () => other.requests.filter((r) => r.path.startsWith('/slow')).length >= 2,
    );
    const t0 = Date.now();
    await other.close();
    assert.ok(Date.now() - t0 < 1000, `close took ${Date.now() - t0} ms`);
    assert.equal(await slow, 'failed');
    assert.equal(await trickle, 'failed');
    await other.close(); // idempotent
    await assert.rejects(fetch(other.url('/')));
  });
});
