// The HTTP engine's cookie jar (src/scrape/engines/cookie-jar.ts), one rule per test, through the
// real engine against an http and an https server on 127.0.0.1. Host names such as shop.co.uk
// stand for public sites: the engine's resolver answers 127.0.0.1 for every name, so no request
// leaves loopback. `/…/set?c=<Set-Cookie line>&c=…&to=<url>` sets the cookies and redirects (or,
// with `meta=1`, forwards by <meta refresh>); `/…/echo` answers with the Cookie header it got.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { HttpEngine } from '../../src/scrape/engines/http.ts';
import '../helpers/loopback-dns.ts';

function handle(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url!, 'http://x');
  if (url.pathname.endsWith('/echo')) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ cookie: req.headers.cookie }));
    return;
  }
  if (!url.pathname.endsWith('/set')) {
    res.writeHead(404).end();
    return;
  }
  const cookies = url.searchParams.getAll('c');
  const to = url.searchParams.get('to')!;
  if (url.searchParams.get('meta'))
    res
      .writeHead(200, { 'content-type': 'text/html', 'set-cookie': cookies })
      .end(`<meta http-equiv="refresh" content="0; url=${to}">`);
  else res.writeHead(302, { location: to, 'set-cookie': cookies }).end();
}

let httpServer: Server;
let httpsServer: ReturnType<typeof createHttpsServer>;
let httpPort: number;
let httpsPort: number;
let dir: string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gleaner-cookies-'));
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
    { stdio: 'ignore' },
  );
  httpServer = createServer(handle);
  httpsServer = createHttpsServer(
    { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) },
    handle,
  );
  await new Promise<void>((r) => httpServer.listen(0, '127.0.0.1', r));
  await new Promise<void>((r) => httpsServer.listen(0, '127.0.0.1', r));
  httpPort = (httpServer.address() as AddressInfo).port;
  httpsPort = (httpsServer.address() as AddressInfo).port;
});

const engines: HttpEngine[] = [];
after(async () => {
  await Promise.all(engines.map((e) => e.close()));
  for (const s of [httpServer, httpsServer]) {
    s.closeAllConnections();
    s.close();
  }
  rmSync(dir, { recursive: true, force: true });
});

function engine(): HttpEngine {
  const e = new HttpEngine({
    allowPrivateNetwork: true,
    maxBytes: 100_000,
    // Every name is this machine: the servers above, and nothing else.
    ssrf: { resolver: async () => [{ address: '127.0.0.1', family: 4 }] },
  });
  engines.push(e);
  return e;
}

/** A URL on the http or https server under a given host name. */
function on(scheme: 'http' | 'https', host: string, path: string): string {
  return `${scheme}://${host}:${scheme === 'http' ? httpPort : httpsPort}${path}`;
}

/** `setAt` (a …/set URL) setting `cookies`, then forwarding to `to`. */
function setting(setAt: string, cookies: string[], to: string, meta = false): string {
  const q = new URLSearchParams();
  for (const c of cookies) q.append('c', c);
  q.set('to', to);
  if (meta) q.set('meta', '1');
  return `${setAt}?${q}`;
}

const request = (url: string, headers?: Record<string, string>) => ({
  url,
  headers,
  timeoutMs: 5000,
  skipTlsVerification: true,
  mobile: false,
  proxy: 'none' as const,
});

/** The Cookie header the chain's last hop (an …/echo) received; undefined when none. */
async function cookieAtEnd(url: string, headers?: Record<string, string>, e = engine()): Promise<string | undefined> {
  const r = await e.fetch(request(url, headers));
  assert.equal(r.status, 200);
  assert.match(new URL(r.url).pathname, /\/echo$/, `the chain ended at ${r.url}`);
  return (JSON.parse(r.body.toString()) as { cookie?: string }).cookie;
}

describe('Path', () => {
  test('a cookie with Path=/a goes to /a and below, not to /b nor to /ab', async () => {
    const set = on('http', 'shop.co.uk', '/set');
    const cookies = ['p=1; Path=/a', 'root=1; Path=/'];
    assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'shop.co.uk', '/b/echo'))), 'root=1');
    assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'shop.co.uk', '/ab/echo'))), 'root=1');
    // The longer path first, as RFC 6265 orders them.
    assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'shop.co.uk', '/a/x/echo'))), 'p=1; root=1');
  });

  test('without Path, the default path is the setting URL’s directory', async () => {
    const set = on('http', 'shop.co.uk', '/dir/set');
    assert.equal(await cookieAtEnd(setting(set, ['d=1'], on('http', 'shop.co.uk', '/dir/echo'))), 'd=1');
    assert.equal(await cookieAtEnd(setting(set, ['d=1'], on('http', 'shop.co.uk', '/echo'))), undefined);
  });
});

describe('Secure', () => {
  test('a Secure cookie set over https is not sent on a following http hop', async () => {
    const set = on('https', 'shop.co.uk', '/set');
    const cookies = ['s=1; Secure; Path=/', 'plain=1; Path=/'];
    assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'shop.co.uk', '/echo'))), 'plain=1');
    assert.equal(await cookieAtEnd(setting(set, cookies, on('https', 'shop.co.uk', '/echo'))), 's=1; plain=1');
  });

  test('a Secure cookie set over http is not stored, so not sent on a following https hop', async () => {
    const set = on('http', 'shop.co.uk', '/set');
    const cookies = ['s=1; Secure; Path=/', 'plain=1; Path=/'];
    assert.equal(await cookieAtEnd(setting(set, cookies, on('https', 'shop.co.uk', '/echo'))), 'plain=1');
  });

  test('loopback and localhost over http are plain http too', async () => {
    const cookies = ['s=1; Secure; Path=/', 'plain=1; Path=/'];
    const loopback = `http://127.0.0.1:${httpPort}`;
    assert.equal(await cookieAtEnd(setting(`${loopback}/set`, cookies, `${loopback}/echo`)), 'plain=1');
    const local = on('http', 'a.localhost', '');
    assert.equal(await cookieAtEnd(setting(`${local}/set`, cookies, `${local}/echo`)), 'plain=1');
  });

  test('a __Host- cookie needs Secure, Path=/ and no Domain', async () => {
    const set = on('https', 'shop.co.uk', '/set');
    const cookies = ['__Host-ok=1; Secure; Path=/', '__Host-nopath=1; Secure', '__Host-plain=1; Path=/'];
    assert.equal(await cookieAtEnd(setting(set, cookies, on('https', 'shop.co.uk', '/echo'))), '__Host-ok=1');
  });
});

describe('expiry', () => {
  test('Max-Age=0 and an Expires in the past delete a cookie set earlier in the chain', async () => {
    const first = on('http', 'shop.co.uk', '/set');
    const second = on('http', 'shop.co.uk', '/set');
    const url = setting(
      first,
      ['keep=1; Path=/', 'gone=1; Path=/', 'old=1; Path=/'],
      setting(
        second,
        ['gone=x; Max-Age=0; Path=/', 'old=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/'],
        on('http', 'shop.co.uk', '/echo'),
      ),
    );
    assert.equal(await cookieAtEnd(url), 'keep=1');
  });

  test('an already expired cookie is never sent', async () => {
    const set = on('http', 'shop.co.uk', '/set');
    const cookies = ['past=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Path=/', 'zero=1; Max-Age=0; Path=/'];
    assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'shop.co.uk', '/echo'))), undefined);
  });

  test('a cookie with Max-Age in the future is kept; Max-Age wins over Expires', async () => {
    const set = on('http', 'shop.co.uk', '/set');
    const cookies = [
      'hour=1; Max-Age=3600; Path=/',
      'both=1; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=3600; Path=/',
    ];
    assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'shop.co.uk', '/echo'))), 'hour=1; both=1');
  });
});

describe('Domain', () => {
  test('Domain set to a public suffix (co.uk, github.io) is refused, also for the setting host', async () => {
    const set = on('http', 'shop.co.uk', '/set');
    for (const to of [on('http', 'other.co.uk', '/echo'), on('http', 'shop.co.uk', '/echo')])
      assert.equal(await cookieAtEnd(setting(set, ['ps=1; Domain=co.uk; Path=/'], to)), undefined, to);
    const pages = on('http', 'me.github.io', '/set');
    const to = on('http', 'you.github.io', '/echo');
    assert.equal(await cookieAtEnd(setting(pages, ['ps=1; Domain=github.io; Path=/'], to)), undefined);
  });

  test('Domain set to a parent domain is accepted and sent to its other subdomains', async () => {
    const set = on('http', 'www.shop.co.uk', '/set');
    for (const domain of ['shop.co.uk', '.shop.co.uk', 'SHOP.co.uk']) {
      const cookies = [`pd=1; Domain=${domain}; Path=/`];
      assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'cdn.shop.co.uk', '/echo'))), 'pd=1', domain);
      assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'shop.co.uk', '/echo'))), 'pd=1', domain);
    }
  });

  test('a Domain the setting host is not part of is refused', async () => {
    const set = on('http', 'www.shop.co.uk', '/set');
    const cookies = ['x=1; Domain=other.co.uk; Path=/', 'y=1; Domain=cdn.shop.co.uk; Path=/'];
    assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'other.co.uk', '/echo'))), undefined);
    assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'cdn.shop.co.uk', '/echo'))), undefined);
  });

  test('a host-only cookie (no Domain) goes to its host only: not to a sibling, a parent or a child', async () => {
    const set = on('http', 'www.shop.co.uk', '/set');
    const cookies = ['ho=1; Path=/'];
    for (const host of ['cdn.shop.co.uk', 'shop.co.uk', 'a.www.shop.co.uk'])
      assert.equal(await cookieAtEnd(setting(set, cookies, on('http', host, '/echo'))), undefined, host);
    assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'WWW.shop.co.uk', '/echo'))), 'ho=1');
  });
});

describe('other rules', () => {
  test('HttpOnly changes nothing for the engine: the cookie is kept and sent', async () => {
    const set = on('http', 'shop.co.uk', '/set');
    const cookies = ['h=1; HttpOnly; Path=/'];
    assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'shop.co.uk', '/echo'))), 'h=1');
  });

  test('malformed Set-Cookie lines are dropped without failing the fetch; the good ones stay', async () => {
    const set = on('http', 'shop.co.uk', '/set');
    const cookies = [
      'justtext',
      '=nameless',
      '; Path=/',
      '',
      'bad=1; Domain=..',
      'ok=1; Path=/',
      'date=1; Expires=not a date; Path=/', // an attribute it cannot read is ignored: a session cookie
    ];
    assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'shop.co.uk', '/echo'))), 'ok=1; date=1');
  });

  test('a later cookie of the same name, domain and path replaces the earlier one', async () => {
    const first = on('http', 'shop.co.uk', '/set');
    const url = setting(first, ['v=1; Path=/'], setting(first, ['v=2; Path=/'], on('http', 'shop.co.uk', '/echo')));
    assert.equal(await cookieAtEnd(url), 'v=2');
  });

  test('the caller’s Cookie header is still sent, before the jar’s cookies', async () => {
    const set = on('http', 'shop.co.uk', '/set');
    const url = setting(set, ['j=1; Path=/'], on('http', 'shop.co.uk', '/echo'));
    assert.equal(await cookieAtEnd(url, { Cookie: 'mine=1; theirs=2' }), 'mine=1; theirs=2; j=1');
    // To another host only the jar's cookies for that host go (the caller's stay with their host).
    const away = setting(set, ['j=1; Domain=shop.co.uk; Path=/'], on('http', 'cdn.shop.co.uk', '/echo'));
    assert.equal(await cookieAtEnd(away, { Cookie: 'mine=1' }), 'j=1');
  });

  test('cookies set on a page that forwards by <meta refresh> go to the next page, by the same rules', async () => {
    const set = on('http', 'shop.co.uk', '/set');
    const cookies = ['m=1; Path=/', 'p=1; Path=/elsewhere'];
    assert.equal(await cookieAtEnd(setting(set, cookies, on('http', 'shop.co.uk', '/echo'), true)), 'm=1');
  });

  test('each fetch has its own jar: nothing is kept for the next fetch on the same engine', async () => {
    const e = engine();
    const set = on('http', 'shop.co.uk', '/set');
    assert.equal(
      await cookieAtEnd(setting(set, ['f=1; Max-Age=3600; Path=/'], on('http', 'shop.co.uk', '/echo')), undefined, e),
      'f=1',
    );
    assert.equal(await cookieAtEnd(on('http', 'shop.co.uk', '/echo'), undefined, e), undefined);
  });
});

describe('download', () => {
  async function downloaded(url: string): Promise<string | undefined> {
    const chunks: Buffer[] = [];
    const to = new Writable({
      write(chunk: Buffer, _enc, done) {
        chunks.push(chunk);
        done();
      },
    });
    const r = await engine().download(request(url), { maxBytes: 10_000, to });
    assert.equal(r.status, 200);
    return (JSON.parse(Buffer.concat(chunks).toString()) as { cookie?: string }).cookie;
  }

  test('a download’s redirect chain applies the same rules (Path, Secure, Domain, expiry)', async () => {
    const set = on('https', 'www.shop.co.uk', '/set');
    const cookies = [
      'p=1; Path=/a',
      's=1; Secure; Path=/',
      'ps=1; Domain=co.uk; Path=/',
      'pd=1; Domain=shop.co.uk; Path=/',
      'zero=1; Max-Age=0; Path=/',
      'ho=1; Path=/',
    ];
    assert.equal(await downloaded(setting(set, cookies, on('http', 'cdn.shop.co.uk', '/b/echo'))), 'pd=1');
    assert.equal(
      await downloaded(setting(set, cookies, on('https', 'www.shop.co.uk', '/a/echo'))),
      'p=1; s=1; pd=1; ho=1',
    );
  });
});
