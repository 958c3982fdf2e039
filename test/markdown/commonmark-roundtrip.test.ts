// Round trip over the CommonMark spec (commonmark-spec): each example's expected HTML is converted to markdown
// by htmlToMarkdown, that markdown is rendered again by commonmark.js (the reference implementation), and the
// two HTMLs are compared as normalised trees of tags and text. Counts per section and overall are printed
// (ROUNDTRIP_VERBOSE=1 also prints every failing example); the floors below cannot silently regress.
//
// Normalisation (both sides alike), chosen so that only differences a reader of the markdown would see count:
// - Entities decoded; runs of whitespace collapsed to one space; whitespace at the edges of block elements and
//   between blocks dropped; comments, processing instructions and doctypes dropped.
// - Only elements CommonMark can express are kept (p, h1–h6, blockquote, ul, ol, li, pre, code, em, strong, a,
//   img, hr); any other element (div, table, span, custom tags, raw HTML) is replaced by its content, as a
//   block where HTML makes it one, since the converter deliberately renders raw HTML as its content (CommonMark
//   has no tables: the spec has them only as raw HTML). Nesting is compared as is: `<em><em>x</em></em>` is not
//   `<em>x</em>`.
// - Attributes compared: a[href,title], img[src,alt,title], ol[start] (absent = 1), code[class]; order ignored.
//   URLs are compared percent-decoded (commonmark.js percent-encodes destinations).
// - `<br>` counts as a line break in text, i.e. as whitespace: the converter writes `<br>` as a plain newline
//   by design (docs/design/markdown.md), which a renderer shows as a soft break.
// - Tight and loose lists are the same: a `p` directly inside an `li` is replaced by its content. Loose inline
//   content directly in the document, a blockquote or an unkept block element is an (implicit) paragraph.
// - `i`, `b`, `s`/`strike` are `em`, `strong`, `del`; CommonMark has no strikethrough, so `<del>x</del>` compares
//   as the text `~~x~~` (what a GFM renderer reads as `<del>`). Script and style content is not shown: dropped.
// - Whitespace at the edges of an inline element counts as outside it (`<a> x </a>` = ` <a>x</a> `); inline
//   code is compared trimmed (the converter moves its edge spaces outside).
// - Empty paragraphs, headings, blockquotes, code blocks, links and emphasis (no text, image or rule) are
//   dropped: nothing a reader sees. Empty list items are kept (a reader sees a bullet).
// - Code block text is compared exactly except for trailing whitespace on each line, runs of blank lines and
//   leading and trailing blank lines (the converter drops those by design).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { HtmlRenderer, Parser } from 'commonmark';
import type { ChildNode, Element } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import { htmlToMarkdown } from '../../src/markdown/markdown.ts';

interface SpecExample {
  markdown: string;
  html: string;
  section: string;
  number: number;
}
const spec = createRequire(import.meta.url)('commonmark-spec') as { tests: SpecExample[] };

/** Elements compared as such; `i`, `b`, `s` and `strike` count as `em`, `strong` and `del`. */
const INLINE_KEEP = new Set(['code', 'em', 'strong', 'a', 'img']);
const BLOCK_KEEP = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'ul', 'ol', 'li', 'pre', 'hr']);
const ALIAS: Record<string, string> = { i: 'em', b: 'strong', s: 'del', strike: 'del' };
/** HTML's block-level elements that markdown has no form for: replaced by their content, as a block. */
const BLOCK_OTHER = new Set(
  (
    'div table tbody thead tfoot tr td th caption section article header footer nav aside main figure figcaption ' +
    'details summary dl dt dd form fieldset center address hgroup textarea'
  ).split(' '),
);
/** Container blocks: loose inline content directly inside them is an implicit paragraph. */
const CONTAINER = new Set(['blockquote']);
/** Blocks dropped when they hold no text, image or rule: nothing a reader sees. */
const DROP_EMPTY = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'blockquote', 'pre', 'code', 'a', 'em', 'strong']);
const ATTRS: Record<string, string[]> = {
  a: ['href', 'title'],
  img: ['src', 'alt', 'title'],
  ol: ['start'],
  code: ['class'],
};

function url(u: string): string {
  try {
    return decodeURI(u);
  } catch {
    return u;
  }
}

function attrs(name: string, el: Element): string {
  const keep = ATTRS[name];
  if (keep === undefined) return '';
  let s = '';
  for (const k of keep) {
    let v = el.attribs[k];
    if (v === undefined || (k === 'start' && v === '1') || (k === 'alt' && v === '')) continue;
    if (k === 'href' || k === 'src') v = url(v);
    if (k === 'title' || k === 'alt') v = v.replace(/\s+/g, ' ').trim();
    s += ` ${k}=${JSON.stringify(v)}`;
  }
  return s;
}

/** A serialised piece: block-level, or inline (text and inline elements). */
interface Piece {
  block: boolean;
  s: string;
}

function pieces(nodes: ChildNode[], inPre: boolean, out: Piece[], inLi = false): Piece[] {
  for (const n of nodes) {
    if (n.type === 'text') {
      out.push({ block: false, s: inPre ? n.data : n.data.replace(/\s+/g, ' ') });
      continue;
    }
    if (n.type !== 'tag') continue; // comments, directives, script and style (not shown)
    const el = n as Element;
    const name = ALIAS[el.name] ?? el.name;
    if (name === 'br') {
      out.push({ block: false, s: inPre ? '\n' : ' ' });
    } else if (name === 'hr') {
      out.push({ block: true, s: '<hr>' });
    } else if (name === 'img') {
      out.push({ block: false, s: `<img${attrs(name, el)}>` });
    } else if (name === 'del') {
      // CommonMark has no strikethrough: `~~x~~` is what a GFM renderer reads as <del>.
      out.push({ block: false, s: edges('~~', join(pieces(el.children, inPre, []), false), '~~') });
    } else if (INLINE_KEEP.has(name)) {
      const inner = join(pieces(el.children, inPre || name === 'code', []), false);
      if (name === 'code' && inPre) out.push({ block: false, s: `<code${attrs(name, el)}>${inner}</code>` });
      else if (name === 'code') out.push({ block: false, s: isEmpty(inner) ? ' ' : ` <code>${inner.trim()}</code> ` });
      else if (DROP_EMPTY.has(name) && isEmpty(inner)) out.push({ block: false, s: inner });
      else out.push({ block: false, s: edges(`<${name}${attrs(name, el)}>`, inner, `</${name}>`) });
    } else if (BLOCK_KEEP.has(name)) {
      const pre = inPre || name === 'pre';
      let inner = join(pieces(el.children, pre, [], name === 'li'), CONTAINER.has(name));
      if (name === 'pre')
        inner = inner
          .replace(/[ \t]+$/gm, '')
          .replace(/\n{2,}/g, '\n')
          .replace(/^(<code[^>]*>)?\n+/, '$1')
          .replace(/\n+(<\/code>)?$/, '$1');
      if (DROP_EMPTY.has(name) && isEmpty(inner)) continue;
      if (name === 'p' && inLi) out.push({ block: true, s: ` ${inner} ` });
      else out.push({ block: true, s: `<${name}${attrs(name, el)}>${inner}</${name}>` });
    } else if (BLOCK_OTHER.has(name)) {
      out.push({ block: true, s: join(pieces(el.children, inPre, []), true) });
    } else {
      pieces(el.children, inPre, out);
    }
  }
  return out;
}

/** An inline element's text with the whitespace at its edges moved outside it (the same to a reader). */
function edges(open: string, inner: string, close: string): string {
  const t = inner.trim();
  if (t === inner) return open + inner + close;
  return (/^\s/.test(inner) ? ' ' : '') + open + t + close + (/\s$/.test(inner) ? ' ' : '');
}

function isEmpty(inner: string): boolean {
  return !/<(img|hr)\b/.test(inner) && inner.replace(/<[^>]*>/g, '').trim() === '';
}

/** Join pieces; in a container, each run of inline pieces between blocks becomes a paragraph. */
function join(ps: Piece[], container: boolean): string {
  if (!container) return ps.map((p) => p.s).join('');
  let s = '';
  let run = '';
  const end = () => {
    if (!isEmpty(run)) s += `<p>${run}</p>`;
    run = '';
  };
  for (const p of ps) {
    if (p.block) {
      end();
      s += p.s;
    } else run += p.s;
  }
  end();
  return s;
}

const BLOCK_TAG = [...BLOCK_KEEP].join('|');
const EDGE_SPACE = new RegExp(`\\s*(</?(?:${BLOCK_TAG})(?: [^>]*)?>)\\s*`, 'g');

function normalise(html: string): string {
  const doc = parseDocument(html);
  let s = join(pieces(doc.children, false, []), true);
  // Whitespace outside code blocks collapses (text and `<br>` alike), and goes at block edges.
  s = s
    .split(/(<pre>[\s\S]*?<\/pre>)/)
    .map((part) => (part.startsWith('<pre>') ? part : part.replace(/\s+/g, ' ').replace(EDGE_SPACE, '$1')))
    .join('');
  return s.trim();
}

const reader = new Parser();
const writer = new HtmlRenderer();

interface Result {
  example: SpecExample;
  ok: boolean;
  markdown: string;
  got: string;
  want: string;
}

function roundTrip(ex: SpecExample): Result {
  const markdown = htmlToMarkdown(ex.html);
  const rendered = writer.render(reader.parse(markdown));
  const want = normalise(ex.html);
  const got = normalise(rendered);
  return { example: ex, ok: want === got, markdown, got, want };
}

/** Floors: examples passing overall (of 652 in commonmark-spec 0.31.2) and in the Emphasis section (of 132). */
const FLOOR_OVERALL = 640;
const FLOOR_EMPHASIS = 130;

test('CommonMark spec round trip: expected HTML → markdown → HTML keeps the tree of tags and text', () => {
  const results = spec.tests.map(roundTrip);
  const bySection = new Map<string, { ok: number; all: number }>();
  for (const r of results) {
    const e = bySection.get(r.example.section) ?? { ok: 0, all: 0 };
    e.all++;
    if (r.ok) e.ok++;
    bySection.set(r.example.section, e);
  }
  const ok = results.filter((r) => r.ok).length;
  const lines = [...bySection].map(([name, e]) => `  ${name.padEnd(36)} ${String(e.ok).padStart(4)} / ${e.all}`);
  const pct = ((100 * ok) / results.length).toFixed(1);
  console.log(`CommonMark round trip: ${ok} / ${results.length} (${pct}%)\n${lines.join('\n')}`);
  if (process.env.ROUNDTRIP_VERBOSE)
    for (const r of results)
      if (!r.ok)
        console.log(
          `\n#${r.example.number} ${r.example.section}\nhtml: ${JSON.stringify(r.example.html)}\nmd:   ${JSON.stringify(r.markdown)}\nwant: ${r.want}\ngot:  ${r.got}`,
        );
  assert.ok(ok >= FLOOR_OVERALL, `overall ${ok} below the floor ${FLOOR_OVERALL}`);
  const em = bySection.get('Emphasis and strong emphasis')!;
  assert.ok(em.ok >= FLOOR_EMPHASIS, `Emphasis ${em.ok} below the floor ${FLOOR_EMPHASIS}`);
});
