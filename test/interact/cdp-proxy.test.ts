// The CDP proxy (src/interact/cdp-proxy.ts behind GET /v2/browser/:id/cdp/:token) with a real
// session Chromium: a raw WebSocket client reads Browser.getVersion through it (with a foreign
// Origin, which Chromium itself would refuse); Playwright's connectOverCDP, given cdpUrl or its
// http form, sees the session's page and runs locators on it (their injected script is a message
// far over the app's 64 KiB WebSocket limit); a wrong token or an unknown session is the same 404,
// and the routes need no API key; the session's browser closing closes the client; shutdown closes
// connected clients.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import { WebSocket, WebSocketServer } from 'ws';
import { type BrowserSessionUrls, type LiveSession, browserSessionUrls } from '../../src/api/routes/live.ts';
import { HIGH_WATER_BYTES, relay } from '../../src/interact/cdp-proxy.ts';
import { SessionTokens } from '../../src/interact/session-tokens.ts';
import { Waiters } from '../helpers/waiters.ts';
import { type LiveApp, type TestLiveBrowser, launchLiveBrowser, startLiveApp } from './live-session.ts';

// Functions run in the browser (page.evaluate) use its globals; this project's types have no DOM.
declare const window: any;
declare const document: any;

/** A raw CDP client: sends commands, resolves their results. */
function cdpClient(ws: WebSocket) {
  let nextId = 1;
  const pending = new Map<number, (message: { result?: any; error?: any }) => void>();
  ws.on('message', (data) => {
    const message = JSON.parse(data.toString());
    pending.get(message.id)?.(message);
  });
  return (method: string, params: object = {}) =>
    new Promise<{ result?: any; error?: any }>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      ws.send(JSON.stringify({ id, method, params }));
    });
}

function opened(ws: WebSocket): Promise<void> {
  return new Promise((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
}

/** The HTTP status that refused the upgrade. */
function refusedWith(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => reject(new Error(`${url} opened`)));
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.once('error', () => {});
  });
}

const closed = (ws: WebSocket) =>
  new Promise<number>((resolve) => {
    if (ws.readyState === WebSocket.CLOSED) resolve(-1);
    ws.once('close', (code) => resolve(code));
  });

describe('CDP proxy', () => {
  let browser: TestLiveBrowser;
  let live: LiveApp;
  let urls: BrowserSessionUrls;
  const sessions = new Map<string, LiveSession>();
  const tokens = SessionTokens.make();

  before(async () => {
    browser = await launchLiveBrowser();
    sessions.set('s1', { browser, tokens });
    live = await startLiveApp(sessions);
    urls = browserSessionUrls(live.url, 's1', tokens);
    const page = await browser.page();
    await page.setContent('<p id="value">the session page</p><script>window.sessionValue = 4217</script>');
  });
  after(async () => {
    await live?.app.close();
    await browser?.close();
  });

  test('the URLs: ws:// with the cdp token in the path, the live view with each view token', () => {
    assert.match(urls.cdpUrl, /^ws:\/\/127\.0\.0\.1:\d+\/v2\/browser\/s1\/cdp\/[\w-]{32}$/);
    assert.ok(urls.cdpUrl.endsWith(tokens.cdp));
    assert.equal(urls.liveViewUrl, `${live.url}/v2/browser/s1/live?token=${tokens.view}`);
    assert.equal(urls.interactiveLiveViewUrl, `${live.url}/v2/browser/s1/live?token=${tokens.interactive}`);
    assert.equal(
      browserSessionUrls('https://x.example/api/', 'a b', tokens).cdpUrl,
      `wss://x.example/api/v2/browser/a%20b/cdp/${tokens.cdp}`,
    );
    assert.equal(new Set(Object.values(tokens)).size, 3, 'three different tokens');
  });

  test('a raw CDP client reads Browser.getVersion, with a foreign Origin', async () => {
    // Chromium itself refuses that origin: the proxy does not pass it on.
    const direct = new WebSocket(browser.cdpEndpoint, { origin: 'https://elsewhere.example' });
    const refused = await new Promise<number>((resolve) => {
      direct.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      direct.once('open', () => resolve(101));
      direct.once('error', () => {});
    });
    direct.terminate();
    assert.equal(refused, 403);
    const ws = new WebSocket(urls.cdpUrl, { origin: 'https://elsewhere.example' });
    await opened(ws);
    const send = cdpClient(ws);
    const { result } = await send('Browser.getVersion');
    assert.match(result.product, /Chrome\/\d+/);
    // The session's page is among the targets: it is this session's browser.
    const { result: targets } = await send('Target.getTargets');
    assert.ok(targets.targetInfos.some((t: { type: string }) => t.type === 'page'));
    ws.close(4000, 'done');
    assert.equal(await closed(ws), 4000, "Chromium's answer to the close, with the client's code");
  });

  for (const form of ['ws', 'http'] as const) {
    test(`Playwright connectOverCDP(${form === 'ws' ? 'cdpUrl' : 'its http form'}) sees and drives the session's page`, async () => {
      const endpoint = form === 'ws' ? urls.cdpUrl : urls.cdpUrl.replace(/^ws/, 'http');
      const remote = await chromium.connectOverCDP(endpoint);
      try {
        const pages = remote.contexts().flatMap((c) => c.pages());
        const page = pages.find((p) => p.url() === 'about:blank');
        assert.ok(page, `the session's page among ${pages.map((p) => p.url()).join(', ')}`);
        assert.equal(await page.evaluate(() => window.sessionValue), 4217);
        // Locators send Playwright's injected script: one message of several hundred KiB.
        assert.equal(await page.locator('#value').textContent(), 'the session page');
        await page.evaluate(() => document.body.setAttribute('data-touched', 'yes'));
      } finally {
        await remote.close();
      }
      const sessionPage = await browser.page();
      assert.equal(await sessionPage.getAttribute('body', 'data-touched'), 'yes', 'the change is in the session');
    });
  }

  test('discovery answers /json/version with the proxy as webSocketDebuggerUrl', async () => {
    const res = await fetch(`${urls.cdpUrl.replace(/^ws/, 'http')}/json/version/`);
    assert.equal(res.status, 200);
    const version = (await res.json()) as Record<string, string>;
    assert.equal(version.webSocketDebuggerUrl, urls.cdpUrl);
    assert.match(version.Browser, /Chrome\//);
  });

  test('a wrong token, another token or an unknown session: 404, the same body; no key asked', async () => {
    const base = `${live.url.replace(/^http/, 'ws')}/v2/browser`;
    assert.equal(await refusedWith(`${base}/s1/cdp/${tokens.view}`), 404);
    assert.equal(await refusedWith(`${base}/s1/cdp/${tokens.cdp.slice(0, -1)}`), 404);
    assert.equal(await refusedWith(`${base}/nope/cdp/${tokens.cdp}`), 404);
    const wrong = await fetch(`${live.url}/v2/browser/s1/cdp/${tokens.interactive}/json/version`);
    const unknown = await fetch(`${live.url}/v2/browser/nope/cdp/${tokens.cdp}/json/version`);
    assert.equal(wrong.status, 404);
    assert.equal(unknown.status, 404);
    assert.deepEqual(await wrong.json(), await unknown.json());
    const plain = await fetch(urls.cdpUrl.replace(/^ws/, 'http'));
    assert.equal(plain.status, 400, 'not an upgrade: told to use a CDP client');
  });

  test("the session's browser closing closes the client", async () => {
    const other = await launchLiveBrowser();
    const otherTokens = SessionTokens.make();
    sessions.set('s2', { browser: other, tokens: otherTokens });
    try {
      const ws = new WebSocket(browserSessionUrls(live.url, 's2', otherTokens).cdpUrl);
      await opened(ws);
      const send = cdpClient(ws);
      assert.ok((await send('Browser.getVersion')).result.product);
      const code = closed(ws);
      await other.close();
      // The upstream ends without a close frame (1006): the client gets 1011.
      assert.equal(await code, 1011);
    } finally {
      sessions.delete('s2');
      await other.close().catch(() => {});
    }
  });

  test('shutdown closes connected clients with 1001', async () => {
    const ws = new WebSocket(urls.cdpUrl);
    await opened(ws);
    const code = closed(ws);
    await live.app.close();
    assert.equal(await code, 1001);
  });
});

describe('relay', () => {
  test('a client that does not read stops the relay reading the other side; nothing is lost or reordered', async () => {
    const MIB = 1024 * 1024;
    const COUNT = 48; // 48 MiB: far more than the relay may hold and loopback's socket buffers
    const arrivals = new Waiters();
    const listen = (wss: WebSocketServer) =>
      new Promise<number>((r) => wss.on('listening', () => r((wss.address() as { port: number }).port)));
    // The upstream sends COUNT binary messages of 1 MiB, numbered, then one text message.
    const upstreamServer = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    upstreamServer.on('connection', (ws) => {
      for (let i = 0; i < COUNT; i++) ws.send(Buffer.alloc(MIB, i));
      ws.send('the end');
    });
    const upstreamPort = await listen(upstreamServer);
    // The proxy's two sockets, watched after each relayed message.
    let mostBuffered = 0;
    let paused = false;
    const proxyServer = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    proxyServer.on('connection', (client) => {
      const upstream = new WebSocket(`ws://127.0.0.1:${upstreamPort}`);
      upstream.once('open', () => {
        relay(client, upstream);
        upstream.on('message', () => {
          mostBuffered = Math.max(mostBuffered, client.bufferedAmount);
          paused ||= upstream.isPaused;
          arrivals.notify();
        });
      });
    });
    const proxyPort = await listen(proxyServer);
    try {
      const client = new WebSocket(`ws://127.0.0.1:${proxyPort}`);
      const received: { first: number; size: number; isBinary: boolean }[] = [];
      client.on('message', (data: Buffer, isBinary) => {
        received.push({ first: data[0], size: data.length, isBinary });
        arrivals.notify();
      });
      await opened(client);
      client.pause();
      await arrivals.until(
        () => paused,
        30_000,
        () => new Error('the relay never stopped reading'),
      );
      client.resume();
      await arrivals.until(
        () => received.length === COUNT + 1,
        30_000,
        () => new Error(`${received.length} arrived`),
      );
      assert.ok(mostBuffered <= HIGH_WATER_BYTES + MIB, `at most the high-water mark and a message: ${mostBuffered}`);
      received.slice(0, COUNT).forEach((m, i) => assert.deepEqual(m, { first: i, size: MIB, isBinary: true }));
      assert.equal(received[COUNT].isBinary, false, 'text stays text');
      client.close();
    } finally {
      proxyServer.close();
      upstreamServer.close();
      for (const ws of [...proxyServer.clients, ...upstreamServer.clients]) ws.terminate();
    }
  });
});
