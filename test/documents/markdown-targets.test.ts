// markdownTargets: the links and images of a converted document's markdown (POST /v2/parse and
// scrapes of document URLs run it on the API's event loop, so it must stay linear in the length).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { markdownTargets } from '../../src/documents/convert.ts';

test('links and images, each once, with titles, angle brackets and escaped brackets in the text', () => {
  const md =
    '[a](https://a.example/) ![pic](img.png "Title") [again](https://a.example/)\n' +
    '[esc \\] aped](<https://b.example/x>) [no link] (x) [broken](no close ![i](<>)';
  assert.deepEqual(markdownTargets(md), {
    links: ['https://a.example/', 'https://b.example/x'],
    images: ['img.png', '<'],
  });
  assert.deepEqual(markdownTargets('[a [b](c) ![d](e) [f\\\n](g)'), { links: ['c'], images: ['e'] });
});

test('runs of unclosed brackets take linear time, not quadratic (40,000 "[" took 20 s on the event loop)', () => {
  for (const text of ['['.repeat(1_000_000), '\\['.repeat(500_000), '![ '.repeat(300_000), '[](x "'.repeat(150_000)]) {
    const t = performance.now();
    markdownTargets(text);
    assert.ok(performance.now() - t < 2000, `${JSON.stringify(text.slice(0, 6))}: ${performance.now() - t} ms`);
  }
});
