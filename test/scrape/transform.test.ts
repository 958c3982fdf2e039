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
