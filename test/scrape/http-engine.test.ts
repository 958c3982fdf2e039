// The HTTP engine against small loopback servers: redirects (HTTP and meta refresh), cookies,
// request headers, decompression, size and time limits, every failure code, TLS verification,
// SSRF on the first hop and on redirects, and upstream proxies.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import {
  type IncomingMessage,
  type Server,
  type ServerResponse,
  createServer,
  request as httpRequest,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, type Socket, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { callerHeadersFor, isCredentialHeader } from '../../src/scrape/engines/caller-headers.ts';
import { DESKTOP_USER_AGENT, HttpEngine, MOBILE_USER_AGENT } from '../../src/scrape/engines/http.ts';
import '../helpers/loopback-dns.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const routes: Record<string, Handler> = {
  '/page': (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>Page</h1>'),
  '/r301': (_req, res) => res.writeHead(301, { location: '/page' }).end(),
  '/chain/1': (_req, res) => res.writeHead(302, { location: '/chain/2' }).end(),
  '/chain/2': (_req, res) => res.writeHead(307, { location: '/chain/3' }).end(),
  '/chain/3': (_req, res) => res.writeHead(308, { location: '/page' }).end(),
  '/loop': (_req, res) => res.writeHead(302, { location: '/loop' }).end(),
  '/meta': (_req, res) =>
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<html><head><meta http-equiv="refresh" content="0; url=/page"></head></html>'),
  '/meta-slow': (_req, res) =>
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<meta http-equiv="refresh" content="30; url=/page"><p>stay</p>'),
  '/set-cookie': (_req, res) =>
    res.writeHead(302, { location: '/echo', 'set-cookie': 'session=abc123; Path=/; HttpOnly' }).end(),
  // Redirects to the same path on another host name of this server (?to=host), setting a host-only
  // cookie and, with ?domain=, a Domain cookie on the way.
  '/elsewhere': (req, res) => {
    const q = new URL(req.url!, 'http://x').searchParams;
    const cookies = ['here=1; Path=/', ...(q.get('domain') ? [`shared=2; Domain=${q.get('domain')}; Path=/`] : [])];
    res.writeHead(302, { location: `http://${q.get('to')}:${req.socket.localPort}/echo`, 'set-cookie': cookies }).end();
  },
  '/echo': (req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(req.headers)),
  '/gzip': (_req, res) =>
    res.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' }).end(gzipSync('<p>zipped</p>')),
  '/br': (_req, res) =>
    res
      .writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'br' })
      .end(brotliCompressSync('<p>brotli</p>')),
  '/big': (_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('x'.repeat(200_000)),
  '/bomb': (_req, res) =>
    res
      .writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' })
      .end(gzipSync(Buffer.alloc(5_000_000, 'a'))),
  '/slow': (_req, res) => {
    const t = setTimeout(() => res.end('late'), 5000);
    res.on('close', () => clearTimeout(t));
  },
  '/404': (_req, res) => res.writeHead(404, { 'content-type': 'text/html' }).end('<h1>Not here</h1>'),
};

let origin: string;
let server: Server;
const engines: HttpEngine[] = [];
function engine(opts: Partial<ConstructorParameters<typeof HttpEngine>[0]> = {}): HttpEngine {
  const e = new HttpEngine({ allowPrivateNetwork: true, maxBytes: 100_000, ...opts });
  engines.push(e);
  return e;
}
const req = (url: string, extra: Partial<Parameters<HttpEngine['fetch']>[0]> = {}) => ({
  url,
  timeoutMs: 5000,
  skipTlsVerification: false,
  mobile: false,
  proxy: 'basic' as const,
  ...extra,
});

async function rejectsWith(p: Promise<unknown>, code: string, status?: number): Promise<void> {
  await assert.rejects(p, (err: { code?: string; statusCode?: number; message?: string }) => {
    assert.equal(err.code, code, err.message);
    if (status) assert.equal(err.statusCode, status);
    return true;
  });
}

before(async () => {
  server = createServer((rq, rs) => (routes[rq.url!.split('?')[0]] ?? routes['/404'])(rq, rs));
  origin = await listen(server);
});
after(async () => {
  await Promise.all(engines.map((e) => e.close()));
  server.closeAllConnections();
  server.close();
});

describe('redirects', () => {
  test('follows 301/302/307/308 and reports the chain and the final URL', async () => {
    const r = await engine().fetch(req(`${origin}/chain/1`));
    assert.equal(r.status, 200);
    assert.equal(r.url, `${origin}/page`);
    assert.equal(r.requestedUrl, `${origin}/chain/1`);
    assert.deepEqual(r.redirects, [`${origin}/chain/1`, `${origin}/chain/2`, `${origin}/chain/3`]);
    assert.equal((await engine().fetch(req(`${origin}/r301`))).body.toString(), '<h1>Page</h1>');
  });

  test('a redirect loop stops after 10 hops with SCRAPE_TOO_MANY_REDIRECTS', async () => {
    await rejectsWith(engine().fetch(req(`${origin}/loop`)), 'SCRAPE_TOO_MANY_REDIRECTS', 502);
  });

  test('an immediate meta refresh is followed; a slow one is content', async () => {
    assert.equal((await engine().fetch(req(`${origin}/meta`))).url, `${origin}/page`);
    const stay = await engine().fetch(req(`${origin}/meta-slow`));
    assert.equal(stay.url, `${origin}/meta-slow`);
  });

  test('cookies set along a redirect are sent on the next hop, with the caller’s own', async () => {
    const r = await engine().fetch(req(`${origin}/set-cookie`, { headers: { Cookie: 'mine=1' } }));
    const seen = JSON.parse(r.body.toString());
    assert.equal(seen.cookie, 'mine=1; session=abc123');
  });
});

describe('the caller’s headers and cookies on a redirect to another host', () => {
  const secret = {
    Authorization: 'Bearer s3cret',
    'X-Api-Key': 'k',
    Cookie: 'mine=1',
    'X-Custom': 'c',
    'User-Agent': 'MyAgent/1',
  };

  test('credentials stay with the host asked for; the rest goes along', async () => {
    const port = new URL(origin).port;
    const r = await engine().fetch(
      req(`http://a.test.localhost:${port}/elsewhere?to=b.other.localhost`, { headers: secret }),
    );
    assert.equal(r.url, `http://b.other.localhost:${port}/echo`);
    const seen = JSON.parse(r.body.toString()) as Record<string, string>;
    assert.equal(seen.authorization, undefined);
    assert.equal(seen['x-api-key'], undefined);
    assert.equal(seen.cookie, undefined, 'neither the caller’s cookie nor the one a.test.localhost set');
    assert.equal(seen['x-custom'], 'c');
    assert.equal(seen['user-agent'], 'MyAgent/1');
  });

  test('the same host on another path keeps them all, with the cookies it set', async () => {
    const port = new URL(origin).port;
    const r = await engine().fetch(
      req(`http://a.test.localhost:${port}/elsewhere?to=a.test.localhost`, { headers: secret }),
    );
    const seen = JSON.parse(r.body.toString()) as Record<string, string>;
    assert.equal(seen.authorization, 'Bearer s3cret');
    assert.equal(seen['x-api-key'], 'k');
    assert.equal(seen.cookie, 'mine=1; here=1');
  });

  test('a Domain cookie goes to the domain’s other hosts, a host-only one does not', async () => {
    const port = new URL(origin).port;
    const r = await engine().fetch(
      req(`http://a.test.localhost:${port}/elsewhere?to=b.test.localhost&domain=test.localhost`),
    );
    assert.equal(JSON.parse(r.body.toString()).cookie, 'shared=2');
    // A Domain the setting host is not part of, or one without a dot, is refused.
    const away = await engine().fetch(
      req(`http://a.test.localhost:${port}/elsewhere?to=b.other.localhost&domain=other.localhost`),
    );
    assert.equal(JSON.parse(away.body.toString()).cookie, undefined);
    const tld = await engine().fetch(req(`http://a.test.localhost:${port}/elsewhere?to=b.localhost&domain=localhost`));
    assert.equal(JSON.parse(tld.body.toString()).cookie, undefined);
  });

  test('which headers count as credentials; https never hands them down to http', () => {
    for (const h of [
      'Authorization',
      'proxy-authorization',
      'Cookie',
      'X-Api-Key',
      'api-key',
      'X-Auth-Token',
      'X-Session-Id',
      'X-Client-Secret',
      'X-Shopify-Access-Token',
      'X-Stripe-Key',
    ]) {
      assert.ok(isCredentialHeader(h), h);
    }
    for (const h of ['User-Agent', 'Accept', 'Accept-Language', 'Referer', 'X-Custom', 'X-Requested-With', 'DNT'])
      assert.ok(!isCredentialHeader(h), h);
    const headers = { Authorization: 'a', Accept: 'text/html' };
    assert.deepEqual(
      callerHeadersFor(headers, new URL('http://example.com/'), new URL('https://EXAMPLE.com/x')),
      headers,
      'an upgrade to https keeps them',
    );
    assert.deepEqual(callerHeadersFor(headers, new URL('https://example.com/'), new URL('http://example.com/x')), {
      Accept: 'text/html',
    });
    assert.deepEqual(callerHeadersFor(headers, new URL('https://example.com/'), new URL('https://www.example.com/')), {
      Accept: 'text/html',
    });
  });
});

describe('request', () => {
  test('desktop and mobile user agents, Accept-Language from languages, caller headers win', async () => {
    const e = engine();
    const desktop = JSON.parse((await e.fetch(req(`${origin}/echo`))).body.toString());
    assert.equal(desktop['user-agent'], DESKTOP_USER_AGENT);
    assert.equal(desktop['accept-language'], 'en-US,en;q=0.9');
    const mobile = JSON.parse(
      (await e.fetch(req(`${origin}/echo`, { mobile: true, languages: ['de-DE', 'fr'] }))).body.toString(),
    );
    assert.equal(mobile['user-agent'], MOBILE_USER_AGENT);
    assert.equal(mobile['accept-language'], 'de-DE,fr;q=0.9');
    const custom = JSON.parse(
      (
        await e.fetch(req(`${origin}/echo`, { headers: { 'User-Agent': 'MyBot/1.0', 'X-Test': 'yes' } }))
      ).body.toString(),
    );
    assert.equal(custom['user-agent'], 'MyBot/1.0');
    assert.equal(custom['x-test'], 'yes');
  });

  test('gzip and brotli bodies are decompressed', async () => {
    assert.equal((await engine().fetch(req(`${origin}/gzip`))).body.toString(), '<p>zipped</p>');
    assert.equal((await engine().fetch(req(`${origin}/br`))).body.toString(), '<p>brotli</p>');
  });

  test('a target’s 404 is a response, not an error', async () => {
    const r = await engine().fetch(req(`${origin}/missing`));
    assert.equal(r.status, 404);
  });
});

describe('limits and failures', () => {
  test('bodies over the cap, also after decompression, give SCRAPE_RESPONSE_TOO_LARGE', async () => {
    await rejectsWith(engine().fetch(req(`${origin}/big`)), 'SCRAPE_RESPONSE_TOO_LARGE');
    await rejectsWith(engine().fetch(req(`${origin}/bomb`)), 'SCRAPE_RESPONSE_TOO_LARGE');
  });

  test('the timeout gives 408 SCRAPE_TIMEOUT promptly', async () => {
    const started = Date.now();
    await rejectsWith(engine().fetch(req(`${origin}/slow`, { timeoutMs: 300 })), 'SCRAPE_TIMEOUT', 408);
    assert.ok(Date.now() - started < 2000);
  });

  test('a refused connection gives SCRAPE_CONNECTION_ERROR', async () => {
    const closed = createServer();
    const url = await listen(closed);
    closed.close();
    await rejectsWith(engine().fetch(req(`${url}/`)), 'SCRAPE_CONNECTION_ERROR', 502);
  });

  test('a name that does not resolve gives SCRAPE_DNS_RESOLUTION_ERROR', async () => {
    const e = engine({
      ssrf: {
        resolver: async (hostname) => {
          throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
        },
      },
    });
    await rejectsWith(e.fetch(req('http://no-such-host.test/')), 'SCRAPE_DNS_RESOLUTION_ERROR');
  });

  test('only http(s) URLs are fetched', async () => {
    await rejectsWith(engine().fetch(req('ftp://127.0.0.1/file')), 'BAD_REQUEST', 400);
  });
});

describe('SSRF', () => {
  test('loopback targets are refused unless private networks are allowed', async () => {
    const strict = engine({ allowPrivateNetwork: false });
    await rejectsWith(strict.fetch(req(`${origin}/page`)), 'SCRAPE_BLOCKED_URL', 403);
    await rejectsWith(strict.fetch(req(`http://localhost:${new URL(origin).port}/page`)), 'SCRAPE_BLOCKED_URL', 403);
    await rejectsWith(strict.fetch(req('http://169.254.169.254/latest/meta-data/')), 'SCRAPE_BLOCKED_URL', 403);
    assert.equal((await engine({ allowPrivateNetwork: true }).fetch(req(`${origin}/page`))).status, 200);
  });

  test('a name resolving to a private address is refused after DNS', async () => {
    const e = engine({
      allowPrivateNetwork: false,
      ssrf: { resolver: async () => [{ address: '10.1.2.3', family: 4 }] },
    });
    await rejectsWith(e.fetch(req('http://intranet.test/')), 'SCRAPE_BLOCKED_URL', 403);
  });

  test('a redirect from an allowed host to a private address is refused', async () => {
    const port = new URL(origin).port;
    const redirector = createServer((_rq, rs) =>
      rs.writeHead(302, { location: `http://127.0.0.1:${port}/page` }).end(),
    );
    const redirectorPort = new URL(await listen(redirector)).port;
    try {
      // "public.test" stands for a public site: it resolves to loopback here, and only that name is let through.
      const e = engine({
        allowPrivateNetwork: false,
        ssrf: {
          resolver: async () => [{ address: '127.0.0.1', family: 4 }],
          isAllowed: (_ip, hostname) => hostname === 'public.test',
        },
      });
      await rejectsWith(e.fetch(req(`http://public.test:${redirectorPort}/`)), 'SCRAPE_BLOCKED_URL', 403);
    } finally {
      redirector.closeAllConnections();
      redirector.close();
    }
  });
});

describe('TLS', () => {
  let httpsOrigin: string;
  let httpsServer: ReturnType<typeof createHttpsServer>;
  let dir: string;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gleaner-tls-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'rsa:2048',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '1',
        '-subj',
        '/CN=127.0.0.1',
      ],
      {
        stdio: 'ignore',
      },
    );
    httpsServer = createHttpsServer(
      { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
      (_rq, rs) => rs.writeHead(200, { 'content-type': 'text/html' }).end('<p>secure</p>'),
    );
    await new Promise<void>((r) => httpsServer.listen(0, '127.0.0.1', r));
    httpsOrigin = `https://127.0.0.1:${(httpsServer.address() as AddressInfo).port}`;
  });
  after(() => {
    httpsServer.closeAllConnections();
    httpsServer.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a self-signed certificate fails with SCRAPE_SSL_ERROR when verifying, and passes with skipTlsVerification', async () => {
    await rejectsWith(engine().fetch(req(`${httpsOrigin}/`, { skipTlsVerification: false })), 'SCRAPE_SSL_ERROR', 502);
    const r = await engine().fetch(req(`${httpsOrigin}/`, { skipTlsVerification: true }));
    assert.equal(r.body.toString(), '<p>secure</p>');
  });
});

describe('proxies', () => {
  // A loopback proxy that counts what it carries: plain requests to http:// targets are
  // forwarded (absolute-URI form), https:// ones tunnelled (CONNECT).
  let proxyUrl: string;
  let tunnels = 0;
  let proxy: Server;
  const sockets = new Set<Socket>();
  before(async () => {
    proxy = createServer((rq, rs) => {
      tunnels++;
      const upstream = httpRequest(rq.url!, { method: rq.method, headers: rq.headers }, (up) => {
        rs.writeHead(up.statusCode!, up.headers);
        up.pipe(rs);
      });
      upstream.on('error', () => rs.destroy());
      rq.pipe(upstream);
    });
    proxy.on('connect', (rq: IncomingMessage, client: Socket) => {
      tunnels++;
      const [host, port] = rq.url!.split(':');
      const upstream = connect(Number(port), host, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        upstream.pipe(client);
        client.pipe(upstream);
      });
      for (const s of [client, upstream]) {
        sockets.add(s);
        s.on('error', () => undefined);
        s.on('close', () => sockets.delete(s));
      }
    });
    proxyUrl = await listen(proxy);
  });
  after(() => {
    for (const s of sockets) s.destroy();
    proxy.closeAllConnections();
    proxy.close();
  });

  test('basic uses PROXY_URL, enhanced uses PROXY_ENHANCED_URL, and enhanced without one is a 400', async () => {
    const before = tunnels;
    const r = await engine({ proxyUrl }).fetch(req(`${origin}/page`));
    assert.equal(r.status, 200);
    assert.equal(tunnels, before + 1);
    await engine({ enhancedProxyUrl: proxyUrl }).fetch(req(`${origin}/page`, { proxy: 'enhanced' }));
    assert.equal(tunnels, before + 2);
    await rejectsWith(engine().fetch(req(`${origin}/page`, { proxy: 'enhanced' })), 'BAD_REQUEST', 400);
  });

  test('through a proxy the target is still judged by the SSRF guard', async () => {
    const before = tunnels;
    await rejectsWith(
      engine({ proxyUrl, allowPrivateNetwork: false }).fetch(req(`${origin}/page`)),
      'SCRAPE_BLOCKED_URL',
      403,
    );
    assert.equal(tunnels, before, 'nothing was sent to the proxy');
  });
});
