// DOCX held against mammoth (a maintained DOCX reader) in the same run, on files Word wrote (test/fixtures/word:
// mammoth's own Word 2010/2016 test documents), on one LibreOffice wrote (test/fixtures/legacy/report.docx, its
// "MS Word 2007 XML" export of report.fodt) and on the code-built rich DOCX: every paragraph mammoth finds is in
// our markdown, in the same order, and we find at least its headings, list items and table cells. Where mammoth
// reads a construct we missed, this fails first.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import mammoth from 'mammoth';
import { parseDocument } from '../../src/documents/index.ts';
import { markdownText } from '../helpers/wcxb-score.ts';
import { buildRichDocx } from '../fixtures/site/documents.ts';

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
const count = (html: string, tag: RegExp) => (html.match(tag) ?? []).length;

const word = (name: string) => readFileSync(new URL(`../fixtures/word/${name}`, import.meta.url));
const WORD_FILES = [
  'comments.docx',
  'footnote-hyperlink.docx',
  'footnotes.docx',
  'simple-list.docx',
  'single-paragraph.docx',
  'strict-format.docx',
  'strikethrough.docx',
  'tables.docx',
  'text-box.docx',
  'tiny-picture.docx',
  'underline.docx',
];

const cases: [string, () => Buffer][] = [
  ...WORD_FILES.map((f): [string, () => Buffer] => [`${f} (Word)`, () => word(f)]),
  ['report.docx (LibreOffice)', () => readFileSync(new URL('../fixtures/legacy/report.docx', import.meta.url))],
  ['rich DOCX (built in code)', buildRichDocx],
];

for (const [name, build] of cases) {
  test(`${name}: mammoth's paragraphs, in order, and its structure`, async () => {
    const bytes = build();
    const ours = (await parseDocument(bytes, 'docx')).markdown;
    // Footnote references are glued to their word, definitions start a line; struck text keeps its words.
    const text = norm(
      markdownText(ours)
        .replace(/\[\^\d+\]:/g, ' ')
        .replace(/\[\^\d+\]|~~/g, ''),
    );
    const raw = (await mammoth.extractRawText({ buffer: bytes })).value;
    // mammoth puts footnotes and comments last; ours are footnote definitions, and comments are not content.
    const paragraphs = raw
      .split(/\n+/)
      .map(norm)
      .filter((p) => p && !/^\d+\.\s*$/.test(p));
    let from = 0;
    for (const p of paragraphs) {
      const at = text.indexOf(p, from);
      assert.ok(at >= 0, `${name}: mammoth's paragraph missing: ${JSON.stringify(p)}\nours: ${text}`);
      if (at >= 0) from = at;
    }
    const html = (await mammoth.convertToHtml({ buffer: bytes })).value;
    // mammoth lists footnotes as list items of its own; ours are `[^n]:` definitions.
    const items = count(html, /<li(?! id="(?:foot|end)note-)[ >]/g);
    const oursHeadings = (ours.match(/^#{1,6} /gm) ?? []).length;
    const oursItems = (ours.match(/^\s*(?:[-*+]|\d+\.) /gm) ?? []).length;
    const oursCells = (ours.match(/^\|.*\|$/gm) ?? [])
      .filter((l) => !/^\|(\s*-+\s*\|)+$/.test(l))
      .reduce((n, l) => n + l.split('|').length - 2, 0);
    assert.ok(
      oursHeadings >= count(html, /<h[1-6][ >]/g),
      `${name}: headings ${oursHeadings} vs mammoth ${count(html, /<h[1-6][ >]/g)}`,
    );
    assert.ok(oursItems >= items, `${name}: list items ${oursItems} vs mammoth ${items}`);
    assert.ok(
      oursCells >= count(html, /<t[dh][ >]/g),
      `${name}: table cells ${oursCells} vs mammoth ${count(html, /<t[dh][ >]/g)}`,
    );
  });
}

test('Word-authored files: the constructs each holds, as markdown', async () => {
  const md = async (name: string) => (await parseDocument(word(name), 'docx')).markdown;
  assert.equal(await md('footnotes.docx'), 'Ouch[^1].[^2]\n\n[^1]: A tachyon walks into a bar.\n[^2]: Fin.');
  assert.equal(await md('footnote-hyperlink.docx'), '[^1]\n\n[^1]: [Example](http://www.example.com)');
  assert.equal(await md('simple-list.docx'), '- Apple\n- Banana');
  assert.equal(
    await md('tables.docx'),
    'Above\n\n| Top left | Top right |\n| --- | --- |\n| Bottom left | Bottom right |\n\nBelow',
  );
  assert.equal(await md('strikethrough.docx'), "~~Today's Special: Salmon~~ Sold out");
  // A reviewer's comment is not the document's text (mammoth leaves comments out by default too).
  assert.equal(await md('comments.docx'), 'Ouch.');
  assert.equal(await md('text-box.docx'), 'Datum plane');
  assert.equal(await md('strict-format.docx'), 'Test');
  assert.equal(await md('tiny-picture.docx'), '![Picture 1](media/image1.png)');
});

test('a Word-authored picture, embedded on request, is the same data: URI mammoth gives', async () => {
  const bytes = word('tiny-picture.docx');
  const ours = (await parseDocument(bytes, 'docx', { embedImages: true })).markdown;
  const theirs = (await mammoth.convertToHtml({ buffer: bytes })).value.match(/src="([^"]+)"/)?.[1];
  assert.ok(theirs?.startsWith('data:image/png;base64,'));
  assert.equal(ours, `![Picture 1](${theirs})`);
});
