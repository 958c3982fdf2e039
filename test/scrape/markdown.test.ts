// The HTML→Markdown converter: golden cases (test/scrape/markdown/cases/NN-name.html → NN-name.md,
// hand-checked, compared exactly; an `<!-- options: {...} -->` first line overrides options), the
// DOM entry point, and properties that must hold for any input: no trailing whitespace, never two
// blank lines in a row, no throw on malformed input, no stack overflow on very deep nesting.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { describe, test } from 'node:test';
import { selectAll } from 'css-select';
import { parseDocument } from 'htmlparser2';
import { generateCorpus } from '../../bench/corpus/html-pages.ts';
import { type MarkdownOptions, domToMarkdown, htmlToMarkdown } from '../../src/markdown/markdown.ts';

const BASE = 'https://example.com/docs/page.html';
const dir = new URL('./markdown/cases/', import.meta.url).pathname;
const cases = readdirSync(dir)
  .filter((f) => f.endsWith('.html'))
  .sort()
  .map((f) => f.slice(0, -5));

function optionsOf(html: string): MarkdownOptions {
  const m = /^<!-- options: (.*) -->/.exec(html);
  return { baseUrl: BASE, ...(m ? (JSON.parse(m[1]) as MarkdownOptions) : {}) };
}

/** A line diff (LCS) of expected vs actual, `-` expected only, `+` actual only, with line numbers. */
function diff(expected: string, actual: string): string {
  const a = expected.split('\n');
  const b = actual.split('\n');
  const lcs: number[][] = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--)
    for (let j = b.length - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out: string[] = [];
  let i = 0;
  let j = 0;
  const show = (s: string) => JSON.stringify(s).slice(1, -1);
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push(`  ${String(j + 1).padStart(3)} ${show(b[j])}`);
      i++;
      j++;
    } else if (i < a.length && (j >= b.length || lcs[i + 1][j] >= lcs[i][j + 1])) {
      out.push(`- ${String(i + 1).padStart(3)} ${show(a[i++])}`);
    } else {
      out.push(`+ ${String(j + 1).padStart(3)} ${show(b[j++])}`);
    }
  }
  return out.join('\n');
}

/** The output invariants: trimmed, no trailing whitespace on any line, no run of blank lines. */
function assertWellFormed(md: string, label: string): void {
  assert.equal(md, md.trim(), `${label}: output is not trimmed`);
  const lines = md.split('\n');
  for (let i = 0; i < lines.length; i++) {
    assert.ok(!/[ \t]$/.test(lines[i]), `${label}: trailing whitespace on line ${i + 1}: ${JSON.stringify(lines[i])}`);
  }
  assert.ok(!md.includes('\n\n\n'), `${label}: more than one blank line in a row`);
}

describe('golden cases', () => {
  test('there are at least 35 cases, each with its expected output', () => {
    assert.ok(cases.length >= 35, `only ${cases.length} cases`);
    const files = new Set(readdirSync(dir));
    for (const c of cases) assert.ok(files.has(`${c}.md`), `${c}.md is missing`);
  });
  for (const name of cases) {
    test(name, () => {
      const html = readFileSync(`${dir}${name}.html`, 'utf8');
      const expected = readFileSync(`${dir}${name}.md`, 'utf8').replace(/\n$/, '');
      const actual = htmlToMarkdown(html, optionsOf(html));
      if (actual !== expected)
        assert.fail(`${name}: output differs from ${name}.md (- expected, + actual):\n${diff(expected, actual)}`);
      assertWellFormed(actual, name);
    });
  }
});

describe('domToMarkdown', () => {
  test('takes an already parsed node, or several, and gives the same result as the string API', () => {
    const html = '<body><p>One <a href="/a">link</a></p><div id="x"><h2>Two</h2><p>Three</p></div></body>';
    const doc = parseDocument(html);
    assert.equal(domToMarkdown(doc, { baseUrl: BASE }), htmlToMarkdown(html, { baseUrl: BASE }));
    const picked = selectAll('p', doc);
    assert.equal(domToMarkdown(picked, { baseUrl: BASE }), 'One [link](https://example.com/a)\n\nThree');
    assert.equal(domToMarkdown(selectAll('#x', doc)[0]), '## Two\n\nThree');
  });

  test('without a base URL, relative links stay relative; base64 images are removed by default', () => {
    const md = htmlToMarkdown('<p><a href="../x">x</a> <img src="data:image/png;base64,AAAA" alt="a"></p>');
    assert.equal(md, '[x](../x) ![a](<Base64-Image-Removed>)');
  });

  test('empty and whitespace-only input give an empty string', () => {
    assert.equal(htmlToMarkdown(''), '');
    assert.equal(htmlToMarkdown('   \n\t '), '');
    assert.equal(htmlToMarkdown('<div><span> </span></div><script>x</script>'), '');
    assert.equal(domToMarkdown([]), '');
  });
});

describe('properties', () => {
  test('generated realistic pages: well-formed output, boilerplate scripts and styles dropped', () => {
    for (const page of generateCorpus(6)) {
      const md = htmlToMarkdown(page.html, { baseUrl: BASE });
      assert.ok(md.length > 1000, page.name);
      assertWellFormed(md, page.name);
      assert.ok(!md.includes('gtag('), `${page.name}: script content leaked`);
      assert.ok(!md.includes('{color:#333'), `${page.name}: style content leaked`);
    }
  });

  test('fuzz: random malformed tag soup never throws and stays well-formed', () => {
    let seed = 42;
    const rnd = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 4294967296;
    };
    const pick = <T>(xs: T[]) => xs[Math.floor(rnd() * xs.length)];
    const tags =
      'p div span b i em strong a ul ol li table tr td th thead pre code blockquote h1 h3 br hr img dl dt dd figure figcaption s sup input label'.split(
        ' ',
      );
    const texts = [
      'text',
      ' ',
      '\n  ',
      '*',
      '_x_',
      '`',
      '[a](b)',
      '#',
      '- ',
      '1. ',
      '|',
      '&amp;',
      '&lt;p&gt;',
      '\\',
      '!',
      '~~',
      '&nbsp;',
      '<',
      '>',
      '   spaced   ',
    ];
    const attrs = [
      '',
      ' href="/l"',
      ' href="javascript:x"',
      ' src="/i.png"',
      ' src="data:image/png;base64,AA"',
      ' colspan="3"',
      ' rowspan="0"',
      ' hidden',
      ' class="language-js"',
      ' type="checkbox" checked',
      ' start="-4"',
      ' style="display:none"',
    ];
    for (let doc = 0; doc < 300; doc++) {
      let html = '';
      for (let k = 0, n = 20 + Math.floor(rnd() * 200); k < n; k++) {
        const r = rnd();
        if (r < 0.4) html += `<${pick(tags)}${pick(attrs)}>`;
        else if (r < 0.65) html += `</${pick(tags)}>`;
        else if (r < 0.67) html += pick(['<!--', '<![CDATA[', '<script>', '</', '<a href="', '&#', '<<>>']);
        else html += pick(texts);
      }
      let md = '';
      assert.doesNotThrow(() => {
        md = htmlToMarkdown(html, { baseUrl: BASE });
      }, html);
      assertWellFormed(md, `fuzz #${doc}: ${html.slice(0, 300)}`);
    }
  });

  test('10,000 nested divs (and spans, links, emphasis) neither throw nor overflow the stack', () => {
    const n = 10_000;
    const divs = '<div>'.repeat(n) + 'deep text' + '</div>'.repeat(n);
    assert.equal(htmlToMarkdown(divs), 'deep text');
    const unclosed = '<div><p>'.repeat(n) + 'never closed';
    assert.equal(htmlToMarkdown(unclosed), 'never closed');
    const inline = '<span><b><i><a href="/x">'.repeat(n) + 'x';
    assert.equal(htmlToMarkdown(inline, { baseUrl: BASE }), '***[x](https://example.com/x)***');
    const quotes = '<blockquote>'.repeat(200) + 'q';
    assert.equal(htmlToMarkdown(quotes), '> '.repeat(200) + 'q');
    const lists = '<ul><li>'.repeat(500) + 'item';
    const md = htmlToMarkdown(lists);
    assertWellFormed(md, 'nested lists');
    assert.equal(md.split('\n').length, 1, 'items with nothing but a sublist share their marker line');
    assert.ok(md.endsWith('- - - item'));
  });

  test('large input: a 2 MB page with a 20,000-row table converts in bounded time (generous bound: shared machine)', () => {
    const row = '<tr><td>cell <b>bold</b></td><td><a href="/r">link</a></td></tr>';
    const html = '<p>' + 'word '.repeat(50_000) + '</p><table>' + row.repeat(20_000) + '</table>';
    const t = performance.now();
    const md = htmlToMarkdown(html, { baseUrl: BASE });
    assert.ok(performance.now() - t < 5000);
    assert.equal(md.split('\n').length, 2 + 20_001);
  });
});
