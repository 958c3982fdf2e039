// URL normal form, dedup keys, site relations and crawl/map scope (src/crawl/url.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  UrlScope,
  compilePatterns,
  hostRelation,
  isSubdomainOf,
  looksLikePage,
  registrableDomain,
  sameHost,
  sameSite,
} from '../../src/crawl/url.ts';
import { ApiError } from '../../src/errors.ts';
import fc from 'fast-check';
import { isHttpUrl, normalizeUrl, resolveLink, urlKey } from '../../src/net/url-key.ts';

describe('normalizeUrl', () => {
  test('assigns only what differs, with the same result as assigning every part (generated URLs, fast-check, seeded)', () => {
    // The plain definition: every part assigned its normal form (what normalizeUrl did before it
    // skipped the assignments that change nothing).
    const reference = (input: string, ignoreQueryParameters: boolean): string | undefined => {
      let u: URL;
      try {
        u = new URL(input.trim());
      } catch {
        return undefined;
      }
      if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
      if (u.hostname.endsWith('.')) u.hostname = u.hostname.slice(0, -1);
      if (!u.hostname) return undefined;
      const escapes = (x: string) =>
        x.replace(/%([0-9a-fA-F]{2})/g, (_m, h: string) => {
          const ch = String.fromCharCode(Number.parseInt(h, 16));
          return /[A-Za-z0-9\-._~]/.test(ch) ? ch : `%${h.toUpperCase()}`;
        });
      u.username = '';
      u.password = '';
      u.hash = '';
      u.pathname = escapes(u.pathname);
      const pieces = u.search.replace(/^\?/, '').split('&').filter(Boolean).map(escapes);
      const name = (p: string) => (p.includes('=') ? p.slice(0, p.indexOf('=')) : p);
      const sorted = pieces
        .map((p, i) => ({ p, i, k: name(p) }))
        .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : a.i - b.i));
      u.search = ignoreQueryParameters || !sorted.length ? '' : `?${sorted.map((x) => x.p).join('&')}`;
      return u.href;
    };
    const part = (chars: string[], max: number) =>
      fc.array(fc.constantFrom(...chars), { maxLength: max }).map((a) => a.join(''));
    const text = [
      'a',
      'B',
      '1',
      '-',
      '.',
      '_',
      '~',
      '%41',
      '%7e',
      '%2F',
      '%zz',
      '%',
      ' ',
      "'",
      '"',
      '<',
      'é',
      '/',
      '..',
    ];
    const url = fc
      .tuple(
        fc.constantFrom('http://', 'HTTPS://', 'https://', 'ftp://', 'http:/'),
        fc.constantFrom('', 'user@', 'u:p@', ':p@', 'u:@'),
        fc.constantFrom('example.com', 'Example.COM.', 'x.test', '127.0.0.1', '[::1]', 'xn--bcher-kva.example'),
        fc.constantFrom('', ':80', ':443', ':8080'),
        part(text, 12).map((p) => `/${p}`),
        fc.constantFrom('', '?', '?b=2&a=1', '?a=1&&a=0', '?%41=%7e', '?x', '?z&y=%2f', '? q'),
        fc.constantFrom('', '#', '#frag', '#a?b', '#%41'),
      )
      .map((parts) => parts.join(''));
    fc.assert(
      fc.property(url, fc.boolean(), (u, ignoreQueryParameters) => {
        assert.equal(normalizeUrl(u, { ignoreQueryParameters }), reference(u, ignoreQueryParameters), u);
      }),
      { seed: 42, numRuns: 5000 },
    );
  });

  test('lower-cases scheme and host, drops default ports, fragments, credentials and a trailing host dot', () => {
    assert.equal(normalizeUrl('HTTP://Example.COM:80/A/B#frag'), 'http://example.com/A/B');
    assert.equal(normalizeUrl('https://example.com:443/x'), 'https://example.com/x');
    assert.equal(normalizeUrl('https://example.com:8443/x'), 'https://example.com:8443/x');
    assert.equal(normalizeUrl('https://user:pw@example.com./x'), 'https://example.com/x');
    assert.equal(normalizeUrl('https://example.com'), 'https://example.com/');
  });

  test('resolves dot segments and normalises percent-escapes', () => {
    assert.equal(normalizeUrl('https://example.com/a/./b/../c'), 'https://example.com/a/c');
    assert.equal(normalizeUrl('https://example.com/a/%2e%2e/c'), 'https://example.com/c');
    assert.equal(normalizeUrl('https://example.com/%7euser/%2fx%3a'), 'https://example.com/~user/%2Fx%3A');
  });

  test('sorts query parameters by name, stably, without re-encoding; drops an empty query', () => {
    assert.equal(normalizeUrl('https://example.com/p?b=2&a=1&c'), 'https://example.com/p?a=1&b=2&c');
    assert.equal(normalizeUrl('https://example.com/p?t=2&a=x&t=1'), 'https://example.com/p?a=x&t=2&t=1');
    assert.equal(normalizeUrl('https://example.com/p?q=a%20b+c'), 'https://example.com/p?q=a%20b+c');
    assert.equal(normalizeUrl('https://example.com/p?'), 'https://example.com/p');
    assert.equal(normalizeUrl('https://example.com/p?&&'), 'https://example.com/p');
  });

  test('ignoreQueryParameters drops the whole query', () => {
    assert.equal(
      normalizeUrl('https://example.com/p?b=2&a=1#x', { ignoreQueryParameters: true }),
      'https://example.com/p',
    );
  });

  test('keeps the trailing slash as written (it can matter to the server)', () => {
    assert.equal(normalizeUrl('https://example.com/blog/'), 'https://example.com/blog/');
    assert.equal(normalizeUrl('https://example.com/blog'), 'https://example.com/blog');
  });

  test('non-http(s) and unparsable input gives undefined', () => {
    for (const u of [
      'mailto:a@b.c',
      'javascript:void(0)',
      'tel:+1555',
      'ftp://example.com/x',
      'data:text/plain,hi',
      'not a url',
      '',
    ]) {
      assert.equal(normalizeUrl(u), undefined, u);
    }
    assert.equal(isHttpUrl('https://x.test/'), true);
    assert.equal(isHttpUrl('ftp://x.test/'), false);
  });
});

describe('urlKey (dedup and visited sets)', () => {
  test('ignores one trailing slash on non-root paths, never on the root', () => {
    assert.equal(urlKey('https://example.com/docs/'), urlKey('https://example.com/docs'));
    assert.equal(urlKey('https://example.com/'), 'https://example.com/');
    assert.equal(urlKey('https://example.com'), 'https://example.com/');
    assert.notEqual(urlKey('https://example.com/docs'), urlKey('https://example.com/docs/x'));
  });

  test('equal for URLs that differ only in case of scheme/host, port, fragment, query order', () => {
    const a = urlKey('HTTPS://WWW.Example.com:443/a/?y=2&x=1#top');
    const b = urlKey('https://www.example.com/a?x=1&y=2');
    assert.equal(a, b);
    assert.notEqual(urlKey('https://example.com/a?x=1'), urlKey('https://example.com/a?x=2'));
    assert.equal(
      urlKey('https://example.com/a?x=1', { ignoreQueryParameters: true }),
      urlKey('https://example.com/a?x=2', { ignoreQueryParameters: true }),
    );
  });

  test('keeps the path case (paths are case-sensitive)', () => {
    assert.notEqual(urlKey('https://example.com/About'), urlKey('https://example.com/about'));
  });
});

describe('resolveLink', () => {
  const base = 'https://example.com/dir/page.html';
  test('relative, absolute, protocol-relative and query links', () => {
    assert.equal(resolveLink('other', base), 'https://example.com/dir/other');
    assert.equal(resolveLink('/root', base), 'https://example.com/root');
    assert.equal(resolveLink('../up', base), 'https://example.com/up');
    assert.equal(resolveLink('//cdn.example.org/x', base), 'https://cdn.example.org/x');
    assert.equal(resolveLink('?page=2', base), 'https://example.com/dir/page.html?page=2');
    assert.equal(resolveLink('  /spaced  ', base), 'https://example.com/spaced');
    assert.equal(resolveLink('/a#section', base), 'https://example.com/a');
  });
  test('drops fragment-only, empty and non-http(s) links', () => {
    for (const href of ['#top', '', '   ', 'mailto:x@y.z', 'tel:123', 'javascript:void(0)', 'data:,x'])
      assert.equal(resolveLink(href, base), undefined, href);
  });
});

describe('sites and hosts', () => {
  test('registrable domain from the public suffix list, private suffixes included', () => {
    assert.equal(registrableDomain('blog.example.co.uk'), 'example.co.uk');
    assert.equal(registrableDomain('example.co.uk'), 'example.co.uk');
    assert.equal(registrableDomain('a.b.example.com'), 'example.com');
    assert.equal(registrableDomain('foo.github.io'), 'foo.github.io');
    assert.equal(registrableDomain('Example.COM.'), 'example.com');
  });

  test('localhost and its subdomains are one site; IPs are their own', () => {
    assert.equal(registrableDomain('localhost'), 'localhost');
    assert.equal(registrableDomain('blog.localhost'), 'localhost');
    assert.equal(registrableDomain('a.b.localhost'), 'localhost');
    assert.equal(registrableDomain('127.0.0.1'), '127.0.0.1');
    assert.equal(registrableDomain('[::1]'), '::1');
    assert.ok(sameSite('blog.localhost', 'localhost'));
    assert.ok(!sameSite('blog.localhost', '127.0.0.1'));
  });

  test('sameHost ignores case and www.; sameSite spans subdomains but not other sites', () => {
    assert.ok(sameHost('WWW.example.com', 'example.com'));
    assert.ok(!sameHost('blog.example.com', 'example.com'));
    assert.ok(sameSite('blog.example.co.uk', 'example.co.uk'));
    assert.ok(sameSite('blog.example.co.uk', 'shop.example.co.uk'));
    assert.ok(!sameSite('example.co.uk', 'other.co.uk'));
    assert.ok(!sameSite('foo.github.io', 'bar.github.io'));
  });

  test('isSubdomainOf is label-wise', () => {
    assert.ok(isSubdomainOf('blog.example.com', 'example.com'));
    assert.ok(isSubdomainOf('example.com', 'example.com'));
    assert.ok(!isSubdomainOf('notexample.com', 'example.com'));
  });

  test('hostRelation', () => {
    assert.equal(hostRelation('www.example.com', 'example.com'), 'same-host');
    assert.equal(hostRelation('docs.example.com', 'example.com'), 'same-site');
    assert.equal(hostRelation('example.org', 'example.com'), 'external');
  });
});

describe('compilePatterns', () => {
  test('compiles valid regexes', () => {
    const [r] = compilePatterns(['^/blog/.*$'], 'body.includePaths');
    assert.ok(r.test('/blog/post'));
  });
  test('patterns run on RE2: `(a+)+$` against a 50,000-character path answers in well under a second', () => {
    const [r] = compilePatterns(['(a+)+$'], 'body.includePaths');
    const started = performance.now();
    assert.equal(r.test(`/${'a'.repeat(50_000)}!`), false);
    assert.equal(r.test(`/${'a'.repeat(50_000)}`), true);
    const ms = performance.now() - started;
    assert.ok(ms < 1000, `took ${ms} ms`);
  });
  test('ordinary patterns match as JavaScript regexes do (unanchored search)', () => {
    const subjects = ['/blog/post', '/Blog/x?page=2', '/docs/api/v2', '/a.b', '/x/draft-1', '/'];
    for (const p of [
      '^/blog/',
      'draft',
      'page=\\d+$',
      '\\/docs\\/',
      '^/[a-z]\\.b$',
      '(?i)^/blog',
      '^/$',
      'v[0-9]{1,2}$',
    ]) {
      const [r] = compilePatterns([p], 'body.includePaths');
      const js = new RegExp(p.replace('(?i)', ''), p.startsWith('(?i)') ? 'i' : '');
      for (const s of subjects) assert.equal(r.test(s), js.test(s), `${p} on ${s}`);
    }
  });
  test('lookaround and backreferences are a 400 naming the field and saying RE2 cannot express them', () => {
    for (const [p, i] of [
      ['(?<=/)blog', 0],
      ['(?<!x)blog', 0],
      ['^/(?!blog)', 0],
      ['blog(?=/)', 0],
      ['(draft)-\\1', 0],
    ] as const) {
      assert.throws(
        () => compilePatterns([p], 'body.includePaths'),
        (err: unknown) => {
          assert.ok(err instanceof ApiError);
          assert.equal(err.statusCode, 400);
          assert.match(err.message, new RegExp(`body\\.includePaths\\.${i}: .*RE2`));
          assert.match(err.message, /no lookahead, lookbehind or backreferences/);
          return true;
        },
        p,
      );
    }
  });
  test('an invalid regex is a 400 naming the field and index', () => {
    assert.throws(
      () => compilePatterns(['ok', '(unclosed'], 'body.excludePaths'),
      (err: unknown) => {
        assert.ok(err instanceof ApiError);
        assert.equal(err.statusCode, 400);
        assert.equal(err.code, 'BAD_REQUEST');
        assert.match(err.message, /body\.excludePaths\.1/);
        assert.deepEqual((err.details as { path: string }[])[0].path, 'body.excludePaths.1');
        return true;
      },
    );
  });
});

describe('UrlScope', () => {
  test('same host only by default (www-insensitive); subdomains with allowSubdomains', () => {
    const s = new UrlScope('https://example.co.uk/');
    assert.equal(s.verdict('https://www.example.co.uk/a'), 'ok');
    assert.equal(s.verdict('https://blog.example.co.uk/a'), 'subdomain');
    assert.equal(s.verdict('https://other.co.uk/a'), 'external');
    assert.equal(s.verdict('mailto:x@example.co.uk'), 'invalid');
    const sub = new UrlScope('https://example.co.uk/', { allowSubdomains: true });
    assert.equal(sub.verdict('https://blog.example.co.uk/a'), 'ok');
    assert.equal(sub.verdict('https://other.co.uk/a'), 'external');
    const local = new UrlScope('http://localhost:3000/', { allowSubdomains: true });
    assert.ok(local.allows('http://blog.localhost:3000/posts/x'));
  });

  test('allowExternalLinks accepts every host', () => {
    const s = new UrlScope('https://example.com/', { allowExternalLinks: true });
    assert.ok(s.allows('https://elsewhere.org/'));
  });

  test('include/exclude regexes on path + query, or on the full URL', () => {
    const s = new UrlScope('https://example.com/', { includePaths: ['^/blog/'], excludePaths: ['draft', 'page=2'] });
    assert.equal(s.verdict('https://example.com/blog/post'), 'ok');
    assert.equal(s.verdict('https://example.com/docs'), 'not-included');
    assert.equal(s.verdict('https://example.com/blog/draft-1'), 'excluded');
    assert.equal(s.verdict('https://example.com/blog/?page=2'), 'excluded');
    const full = new UrlScope('https://example.com/', {
      includePaths: ['^https://example\\.com/blog/'],
      regexOnFullURL: true,
    });
    assert.ok(full.allows('https://example.com/blog/x'));
    assert.ok(!full.allows('https://example.com/docs/x'));
    const onPath = new UrlScope('https://example.com/', { includePaths: ['^https://'] });
    assert.ok(
      !onPath.allows('https://example.com/blog/x'),
      'without regexOnFullURL the scheme is not part of the subject',
    );
  });

  test('invalid include/exclude regexes throw 400 naming the field', () => {
    assert.throws(() => new UrlScope('https://example.com/', { includePaths: ['[a-'] }), /body\.includePaths\.0/);
    assert.throws(
      () => new UrlScope('https://example.com/', { excludePaths: ['x', '*'], fieldPrefix: 'body.crawlOptions' }),
      /body\.crawlOptions\.excludePaths\.1/,
    );
  });

  test('restrictToStartPath keeps to the start path by whole segments', () => {
    const s = new UrlScope('https://example.com/docs/', { restrictToStartPath: true });
    assert.ok(s.allows('https://example.com/docs'));
    assert.ok(s.allows('https://example.com/docs/api'));
    assert.equal(s.verdict('https://example.com/docs-old/x'), 'outside-start-path');
    assert.equal(s.verdict('https://example.com/blog'), 'outside-start-path');
    assert.ok(
      new UrlScope('https://example.com/', { restrictToStartPath: true }).allows('https://example.com/anything'),
    );
  });
});

test('looksLikePage skips known file extensions', () => {
  assert.ok(looksLikePage('https://example.com/about'));
  assert.ok(looksLikePage('https://example.com/page.html'));
  assert.ok(looksLikePage('https://example.com/v1.2'));
  for (const u of [
    'https://example.com/a.pdf',
    'https://example.com/logo.PNG',
    'https://example.com/s.css?v=1',
    'https://example.com/x.zip',
  ]) {
    assert.ok(!looksLikePage(u), u);
  }
});
