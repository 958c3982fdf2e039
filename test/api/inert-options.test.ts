// Options the SDKs send that do nothing here are never silent (issue 22): fastMode has a real effect
// (a JavaScript shell is returned as served, not rendered, and the warning says so); the cloud-only
// ones (checkPromptInjection, domainTools, toolDetail, stopOnContent) are named in the answer's
// `warning`, on scrape, search and crawl. Without them, no such warning.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromiumAvailable } from '../../src/scrape/engines/browser.ts';
import { type SiteAndService, startSiteAndService, stopSiteAndService } from '../helpers/service.ts';
import { jsText } from '../fixtures/site/index.ts';

let s: SiteAndService;

before(async () => {
  s = await startSiteAndService();
});

after(async () => {
  await stopSiteAndService(s?.svc, s?.site);
});

describe('options without an effect here are named in warning', () => {
  test('scrape: checkPromptInjection, domainTools, toolDetail', async () => {
    const plain = await s.api.scrape({ url: s.site.url('/about'), maxAge: 0 });
    assert.equal(plain.status, 200, plain.text);
    assert.equal(plain.json.data.warning, undefined);

    const res = await s.api.scrapeRaw({
      url: s.site.url('/about'),
      checkPromptInjection: true,
      domainTools: ['x'],
      toolDetail: { a: 1 },
    });
    assert.equal(res.status, 200, res.text);
    const warning: string = res.json.data.warning;
    assert.match(warning, /checkPromptInjection: the content was not screened/);
    assert.match(warning, /domainTools, toolDetail: ignored/);
    assert.match(res.json.data.markdown, /About the Gleaner Gazette/);

    const off = await s.api.scrapeRaw({ url: s.site.url('/about'), checkPromptInjection: false });
    assert.equal(off.json.data.warning, undefined, 'false asks for nothing');
  });

  test('the same notes on every page of a batch (scrape options)', async () => {
    const start = await s.api('POST', '/v2/batch/scrape', {
      urls: [s.site.url('/about'), s.site.url('/articles/1')],
      checkPromptInjection: true,
    });
    assert.equal(start.status, 200, start.text);
    const done = await s.api.waitForBatch(start.json.id, 60_000);
    assert.equal(done.status, 'completed');
    assert.equal(done.data.length, 2);
    for (const doc of done.data) assert.match(doc.warning, /checkPromptInjection/);
  });

  test('crawl: stopOnContent', async () => {
    const res = await s.api('POST', '/v2/crawl', { url: s.site.url('/about'), limit: 1, stopOnContent: true });
    assert.equal(res.status, 200, res.text);
    assert.match(res.json.warning, /stopOnContent: ignored/);
    const plain = await s.api('POST', '/v2/crawl', { url: s.site.url('/about'), limit: 1 });
    assert.equal(plain.json.warning, undefined);
    await s.api.waitForCrawl(res.json.id, 60_000);
    await s.api.waitForCrawl(plain.json.id, 60_000);
  });

  test('search: domainTools, toolDetail', async () => {
    const res = await s.api('POST', '/v2/search', { query: 'gazette', domainTools: true, toolDetail: 'full' });
    assert.equal(res.status, 200, res.text);
    assert.match(res.json.warning, /domainTools, toolDetail: ignored/);
  });
});

describe('fastMode', { skip: !chromiumAvailable() && 'Chromium not installed' }, () => {
  test('a JavaScript shell is returned as served, with a warning; without fastMode it is rendered', async () => {
    const rendered = await s.api.scrape({ url: s.site.url('/js-only'), maxAge: 0 });
    assert.equal(rendered.status, 200, rendered.text);
    assert.equal(rendered.json.data.metadata.engine, 'browser');
    assert.ok(rendered.json.data.markdown.includes(jsText.heading), rendered.json.data.markdown);

    const fast = await s.api.scrapeRaw({ url: s.site.url('/js-only'), maxAge: 0, fastMode: true });
    assert.equal(fast.status, 200, fast.text);
    assert.equal(fast.json.data.metadata.engine, 'http');
    assert.ok(!fast.json.data.markdown.includes(jsText.heading), 'not rendered');
    assert.match(fast.json.data.warning, /fastMode: the page looks rendered by JavaScript/);

    // A page that is not a shell: fastMode changes nothing and says nothing.
    const page = await s.api.scrapeRaw({ url: s.site.url('/about'), maxAge: 0, fastMode: true });
    assert.equal(page.json.data.warning, undefined);
  });
});
