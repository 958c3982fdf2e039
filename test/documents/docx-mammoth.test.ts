// DOCX held against mammoth (a maintained DOCX reader) in the same run, on a file a word processor wrote
// (test/fixtures/legacy/report.docx, LibreOffice's "MS Word 2007 XML" export of report.fodt) and on the code-built
// rich DOCX: every paragraph mammoth finds is in our markdown, in the same order, and we find at least its
// headings, list items and table cells. Where mammoth reads a construct we missed, this fails first.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import mammoth from 'mammoth';
import { parseDocument } from '../../src/documents/index.ts';
import { markdownText } from '../helpers/wcxb-score.ts';
import { buildRichDocx } from '../fixtures/site/documents.ts';

const norm = (s: string) => s.replace(/\s+/g, ' ').trim();
const count = (html: string, tag: RegExp) => (html.match(tag) ?? []).length;

const cases: [string, () => Buffer][] = [
  ['report.docx (LibreOffice)', () => readFileSync(new URL('../fixtures/legacy/report.docx', import.meta.url))],
  ['rich DOCX (built in code)', buildRichDocx],
];

for (const [name, build] of cases) {
  test(`${name}: mammoth's paragraphs, in order, and its structure`, async () => {
    const bytes = build();
    const ours = (await parseDocument(bytes, 'docx')).markdown;
    const text = norm(markdownText(ours).replace(/\[\^\d+\]:?/g, ' '));
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
