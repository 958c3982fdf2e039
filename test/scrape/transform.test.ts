// transformHtml's parsing: the page is read as a browser reads it before the content filter runs.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { noFormats } from '../../src/scrape/plan.ts';
import { transformHtml } from '../../src/scrape/transform/index.ts';

function markdown(html: string): string {
  return (
    transformHtml({
      html,
      url: 'https://x.test/t',
      sourceURL: 'https://x.test/t',
      statusCode: 200,
      contentType: 'text/html',
      onlyMainContent: true,
      blockAds: true,
      removeBase64Images: true,
      formats: { ...noFormats(), markdown: true },
    }).markdown ?? ''
  );
}

test('a stray <![CDATA[ in the body is a bogus comment, not the rest of the page; script CDATA is untouched', () => {
  const para = 'A post of the thread, long enough to be the content of the page and more than a label.';
  const md = markdown(
    `<html><head><script>//<![CDATA[\nvar a = "<p>in script</p>";\n//]]></script></head>` +
      `<body><![CDATA[\n<div id="top"></div><main><h1>Thread</h1><p>${para}</p><p>${para}</p></main></body></html>`,
  );
  assert.match(md, /# Thread/);
  assert.match(md, /A post of the thread/);
  assert.doesNotMatch(md, /in script/);
});

test("a tracking pixel's self-closed <iframe /> in a <noscript> ends with it, not with the page", () => {
  const para = 'The landing page text, long enough to be the content of the page and more than a label.';
  const page = (pixel: string) =>
    markdown(
      `<html><body><noscript>${pixel}</noscript>` +
        `<main><h1>Fastest path to production</h1><p>${para}</p><p>${para}</p></main></body></html>`,
    );
  for (const pixel of [
    '<iframe src="https://tags.example/ns.html?id=X" height="0" width="0" style="display: none" />',
    '<iframe src="https://tags.example/ns.html?id=X">',
  ]) {
    const md = page(pixel);
    assert.match(md, /# Fastest path to production/);
    assert.match(md, /The landing page text/);
  }
  // A closed iframe is left as written.
  assert.match(page('<iframe src="https://tags.example/ns.html"></iframe>'), /The landing page text/);
});
