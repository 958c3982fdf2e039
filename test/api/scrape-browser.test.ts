// POST /v2/scrape with the browser engine, end to end: engine choice (JS-rendered pages upgrade to
// the browser, plain pages stay on HTTP), screenshots served from our file route, actions and
// their outputs, named profiles across scrapes, and a service without Chromium.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createApiKey, ensureTeam } from '../../src/store/teams.ts';
import { type FixtureSite, jsText } from '../fixtures/site/index.ts';
import { type Api, apiClient } from '../helpers/api.ts';
import { type TestService, startSiteAndService, startTestService, stopSiteAndService } from '../helpers/service.ts';

let site: FixtureSite;
let svc: TestService;
let api: Api;

async function download(url: string): Promise<{ status: number; type: string | null; body: Buffer }> {
  const res = await fetch(url); // no API key: file URLs are capabilities
  return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

function pngSize(b: Buffer): { width: number; height: number } {
  assert.equal(b.subarray(1, 4).toString('latin1'), 'PNG');
  return { width: b.readUInt32BE(16), height: b.readUInt32BE(20) };
}

before(async () => ({ site, svc, api } = await startSiteAndService()));
after(() => stopSiteAndService(svc, site));

describe('engine choice', () => {
  test('a page only JavaScript fills is rendered in the browser; a plain page stays on HTTP', async () => {
    const js = await api.scrape({ url: site.url('/js-only') });
    assert.equal(js.status, 200, js.text);
    assert.equal(js.json.data.metadata.engine, 'browser');
    assert.ok(js.json.data.markdown.includes(jsText.heading), js.json.data.markdown);
    assert.ok(js.json.data.markdown.includes(jsText.paragraphs[0]));

    const spa = await api.scrape({ url: site.url('/js-spa') });
    assert.equal(spa.json.data.metadata.engine, 'browser');
    for (const item of jsText.spaItems) assert.ok(spa.json.data.markdown.includes(item), spa.json.data.markdown);

    const plain = await api.scrape({ url: site.url('/articles/2'), maxAge: 0 });
    assert.equal(plain.json.data.metadata.engine, 'http');
  });

  test('waitFor and mobile run in the browser; the rendered copy is cached as such', async () => {
    const url = site.url(`/js-only?w=${Date.now()}`);
    const res = await api.scrape({ url, waitFor: 200 });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.data.metadata.engine, 'browser');
    const again = await api.scrape({ url });
    assert.equal(again.json.data.metadata.cacheState, 'hit');
    assert.equal(again.json.data.metadata.engine, 'browser');
    assert.ok(again.json.data.markdown.includes(jsText.heading));

    const mobile = await api.scrape({
      url: site.url('/about'),
      mobile: true,
      formats: ['markdown'],
      maxAge: 0,
    });
    assert.equal(mobile.json.data.metadata.engine, 'browser');
  });
});

describe('screenshots', () => {
  test('a viewport screenshot is a URL of our own storage, readable without a key, of the requested size', async () => {
    const res = await api.scrape({
      url: site.url('/articles/1'),
      formats: ['markdown', { type: 'screenshot', viewport: { width: 800, height: 600 } }],
    });
    assert.equal(res.status, 200, res.text);
    const shot = res.json.data.screenshot as string;
    assert.match(shot, new RegExp(`^${svc.url}/v2/files/[0-9a-f]{32}\\.png$`));
    const file = await download(shot);
    assert.equal(file.status, 200);
    assert.equal(file.type, 'image/png');
    assert.deepEqual(pngSize(file.body), { width: 800, height: 600 });
    assert.ok(res.json.data.markdown.length > 100, 'other formats still come');
    assert.equal((await download(shot.replace(/[0-9a-f]{32}/, '0'.repeat(32)))).status, 404);
  });

  test('quality gives a JPEG; full page is taller than the viewport; zero data retention gives a data URL', async () => {
    const jpeg = await api.scrape({ url: site.url('/articles/1'), formats: [{ type: 'screenshot', quality: 60 }] });
    const file = await download(jpeg.json.data.screenshot);
    assert.equal(file.type, 'image/jpeg');
    assert.equal(file.body[0], 0xff);
    assert.equal(file.body[1], 0xd8);

    const full = await api.scrape({ url: site.url('/large?kb=50'), formats: [{ type: 'screenshot', fullPage: true }] });
    const { height } = pngSize((await download(full.json.data.screenshot)).body);
    assert.ok(height > 800, `full page height ${height}`);

    const zdr = await api.scrape({ url: site.url('/articles/1'), formats: ['screenshot'], zeroDataRetention: true });
    assert.match(zdr.json.data.screenshot, /^data:image\/png;base64,/);
    pngSize(Buffer.from(zdr.json.data.screenshot.split(',')[1], 'base64'));
  });
});

describe('actions', () => {
  test('clicks, scrapes, scripts, screenshots and PDFs come back in data.actions', async () => {
    const res = await api.scrape({
      url: site.url('/interactive/click-to-load'),
      formats: ['markdown'],
      actions: [
        { type: 'click', selector: '#load-more' },
        { type: 'click', selector: '#load-more' },
        { type: 'scrape' },
        { type: 'executeJavascript', script: 'document.querySelectorAll("li").length' },
        { type: 'screenshot', viewport: { width: 640, height: 480 } },
        { type: 'pdf', format: 'A4' },
      ],
    });
    assert.equal(res.status, 200, res.text);
    const a = res.json.data.actions;
    assert.equal(a.scrapes.length, 1);
    assert.ok(a.scrapes[0].html.includes('Item 10'));
    assert.deepEqual(a.javascriptReturns, [{ type: 'number', value: 15 }]);
    assert.ok(res.json.data.markdown.includes('Item 15'), 'the content is read after the actions');
    assert.deepEqual(pngSize((await download(a.screenshots[0])).body), { width: 640, height: 480 });
    const pdf = await download(a.pdfs[0]);
    assert.equal(pdf.type, 'application/pdf');
    assert.equal(pdf.body.subarray(0, 5).toString('latin1'), '%PDF-');
    assert.equal(res.json.data.metadata.engine, 'browser');
  });

  test('a form is filled with click, write and press', async () => {
    const res = await api.scrape({
      url: site.url('/interactive/form'),
      actions: [
        { type: 'click', selector: '#name' },
        { type: 'write', text: 'Ada' },
        { type: 'press', key: 'Enter' },
        { type: 'wait', selector: '#greeting' },
      ],
      onlyMainContent: false,
    });
    assert.equal(res.status, 200, res.text);
    assert.ok(res.json.data.markdown.includes('Hello, Ada'), res.json.data.markdown);
  });

  test('a failing action is a 400 naming its index; actions are never cached', async () => {
    const res = await api.scrape({
      url: site.url('/interactive/form'),
      timeout: 15000,
      actions: [
        { type: 'wait', milliseconds: 10 },
        { type: 'executeJavascript', script: 'throw new Error("boom")' },
      ],
    });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.json.code, 'SCRAPE_ACTION_ERROR');
    assert.match(res.json.error, /Action 1 \(executeJavascript\)/);
    assert.match(res.json.error, /boom/);
    const plain = await api.scrape({ url: site.url('/interactive/form'), maxAge: 600_000, minAge: 1 });
    assert.equal(plain.json.code, 'SCRAPE_NO_CACHED_DATA', 'the action scrape stored nothing in the cache');
  });
});

describe('profiles', () => {
  test("a profile's cookie survives to the next scrape, for its own team only", async () => {
    const name = `p-${Date.now()}`;
    const set = await api.scrape({
      url: site.url('/cookies/set?name=visit&value=v42'),
      profile: { name },
      formats: ['markdown'],
    });
    assert.equal(set.status, 200, set.text);
    const show = await api.scrape({ url: site.url('/cookies/show'), profile: { name }, onlyMainContent: false });
    assert.ok(show.json.data.markdown.includes('visit=v42'), show.json.data.markdown);

    // Read-only use (saveChanges false) does not write back.
    await api.scrape({ url: site.url('/cookies/set?name=other&value=x'), profile: { name, saveChanges: false } });
    const after = await api.scrape({ url: site.url('/cookies/show'), profile: { name }, onlyMainContent: false });
    assert.ok(!after.json.data.markdown.includes('other=x'), after.json.data.markdown);

    const team = await ensureTeam(svc.db, `profiles-${Date.now()}`);
    const { key } = await createApiKey(svc.db, team.id, { name: 'other' });
    const theirs = await apiClient(svc, key).scrape({
      url: site.url('/cookies/show'),
      profile: { name },
      onlyMainContent: false,
    });
    assert.ok(!theirs.json.data.markdown.includes('visit=v42'), 'another team has its own profiles');
  });
});

describe('without Chromium', () => {
  let bare: TestService;
  let bareApi: Api;
  before(async () => {
    bare = await startTestService({ env: { CHROMIUM_PATH: '/nonexistent/chromium' } });
    bareApi = apiClient(bare);
  });
  after(() => bare?.destroy());

  test('browser-only requests get 503 naming what to install; the rest still works', async () => {
    const shot = await bareApi.scrape({ url: site.url('/articles/1'), formats: ['screenshot'] });
    assert.equal(shot.status, 503, shot.text);
    assert.equal(shot.json.code, 'BROWSER_UNAVAILABLE');
    assert.match(shot.json.error, /apt-get install chromium|CHROMIUM_PATH/);

    const plain = await bareApi.scrape({ url: site.url('/articles/1') });
    assert.equal(plain.status, 200);
    const js = await bareApi.scrape({ url: site.url('/js-only') });
    assert.equal(js.status, 200);
    assert.equal(js.json.data.metadata.engine, 'http');
    const mobile = await bareApi.scrape({ url: site.url('/about'), mobile: true });
    assert.equal(mobile.status, 200);
    assert.match(mobile.json.data.warning, /mobile/);
  });
});
