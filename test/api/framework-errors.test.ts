// The framework's own errors (the router's 414 and malformed URLs, the body parser's 413, 415 and
// malformed JSON, unknown routes, the HTTP parser's timeouts, oversized headers and garbage) all in
// our {success: false, code, error} shape; and `content-type: application/json` with no body is no
// body at all: accepted where a route needs none, a 400 naming the body where it needs one.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { type Socket, connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FixtureSite } from '../fixtures/site/index.ts';
import { type Api, type ApiResponse } from '../helpers/api.ts';
import { type TestService, startSiteAndService, stopSiteAndService } from '../helpers/service.ts';

function assertShape(res: { status: number; json: any; text?: string }, status: number, code: string): void {
  assert.equal(res.status, status, res.text ?? JSON.stringify(res.json));
  assert.equal(res.json?.success, false, res.text);
  assert.equal(res.json.code, code, res.text);
  assert.equal(typeof res.json.error, 'string');
  assert.ok(res.json.error.length > 0);
  for (const key of Object.keys(res.json)) assert.ok(['success', 'code', 'error', 'details'].includes(key), key);
}

/** Sends raw bytes and reads the whole answer until the server closes: status line, headers, JSON body. */
async function raw(url: string, bytes: string): Promise<{ status: number; head: string; json: any; text: string }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  await new Promise<void>((resolve, reject) => {
    socket.on('error', () => undefined);
    socket.on('close', () => resolve());
    socket.on('connect', () => socket.write(bytes));
    setTimeout(() => reject(new Error('no answer')), 10_000).unref();
  });
  return parseRaw(Buffer.concat(chunks).toString('utf8'));
}

function parseRaw(text: string): { status: number; head: string; json: any; text: string } {
  const [head = '', body = ''] = text.split('\r\n\r\n');
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]);
  let json: any;
  try {
    json = JSON.parse(body);
  } catch {
    json = undefined;
  }
  return { status, head, json, text };
}

describe('framework errors and empty bodies', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: Api;
  let main: string;

  before(async () => ({ site, svc, api, main } = await startSiteAndService()));
  after(() => stopSiteAndService(svc, site));

  test('an unknown route: 404 NOT_FOUND', async () => {
    assertShape(await api('GET', '/v2/nothing-here'), 404, 'NOT_FOUND');
    assertShape(await api('POST', '/v1/nothing-here', { a: 1 }), 404, 'NOT_FOUND');
  });

  test('an id longer than the router accepts: 414 URI_TOO_LONG, with a request id', async () => {
    for (const path of [`/v2/crawl/${'a'.repeat(200)}`, `/v2/batch/scrape/${'b'.repeat(500)}`]) {
      const res = await api('GET', path);
      assertShape(res, 414, 'URI_TOO_LONG');
      assert.ok(res.headers.get('x-request-id'));
    }
    assertShape(await api('DELETE', `/v2/crawl/${'a'.repeat(200)}`), 414, 'URI_TOO_LONG');
  });

  test('a malformed URL (bad percent-encoding in a parameter): 400 BAD_REQUEST', async () => {
    assertShape(await api('GET', '/v2/crawl/%E0%A4%A'), 400, 'BAD_REQUEST');
  });

  test('body parser errors: malformed JSON 400, too large 413, unsupported type 415', async () => {
    assertShape(await api('POST', '/v2/scrape', '{"url":'), 400, 'BAD_REQUEST');
    const big = JSON.stringify({ url: `${main}/`, s: 'x'.repeat(11 * 1024 * 1024) });
    assertShape(await api('POST', '/v2/scrape', big), 413, 'PAYLOAD_TOO_LARGE');
    assertShape(
      await api('POST', '/v2/scrape', 'url=x', { 'content-type': 'application/x-www-form-urlencoded' }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  test('a JSON body nested deeper than 128 levels: 400 BAD_REQUEST, not a stack overflow (found by test/fuzz)', async () => {
    // Fields that take any JSON (stopOnContent, domainTools) carried it to JSON.stringify of the stored crawl: a 500.
    const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);
    for (const [path, body] of [
      ['/v2/crawl', `{"url":"${main}/","limit":1,"stopOnContent":${deep(20_000)}}`],
      ['/v2/batch/scrape', `{"urls":["${main}/"],"domainTools":${deep(20_000)}}`],
      ['/v2/scrape', `{"url":"${main}/","toolDetail":${deep(128)}}`],
      ['/v2/map', deep(100_000)],
    ]) {
      const res = await api('POST', path, body);
      assertShape(res, 400, 'BAD_REQUEST');
      assert.match(res.json.error, /deeper than 128 levels/);
    }
    const fine = await api('POST', '/v2/crawl', `{"url":"${main}/","limit":1,"stopOnContent":${deep(126)}}`);
    assert.equal(fine.status, 200, fine.text);
    await api('DELETE', `/v2/crawl/${fine.json.id}`);
  });

  test('JSON strings the store cannot keep: U+0000 is a 400, an unpaired surrogate becomes U+FFFD (found by test/fuzz)', async () => {
    // Both reached the store's JSON columns as they were: a 500 on crawl, batch, extract, agent, monitor and search.
    for (const [path, body] of [
      ['/v2/crawl', `{"url":"${main}/","limit":1,"stopOnContent":"\\u0000"}`],
      ['/v2/batch/scrape', `{"urls":["${main}/"],"domainTools":{"\\u0000":1}}`],
      ['/v2/extract', `{"urls":["${main}/"],"prompt":"a\\u0000b"}`],
      ['/v2/search', `{"query":"\\u0000"}`],
    ]) {
      const res = await api('POST', path, body);
      assertShape(res, 400, 'BAD_REQUEST');
      assert.match(res.json.error, /U\+0000/);
    }
    const crawl = await api('POST', '/v2/crawl', `{"url":"${main}/","limit":1,"stopOnContent":{"\\udfff":"\\ud800"}}`);
    assert.equal(crawl.status, 200, crawl.text);
    await api('DELETE', `/v2/crawl/${crawl.json.id}`);
    const extract = await api('POST', '/v2/extract', `{"urls":["${main}/"],"schema":{" ":"\\ud800"}}`);
    assert.equal(extract.status, 200, extract.text);
    const monitor = await api(
      'POST',
      '/v2/monitor',
      `{"name":"a\\ud800","schedule":{"cron":"0 0 1 1 *"},"targets":[{"type":"scrape","urls":["${main}/"]}]}`,
    );
    assert.equal(monitor.status, 200, monitor.text);
    assert.equal(monitor.json.data.name, 'a\ufffd');
    await api('DELETE', `/v2/monitor/${monitor.json.data.id}`);
  });

  test('the HTTP parser: headers too large 431, garbage 400, in our shape', async () => {
    const { host } = new URL(svc.url);
    const huge = await raw(svc.url, `GET /health HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${'x'.repeat(64 * 1024)}\r\n\r\n`);
    assertShape(huge, 431, 'HEADERS_TOO_LARGE');
    assert.match(huge.head, /content-type: application\/json/i);
    assertShape(await raw(svc.url, 'NOT HTTP AT ALL\r\n\r\n'), 400, 'BAD_REQUEST');
    assert.equal((await api('GET', '/health')).status, 200, 'the service lives on');
  });

  test('a request timeout (Node reports it as a client error): 408 REQUEST_TIMEOUT, connection closed', async () => {
    const server = svc.app.server;
    const serverSide = new Promise<Socket>((resolve) => server.once('connection', resolve));
    const { hostname, port } = new URL(svc.url);
    const client = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    client.on('data', (c: Buffer) => chunks.push(c));
    client.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => client.on('close', () => resolve()));
    client.write('POST /v2/scrape HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{"url":');
    const socket = await serverSide;
    // What Node's http server emits when requestTimeout or headersTimeout expires.
    const err = Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
    server.emit('clientError', err, socket);
    await closed;
    assertShape(parseRaw(Buffer.concat(chunks).toString('utf8')), 408, 'REQUEST_TIMEOUT');
  });

  const emptyJson = { 'content-type': 'application/json' };
  // fetch sends no body at all with GET (content-length 0 otherwise).
  const call = (method: string, path: string): Promise<ApiResponse> =>
    api(method, path, method === 'GET' ? undefined : '', emptyJson);

  test('DELETE /v2/crawl/{id} with content-type json and no body cancels the crawl', async () => {
    const id = await api.startCrawl({ url: `${main}/`, sitemap: 'skip', limit: 50 });
    const del = await call('DELETE', `/v2/crawl/${id}`);
    assert.equal(del.status, 200, del.text);
    assert.equal(del.json.status, 'cancelled');
    // The same without a content-length header at all (a chunked, empty body).
    const id2 = await api.startCrawl({ url: `${main}/`, sitemap: 'skip', limit: 50 });
    const { host } = new URL(svc.url);
    const chunked = await raw(
      svc.url,
      `DELETE /v2/crawl/${id2} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${svc.key}\r\n` +
        'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n0\r\n\r\n',
    );
    assert.equal(chunked.status, 200, chunked.text);
  });

  test('body-less routes (v1 and v2) with content-type json and no body: their normal answer, never 400', async () => {
    const id = randomUUID();
    const notFound: [string, string, string][] = [
      ['DELETE', `/v2/crawl/${id}`, 'CRAWL_NOT_FOUND'],
      ['GET', `/v2/crawl/${id}`, 'CRAWL_NOT_FOUND'],
      ['DELETE', `/v2/batch/scrape/${id}`, 'BATCH_SCRAPE_NOT_FOUND'],
      ['GET', `/v2/extract/${id}`, 'EXTRACT_NOT_FOUND'],
      ['DELETE', `/v2/agent/${id}`, 'AGENT_NOT_FOUND'],
      ['DELETE', `/v2/monitor/${id}`, 'MONITOR_NOT_FOUND'],
      ['POST', `/v2/monitor/${id}/run`, 'MONITOR_NOT_FOUND'],
    ];
    for (const [method, path, code] of notFound) {
      const res = await call(method, path);
      assert.equal(res.status, 404, `${method} ${path}: ${res.text}`);
      assert.equal(res.json.code, code, `${method} ${path}: ${res.text}`);
    }
    for (const path of ['/v2/team/credit-usage', '/v1/team/token-usage/historical', '/v2/crawl/ongoing', '/health']) {
      const res = await call('GET', path);
      assert.equal(res.status, 200, `${path}: ${res.text}`);
    }
  });

  test('a route that needs a body, sent content-type json and none: 400 naming the body', async () => {
    for (const path of ['/v2/scrape', '/v2/crawl', '/v2/map']) {
      const res = await call('POST', path);
      assertShape(res, 400, 'BAD_REQUEST');
      assert.match(res.json.error, /body/, res.text);
      assert.ok(
        res.json.details.some((d: { path: string }) => d.path === 'body'),
        res.text,
      );
    }
  });
});
