// No text lost or changed by the converter: generated HTML (text full of Markdown's punctuation — `*`, `_`,
// backticks, brackets, `<`, `&`, `#`, `-`, `+`, `!`, `\`, `~`, `|` — inside paragraphs, emphasis, links, code, headings,
// list items, quotes and table cells) is converted, the Markdown rendered again by commonmark.js (the CommonMark
// reference implementation), and the text a reader sees must be the same on both sides, whitespace runs aside.
// Literal markup characters that were not escaped would change it (`2*3*4` read as emphasis, `[a](b)` as a link).
// Seeded (FUZZ_SEED, default 42); the count of cases that lose text is printed and has a ceiling that may only go
// down: what is left are emphasis delimiter runs that meet (`*a **b***c`: emphasis ending in strong before a letter,
// emphasis right after emphasis), which CommonMark's rule of three will not read back; TEXT_KEPT_VERBOSE=1 lists them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { HtmlRenderer, Parser } from 'commonmark';
import type { AnyNode, Element } from 'domhandler';
import fc from 'fast-check';
import { parseHtml } from '../../src/markdown/html-parser.ts';
import { htmlToMarkdown } from '../../src/markdown/markdown.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 42);

const BLOCKS = new Set(['br', 'p', 'li', 'ul', 'ol', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'hr']);

/** The text a reader sees: text nodes (and images' alt) in order, whitespace runs as one space, edges trimmed. */
function seenText(html: string): string {
  const parts: string[] = [];
  const walk = (n: AnyNode): void => {
    if (n.type === 'text') parts.push((n as unknown as { data: string }).data);
    else if ('children' in n) {
      const el = n as Element;
      // Block boundaries and line breaks read as a space; inline elements run on.
      const block = BLOCKS.has(el.name);
      if (block) parts.push(' ');
      for (const c of el.children) walk(c);
      if (block) parts.push(' ');
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

const em = text.map((t) => `<em>${t}</em>`);
const strong = text.map((t) => `<strong>${t}</strong>`);
const link = text.map((t) => `<a href="/p?q=1">${t}</a>`);
const code = text.map((t) => `<code>${t}</code>`);
const inline = fc.oneof(text, em, strong, link, code);
/**
 * Inline content nested one level: emphasis in a link, a link or code in emphasis, text beside them. Not emphasis
 * directly inside emphasis of the same kind: the converter keeps that nesting (`****x****`, as CommonMark nests it),
 * and where the inner one ends before the outer or a letter follows both (`****a**b**`, `*&*a**b`) the delimiter
 * runs cannot be read back; a known gap (docs/design/markdown.md).
 */
const nested = fc.oneof(
  inline,
  fc.tuple(fc.oneof(text, em, link, code), text).map(([i, t]) => `<strong>${i}${t}</strong>`),
  fc.tuple(text, fc.oneof(text, strong, link, code)).map(([t, i]) => `<em>${t}${i}</em>`),
  fc.tuple(inline, inline).map(([a, b]) => `<a href="/n">${a}${b}</a>`),
  fc.tuple(text, text).map(([a, b]) => `${a}<br>${b}`),
);
const line = fc.array(nested, { minLength: 1, maxLength: 4 }).map((xs) => xs.join(''));
const block = fc.oneof(
  line.map((l) => `<p>${l}</p>`),
  line.map((l) => `<h2>${l}</h2>`),
  fc.array(line, { minLength: 1, maxLength: 3 }).map((ls) => `<ul>${ls.map((l) => `<li>${l}</li>`).join('')}</ul>`),
  line.map((l) => `<blockquote><p>${l}</p></blockquote>`),
);

/** Generated cases whose text does not survive, at most (the figure printed; it may only go down). */
const MAX_LOST = 30;
const CASES = 2000;

test('the text of generated HTML survives conversion and a CommonMark renderer', () => {
  const samples = fc.sample(fc.array(block, { minLength: 1, maxLength: 3 }), { seed: SEED, numRuns: CASES });
  const lost: string[] = [];
  for (const blocks of samples) {
    const html = blocks.join('\n');
    const md = htmlToMarkdown(html);
    if (seenText(render(md)) !== seenText(html)) lost.push(`${html}\n  → ${md.replace(/\n/g, '\n    ')}`);
  }
  console.log(`text kept: ${CASES - lost.length} / ${CASES} generated cases (seed ${SEED})`);
  if (process.env.TEXT_KEPT_VERBOSE) for (const l of lost) console.log(l);
  assert.ok(
    lost.length <= MAX_LOST,
    `${lost.length} cases lost text (at most ${MAX_LOST}); the first:\n${lost.slice(0, 3).join('\n')}`,
  );
});
