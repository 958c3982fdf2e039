// The WebSocket status stream on GET /v2/crawl/{id} (src/api/status-stream.ts), with Node's own
// WebSocket client against the real service and the fixture site, on PGlite and, with
// TEST_DATABASE_URL, on Postgres: catch-up, documents as pages finish, done; every page exactly
// once and equal to GET's; the key as subprotocol or Authorization header; wrong keys refused
// before the upgrade; another team's id closed without data; cancel; pages finishing out of
// admission order; shutdown closes open streams.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { createApiKey, ensureTeam } from '../../src/store/teams.ts';
import { type FixtureSite, startFixtureSite } from '../fixtures/site/index.ts';
import { type Api, apiClient } from '../helpers/api.ts';
import {
  type TestService,
  startSiteAndService,
  startTestService,
  stopSiteAndService,
  storeKinds,
} from '../helpers/service.ts';
import { Waiters } from '../helpers/waiters.ts';
import '../helpers/loopback-dns.ts';
import { urlKey } from '../../src/net/url-key.ts';

type Doc = { markdown?: string; metadata: { sourceURL: string; scrapeId: string } };
type Msg = { type: string; data?: any; error?: string; code?: string; at: number };

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A stream's messages as they come; `closed` resolves with the close code and reason. */
interface Watch {
  ws: WebSocket;
  messages: Msg[];
  opened: boolean;
  closed: Promise<{ code: number; reason: string }>;
  /** Resolves when a message satisfying `pred` has arrived (fails after `ms`). */
  next(pred: (m: Msg) => boolean, ms?: number): Promise<Msg>;
}

function watch(url: string, init?: string[] | { headers: Record<string, string> }): Watch {
  // Node's WebSocket (undici) also takes {headers}: the SDK in Python sends the key that way.
  const ws = new WebSocket(url, init as string[]);
  const messages: Msg[] = [];
  const arrivals = new Waiters();
  const w: Watch = {
    ws,
    messages,
    opened: false,
    closed: new Promise((resolve) => ws.addEventListener('close', (e) => resolve({ code: e.code, reason: e.reason }))),
    next(pred, ms = 30_000) {
      const timedOut = () =>
        new assert.AssertionError({ message: `no such message; got ${messages.map((m) => m.type).join(' ')}` });
      return arrivals.until(() => messages.find(pred), ms, timedOut);
    },
  };
  ws.addEventListener('open', () => (w.opened = true));
  ws.addEventListener('message', (e) => {
    assert.equal(typeof e.data, 'string', 'text frames');
    messages.push({ ...JSON.parse(e.data as string), at: Date.now() });
    arrivals.notify();
  });
  return w;
}

/** The documents a stream delivered: the catch-up's, then each document message. */
function streamed(messages: Msg[]): Doc[] {
  const out: Doc[] = [];
  for (const m of messages) {
    if (m.type === 'catchup') out.push(...m.data.data);
    if (m.type === 'document') out.push(m.data);
  }
  return out;
}

/** An upgrade request by hand, to see the HTTP answer of a refused one. */
function rawUpgrade(url: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, {
      agent: false,
      headers: {
        connection: 'Upgrade',
        upgrade: 'websocket',
        'sec-websocket-version': '13',
        'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        ...headers,
      },
    });
    req.on('upgrade', (_res, socket) => {
      socket.destroy();
      resolve({ status: 101, body: '' });
    });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      // The server drops the connection after a refused upgrade: 'close', maybe without 'end'.
      res.on('close', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', () => undefined);
    });
    req.on('error', reject);
  });
}

for (const store of storeKinds) {
  describe(`crawl status stream (${store})`, () => {
    let site: FixtureSite;
    let svc: TestService;
    let api: Api;
    let main: string;
    let wsBase: string;

    before(async () => {
      ({ site, svc, api, main } = await startSiteAndService({ store }));
      wsBase = svc.url.replace(/^http/, 'ws');
    });
    after(() => stopSiteAndService(svc, site));

    const byKey = (docs: Doc[]) => {
      const map = new Map(docs.map((d) => [urlKey(d.metadata.sourceURL)!, d]));
      assert.equal(map.size, docs.length, `duplicates: ${docs.map((d) => d.metadata.sourceURL).join(' ')}`);
      return map;
    };

    /** The stream's documents are GET's: same pages, each once, equal documents. */
    function assertSameDocs(got: Doc[], want: Doc[]): void {
      const g = byKey(got);
      const w = byKey(want);
      assert.deepEqual([...g.keys()].sort(), [...w.keys()].sort());
      for (const [k, d] of w) assert.deepEqual(g.get(k), d, k);
    }

    let finishedCrawl: string;

    test('a running crawl: catch-up, then documents as pages finish, then done; every page once, as GET has it', async () => {
      const total = 8;
      const id = await api.startCrawl({
        url: `${main}/generated/1?total=${total}`,
        sitemap: 'skip',
        crawlEntireDomain: true,
        delay: 0.25,
      });
      const w = watch(`${wsBase}/v2/crawl/${id}`, [svc.key]);
      const closed = await w.closed;
      assert.equal(closed.code, 1000, closed.reason);
      assert.equal(w.ws.protocol, svc.key, 'the server selected the key subprotocol');

      const types = w.messages.map((m) => m.type);
      assert.equal(types[0], 'catchup');
      assert.equal(types.at(-1), 'done');
      assert.ok(
        types.slice(1, -1).every((t) => t === 'document'),
        types.join(' '),
      );
      const catchup = w.messages[0].data;
      assert.equal(catchup.success, true);
      assert.equal(catchup.status, 'scraping', 'connected while the crawl ran');
      assert.equal(catchup.next, null);
      assert.ok(catchup.expiresAt && catchup.createdAt);
      const docMsgs = w.messages.filter((m) => m.type === 'document');
      assert.ok(docMsgs.length >= total - 2, `pages arrived one by one: ${docMsgs.length}`);
      // Paced by `delay`, so they arrive over time rather than at once.
      assert.ok(docMsgs.at(-1)!.at - docMsgs[0].at >= 500, 'documents were streamed as they finished');

      const done = w.messages.at(-1)!.data;
      assert.equal(done.status, 'completed');
      assert.deepEqual(done.data, []);
      assert.equal(done.next, null);
      assert.ok(done.completedAt);

      const docs = streamed(w.messages);
      assert.equal(docs.length, total);
      assert.equal(done.completed, total);
      const http = await api.waitForCrawl(id);
      assert.equal(http.status, 'completed');
      assertSameDocs(docs, await api.crawlDocs(id));
      for (const d of docs) assert.equal(typeof d.markdown, 'string');
      finishedCrawl = id;
    });

    test('a finished crawl: everything in the catch-up, then done and a normal close (key in the Authorization header)', async () => {
      const w = watch(`${wsBase}/v2/crawl/${finishedCrawl}`, { headers: { authorization: `Bearer ${svc.key}` } });
      const closed = await w.closed;
      assert.equal(closed.code, 1000, closed.reason);
      assert.deepEqual(
        w.messages.map((m) => m.type),
        ['catchup', 'done'],
      );
      assert.equal(w.messages[0].data.status, 'completed');
      assert.equal(w.messages[1].data.status, 'completed');
      assertSameDocs(streamed(w.messages), await api.crawlDocs(finishedCrawl));
      // The HTTP form of the same path is unchanged.
      const res = await api.crawlStatus(finishedCrawl);
      assert.equal(res.status, 200);
      assert.equal(res.json.data.length, 8);
    });

    test('a wrong or missing key is refused before the upgrade (401)', async () => {
      const url = `${wsBase}/v2/crawl/${finishedCrawl}`;
      for (const init of [['fc-not-a-key'], undefined, { headers: { authorization: 'Bearer fc-not-a-key' } }]) {
        const w = watch(url, init as string[]);
        const closed = await w.closed;
        assert.equal(w.opened, false);
        assert.equal(closed.code, 1006);
        assert.deepEqual(w.messages, []);
      }
      const httpUrl = `${svc.url}/v2/crawl/${finishedCrawl}`;
      const bad = await rawUpgrade(httpUrl, { 'sec-websocket-protocol': 'fc-not-a-key' });
      assert.equal(bad.status, 401);
      assert.equal(JSON.parse(bad.body).code, 'UNAUTHORIZED');
      assert.equal((await rawUpgrade(httpUrl, {})).status, 401);
      assert.equal(
        (await rawUpgrade(httpUrl, { 'sec-websocket-protocol': svc.key })).status,
        101,
        'the same request with the key upgrades',
      );
      // A subprotocol is no key for plain HTTP requests.
      const plain = await fetch(httpUrl, { headers: { 'sec-websocket-protocol': svc.key } });
      assert.equal(plain.status, 401);
    });

    test("another team's crawl and unknown ids: an error message and close 1008, never data", async () => {
      const other = await ensureTeam(svc.db, 'ws-other-team');
      const otherKey = (await createApiKey(svc.db, other.id)).key;
      for (const [id, key] of [
        [finishedCrawl, otherKey],
        ['00000000-0000-4000-8000-000000000000', svc.key],
      ]) {
        const w = watch(`${wsBase}/v2/crawl/${id}`, [key]);
        const closed = await w.closed;
        assert.equal(closed.code, 1008);
        assert.equal(closed.reason, 'CRAWL_NOT_FOUND');
        assert.equal(w.messages.length, 1, JSON.stringify(w.messages));
        assert.equal(w.messages[0].type, 'error');
        assert.equal(w.messages[0].code, 'CRAWL_NOT_FOUND');
        assert.match(w.messages[0].error!, /No crawl/);
        assert.equal(w.messages[0].data, undefined);
      }
      // Not a uuid: refused before the upgrade, like the HTTP form.
      assert.equal((await rawUpgrade(`${svc.url}/v2/crawl/nope`, { 'sec-websocket-protocol': svc.key })).status, 400);
    });

    test('a cancelled crawl ends the stream with done, status cancelled', async () => {
      const id = await api.startCrawl({
        url: `${main}/generated/1?total=2000`,
        sitemap: 'skip',
        crawlEntireDomain: true,
        delay: 0.2,
      });
      const w = watch(`${wsBase}/v2/crawl/${id}`, [svc.key]);
      await w.next((m) => m.type === 'catchup');
      await w.next((m) => m.type === 'document');
      const del = await api.cancelCrawl(id);
      assert.equal(del.status, 200, del.text);
      const closed = await w.closed;
      assert.equal(closed.code, 1000, closed.reason);
      const last = w.messages.at(-1)!;
      assert.equal(last.type, 'done');
      assert.equal(last.data.status, 'cancelled');
      assert.ok(last.data.completed < 50);
      const docs = streamed(w.messages);
      assert.ok(docs.length >= 1);
      assertSameDocs(docs, await api.crawlDocs(id));
    });

    test('pages finishing out of admission order are each sent once', async () => {
      // A finished one-page crawl made to look running, with two more pages recorded by hand
      // (never due, so no worker claims them): the later page finishes first.
      const id = await api.startCrawl({ url: `${main}/generated/1?total=5`, sitemap: 'skip', limit: 1 });
      await api.waitForCrawl(id);
      await svc.db.query(`UPDATE crawls SET status = 'scraping', completed_at = NULL WHERE id = $1`, [id]);
      const addPage = (n: number) =>
        svc.db.query(
          `INSERT INTO crawl_pages (crawl_id, url_key, url, depth, status, available_at) VALUES ($1, $2, $2, 1, 'queued', 'infinity')`,
          [id, `${main}/manual/${n}`],
        );
      const done = (n: number) =>
        svc.db.query(
          `UPDATE crawl_pages SET status = 'done', document = $3::jsonb WHERE crawl_id = $1 AND url_key = $2`,
          [
            id,
            `${main}/manual/${n}`,
            JSON.stringify({
              markdown: `page ${n}`,
              metadata: { sourceURL: `${main}/manual/${n}`, scrapeId: `s${n}` },
            }),
          ],
        );
      await addPage(1);
      await addPage(2);
      const w = watch(`${wsBase}/v2/crawl/${id}`, [svc.key]);
      const catchup = await w.next((m) => m.type === 'catchup');
      assert.equal(catchup.data.status, 'scraping');
      assert.equal(catchup.data.data.length, 1);
      await done(2);
      const second = await w.next((m) => m.type === 'document');
      assert.equal(second.data.markdown, 'page 2');
      await sleep(1200); // a few polls: nothing is sent twice
      await addPage(3);
      await done(1);
      await w.next((m) => m.type === 'document' && m.data.markdown === 'page 1');
      await done(3);
      await w.next((m) => m.type === 'document' && m.data.markdown === 'page 3');
      await sleep(1200);
      await svc.db.query(`UPDATE crawls SET status = 'completed', completed_at = clock_timestamp() WHERE id = $1`, [
        id,
      ]);
      const closed = await w.closed;
      assert.equal(closed.code, 1000);
      assert.deepEqual(
        w.messages.map((m) => (m.type === 'document' ? m.data.markdown : m.type)),
        ['catchup', 'page 2', 'page 1', 'page 3', 'done'],
      );
      assertSameDocs(streamed(w.messages), await api.crawlDocs(id));
    });

    test('the client leaving stops the stream; the service stays up', async () => {
      const id = await api.startCrawl({
        url: `${main}/generated/1?total=2000`,
        sitemap: 'skip',
        crawlEntireDomain: true,
        delay: 0.2,
      });
      const w = watch(`${wsBase}/v2/crawl/${id}`, [svc.key]);
      await w.next((m) => m.type === 'catchup');
      w.ws.close();
      await w.closed;
      await sleep(700);
      assert.equal(svc.app.websocketServer.clients.size, 0);
      assert.equal((await api.cancelCrawl(id)).status, 200);
    });
  });
}

describe('crawl status stream: shutdown', () => {
  test('stopping the service closes open streams (1001) without waiting for the crawl or refused upgrades', async () => {
    const site = await startFixtureSite();
    const svc = await startTestService();
    try {
      const res = await apiClient(svc).crawl({
        url: `${site.hostOrigin('localhost')}/generated/1?total=2000`,
        sitemap: 'skip',
        crawlEntireDomain: true,
        delay: 0.2,
      });
      assert.equal(res.status, 200, res.text);
      const w = watch(`${svc.url.replace(/^http/, 'ws')}/v2/crawl/${res.json.id}`, [svc.key]);
      await w.next((m) => m.type === 'catchup');
      // A refused upgrade leaves nothing open either.
      assert.equal(
        (await rawUpgrade(`${svc.url}/v2/crawl/${res.json.id}`, { 'sec-websocket-protocol': 'fc-not-a-key' })).status,
        401,
      );
      const t0 = Date.now();
      await svc.destroy();
      assert.ok(Date.now() - t0 < 5000, `stopped in ${Date.now() - t0} ms`);
      const closed = await w.closed;
      assert.equal(closed.code, 1001);
      assert.equal(w.messages.at(-1)!.type === 'done', false);
    } finally {
      await svc.destroy();
      await site.close();
    }
  });
});
