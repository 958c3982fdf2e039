// Where a rendered page's traffic goes (issue 22): every connection through the guard proxy and, with
// PROXY_URL, on through that upstream proxy (plain requests in absolute form, HTTPS and WebSockets as
// CONNECT tunnels, credentials sent, a refused target never handed to the upstream); WebRTC sends no
// UDP the guard cannot see (Chromium's disable_non_proxied_udp policy), proven against a STUN server
// on loopback that must receive nothing, beside a control browser without the policy that does.
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { type IncomingMessage, type Server, createServer, request as httpRequest } from 'node:http';
import { type AddressInfo, type Socket, connect } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { chromium } from 'playwright-core';
import {
  BrowserEngine,
  CHROMIUM_ARGS,
  chromiumAvailable,
  chromiumExecutable,
} from '../../src/scrape/engines/browser.ts';
import { GuardProxy } from '../../src/scrape/engines/browser/guard-proxy.ts';
import { type FixtureSite, startFixtureSite } from '../fixtures/site/index.ts';

/** A forward proxy on loopback that records what it is asked for (absolute-form requests and CONNECTs). */
interface RecordingProxy {
  url: string;
  seen: { method: string; target: string; auth: string | undefined }[];
  close(): Promise<void>;
}

async function startRecordingProxy(opts: { refuseConnect?: boolean } = {}): Promise<RecordingProxy> {
  const seen: RecordingProxy['seen'] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    seen.push({ method: req.method ?? '', target: req.url ?? '', auth: req.headers['proxy-authorization'] });
    const target = new URL(req.url ?? '');
    const up = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname + target.search, method: req.method },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.once('close', () => sockets.delete(s));
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    seen.push({ method: 'CONNECT', target: req.url ?? '', auth: req.headers['proxy-authorization'] });
    if (opts.refuseConnect) return void client.end('HTTP/1.1 403 Forbidden\r\ncontent-length: 0\r\n\r\n');
    const [host, port] = (req.url ?? '').split(':');
    const up = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) up.write(head);
      up.pipe(client);
      client.pipe(up);
    });
    up.on('error', () => client.destroy());
    client.on('error', () => up.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

/** Sends a CONNECT for authority to the proxy at proxyUrl; resolves to its status line and the open socket. */
function connectThrough(proxyUrl: string, authority: string): Promise<{ status: string; socket: Socket }> {
  const { hostname, port } = new URL(proxyUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () =>
      socket.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n`),
    );
    let buf = '';
    const onData = (d: Buffer) => {
      buf += d.toString('latin1');
      if (!buf.includes('\r\n\r\n')) return;
      socket.off('data', onData);
      resolve({ status: buf.split('\r\n')[0], socket });
    };
    socket.on('data', onData);
    socket.on('error', reject);
  });
}

let site: FixtureSite;

before(async () => {
  site = await startFixtureSite();
});

after(async () => {
  await site.close();
});

describe('the guard proxy with an upstream proxy (PROXY_URL)', () => {
  test('plain requests go on in absolute form with the credentials of the URL', async () => {
    const up = await startRecordingProxy();
    const upUrl = new URL(up.url);
    upUrl.username = 'user';
    upUrl.password = 'p@ss';
    const guard = await GuardProxy.start({ allowPrivateNetwork: true, upstreamProxy: upUrl.href });
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const { hostname, port } = new URL(guard.url);
        const r = httpRequest({ host: hostname, port, path: site.url('/about'), method: 'GET' }, (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c) => (text += c));
          res.on('end', () => resolve(text));
        });
        r.on('error', reject);
        r.end();
      });
      assert.match(body, /About the Gleaner Gazette/);
      assert.deepEqual(up.seen, [
        { method: 'GET', target: site.url('/about'), auth: `Basic ${Buffer.from('user:p@ss').toString('base64')}` },
      ]);
    } finally {
      await guard.close();
      await up.close();
    }
  });

  test('tunnels go through the upstream CONNECT; a refused target never reaches the upstream', async () => {
    const up = await startRecordingProxy();
    const strict = await GuardProxy.start({ allowPrivateNetwork: false, upstreamProxy: up.url });
    const open = await GuardProxy.start({ allowPrivateNetwork: true, upstreamProxy: up.url });
    try {
      const authority = `127.0.0.1:${site.port}`;
      const ok = await connectThrough(open.url, authority);
      assert.equal(ok.status, 'HTTP/1.1 200 Connection Established');
      // The tunnel carries bytes both ways: an HTTP request to the fixture through it.
      const answer = await new Promise<string>((resolve) => {
        let text = '';
        ok.socket.on('data', (d) => {
          text += d.toString('utf8');
          if (text.includes('</html>')) resolve(text);
        });
        ok.socket.write(`GET /about HTTP/1.1\r\nHost: ${authority}\r\nConnection: close\r\n\r\n`);
      });
      ok.socket.destroy();
      assert.match(answer, /^HTTP\/1\.1 200/);
      assert.match(answer, /About the Gleaner Gazette/);
      assert.deepEqual(
        up.seen.map((s) => [s.method, s.target]),
        [['CONNECT', authority]],
      );

      for (const target of [authority, `localhost:${site.port}`, '169.254.169.254:80']) {
        const refused = await connectThrough(strict.url, target);
        refused.socket.destroy();
        assert.match(refused.status, /^HTTP\/1\.1 403/, target);
      }
      assert.equal(up.seen.length, 1, 'the upstream saw no refused target');
    } finally {
      await Promise.all([strict.close(), open.close()]);
      await up.close();
    }
  });

  test("an upstream refusing CONNECT is the guard's 502 with the reason recorded", async () => {
    const up = await startRecordingProxy({ refuseConnect: true });
    const guard = await GuardProxy.start({ allowPrivateNetwork: true, upstreamProxy: up.url });
    try {
      const r = await connectThrough(guard.url, `127.0.0.1:${site.port}`);
      r.socket.destroy();
      assert.match(r.status, /^HTTP\/1\.1 502/);
      assert.match(guard.failureFor('127.0.0.1')?.message ?? '', /upstream proxy refused CONNECT .* \(403\)/);
    } finally {
      await guard.close();
      await up.close();
    }
  });
});

describe('the browser engine', { skip: !chromiumAvailable() && 'Chromium not installed' }, () => {
  test('with proxyUrl, the page and its subresources go through the upstream proxy', async () => {
    const up = await startRecordingProxy();
    const engine = new BrowserEngine({ allowPrivateNetwork: true, proxyUrl: up.url });
    try {
      const r = await engine.fetch({
        url: site.url('/articles/1'),
        timeoutMs: 20_000,
        skipTlsVerification: true,
        mobile: false,
      });
      assert.equal(r.status, 200);
      const targets = up.seen.map((s) => s.target);
      assert.ok(targets.includes(site.url('/articles/1')), `the page went through the proxy: ${targets.join(', ')}`);
      assert.ok(targets.length > 1, `its subresources too: ${targets.join(', ')}`);
    } finally {
      await engine.close();
      await up.close();
    }
  });

  test('proxy "enhanced" without PROXY_ENHANCED_URL is a 400', async () => {
    const engine = new BrowserEngine({ allowPrivateNetwork: true });
    try {
      await assert.rejects(
        engine.fetch({
          url: site.url('/about'),
          proxy: 'enhanced',
          timeoutMs: 5000,
          skipTlsVerification: true,
          mobile: false,
        }),
        (err: { code?: string }) => err.code === 'BAD_REQUEST',
      );
    } finally {
      await engine.close();
    }
  });

  test('WebRTC sends no UDP past the guard (a control browser without the policy does)', async () => {
    const stun = createSocket('udp4');
    let packets = 0;
    stun.on('message', () => packets++);
    await new Promise<void>((r) => stun.bind(0, '127.0.0.1', r));
    const stunPort = stun.address().port;
    // A page that gathers ICE candidates against the loopback STUN server.
    const page = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>rtc</title><p id="out">gathering</p><script>
        const pc = new RTCPeerConnection({ iceServers: [{ urls: 'stun:127.0.0.1:${stunPort}' }] });
        pc.createDataChannel('x');
        pc.createOffer().then((o) => pc.setLocalDescription(o));
        setTimeout(() => { document.getElementById('out').textContent = 'done'; }, 1500);
      </script>`);
    });
    await new Promise<void>((r) => page.listen(0, '127.0.0.1', r));
    const pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/`;
    const engine = new BrowserEngine({ allowPrivateNetwork: true });
    try {
      const r = await engine.fetch({
        url: pageUrl,
        timeoutMs: 20_000,
        skipTlsVerification: true,
        mobile: false,
        waitForMs: 2000,
      });
      assert.match(r.html, /done/);
      assert.equal(packets, 0, 'the STUN server received nothing from the engine');

      // Control: the same page in a Chromium without the policy does reach the STUN server, so the
      // assertion above can fail.
      const control = await chromium.launch({
        executablePath: chromiumExecutable(),
        args: CHROMIUM_ARGS.filter((a) => !a.startsWith('--webrtc-ip-handling-policy')),
      });
      try {
        const p = await control.newPage();
        await p.goto(pageUrl);
        await p.waitForTimeout(2000);
      } finally {
        await control.close();
      }
      assert.ok(packets > 0, 'the control browser reached the STUN server');
    } finally {
      await engine.close();
      await new Promise((r) => page.close(r));
      stun.close();
    }
  });
});
