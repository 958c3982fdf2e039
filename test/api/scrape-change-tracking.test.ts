// Formats changeTracking and branding through POST /v2/scrape: the first scrape of a URL is new,
// an unchanged page same, an edited page changed with a git-style diff, a gone page removed;
// json mode compares extracted fields; tags and teams keep separate histories; the 400s. Branding
// comes from the fixture's styled page rendered in Chromium. (Module tests:
// test/scrape/change-tracking.test.ts, test/scrape/branding.test.ts.)
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createApiKey, ensureTeam } from '../../src/store/teams.ts';
import { type FixtureSite, brandStyle } from '../fixtures/site/index.ts';
import { type Api, type ScrapeFormatBody, apiClient } from '../helpers/api.ts';
import { type TestService, startSiteAndService, stopSiteAndService } from '../helpers/service.ts';

describe('changeTracking and branding formats', () => {
  let svc: TestService;
  let api: Api;
  let site: FixtureSite;
  let server: http.Server;
  let origin: string;
  // What the changing page serves now (status, body).
  let page = { status: 200, body: '' };
  const article = (price: string, extra = '') =>
    `<!doctype html><html><head><title>Kettle</title></head><body><main><h1>Kettle</h1>
     <p>A steel kettle for the stove.</p><p>Price: ${price}</p>${extra}</main></body></html>`;

  before(async () => {
    ({ site, svc, api } = await startSiteAndService());
    server = http.createServer((_req, res) =>
      res.writeHead(page.status, { 'content-type': 'text/html' }).end(page.body),
    );
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    await stopSiteAndService(svc, site);
    await new Promise((resolve) => server?.close(resolve));
  });

  const track = async (
    path: string,
    format: ScrapeFormatBody = { type: 'changeTracking', modes: ['git-diff'] },
    key?: string,
  ) => {
    const res = await (key ? apiClient(svc, key) : api).scrape({
      url: `${origin}${path}`,
      formats: ['markdown', format],
    });
    assert.equal(res.status, 200, res.text);
    return res.json.data;
  };

  test('new, same, changed (git-style diff), removed; the live page is compared, not a cached copy', async () => {
    page = { status: 200, body: article('$30') };
    const first = await track('/kettle');
    assert.equal(first.changeTracking.changeStatus, 'new');
    assert.equal(first.changeTracking.previousScrapeAt, null);
    assert.equal(first.changeTracking.visibility, 'visible');
    const same = await track('/kettle');
    assert.equal(same.changeTracking.changeStatus, 'same');
    assert.ok(Date.parse(same.changeTracking.previousScrapeAt) > 0);
    assert.equal(same.changeTracking.diff, '');
    page = { status: 200, body: article('$35') };
    const changed = await track('/kettle');
    assert.equal(changed.changeTracking.changeStatus, 'changed', 'not served from the cache');
    const diff: string = changed.changeTracking.diff;
    assert.match(diff, /^--- previous\n\+\+\+ current\n@@ /);
    assert.match(diff, /^-Price: \$30$/m);
    assert.match(diff, /^\+Price: \$35$/m);
    page = { status: 404, body: '<html><body><h1>Not found</h1></body></html>' };
    const removed = await track('/kettle');
    assert.equal(removed.changeTracking.changeStatus, 'removed');
  });

  test('json mode: fields that changed, previous and current', async () => {
    const format: ScrapeFormatBody = {
      type: 'changeTracking',
      modes: ['json'],
      schema: { type: 'object', properties: { price: { type: 'string' } } },
    };
    page = { status: 200, body: article('$12') };
    const first = await track('/tea', format);
    assert.equal(first.changeTracking.changeStatus, 'new');
    page = { status: 200, body: article('$14') };
    const second = await track('/tea', format);
    assert.equal(second.changeTracking.changeStatus, 'changed');
    assert.deepEqual(second.changeTracking.json, { price: { previous: '$12', current: '$14' } });
    assert.equal(second.changeTracking.diff, undefined, 'no git-diff mode asked');
  });

  test('tags and teams have separate histories', async () => {
    page = { status: 200, body: article('$50') };
    assert.equal((await track('/pot')).changeTracking.changeStatus, 'new');
    assert.equal((await track('/pot', { type: 'changeTracking', tag: 'hourly' })).changeTracking.changeStatus, 'new');
    assert.equal((await track('/pot', { type: 'changeTracking', tag: 'hourly' })).changeTracking.changeStatus, 'same');
    const other = await ensureTeam(svc.db, 'changes-other');
    const key = (await createApiKey(svc.db, other.id)).key;
    assert.equal((await track('/pot', { type: 'changeTracking' }, key)).changeTracking.changeStatus, 'new');
  });

  test('400s: changeTracking without markdown, under zero data retention, json mode without schema or prompt', async () => {
    const url = `${origin}/kettle`;
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ url, formats: [{ type: 'changeTracking' }] }, /requires markdown/],
      [{ url, formats: ['markdown', { type: 'changeTracking' }], zeroDataRetention: true }, /zeroDataRetention/],
      [{ url, formats: ['markdown', { type: 'changeTracking', modes: ['json'] }] }, /body\.formats\.1\.modes/],
    ];
    for (const [body, message] of cases) {
      const res = await api.scrapeRaw(body);
      assert.equal(res.status, 400, res.text);
      assert.match(res.json.error, message);
    }
  });

  test('branding: the colours and fonts the page CSS sets, from the browser', async () => {
    const res = await api.scrape({ url: site.url('/brand'), formats: ['branding'] });
    assert.equal(res.status, 200, res.text);
    const b = res.json.data.branding;
    assert.equal(res.json.data.metadata.engine, 'browser');
    assert.equal(b.colorScheme, 'light');
    assert.equal(b.colors.background, brandStyle.background);
    assert.equal(b.colors.textPrimary, brandStyle.text);
    assert.equal(b.colors.link, brandStyle.link);
    assert.equal(b.components.buttonPrimary.background, brandStyle.buttonPrimary.background);
    assert.match(b.typography.fontFamilies.primary, new RegExp(brandStyle.bodyFont));
    assert.match(b.typography.fontFamilies.heading, new RegExp(brandStyle.headingFont));
    assert.equal(b.typography.fontSizes.h1, brandStyle.h1Size);
    assert.ok(b.images.logo.endsWith(brandStyle.logoPath));
  });
});
