// The DOM depth cap (src/markdown/dom-depth.ts): nesting past the cap is flattened, keeping the text
// and leaf elements in document order; shallower documents are untouched.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import render from 'dom-serializer';
import { parseDocument } from 'htmlparser2';
import { capDomDepth } from '../../src/markdown/dom-depth.ts';
import { htmlToMarkdown } from '../../src/markdown/markdown.ts';

test('nesting past the cap is flattened, text and leaves kept in order', () => {
  const doc = parseDocument(`<div><p>a<b>b<i>c<br>d</i></b>e<img src="x.png"></p></div>`);
  capDomDepth(doc, 2);
  assert.equal(render(doc), '<div><p>abc<br>de<img src="x.png"></p></div>');
  const p = doc.children[0] as unknown as { children: { type: string; data?: string; name?: string }[] };
  const leaves = (p.children[0] as unknown as { children: { type: string; data?: string; name?: string }[] }).children;
  assert.deepEqual(
    leaves.map((n) => n.data ?? n.name),
    ['a', 'b', 'c', 'br', 'd', 'e', 'img'],
  );
});

test('a shallow document is untouched', () => {
  const html = '<div><p>a<b>b</b></p><ul><li>x</li></ul></div>';
  const doc = parseDocument(html);
  capDomDepth(doc);
  assert.equal(render(doc), html);
});

test('100,000 levels: converted without overflowing the stack', () => {
  const md = htmlToMarkdown(`${'<div>'.repeat(100_000)}<p>deep <b>text</b></p>`);
  assert.match(md, /deep/);
  assert.match(md, /text/);
});
