// SSRF guard tests. Network rule: the only sockets opened here go to
// 127.0.0.1. Blocking of other addresses is proven by pure classification and
// by a lookup fed a fake resolver; nothing ever connects to them.
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { interceptors, request } from 'undici';
import {
  BlockedAddressError,
  InvalidTargetUrlError,
  assertUrlAllowed,
  classifyAddress,
  createGuardedAgent,
  createGuardedLookup,
  isBlockedAddress,
} from '../../src/net/ssrf.ts';
import type { AddressClass, Resolver } from '../../src/net/ssrf.ts';

const CLASSIFICATION: [string, AddressClass][] = [
  // IPv4 public
  ['8.8.8.8', 'public'],
  ['1.1.1.1', 'public'],
  ['93.184.216.34', 'public'],
  ['172.15.255.255', 'public'], // just below 172.16/12
  ['172.32.0.0', 'public'], // just above 172.16/12
  ['100.63.255.255', 'public'], // just below 100.64/10
  ['100.128.0.0', 'public'], // just above 100.64/10
  ['198.17.255.255', 'public'], // just below 198.18/15
  ['223.255.255.255', 'public'], // just below multicast
  // IPv4 special-purpose
  ['0.0.0.0', 'unspecified'],
  ['0.255.255.255', 'unspecified'],
  ['10.0.0.1', 'private'],
  ['10.255.255.255', 'private'],
  ['172.16.0.1', 'private'],
  ['172.31.255.255', 'private'],
  ['192.168.1.1', 'private'],
  ['100.64.0.1', 'carrier-nat'],
  ['100.127.255.255', 'carrier-nat'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.254', 'loopback'],
  ['169.254.0.1', 'link-local'],
  ['169.254.169.254', 'metadata'],
  ['169.254.170.2', 'metadata'],
  ['100.100.100.200', 'metadata'],
  ['192.0.0.8', 'reserved'],
  ['192.0.2.1', 'documentation'],
  ['198.51.100.7', 'documentation'],
  ['203.0.113.9', 'documentation'],
  ['198.18.0.1', 'benchmark'],
  ['198.19.255.255', 'benchmark'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.250', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.254', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  // IPv6 public
  ['2606:4700:4700::1111', 'public'],
  ['2001:4860:4860::8888', 'public'],
  ['2a00:1450:4001:81b::200e', 'public'],
  // IPv6 special-purpose
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['0:0:0:0:0:0:0:1', 'loopback'],
  ['fc00::1', 'unique-local'],
  ['fd12:3456:789a::1', 'unique-local'],
  ['fd00:ec2::254', 'metadata'],
  ['fe80::1', 'link-local'],
  ['fe80::1%eth0', 'link-local'],
  ['febf:ffff::1', 'link-local'],
  ['fec0::1', 'reserved'],
  ['ff02::1', 'multicast'],
  ['ff05::1:3', 'multicast'],
  ['2001:db8::1', 'documentation'],
  ['3fff::1', 'documentation'],
  ['2001:2::1', 'benchmark'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'reserved'], // Teredo
  ['100::1', 'reserved'],
  ['::127.0.0.1', 'reserved'], // deprecated IPv4-compatible
  ['4000::1', 'reserved'], // outside 2000::/3
  ['[::1]', 'loopback'], // brackets tolerated
  // IPv6 embedding IPv4: judged by the IPv4
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['::ffff:10.1.2.3', 'private'],
  ['::ffff:a9fe:a9fe', 'metadata'],
  ['::ffff:8.8.8.8', 'public'],
  ['::ffff:0:7f00:1', 'loopback'], // IPv4-translated (SIIT)
  ['64:ff9b::7f00:1', 'loopback'],
  ['64:ff9b::169.254.169.254', 'metadata'],
  ['64:ff9b::808:808', 'public'],
  ['64:ff9b:1::1', 'private'],
  ['2002:7f00:1::1', 'loopback'],
  ['2002:c0a8:101::1', 'private'],
  ['2002:808:808::1', 'public'],
  // Not canonical IP literals
  ['127.1', 'invalid'],
  ['2130706433', 'invalid'],
  ['0x7f.0.0.1', 'invalid'],
  ['localhost', 'invalid'],
  ['', 'invalid'],
  ['1.2.3.256', 'invalid'],
];

describe('classifyAddress', () => {
  for (const [ip, expected] of CLASSIFICATION) {
    test(`${ip || '(empty)'} -> ${expected}`, () => {
      assert.equal(classifyAddress(ip), expected);
    });
  }
});

describe('isBlockedAddress', () => {
  test('blocks every non-public class by default', () => {
    for (const [ip, cls] of CLASSIFICATION) {
      assert.equal(isBlockedAddress(ip, { allowPrivateNetwork: false }), cls !== 'public', ip);
    }
  });

  test('allowPrivateNetwork allows private ranges but never metadata or invalid input', () => {
    const opts = { allowPrivateNetwork: true };
    for (const ip of ['127.0.0.1', '10.0.0.1', '::1', 'fd12::1', '169.254.1.1', '0.0.0.0']) {
      assert.equal(isBlockedAddress(ip, opts), false, ip);
    }
    for (const ip of ['169.254.169.254', 'fd00:ec2::254', '::ffff:a9fe:a9fe', 'not-an-ip']) {
      assert.equal(isBlockedAddress(ip, opts), true, ip);
    }
  });
});

function assertBlocked(fn: () => unknown, cls?: AddressClass): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof BlockedAddressError, `expected BlockedAddressError, got ${String(err)}`);
    assert.equal(err.code, 'SSRF_BLOCKED');
    if (cls) assert.equal(err.addressClass, cls);
    return true;
  });
}

describe('URL checks', () => {
  const deny = { allowPrivateNetwork: false };
  const allow = { allowPrivateNetwork: true };

  test('WHATWG URL canonicalises odd IPv4/IPv6 spellings, and they are blocked', () => {
    const cases: [string, string][] = [
      ['http://2130706433/', '127.0.0.1'],
      ['http://0x7f.1/', '127.0.0.1'],
      ['http://127.1/', '127.0.0.1'],
      ['http://0177.0.0.1/', '127.0.0.1'],
      ['http://017700000001/', '127.0.0.1'],
      ['http://0x7f000001/', '127.0.0.1'],
      ['http://１２７.０.０.１/', '127.0.0.1'], // full-width digits (IDNA mapping)
      ['http://0xa9fea9fe/', '169.254.169.254'],
      ['http://169.254.169.254./', '169.254.169.254'],
      ['http://3232235521/', '192.168.0.1'],
      ['http://0/', '0.0.0.0'],
      ['http://[::ffff:127.0.0.1]/', '[::ffff:7f00:1]'],
      ['http://[0:0:0:0:0:0:0:1]/', '[::1]'],
    ];
    for (const [input, hostname] of cases) {
      const url = new URL(input);
      assert.equal(url.hostname, hostname, input);
      assertBlocked(() => assertUrlAllowed(url, deny));
    }
  });

  test('IP literals are classified directly', () => {
    assertBlocked(() => assertUrlAllowed(new URL('http://10.0.0.1/'), deny), 'private');
    assertBlocked(() => assertUrlAllowed(new URL('https://[fe80::1]:8443/x'), deny), 'link-local');
    assertBlocked(() => assertUrlAllowed(new URL('http://169.254.169.254/latest/meta-data/'), allow), 'metadata');
    assertBlocked(() => assertUrlAllowed(new URL('http://[fd00:ec2::254]/'), allow), 'metadata');
    assert.doesNotThrow(() => assertUrlAllowed(new URL('http://8.8.8.8/'), deny));
    assert.doesNotThrow(() => assertUrlAllowed(new URL('http://[2606:4700:4700::1111]/'), deny));
    assert.doesNotThrow(() => assertUrlAllowed(new URL('http://127.0.0.1:3000/'), allow));
    assert.doesNotThrow(() => assertUrlAllowed(new URL('http://[::1]/'), allow));
  });

  test('localhost names are loopback without DNS', () => {
    for (const u of [
      'http://localhost/',
      'http://LOCALHOST./',
      'https://api.localhost:8080/',
      'http://a.b.localhost/',
    ]) {
      assertBlocked(() => assertUrlAllowed(new URL(u), deny), 'loopback');
      assert.doesNotThrow(() => assertUrlAllowed(new URL(u), allow));
    }
    // Names merely containing "localhost" are ordinary hostnames (checked at connect time).
    assert.doesNotThrow(() => assertUrlAllowed(new URL('http://localhost.example.com/'), deny));
    assert.doesNotThrow(() => assertUrlAllowed(new URL('http://notlocalhost/'), deny));
  });

  test('only http and https schemes; credentials are fine', () => {
    for (const u of [
      'file:///etc/passwd',
      'ftp://example.com/',
      'gopher://example.com/',
      'data:text/plain,hi',
      'javascript:alert(1)',
      'ws://example.com/',
    ]) {
      assert.throws(
        () => assertUrlAllowed(new URL(u), allow),
        (err: unknown) => err instanceof InvalidTargetUrlError && err.code === 'INVALID_URL',
        u,
      );
    }
    assert.throws(() => assertUrlAllowed('not a url', allow), InvalidTargetUrlError);
    assert.doesNotThrow(() => assertUrlAllowed(new URL('https://user:pass@example.com/'), deny));
    assert.equal(assertUrlAllowed('HTTP://Example.COM/a', deny).href, 'http://example.com/a');
  });
});

function fakeResolver(table: Record<string, LookupAddress[]>, calls: string[] = []): Resolver {
  return async (hostname: string, _options: LookupOptions) => {
    calls.push(hostname);
    const answer = table[hostname];
    if (!answer) throw Object.assign(new Error(`ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return answer;
  };
}

function lookupAsync(
  lookup: ReturnType<typeof createGuardedLookup>,
  hostname: string,
  options: LookupOptions,
): Promise<{ address: string | LookupAddress[]; family?: number }> {
  return new Promise((resolve, reject) => {
    lookup(hostname, options, (err, address, family) => (err ? reject(err) : resolve({ address, family })));
  });
}

describe('createGuardedLookup (fake resolver)', () => {
  const resolver = fakeResolver({
    'public.test': [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ],
    'mixed.test': [
      { address: '93.184.216.34', family: 4 },
      { address: '10.0.0.5', family: 4 },
    ],
    'private.test': [{ address: '10.0.0.1', family: 4 }],
    'metadata.test': [{ address: '169.254.169.254', family: 4 }],
    'mapped.test': [{ address: '::ffff:127.0.0.1', family: 6 }],
    'empty.test': [],
  });
  const guarded = createGuardedLookup({ allowPrivateNetwork: false, resolver });

  test('all-public answer passes through (all: true and single)', async () => {
    const all = await lookupAsync(guarded, 'public.test', { all: true });
    assert.deepEqual(all.address, [
      { address: '93.184.216.34', family: 4 },
      { address: '2606:2800:220:1:248:1893:25c8:1946', family: 6 },
    ]);
    const single = await lookupAsync(guarded, 'public.test', {});
    assert.equal(single.address, '93.184.216.34');
    assert.equal(single.family, 4);
  });

  test('a mixed public+private answer is blocked', async () => {
    await assert.rejects(lookupAsync(guarded, 'mixed.test', { all: true }), (err: unknown) => {
      assert.ok(err instanceof BlockedAddressError);
      assert.equal(err.hostname, 'mixed.test');
      assert.equal(err.address, '10.0.0.5');
      assert.equal(err.addressClass, 'private');
      return true;
    });
  });

  test('private, metadata and IPv4-mapped loopback answers are blocked', async () => {
    await assert.rejects(lookupAsync(guarded, 'private.test', {}), BlockedAddressError);
    await assert.rejects(lookupAsync(guarded, 'metadata.test', { all: true }), { addressClass: 'metadata' });
    await assert.rejects(lookupAsync(guarded, 'mapped.test', { all: true }), { addressClass: 'loopback' });
  });

  test('localhost is blocked before the resolver is asked', async () => {
    const calls: string[] = [];
    const lookup = createGuardedLookup({
      allowPrivateNetwork: false,
      resolver: fakeResolver({ 'x.localhost': [{ address: '93.184.216.34', family: 4 }] }, calls),
    });
    await assert.rejects(lookupAsync(lookup, 'x.localhost', { all: true }), {
      addressClass: 'loopback',
      address: null,
    });
    assert.deepEqual(calls, []);
  });

  test('allowPrivateNetwork passes private answers but still blocks metadata', async () => {
    const lookup = createGuardedLookup({ allowPrivateNetwork: true, resolver });
    const res = await lookupAsync(lookup, 'mixed.test', { all: true });
    assert.equal((res.address as LookupAddress[]).length, 2);
    await assert.rejects(lookupAsync(lookup, 'metadata.test', {}), BlockedAddressError);
  });

  test('resolver errors and empty answers propagate', async () => {
    await assert.rejects(lookupAsync(guarded, 'unknown.test', {}), { code: 'ENOTFOUND' });
    await assert.rejects(lookupAsync(guarded, 'empty.test', {}), { code: 'ENOTFOUND' });
  });

  test('isAllowed exception hook is per (ip, hostname)', async () => {
    const lookup = createGuardedLookup({
      allowPrivateNetwork: false,
      resolver: fakeResolver({
        'a.test': [{ address: '10.0.0.1', family: 4 }],
        'b.test': [{ address: '10.0.0.1', family: 4 }],
      }),
      isAllowed: (ip, hostname) => ip === '10.0.0.1' && hostname === 'a.test',
    });
    assert.equal((await lookupAsync(lookup, 'a.test', {})).address, '10.0.0.1');
    await assert.rejects(lookupAsync(lookup, 'b.test', {}), BlockedAddressError);
  });
});

/** undici may surface the lookup error directly or wrapped; walk the cause chain. */
function findBlocked(err: unknown): BlockedAddressError | undefined {
  for (let e = err; e; e = (e as { cause?: unknown }).cause) {
    if (e instanceof BlockedAddressError) return e;
  }
  return undefined;
}

async function startServer(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

async function stopServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

describe('guarded undici Agent (loopback only)', () => {
  test('loopback targets are refused by default and allowed with allowPrivateNetwork', async () => {
    const hits: string[] = [];
    const { server, port } = await startServer((req, res) => {
      hits.push(req.url ?? '');
      res.end('ok');
    });
    const denyAgent = createGuardedAgent({ allowPrivateNetwork: false });
    const allowAgent = createGuardedAgent({ allowPrivateNetwork: true });
    try {
      // IP literals (never passed to lookup) and localhost names are both refused.
      for (const url of [
        `http://127.0.0.1:${port}/a`,
        `http://[::1]:${port}/b`,
        `http://[::ffff:127.0.0.1]:${port}/c`,
        `http://localhost:${port}/d`,
      ]) {
        const err = await request(url, { dispatcher: denyAgent }).then(
          () => assert.fail(`expected ${url} to be blocked`),
          (e: unknown) => e,
        );
        const blocked = findBlocked(err);
        assert.ok(blocked, `expected BlockedAddressError for ${url}, got ${String(err)}`);
        assert.equal(blocked.addressClass, 'loopback');
      }
      assert.deepEqual(hits, [], 'blocked requests must not reach the server');

      const res = await request(`http://127.0.0.1:${port}/ok`, { dispatcher: allowAgent });
      assert.equal(res.statusCode, 200);
      assert.equal(await res.body.text(), 'ok');
      assert.deepEqual(hits, ['/ok']);
    } finally {
      await denyAgent.close();
      await allowAgent.close();
      await stopServer(server);
    }
  });

  test('every redirect hop is checked: public.test -> evil.test is refused', async () => {
    const hits: string[] = [];
    const { server, port } = await startServer((req, res) => {
      hits.push(`${req.headers.host}${req.url}`);
      if (req.url === '/hop') {
        res.writeHead(302, { location: `http://public.test:${port}/ok` }).end();
      } else if (req.url === '/to-evil') {
        res.writeHead(302, { location: `http://evil.test:${port}/secret` }).end();
      } else if (req.url === '/to-literal') {
        res.writeHead(302, { location: `http://127.0.0.1:${port}/secret` }).end();
      } else {
        res.end(req.url === '/secret' ? 'secret' : 'public ok');
      }
    });
    // Both names resolve to the loopback server; only public.test is treated as allowed.
    const calls: string[] = [];
    const agent = createGuardedAgent({
      allowPrivateNetwork: false,
      resolver: fakeResolver(
        {
          'public.test': [{ address: '127.0.0.1', family: 4 }],
          'evil.test': [{ address: '127.0.0.1', family: 4 }],
        },
        calls,
      ),
      isAllowed: (ip, hostname) => ip === '127.0.0.1' && hostname === 'public.test',
    });
    const dispatcher = agent.compose(interceptors.redirect({ maxRedirections: 5 }));
    try {
      // Control: a same-host redirect is followed.
      const ok = await request(`http://public.test:${port}/hop`, { dispatcher });
      assert.equal(ok.statusCode, 200);
      assert.equal(await ok.body.text(), 'public ok');

      for (const [path, hostname] of [
        ['/to-evil', 'evil.test'],
        ['/to-literal', '127.0.0.1'],
      ]) {
        const err = await request(`http://public.test:${port}${path}`, { dispatcher }).then(
          () => assert.fail(`expected redirect from ${path} to be blocked`),
          (e: unknown) => e,
        );
        const blocked = findBlocked(err);
        assert.ok(blocked, `expected BlockedAddressError, got ${String(err)}`);
        assert.equal(blocked.addressClass, 'loopback');
        assert.equal(blocked.address, '127.0.0.1');
        assert.equal(blocked.hostname, hostname);
      }
      assert.ok(calls.includes('evil.test'), 'evil.test was resolved through the guarded lookup');
      assert.ok(!hits.some((h) => h.endsWith('/secret')), `secret must never be fetched: ${hits.join(', ')}`);
    } finally {
      await agent.close();
      await stopServer(server);
    }
  });
});
