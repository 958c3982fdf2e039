// The browser engine against the fixture site: JavaScript rendering, every action kind,
// screenshots and PDFs (checked down to their bytes), mobile and location emulation, ad blocking,
// storage state round trips, the pool (concurrency bound, queue timeout, recycling, a killed or
// frozen Chromium replaced), the SSRF guard (first hop, redirects, subresources) and the failure
// codes. One engine serves most tests, so Chromium starts once.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  BrowserEngine,
  type BrowserFetchRequest,
  chromiumAvailable,
  chromiumExecutable,
} from '../../src/scrape/engines/browser.ts';
import { AdBlocker } from '../../src/scrape/engines/browser/adblock.ts';
import { browserActionSchema } from '../../src/contract/actions.ts';
import { type FixtureSite, adsText, jsText, startFixtureSite } from '../fixtures/site/index.ts';

let site: FixtureSite;
let engine: BrowserEngine;
const extraEngines: BrowserEngine[] = [];

const req = (path: string, extra: Partial<BrowserFetchRequest> = {}): BrowserFetchRequest => ({
  url: /^[a-z]+:/.test(path) ? path : site.url(path),
  timeoutMs: 15_000,
  skipTlsVerification: true,
  mobile: false,
  ...extra,
});

async function rejectsWith(p: Promise<unknown>, code: string, status?: number, message?: RegExp): Promise<void> {
  await assert.rejects(p, (err: { code?: string; statusCode?: number; message?: string }) => {
    assert.equal(err.code, code, err.message);
    if (status) assert.equal(err.statusCode, status);
    if (message) assert.match(err.message ?? '', message);
    return true;
  });
}

function pngSize(buf: Buffer): { width: number; height: number } {
  assert.deepEqual([...buf.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'PNG signature');
  assert.equal(buf.toString('latin1', 12, 16), 'IHDR');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

function jpegSize(buf: Buffer): { width: number; height: number } {
  assert.equal(buf.readUInt16BE(0), 0xffd8, 'JPEG SOI');
  for (let i = 2; i < buf.length;) {
    assert.equal(buf[i], 0xff, 'JPEG marker');
    const marker = buf[i + 1];
    const length = buf.readUInt16BE(i + 2);
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      return { height: buf.readUInt16BE(i + 5), width: buf.readUInt16BE(i + 7) };
    }
    i += 2 + length;
  }
  throw new Error('no SOF marker');
}

before(async () => {
  site = await startFixtureSite();
  engine = new BrowserEngine({ allowPrivateNetwork: true, maxPages: 4, selectorTimeoutMs: 1500 });
  await engine.warm();
});

after(async () => {
  await Promise.all([engine.close(), ...extraEngines.map((e) => e.close())]);
  await site.close();
});

describe('rendering', () => {
  test('text written by scripts is in the rendered HTML', async () => {
    const r = await engine.fetch(req('/js-only'));
    assert.equal(r.status, 200);
    assert.match(r.contentType, /text\/html/);
    assert.ok(r.html.includes(jsText.heading), 'heading rendered by a timer');
    for (const p of jsText.paragraphs) assert.ok(r.html.includes(p));
    assert.equal(r.url, site.url('/js-only'));
    assert.equal(r.timings.attempts, 1);
  });

  test('an SPA shell is rendered after its data request (the smart wait covers fetches)', async () => {
    const r = await engine.fetch(req('/js-spa'));
    for (const item of jsText.spaItems) assert.ok(r.html.includes(item), item);
    assert.ok(r.html.includes(jsText.spaHeading));
  });

  test('redirects are followed; status, headers and the hops are reported', async () => {
    const r = await engine.fetch(req('/redirect/chain'));
    assert.equal(r.url, site.url('/articles/1'));
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.redirects,
      ['/redirect/chain', '/redirect/chain/2', '/redirect/chain/3'].map((p) => site.url(p)),
    );
    assert.match(r.headers['content-type'], /text\/html/);
  });

  test("a target's error status is the result, not an error", async () => {
    const r = await engine.fetch(req('/status/404'));
    assert.equal(r.status, 404);
    assert.ok(r.html.includes('404'));
  });

  test('a response that is not HTML comes with its bytes as served; a download is refused', async () => {
    const [json, html, pdf] = await Promise.all([
      engine.fetch(req('/api/spa-data')),
      engine.fetch(req('/about')),
      engine.fetch(req('/files/report.pdf')),
    ]);
    assert.deepEqual(JSON.parse(json.body!.toString('utf8')).items, jsText.spaItems);
    assert.equal(html.body, undefined);
    assert.equal(pdf.contentType, 'application/pdf');
    assert.equal(pdf.body, undefined, "Chromium's PDF viewer is not the file");
    await rejectsWith(engine.fetch(req('/download/attachment')), 'SCRAPE_UNSUPPORTED_FILE_ERROR', 415);
  });

  test('waitForMs is added after the smart wait', async () => {
    const r = await engine.fetch(req('/about', { waitForMs: 400 }));
    assert.ok(r.timings.settleMs >= 400, `settle ${r.timings.settleMs} ms`);
  });

  test('headers are sent, a cookie header becomes cookies of the target', async () => {
    const r = await engine.fetch(
      req('/headers', { headers: { 'X-Gleaner-Test': 'yes', Cookie: 'flavour=oat; size=2' } }),
    );
    const echoed = JSON.parse(
      /<pre[^>]*>([\s\S]*?)<\/pre>/
        .exec(r.html)![1]
        .replace(/&quot;/g, '"')
        .replace(/&amp;/g, '&'),
    ) as Record<string, string>;
    assert.equal(echoed['x-gleaner-test'], 'yes');
    assert.equal(echoed.cookie, 'flavour=oat; size=2');
    assert.match(echoed['user-agent'], /Chrome\/\d+\.0\.0\.0 Safari/);
    assert.doesNotMatch(echoed['user-agent'], /Headless/);
  });

  test('the caller’s credentials go to the page’s host only; its requests to other hosts get the other headers', async () => {
    const before = site.requests.length;
    const other = `http://localhost:${site.port}/headers?from=page`;
    const r = await engine.fetch(
      req('/about', {
        headers: { Authorization: 'Bearer s3cret', 'X-Api-Key': 'k', 'X-Gleaner-Test': 'yes' },
        actions: [
          {
            type: 'executeJavascript',
            script: `return fetch(${JSON.stringify(other)}, {mode: 'no-cors'}).then(() => 'answered', () => 'failed')`,
          },
        ],
      }),
    );
    assert.equal(r.status, 200);
    const seen = site.requests.slice(before);
    const page = seen.find((q) => q.path === '/about');
    assert.equal(page?.headers.authorization, 'Bearer s3cret');
    assert.equal(page?.headers['x-api-key'], 'k');
    const sub = seen.find((q) => q.path === '/headers?from=page');
    assert.ok(sub, 'the page’s request to localhost reached the fixture');
    assert.equal(sub.headers.authorization, undefined);
    assert.equal(sub.headers['x-api-key'], undefined);
    assert.equal(sub.headers['x-gleaner-test'], 'yes');
  });
});

describe('actions', () => {
  test('click: repeated clicks load more; all: true clicks every match', async () => {
    const r = await engine.fetch(
      req('/interactive/click-to-load', {
        actions: [
          { type: 'click', selector: '#load-more' },
          { type: 'click', selector: '#load-more' },
          { type: 'click', selector: '#load-more' },
          { type: 'scrape' },
          {
            type: 'executeJavascript',
            script:
              "document.querySelectorAll('.item').forEach((li) => li.addEventListener('click', () => { li.dataset.clicked = 'yes'; }))",
          },
          { type: 'click', selector: '.item', all: true },
          { type: 'executeJavascript', script: "document.querySelectorAll('[data-clicked=yes]').length" },
        ],
      }),
    );
    assert.ok(r.html.includes('Item 20'));
    assert.ok(r.html.includes('No more items'));
    assert.equal(r.actions.scrapes.length, 1);
    assert.equal(r.actions.scrapes[0].url, site.url('/interactive/click-to-load'));
    assert.ok(r.actions.scrapes[0].html.includes('Item 20'));
    assert.deepEqual(r.actions.javascriptReturns[1], { type: 'number', value: 20 });
  });

  test('scroll down loads more entries of an infinite feed; scroll up goes back', async () => {
    const before = await engine.fetch(req('/interactive/infinite-scroll'));
    assert.ok(!before.html.includes('Entry 11'));
    const scrolls = Array.from({ length: 8 }, () => ({ type: 'scroll' as const, direction: 'down' as const }));
    const r = await engine.fetch(
      req('/interactive/infinite-scroll', {
        actions: [
          ...scrolls,
          { type: 'executeJavascript', script: 'scrollY' },
          { type: 'scroll', direction: 'up' },
          { type: 'executeJavascript', script: 'scrollY' },
        ],
      }),
    );
    assert.ok(r.html.includes('Entry 30'), 'at least two more batches');
    const [down, up] = r.actions.javascriptReturns.map((j) => j.value as number);
    assert.ok(down > 0 && up < down, `${down} then ${up}`);
  });

  test('scroll with a selector scrolls that element', async () => {
    const r = await engine.fetch(
      req('/about', {
        actions: [
          {
            type: 'executeJavascript',
            script:
              "const d = document.createElement('div'); d.id = 'box'; d.style.cssText = 'height:100px;overflow:auto'; d.innerHTML = '<div style=\"height:1000px\">tall</div>'; document.body.prepend(d);",
          },
          { type: 'scroll', direction: 'down', selector: '#box' },
          { type: 'executeJavascript', script: "document.getElementById('box').scrollTop" },
        ],
      }),
    );
    assert.equal(r.actions.javascriptReturns[1].value, 100);
  });

  test('a form is filled with click, write and press', async () => {
    const r = await engine.fetch(
      req('/interactive/form', {
        actions: [
          { type: 'wait', selector: '#name' },
          { type: 'click', selector: '#name' },
          { type: 'write', text: 'Gleaner Tester' },
          { type: 'press', key: 'Enter' },
          { type: 'wait', milliseconds: 50 },
        ],
      }),
    );
    assert.match(r.html, /<p id="greeting">Hello, Gleaner Tester<\/p>/);
  });

  test('executeJavascript returns typed values: expressions, statements and function bodies', async () => {
    const scripts = [
      'document.title',
      '6 * 7',
      'const a = [1, "two", {three: 3}]; a',
      'return location.pathname === "/about"',
      'await new Promise((r) => setTimeout(r, 20)); return null',
      'void 0',
      'return {when: new Date(0), big: 10n}',
    ];
    const r = await engine.fetch(
      req('/about', { actions: scripts.map((script) => ({ type: 'executeJavascript' as const, script })) }),
    );
    assert.deepEqual(r.actions.javascriptReturns, [
      { type: 'string', value: r.html.match(/<title>(.*?)<\/title>/)![1] },
      { type: 'number', value: 42 },
      { type: 'object', value: [1, 'two', { three: 3 }] },
      { type: 'boolean', value: true },
      { type: 'null', value: null },
      { type: 'undefined', value: null },
      { type: 'object', value: { when: '1970-01-01T00:00:00.000Z', big: '10' } },
    ]);
  });

  test('pdf and screenshot actions produce valid files', async () => {
    const r = await engine.fetch(
      req('/articles/2', {
        actions: [
          { type: 'pdf', format: 'A4', landscape: true, scale: 0.8 },
          { type: 'pdf' },
          { type: 'screenshot', viewport: { width: 500, height: 400 } },
          { type: 'screenshot', quality: 60 },
          { type: 'screenshot', fullPage: true },
        ],
      }),
    );
    assert.equal(r.actions.pdfs.length, 2);
    for (const pdf of r.actions.pdfs) {
      assert.equal(pdf.subarray(0, 5).toString('latin1'), '%PDF-');
      assert.ok(pdf.subarray(-1024).toString('latin1').includes('%%EOF'));
    }
    // A4 landscape: the first page's MediaBox is wider than tall.
    const box = /\/MediaBox\s*\[\s*0 0 ([\d.]+) ([\d.]+)\s*\]/.exec(r.actions.pdfs[0].toString('latin1'));
    assert.ok(box && Number(box[1]) > Number(box[2]), `landscape MediaBox ${box?.[0]}`);
    const [small, jpeg, full] = r.actions.screenshots;
    assert.equal(small.type, 'png');
    assert.deepEqual(pngSize(small.data), { width: 500, height: 400 });
    assert.equal(jpeg.type, 'jpeg');
    assert.deepEqual(jpegSize(jpeg.data), { width: 1280, height: 800 }, 'back to the default viewport');
    const fullSize = pngSize(full.data);
    assert.equal(fullSize.width, 1280);
    assert.ok(fullSize.height > 800, `full page height ${fullSize.height}`);
  });

  test('the screenshot option captures the requested viewport as PNG, or JPEG with a quality', async () => {
    const png = await engine.fetch(req('/about', { screenshot: { viewport: { width: 800, height: 600 } } }));
    assert.equal(png.screenshot?.type, 'png');
    assert.deepEqual(pngSize(png.screenshot!.data), { width: 800, height: 600 });
    const jpeg = await engine.fetch(
      req('/about', { screenshot: { quality: 70, viewport: { width: 640, height: 480 } } }),
    );
    assert.equal(jpeg.screenshot?.type, 'jpeg');
    assert.deepEqual(jpegSize(jpeg.screenshot!.data), { width: 640, height: 480 });
  });

  test('a failing action names its index and reason; the fetch stops there', async () => {
    const started = Date.now();
    await Promise.all([
      rejectsWith(
        engine.fetch(
          req('/about', {
            actions: [
              { type: 'wait', milliseconds: 10 },
              { type: 'click', selector: '#does-not-exist' },
            ],
          }),
        ),
        'SCRAPE_ACTION_ERROR',
        400,
        /^Action 1 \(click\) failed: no element matches "#does-not-exist" within \d+ ms/,
      ),
      rejectsWith(
        engine.fetch(req('/about', { actions: [{ type: 'executeJavascript', script: 'throw new Error("boom")' }] })),
        'SCRAPE_ACTION_ERROR',
        400,
        /Action 0 \(executeJavascript\) failed: .*boom/,
      ),
      rejectsWith(
        engine.fetch(req('/about', { actions: [{ type: 'press', key: 'NoSuchKey' }] })),
        'SCRAPE_ACTION_ERROR',
        400,
        /Action 0 \(press\)/,
      ),
    ]);
    assert.ok(Date.now() - started < 14_000);
  });

  test('the action schema takes the wire fields and refuses others', () => {
    assert.ok(browserActionSchema.safeParse({ type: 'wait', milliseconds: 500 }).success);
    assert.ok(browserActionSchema.safeParse({ type: 'click', selector: 'a', all: true }).success);
    assert.ok(browserActionSchema.safeParse({ type: 'pdf', format: 'Letter', landscape: false, scale: 1 }).success);
    assert.ok(
      browserActionSchema.safeParse({
        type: 'screenshot',
        fullPage: true,
        quality: 80,
        viewport: { width: 800, height: 600 },
      }).success,
    );
    assert.ok(!browserActionSchema.safeParse({ type: 'wait' }).success, 'wait needs milliseconds or selector');
    assert.ok(!browserActionSchema.safeParse({ type: 'click' }).success);
    assert.ok(!browserActionSchema.safeParse({ type: 'scroll', direction: 'left' }).success);
    assert.ok(!browserActionSchema.safeParse({ type: 'pdf', format: 'B5' }).success);
    assert.ok(!browserActionSchema.safeParse({ type: 'teleport' }).success);
  });
});

describe('emulation', () => {
  const probe = {
    type: 'executeJavascript' as const,
    script:
      'return {ua: navigator.userAgent, width: innerWidth, touch: navigator.maxTouchPoints, ontouch: "ontouchstart" in window, dpr: devicePixelRatio, ' +
      'tz: Intl.DateTimeFormat().resolvedOptions().timeZone, locale: Intl.DateTimeFormat().resolvedOptions().locale, lang: navigator.language, langs: navigator.languages}',
  };
  type Probe = {
    ua: string;
    width: number;
    touch: number;
    ontouch: boolean;
    dpr: number;
    tz: string;
    locale: string;
    lang: string;
    langs: string[];
  };

  test('desktop by default: desktop UA and viewport, no touch, US timezone and locale', async () => {
    const r = await engine.fetch(req('/about', { actions: [probe] }));
    const v = r.actions.javascriptReturns[0].value as Probe;
    assert.doesNotMatch(v.ua, /Mobile/);
    assert.equal(v.width, 1280);
    assert.equal(v.touch, 0);
    assert.equal(v.tz, 'America/New_York');
    assert.equal(v.lang, 'en-US');
  });

  test('mobile: a real device profile (UA, viewport, touch, pixel ratio) visible to the page', async () => {
    const r = await engine.fetch(req('/about', { mobile: true, actions: [probe] }));
    const v = r.actions.javascriptReturns[0].value as Probe;
    assert.match(v.ua, /Android .*Mobile Safari/);
    assert.equal(v.width, 412);
    assert.ok(v.touch > 0 && v.ontouch);
    assert.equal(v.dpr, 2.625);
  });

  test('location: country sets timezone and locale; languages set navigator.languages and Accept-Language', async () => {
    const jp = await engine.fetch(req('/about', { location: { country: 'jp' }, actions: [probe] }));
    const j = jp.actions.javascriptReturns[0].value as Probe;
    assert.equal(j.tz, 'Asia/Tokyo');
    assert.equal(j.lang, 'ja-JP');
    assert.equal(j.locale, 'ja-JP');

    const from = site.requests.length;
    const de = await engine.fetch(
      req('/about', { location: { country: 'DE', languages: ['de-DE', 'de', 'en'] }, actions: [probe] }),
    );
    const d = de.actions.javascriptReturns[0].value as Probe;
    assert.equal(d.tz, 'Europe/Berlin');
    assert.equal(d.lang, 'de-DE');
    assert.deepEqual(d.langs, ['de-DE', 'de', 'en']);
    const page = site.requests.slice(from).find((r) => r.path === '/about');
    assert.equal(page?.headers['accept-language'], 'de-DE,de;q=0.9,en;q=0.8');
  });
});

describe('blockAds', () => {
  test('ad and tracker requests are blocked and cookie banners hidden (default)', async () => {
    const from = site.requests.length;
    const r = await engine.fetch(
      req('/interactive/ads', {
        actions: [
          { type: 'executeJavascript', script: "getComputedStyle(document.getElementById('cookie-consent')).display" },
        ],
      }),
    );
    assert.ok(r.html.includes(adsText.content));
    assert.ok(!r.html.includes(adsText.injected), 'the ad script did not run');
    assert.deepEqual(
      site.requests.slice(from).filter((q) => q.path.startsWith('/ads/')),
      [],
      'no ad request reached the site',
    );
    assert.ok(r.blockedAds >= 3, `blocked ${r.blockedAds}`);
    assert.equal(r.actions.javascriptReturns[0].value, 'none');
    assert.ok(r.html.includes('id="cookie-consent"'), 'hidden, not removed from the HTML');
    assert.ok(!r.html.includes('display: none !important'), 'the hiding stylesheet is not serialised');
  });

  test('blockAds: false lets them through', async () => {
    const from = site.requests.length;
    const r = await engine.fetch(
      req('/interactive/ads', {
        blockAds: false,
        actions: [
          { type: 'executeJavascript', script: "getComputedStyle(document.getElementById('cookie-consent')).display" },
        ],
      }),
    );
    assert.ok(r.html.includes(adsText.injected));
    assert.equal(r.blockedAds, 0);
    const paths = site.requests.slice(from).map((q) => q.path.split('?')[0]);
    for (const p of ['/ads/ad-script.js', '/ads/banner_300x250.gif', '/ads/pixel.gif']) assert.ok(paths.includes(p), p);
    assert.notEqual(r.actions.javascriptReturns[0].value, 'none');
  });

  test('extra filter lists are parsed with the built-in one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gleaner-lists-'));
    try {
      const file = join(dir, 'extra.txt');
      writeFileSync(file, '! extra\n||tracker.example^\n/custom-beacon.js\nexample.org##.promo\n');
      const blocker = await AdBlocker.load([file]);
      assert.ok(blocker.shouldBlock('https://tracker.example/x.js', 'script', 'https://news.example/'));
      assert.ok(blocker.shouldBlock('https://news.example/a/custom-beacon.js', 'script', 'https://news.example/'));
      assert.ok(
        blocker.shouldBlock('https://www.googletagmanager.com/gtm.js', 'script', 'https://news.example/'),
        'built-in list still applies',
      );
      assert.ok(!blocker.shouldBlock('https://news.example/app.js', 'script', 'https://news.example/'));
      assert.match(blocker.cosmeticCss('https://example.org/'), /\.promo/);
      assert.doesNotMatch(blocker.cosmeticCss('https://news.example/'), /\.promo/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('storage state', () => {
  test('a cookie set on one fetch is sent by the next fetch given the saved state', async () => {
    const first = await engine.fetch(req('/cookies/set', { saveStorageState: true }));
    const cookie = first.storageState?.cookies.find((c) => c.name === 'session');
    assert.equal(cookie?.value, 'gleaner123');
    const fresh = await engine.fetch(req('/cookies/show'));
    assert.match(fresh.html, /No cookies received/, 'contexts are isolated');
    const second = await engine.fetch(req('/cookies/show', { storageState: first.storageState }));
    assert.match(second.html, /<pre id="cookies">session=gleaner123<\/pre>/);
  });

  test('localStorage and IndexedDB survive through the state', async () => {
    const write = await engine.fetch(
      req('/about', {
        saveStorageState: true,
        actions: [
          {
            type: 'executeJavascript',
            script:
              "localStorage.setItem('k', 'v1'); await new Promise((ok, fail) => { const o = indexedDB.open('db', 1); " +
              "o.onupgradeneeded = () => o.result.createObjectStore('s'); o.onerror = fail; o.onsuccess = () => { const t = o.result.transaction('s', 'readwrite'); " +
              "t.objectStore('s').put('stored', 'key'); t.oncomplete = () => { o.result.close(); ok(); }; }; }); return true",
          },
        ],
      }),
    );
    const origin = write.storageState?.origins.find((o) => o.origin === site.origin);
    assert.deepEqual(origin?.localStorage, [{ name: 'k', value: 'v1' }]);
    const read = await engine.fetch(
      req('/about', {
        storageState: write.storageState,
        actions: [
          {
            type: 'executeJavascript',
            script:
              "const idb = await new Promise((ok, fail) => { const o = indexedDB.open('db', 1); o.onerror = fail; o.onsuccess = () => { " +
              "const g = o.result.transaction('s').objectStore('s').get('key'); g.onsuccess = () => ok(g.result); g.onerror = fail; }; }); " +
              "return [localStorage.getItem('k'), idb]",
          },
        ],
      }),
    );
    assert.deepEqual(read.actions.javascriptReturns[0].value, ['v1', 'stored']);
  });
});

describe('pool', () => {
  test('at most maxPages fetches render at once; a queued fetch times out in the queue', async () => {
    let peak = 0;
    const timer = setInterval(() => (peak = Math.max(peak, engine.stats().activePages)), 5);
    try {
      const busy = Array.from({ length: 4 }, () => engine.fetch(req('/slow?ms=1200')));
      await new Promise((r) => setTimeout(r, 200));
      const queued = engine.fetch(req('/about', { timeoutMs: 600 }));
      await new Promise((r) => setTimeout(r, 50));
      assert.equal(engine.stats().waiting, 1);
      await rejectsWith(queued, 'SCRAPE_TIMEOUT', 408);
      assert.equal(engine.stats().waiting, 0, 'the waiter left the queue');
      const results = await Promise.all([...busy, engine.fetch(req('/about')), engine.fetch(req('/about'))]);
      assert.ok(results.every((r) => r.status === 200));
    } finally {
      clearInterval(timer);
    }
    assert.equal(peak, 4);
  });

  test('a browser killed mid-fetch is replaced and the fetch succeeds', async () => {
    await engine.fetch(req('/about'));
    const pid = engine.browserPid;
    assert.ok(pid, 'pid of the running Chromium');
    const launches = engine.stats().launches;
    const pending = engine.fetch(req('/slow?ms=1000'));
    await new Promise((r) => setTimeout(r, 400));
    process.kill(pid, 'SIGKILL');
    const r = await pending;
    assert.equal(r.status, 200);
    assert.match(r.html, /Slow page/);
    assert.equal(r.timings.attempts, 2);
    assert.equal(engine.stats().launches, launches + 1);
    assert.notEqual(engine.browserPid, pid);
    const again = await engine.fetch(req('/about'));
    assert.equal(again.status, 200);
  });

  test('a frozen browser (context creation hangs) is killed, replaced, and the fetch retried', async () => {
    const e = new BrowserEngine({ allowPrivateNetwork: true, contextTimeoutMs: 2500 });
    extraEngines.push(e);
    await e.warm();
    const pid = e.browserPid!;
    process.kill(pid, 'SIGSTOP');
    try {
      const r = await e.fetch(req('/about'));
      assert.equal(r.status, 200);
      assert.equal(r.timings.attempts, 2);
      assert.notEqual(e.browserPid, pid);
      assert.deepEqual([e.stats().hangs, e.stats().launches], [1, 2]);
    } finally {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        /* killed already */
      }
    }
  });

  test('the browser is recycled after N pages without disturbing pages in flight', async () => {
    const e = new BrowserEngine({ allowPrivateNetwork: true, recycleAfterPages: 2 });
    extraEngines.push(e);
    const slow = e.fetch(req('/slow?ms=800'));
    await new Promise((r) => setTimeout(r, 100));
    const first = e.browserPid!;
    const quick = await e.fetch(req('/about')); // second page: the browser retires after it
    const third = await e.fetch(req('/about')); // on a new browser while `slow` finishes on the old
    assert.equal((await slow).status, 200);
    assert.equal(quick.status, 200);
    assert.equal(third.status, 200);
    assert.equal(e.stats().launches, 2);
    assert.equal(e.stats().recycles, 1);
    assert.notEqual(e.browserPid, first);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(e.browserPids, [e.browserPid], 'the old browser closed once idle');
  });
});

describe('SSRF guard', () => {
  test('without allowPrivateNetwork a loopback URL is refused before any request', async () => {
    const e = new BrowserEngine({ allowPrivateNetwork: false });
    extraEngines.push(e);
    const from = site.requests.length;
    await rejectsWith(e.fetch(req('/about')), 'SCRAPE_BLOCKED_URL', 403);
    await rejectsWith(e.fetch(req(`http://localhost:${site.port}/about`)), 'SCRAPE_BLOCKED_URL', 403);
    assert.equal(site.requests.length, from, 'the fixture saw nothing');
    assert.equal(e.stats().launches, 0, 'Chromium was not even started');
  });

  test('a redirect or a script to a refused address is stopped at the connection', async () => {
    // "fixture.test" resolves to the loopback fixture and is allowed; 127.0.0.1 itself is not.
    const e = new BrowserEngine({
      allowPrivateNetwork: false,
      ssrf: {
        resolver: async (hostname) => (hostname === 'fixture.test' ? [{ address: '127.0.0.1', family: 4 }] : []),
        isAllowed: (_ip, hostname) => hostname === 'fixture.test',
      },
    });
    extraEngines.push(e);
    const allowed = `http://fixture.test:${site.port}`;
    const ok = await e.fetch(req(`${allowed}/about`));
    assert.equal(ok.status, 200);

    const from = site.requests.length;
    const target = encodeURIComponent(`http://127.0.0.1:${site.port}/private/secret`);
    await rejectsWith(e.fetch(req(`${allowed}/redirect/to?url=${target}`)), 'SCRAPE_BLOCKED_URL', 403, /loopback/);
    assert.deepEqual(
      site.requests.slice(from).map((r) => r.path),
      [`/redirect/to?url=${target}`],
      'the redirect target was never requested',
    );

    const before = site.requests.length;
    const r = await e.fetch(
      req(`${allowed}/about`, {
        actions: [
          {
            type: 'executeJavascript',
            script: `return fetch('http://127.0.0.1:${site.port}/headers', {mode: 'no-cors'}).then(() => 'answered', () => 'failed')`,
          },
        ],
      }),
    );
    assert.equal(r.status, 200);
    assert.ok(
      !site.requests.slice(before).some((q) => q.path === '/headers'),
      'the subresource never reached the fixture',
    );
  });

  test('metadata addresses stay blocked with allowPrivateNetwork, also behind a redirect', async () => {
    const meta = encodeURIComponent('http://169.254.169.254/latest/meta-data/');
    await rejectsWith(engine.fetch(req(`/redirect/to?url=${meta}`)), 'SCRAPE_BLOCKED_URL', 403, /metadata/);
    await rejectsWith(engine.fetch(req('http://169.254.169.254/')), 'SCRAPE_BLOCKED_URL', 403);
  });

  test('non-http(s) URLs are a 400', async () => {
    await rejectsWith(engine.fetch(req('file:///etc/passwd')), 'BAD_REQUEST', 400);
  });
});

describe('failures', () => {
  test('timeout, DNS, refused connection and TLS map to their codes', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await Promise.all([
      rejectsWith(engine.fetch(req('/slow?ms=5000', { timeoutMs: 1200 })), 'SCRAPE_TIMEOUT', 408),
      rejectsWith(engine.fetch(req('http://no-such-host.invalid/')), 'SCRAPE_DNS_RESOLUTION_ERROR', 502),
      rejectsWith(engine.fetch(req(`http://127.0.0.1:${port}/`)), 'SCRAPE_CONNECTION_ERROR', 502),
      // Plain HTTP spoken to an https:// URL: the TLS handshake fails inside the browser.
      rejectsWith(engine.fetch(req(`https://127.0.0.1:${site.port}/`)), 'SCRAPE_SSL_ERROR', 502),
    ]);
  });

  test("the caller's signal aborts a fetch; a TimeoutError reason counts as a timeout", async () => {
    const controller = new AbortController();
    const pending = engine.fetch(req('/slow?ms=5000', { signal: controller.signal }));
    setTimeout(() => controller.abort(new Error('caller gave up')), 300);
    await assert.rejects(pending, /caller gave up/);
    await rejectsWith(engine.fetch(req('/slow?ms=5000', { signal: AbortSignal.timeout(300) })), 'SCRAPE_TIMEOUT', 408);
    assert.equal(engine.stats().activePages, 0, 'slots were given back');
  });

  test('without Chromium the engine constructs; a fetch names what to install', async () => {
    assert.equal(chromiumExecutable({ CHROMIUM_PATH: '/nonexistent/chromium' }), '/nonexistent/chromium');
    assert.equal(chromiumExecutable({}), '/usr/bin/chromium');
    assert.equal(chromiumAvailable('/nonexistent/chromium'), false);
    const e = new BrowserEngine({ allowPrivateNetwork: true, executablePath: '/nonexistent/chromium' });
    extraEngines.push(e);
    assert.equal(e.available, false);
    await rejectsWith(e.fetch(req('/about')), 'BROWSER_UNAVAILABLE', 503, /apt-get install chromium.*CHROMIUM_PATH/);
  });
});

test('after all of the above: no page slot is held, nobody waits, contexts were closed', async () => {
  const s = engine.stats();
  assert.equal(s.activePages, 0);
  assert.equal(s.waiting, 0);
  const r = await engine.fetch(req('/about'));
  assert.equal(r.status, 200);
});
