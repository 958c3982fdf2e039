// The SSRF policy at every entry point that names a target (issue 22): with the default setting
// (GLEANER_ALLOW_PRIVATE_NETWORK off), a loopback, private, link-local or metadata address in any
// spelling the URL parser accepts is refused before a job exists, with 403 SCRAPE_BLOCKED_URL naming
// the body's field, on scrape, batch, crawl, map, extract, monitors (targets) and agents (urls);
// webhooks get a 400 naming theirs. Targets are loopback only: even a broken guard could not send
// traffic off the machine, and the fixture site proves nothing reached it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Api, type ApiResponse, apiClient } from '../helpers/api.ts';
import { type TestService, startTestService } from '../helpers/service.ts';
import { type FixtureSite, startFixtureSite } from '../fixtures/site/index.ts';

let site: FixtureSite;
let svc: TestService;
let api: Api;

before(async () => {
  site = await startFixtureSite();
  svc = await startTestService({ env: { GLEANER_ALLOW_PRIVATE_NETWORK: 'false' } });
  api = apiClient(svc);
});

after(async () => {
  await svc?.destroy();
  await site?.close();
});

/** Spellings of addresses on this machine (and the metadata address, never contacted: refused as a literal). */
function blockedSpellings(): string[] {
  const p = site.port;
  return [
    `http://127.0.0.1:${p}/about`,
    `http://2130706433:${p}/about`, // 127.0.0.1 as one number
    `http://0x7f.1:${p}/about`, // hex, short form
    `http://0177.0.0.1:${p}/about`, // octal
    `http://127.1:${p}/about`,
    `http://[::1]:${p}/about`,
    `http://[::ffff:127.0.0.1]:${p}/about`, // IPv4-mapped IPv6
    `http://[0:0:0:0:0:ffff:7f00:1]:${p}/about`,
    `http://localhost:${p}/about`,
    `http://LOCALHOST.:${p}/about`,
    `http://shop.localhost:${p}/about`,
    `http://0.0.0.0:${p}/about`,
    'http://169.254.169.254/latest/meta-data/',
    'http://10.0.0.1/',
    'http://192.168.1.1/',
    'http://[fd00::1]/',
  ];
}

function assertBlocked(res: ApiResponse, field: string, url: string): void {
  assert.equal(res.status, 403, `${url}: ${res.text}`);
  assert.equal(res.json.success, false);
  assert.equal(res.json.code, 'SCRAPE_BLOCKED_URL', url);
  assert.match(res.json.error, new RegExp(`^body\\.${field.replace(/\./g, '\\.')}: `), url);
  assert.match(res.json.error, /GLEANER_ALLOW_PRIVATE_NETWORK/);
  assert.deepEqual(
    res.json.details.map((d: { path: string }) => d.path),
    [`body.${field}`],
    url,
  );
}

async function jobCount(): Promise<number> {
  const res = await api('GET', '/v2/team/activity?limit=100');
  assert.equal(res.status, 200, res.text);
  return res.json.data.length;
}

describe('a blocked target is refused at the request, before any job, on every entry point', () => {
  test('scrape, crawl and map: every spelling', async () => {
    const before = site.requests.length;
    const jobs = await jobCount();
    for (const url of blockedSpellings()) {
      assertBlocked(await api('POST', '/v2/scrape', { url }), 'url', url);
      assertBlocked(await api('POST', '/v2/crawl', { url, limit: 2 }), 'url', url);
      assertBlocked(await api('POST', '/v2/map', { url }), 'url', url);
    }
    assert.equal(site.requests.length, before, 'the fixture saw no request');
    assert.equal(await jobCount(), jobs, 'no job was recorded');
    const active = await api('GET', '/v2/crawl/active');
    assert.deepEqual(active.json.crawls, []);
  });

  test('batch scrape and extract: the field is the URL index; ignoreInvalidURLs lists blocked URLs instead', async () => {
    const before = site.requests.length;
    const [a, b] = blockedSpellings().slice(1, 3);
    const urls = ['http://unresolvable.invalid/page', a, b];
    assertBlocked(await api('POST', '/v2/batch/scrape', { urls }), 'urls.1', a);
    assertBlocked(
      await api('POST', '/v2/extract', { urls, prompt: 'the title', ignoreInvalidURLs: false }),
      'urls.1',
      a,
    );

    const batch = await api('POST', '/v2/batch/scrape', { urls, ignoreInvalidURLs: true });
    assert.equal(batch.status, 200, batch.text);
    assert.deepEqual(batch.json.invalidURLs, [a, b]);
    const extract = await api('POST', '/v2/extract', { urls, prompt: 'the title' }); // extract's default: true
    assert.equal(extract.status, 200, extract.text);
    assert.deepEqual(extract.json.invalidURLs, [a, b]);
    // Only blocked URLs: nothing is left to do, as with only invalid ones.
    const none = await api('POST', '/v2/batch/scrape', { urls: [a, b], ignoreInvalidURLs: true });
    assert.equal(none.status, 400, none.text);
    assert.equal(site.requests.length, before, 'the fixture saw no request');
    await api('DELETE', `/v2/batch/scrape/${batch.json.id}`);
  });

  test('monitors (scrape and crawl targets, on create and on update) and agents (urls)', async () => {
    const url = blockedSpellings()[6];
    const schedule = { text: 'hourly' };
    assertBlocked(
      await api('POST', '/v2/monitor', {
        name: 'blocked',
        schedule,
        targets: [{ type: 'scrape', urls: ['http://unresolvable.invalid/', url] }],
      }),
      'targets.0.urls.1',
      url,
    );
    assertBlocked(
      await api('POST', '/v2/monitor', {
        name: 'blocked',
        schedule,
        targets: [
          { type: 'scrape', urls: ['http://unresolvable.invalid/'] },
          { type: 'crawl', url },
        ],
      }),
      'targets.1.url',
      url,
    );
    const ok = await api('POST', '/v2/monitor', {
      name: 'fine',
      schedule,
      targets: [{ type: 'scrape', urls: ['http://unresolvable.invalid/'] }],
    });
    assert.equal(ok.status, 200, ok.text);
    const id = ok.json.data?.id ?? ok.json.id;
    assertBlocked(await api('PATCH', `/v2/monitor/${id}`, { targets: [{ type: 'crawl', url }] }), 'targets.0.url', url);
    const webhook = await api('PATCH', `/v2/monitor/${id}`, { webhook: { url: `http://127.0.0.1:${site.port}/hook` } });
    assert.equal(webhook.status, 400, webhook.text);
    assert.match(webhook.json.error, /body\.webhook\.url/);

    assertBlocked(await api('POST', '/v2/agent', { prompt: 'find the title', urls: [url] }), 'urls.0', url);
  });

  test('webhooks naming a blocked address are a 400 naming the field', async () => {
    const hook = `http://[::ffff:7f00:1]:${site.port}/hook`;
    for (const [path, body] of [
      ['/v2/crawl', { url: 'http://unresolvable.invalid/', webhook: hook }],
      ['/v2/batch/scrape', { urls: ['http://unresolvable.invalid/'], webhook: { url: hook } }],
      ['/v2/agent', { prompt: 'x', webhook: hook }],
    ] as const) {
      const res = await api('POST', path, body);
      assert.equal(res.status, 400, `${path}: ${res.text}`);
      assert.match(res.json.error, /body\.webhook/);
    }
  });

  test('with GLEANER_ALLOW_PRIVATE_NETWORK on, the same loopback targets work (the metadata address stays blocked)', async () => {
    const open = await startTestService();
    try {
      const openApi = apiClient(open);
      const res = await openApi('POST', '/v2/map', { url: `http://127.1:${site.port}/` });
      assert.equal(res.status, 200, res.text);
      const meta = await openApi('POST', '/v2/crawl', { url: 'http://169.254.169.254/latest/' });
      assertBlocked(meta, 'url', 'metadata');
    } finally {
      await open.destroy();
    }
  });
});
