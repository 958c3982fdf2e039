// Search engines' redirect wrappers come off result links, in markdown and in `links`: a saved result page of
// Google, Bing, DuckDuckGo or Yahoo keeps its real targets. Other links, and wrappers around anything but an
// http(s) URL, are left as they are.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scrapeRequest } from '../../src/contract/scrape.ts';
import { unwrapSearchRedirect } from '../../src/markdown/redirects.ts';
import { planScrape } from '../../src/scrape/plan.ts';
import { transformHtml } from '../../src/scrape/transform/index.ts';

const target = 'https://example.org/guide?lang=en&page=2';
const bing = `a1${Buffer.from(target).toString('base64url')}`;

test('the wrappers of the major engines, absolute and relative (as a saved page has them)', () => {
  const cases = [
    `/url?q=${encodeURIComponent(target)}&sa=U&ved=2ahUKEw`,
    `https://www.google.com/url?q=${encodeURIComponent(target)}&sa=U`,
    `https://www.google.co.uk/url?url=${encodeURIComponent(target)}&rct=j`,
    `https://www.bing.com/ck/a?!&&p=4f1e2d&ptn=3&u=${bing}&ntb=1`,
    `/ck/a?!&&p=4f1e2d&u=${bing}`,
    `//duckduckgo.com/l/?uddg=${encodeURIComponent(target)}&rut=abc`,
    `https://html.duckduckgo.com/l/?uddg=${encodeURIComponent(target)}`,
    `https://r.search.yahoo.com/_ylt=AwrE/RV=2/RE=1700000000/RO=10/RU=${encodeURIComponent(target)}/RK=2/RS=xyz-`,
  ];
  for (const href of cases) assert.equal(unwrapSearchRedirect(href), target, href);
});

test('everything else is left alone', () => {
  for (const href of [
    'https://example.org/url?q=https://elsewhere.example/', // not an engine's host
    '/url?q=javascript:alert(1)', // not an http(s) target
    '/url?q=relative/path',
    'https://www.bing.com/ck/a?u=not-base64-prefixed',
    'https://www.google.com/search?q=gleaner',
    'mailto:someone@example.org',
  ])
    assert.equal(unwrapSearchRedirect(href), href, href);
});

test('a saved result page: markdown links and `links` carry the real targets, titles kept', () => {
  const html = `<html><body><div id="search">
    <div class="g"><a href="/url?q=${encodeURIComponent(target)}&amp;sa=U" title="The guide"><h3>A guide to gleaning</h3></a>
      <span>Everything about gleaning fields after the harvest, with maps and a calendar.</span></div>
    <div class="g"><a href="https://www.bing.com/ck/a?!&amp;&amp;p=1&amp;u=a1${Buffer.from('https://example.net/b').toString('base64url')}&amp;ntb=1">Second result</a>
      <span>Another page about the same subject, from another site entirely, for comparison.</span></div>
  </div></body></html>`;
  const out = transformHtml({
    html,
    url: 'https://www.google.com/search?q=gleaning',
    sourceURL: 'https://www.google.com/search?q=gleaning',
    statusCode: 200,
    contentType: 'text/html',
    onlyMainContent: false,
    blockAds: true,
    removeBase64Images: true,
    formats: planScrape(scrapeRequest.parse({ url: 'https://www.google.com/', formats: ['markdown', 'links'] }))
      .formats,
  });
  assert.match(
    out.markdown ?? '',
    /\[\s*#*\s*A guide to gleaning\s*\]\(https:\/\/example\.org\/guide\?lang=en&page=2 "The guide"\)/,
  );
  assert.match(out.markdown ?? '', /\[Second result\]\(https:\/\/example\.net\/b\)/);
  assert.ok(out.links?.includes(target), JSON.stringify(out.links));
  assert.ok(out.links?.includes('https://example.net/b'), JSON.stringify(out.links));
});
