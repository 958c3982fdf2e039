// No text lost or changed by the converter: generated HTML (text full of Markdown's punctuation — `*`, `_`,
// backticks, brackets, `<`, `&`, `#`, `-`, `+`, `!`, `\`, `~`, `|` — inside paragraphs, emphasis, links, code, headings,
// list items, quotes and table cells) is converted, the Markdown rendered again by commonmark.js (the CommonMark
// reference implementation), and the text a reader sees must be the same on both sides, whitespace runs aside.
// Literal markup characters that were not escaped would change it (`2*3*4` read as emphasis, `[a](b)` as a link).
// Seeded (FUZZ_SEED, default 42).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HtmlRenderer, Parser } from 'commonmark';
import type { AnyNode, Element } from 'domhandler';
import fc from 'fast-check';
import { parseHtml } from '../../src/markdown/html-parser.ts';
import { htmlToMarkdown } from '../../src/markdown/markdown.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 42);

/** The text a reader sees: text nodes (and images' alt) in order, whitespace runs as one space, edges trimmed. */
function seenText(html: string): string {
  const parts: string[] = [];
  const walk = (n: AnyNode): void => {
    if (n.type === 'text') parts.push((n as unknown as { data: string }).data);
    else if ('children' in n) {
      const el = n as Element;
      // Block boundaries and line breaks read as a space.
      if (el.name === 'br' || el.name === 'p' || el.name === 'li' || /^h\d$/.test(el.name) || el.name === 'td') {
        parts.push(' ');
      }
      for (const c of el.children) walk(c);
      if (el.name !== 'br') parts.push(' ');
    }
  };
  walk(parseHtml(html));
  return parts.join('').replace(/\s+/g, ' ').trim();
}

const render = (md: string) => new HtmlRenderer().render(new Parser().parse(md));

/** HTML-escaped text with Markdown's punctuation in it. */
const text = fc
  .array(
    fc.constantFrom(
      'a',
      'b',
      'x',
      '1',
      '2',
      ' ',
      ' ',
      '*',
      '**',
      '_',
      '__',
      '`',
      '``',
      '[',
      ']',
      '(',
      ')',
      '&lt;',
      '&gt;',
      '&amp;',
      '&amp;amp;',
      '#',
      '-',
      '+',
      '.',
      '!',
      '\\',
      '~',
      '~~',
      '|',
      '=',
      ':',
      'http://x.y',
      '<b>',
    ),
    { minLength: 1, maxLength: 14 },
  )
  .map((xs) => xs.join('').replace(/<b>/g, '&lt;b&gt;'))
  .filter((s) => s.trim() !== '');

const inline = fc.oneof(
  text,
  text.map((t) => `<em>${t}</em>`),
  text.map((t) => `<strong>${t}</strong>`),
  text.map((t) => `<a href="/p?q=1">${t}</a>`),
  text.map((t) => `<code>${t}</code>`),
);
const line = fc.array(inline, { minLength: 1, maxLength: 4 }).map((xs) => xs.join(' '));
const block = fc.oneof(
  line.map((l) => `<p>${l}</p>`),
  line.map((l) => `<h2>${l}</h2>`),
  fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => `<ul>${ls.map((l) => `<li>${l}</li>`).join('')}</ul>`),
  line.map((l) => `<blockquote><p>${l}</p></blockquote>`),
);

test('the text of generated HTML survives conversion and a CommonMark renderer', () => {
  fc.assert(
    fc.property(fc.array(block, { minLength: 1, maxLength: 3 }), (blocks) => {
      const html = blocks.join('\n');
      const md = htmlToMarkdown(html);
      assert.equal(seenText(render(md)), seenText(html), `markdown:\n${md}`);
    }),
    { seed: SEED, numRuns: 1500 },
  );
});
