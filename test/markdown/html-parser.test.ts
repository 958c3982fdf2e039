// parseHtml (src/markdown/html-parser.ts) must build the tree htmlparser2's parseDocument builds, node for node:
// the cleaning, selectors and converter were written against that tree. Compared on real pages (the WCXB dev
// split when ../shared has it, a sample of it, and the CI sample in test/fixtures/wcxb-sample), on the fixture
// site's pages, on hand-picked edge cases of the tokenizer, and on generated tag soup (fast-check, seeded).
// skipUnrendered must not change the Markdown of any page.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import type { AnyNode, Element } from 'domhandler';
import fc from 'fast-check';
import { parseDocument } from 'htmlparser2';
import { parseHtml } from '../../src/markdown/html-parser.ts';
import { domToMarkdown, htmlToMarkdown } from '../../src/markdown/markdown.ts';
import * as site from '../fixtures/site/pages.ts';
import { findWcxbDev } from '../helpers/wcxb-corpus.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 42);

/** The tree as lines: kind, name, attributes (own, in order), data. */
function lines(root: AnyNode): string[] {
  const out: string[] = [];
  const walk = (n: AnyNode): void => {
    const type = n.type as string;
    if (type === 'root') {
      for (const c of (n as Element).children) walk(c);
    } else if (type === 'text' || type === 'comment') {
      out.push(`${type} ${JSON.stringify((n as unknown as { data: string }).data)}`);
    } else if (type === 'directive') {
      const d = n as unknown as { name: string; data: string };
      out.push(`directive ${d.name} ${JSON.stringify(d.data)}`);
    } else {
      const el = n as Element;
      out.push(`<${type}:${el.name} ${JSON.stringify(Object.entries(el.attribs))}`);
      let prev: AnyNode | null = null;
      for (const c of el.children) {
        // The links the tree's users walk by.
        if (c.parent !== el || c.prev !== prev) out.push(`! bad links at ${el.name}`);
        if (prev !== null && prev.next !== c) out.push(`! bad next at ${el.name}`);
        prev = c;
        walk(c);
      }
      out.push(`</${el.name}>`);
    }
  };
  walk(root);
  return out;
}

/** The first difference between the two parsers' trees of html, or null. */
function difference(html: string): string | null {
  const theirs = lines(parseDocument(html));
  const ours = lines(parseHtml(html, { maxDepth: Infinity }));
  for (let i = 0; i < Math.max(theirs.length, ours.length); i++) {
    if (theirs[i] !== ours[i])
      return `line ${i}: htmlparser2 ${theirs[i]?.slice(0, 160)} | ours ${ours[i]?.slice(0, 160)}`;
  }
  return null;
}

function gzPages(dir: string, stride: number): { name: string; html: string }[] {
  const html = join(dir, 'html');
  return readdirSync(html)
    .filter((f) => f.endsWith('.html.gz'))
    .sort()
    .filter((_, i) => i % stride === 0)
    .map((f) => ({ name: f, html: gunzipSync(readFileSync(join(html, f))).toString('utf8') }));
}

const sample = gzPages(resolve(import.meta.dirname, '../fixtures/wcxb-sample'), 1);
const wcxb = findWcxbDev(resolve(import.meta.dirname, '../..'));
// A fifth of the dev split (300 pages, ~85 MB) keeps this under ~15 s; WCXB_PARSER_STRIDE=1 checks every page.
const real = wcxb === null ? [] : gzPages(wcxb, Number(process.env.WCXB_PARSER_STRIDE ?? 5));

function sitePages(): { name: string; html: string }[] {
  const ctx = { origin: 'http://127.0.0.1:1', mainOrigin: 'http://localhost:1', blogOrigin: 'http://blog.localhost:1' };
  const pages: [string, string | null][] = [
    ['home', site.homePage(ctx)],
    ['article 1', site.articlePage(1, ctx)],
    ['article 2', site.articlePage(2, ctx)],
    ['blog', site.blogListPage(1)],
    ['product', site.productPage(ctx)],
    ['forum', site.forumPage()],
    ['about', site.aboutPage()],
    ['pii', site.piiPage()],
    ['spa', site.jsSpaPage()],
    ['click to load', site.clickToLoadPage()],
    ['infinite scroll', site.infiniteScrollPage()],
    ['meta refresh', site.metaRefreshPage()],
  ];
  const out = pages.filter((p): p is [string, string] => p[1] !== null).map(([name, html]) => ({ name, html }));
  assert.ok(out.length >= 10);
  return out;
}

describe('parseHtml builds htmlparser2’s tree', () => {
  test('on the CI sample of real pages', () => {
    assert.ok(sample.length > 0);
    for (const p of sample) assert.equal(difference(p.html), null, p.name);
  });

  test('on the WCXB dev split (a fifth of it), when ../shared has it', { skip: wcxb === null }, () => {
    for (const p of real) assert.equal(difference(p.html), null, p.name);
  });

  test('on the fixture site’s pages', () => {
    for (const p of sitePages()) assert.equal(difference(p.html), null, p.name);
  });

  const cases: [string, string][] = [
    ['implied ends', '<p>a<div>b</div><li>1<li>2<tr><td>x<td>y<tr><th>z</table><h1>t<h2>u'],
    ['an end tag with no start', '<div>a</span>b</div></p>c<br></br>d</img>e'],
    ['nested forms', '<form a=1><form b=2><input></form>x</form>y'],
    ['raw text', '<script>if (a</b) x("</scr" + "ipt>")</script ><style>p>a{}</STYLE><title>a &amp; b</title>'],
    ['raw text never closed', '<p>x<textarea>a &lt; b</textare'],
    ['plaintext', '<plaintext>a <b> &amp; </plaintext> c'],
    [
      'foreign content',
      '<svg viewBox="0 0 1 1"><clippath/><foreignObject><p>x<title>y</title></foreignObject><path/></svg><math><mi/></math>',
    ],
    ['image is img outside svg', '<image src=a><svg><image href=b></svg>'],
    ['comments', '<!--a--><!----><!--->x<!-->y<!--a--!>b<!--a--->c<!--a-- -->d<!- e ->f<!>g<?xml v?>h'],
    ['comment never closed', 'a<!--b--'],
    ['cdata', '<![CDATA[x]]><svg><![CDATA[y<z]]>w</svg><![CDAT[q]>r<![CDATA[never'],
    ['doctypes', '<!DOCTYPE html><!doctypehtml><!doc><!doctyp x>y<!DOCTYPE'],
    [
      'attributes',
      '<a href=x title="a&amp;b" data-x=\'1\' checked b = c d=e/f g="h"i=j =k l=m&ampn o="&ampp" A=1 a=2>t</a>',
    ],
    ['self-closing', '<div/>a<br/>b<img / src=x>c<p / >d</p>'],
    ['end tags with junk', '</div foo="bar>">a</ >b</>c</3>d</p x>'],
    ['text with lone <', 'a < b <3 <> c<'],
    ['entities', '&amp;&lt;&gt;&quot;&#39;&#x41;&copy&nbsp;&notin;&notit;&unknown;&#0;&#xD800;'],
    ['end of input in a tag', '<div class="a'],
    ['end of input after an end tag name', '<b>x</b '],
    ['end of input after </', 'x</'],
    ['uppercase and odd names', '<DIV CLASS=A><Svg><ClipPath/></SVG><a<b>x</a<b><x-y:z>q</x-y:z>'],
  ];
  for (const [name, html] of cases) {
    test(`edge case: ${name}`, () => assert.equal(difference(html), null));
  }

  test('on generated tag soup (fast-check, seeded)', () => {
    const token = fc.constantFrom(
      '<',
      '</',
      '>',
      '/>',
      '<!--',
      '-->',
      '--!>',
      '-',
      '<!',
      '<?',
      '<![CDATA[',
      ']]>',
      '<!doctype html>',
      '=',
      '"',
      "'",
      ' ',
      '\n',
      '&',
      '&amp;',
      '&lt',
      '&#x3c;',
      'a',
      'X',
      'é',
      ...'p div span li ul table tr td th form input br img image svg math mi title desc foreignObject clipPath script style textarea plaintext xmp iframe noscript select option h1 h2 body head html'
        .split(' ')
        .flatMap((t) => [`<${t}>`, `</${t}>`, `<${t} `, `<${t.toUpperCase()}/>`]),
      ' class=a',
      ' id="x y"',
      " data-a='b'",
      ' hidden',
      ' style="display:none"',
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 60 }), (tokens) => {
        const html = tokens.join('');
        assert.equal(difference(html), null, JSON.stringify(html));
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });
});

describe('skipUnrendered', () => {
  test('leaves the Markdown of every page unchanged', () => {
    for (const p of [...sample, ...real.filter((_, i) => i % 3 === 0), ...sitePages()]) {
      const full = domToMarkdown(parseHtml(p.html), { baseUrl: 'https://example.com/a/b' });
      assert.equal(htmlToMarkdown(p.html, { baseUrl: 'https://example.com/a/b' }), full, p.name);
    }
  });

  test('leaves the content out and the element in', () => {
    const doc = parseHtml('<p>a<svg><title>T</title><path/></svg><script>x()</script>b</p>', { skipUnrendered: true });
    const p = doc.children[0] as Element;
    assert.deepEqual(
      p.children.map((c) => (c.type === 'text' ? c.data : `${(c as Element).name}:${(c as Element).children.length}`)),
      ['a', 'svg:0', 'script:0', 'b'],
    );
  });
});

test('a page nested deeper than browsers build is flattened; a shallow one is left alone', () => {
  const deep = '<div>'.repeat(600) + 'x' + '</div>'.repeat(600);
  let depth = 0;
  for (let n: AnyNode = parseHtml(deep); 'children' in n && n.children.length > 0; n = n.children[0]) depth++;
  assert.ok(depth <= 513, `depth ${depth}`);
  assert.equal(difference('<div>'.repeat(400) + 'x'), null);
});
