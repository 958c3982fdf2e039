// Title, description and links of an HTML page in one streaming pass (src/crawl/links.ts),
// including the fixture's home page.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { extractPageLinks } from '../../src/crawl/links.ts';
import { type FixtureSite, homeText, startFixtureSite } from '../fixtures/site/index.ts';

test('title, description, canonical and links resolved against <base href>', () => {
  const html = `<!DOCTYPE html><html><head>
<title>  Hello
  &amp; welcome </title>
<base href="https://cdn.example.com/base/">
<meta name="description" content="  A   page ">
<link rel="canonical" href="/canonical">
<meta name="robots" content="index, nofollow">
</head><body>
<svg><title>Icon title</title></svg>
<a href="rel">r</a> <a href="/abs?b=2&amp;a=1#frag">a</a> <area href="https://other.org/x">
<a href="#top">t</a> <a href="mailto:a@b.c">m</a> <a href="javascript:void(0)">j</a> <a>none</a>
<a href="rel">again</a>
</body></html>`;
  const p = extractPageLinks(html, 'https://example.com/dir/page');
  assert.equal(p.title, 'Hello & welcome');
  assert.equal(p.description, 'A page');
  assert.equal(p.canonical, 'https://cdn.example.com/canonical');
  assert.equal(p.nofollow, true);
  assert.deepEqual(p.links, [
    'https://cdn.example.com/base/rel',
    'https://cdn.example.com/abs?a=1&b=2',
    'https://other.org/x',
  ]);
});

test('title falls back to og:title, then the first h1; description to og:description', () => {
  const og = extractPageLinks(
    '<meta property="og:title" content="OG"><meta property="og:description" content="OG desc"><h1>H</h1>',
    'https://x.test/',
  );
  assert.equal(og.title, 'OG');
  assert.equal(og.description, 'OG desc');
  const h1 = extractPageLinks('<body><h1> The <em>heading</em> </h1></body>', 'https://x.test/');
  assert.equal(h1.title, 'The heading');
  assert.equal(h1.description, undefined);
  assert.equal(extractPageLinks('<p>nothing</p>', 'https://x.test/').title, undefined);
});

test('ignoreQueryParameters drops link queries', () => {
  const p = extractPageLinks('<a href="/p?x=1">1</a><a href="/p?x=2">2</a>', 'https://x.test/', {
    ignoreQueryParameters: true,
  });
  assert.deepEqual(p.links, ['https://x.test/p']);
});

test("links after a tracking pixel's self-closed <iframe /> in a <noscript>, or a stray <![CDATA[, are found", () => {
  const p = extractPageLinks(
    '<body><noscript><iframe src="https://tags.example/ns.html" height="0" /></noscript><a href="/a">A</a>' +
      '<![CDATA[ <a href="/b">B</a></body>',
    'https://x.test/',
  );
  assert.deepEqual(p.links, ['https://x.test/a', 'https://x.test/b']);
});

let site: FixtureSite;
before(async () => {
  site = await startFixtureSite();
});
after(() => site.close());

test("the fixture's home page: every http(s) link once, nothing else", async () => {
  const res = await fetch(site.url('/'));
  const p = extractPageLinks(await res.text(), site.url('/'));
  assert.equal(p.title, homeText.title);
  assert.equal(p.description, homeText.intro);
  assert.equal(p.nofollow, false);
  const paths = new Set(p.links.filter((l) => l.startsWith(site.origin)).map((l) => l.slice(site.origin.length)));
  for (const path of [
    '/',
    '/articles/1',
    '/articles/2',
    '/articles/3',
    '/blog/',
    '/private/secret',
    '/products/widget?color=blue&size=m',
  ]) {
    assert.ok(paths.has(path), path);
  }
  assert.ok(p.links.includes('https://example.com/'));
  assert.ok(p.links.includes('http://example.org/partners'));
  assert.ok(p.links.includes(`${site.hostOrigin('blog')}/`));
  assert.ok(p.links.every((l) => /^https?:\/\//.test(l) && !l.includes('#')));
  assert.equal(new Set(p.links).size, p.links.length);
});
