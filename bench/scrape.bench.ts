// What a scrape costs on top of fetching the page, on the real service (PGlite store) and the
// fixture site, both on loopback in this process.
//
// 1. Overhead: POST /v2/scrape {url: /large?kb=200, maxAge: 0} (the page is fetched every time:
//    engine, transform to markdown, job ledger, credits, cache write, stored result) against a raw
//    undici request() + full read of the same URL, one request at a time, the two interleaved so
//    they share the machine's noise. Figure: median(scrape) − median(raw) in ms (acceptance bar:
//    ≤ 10 ms for a 200 KB page) and the ratio of medians; the same in CPU time of this process
//    (steadier on a busy machine). Breakdown: the database time inside the scrapes (every query
//    timed) and transformHtml timed directly on the same HTML; the rest is engine, decoding,
//    validation, JSON and HTTP.
// 2. Throughput: 16 concurrent clients over a mix of fixture pages, bounded in count and time, as
//    pages/s: fetched (maxAge: 0) and served from the cache, each beside 16 concurrent raw
//    fetches of the same URLs measured in the same round (ratio).
import { Pool, request } from 'undici';
import { startFixtureSite } from '../test/fixtures/site/index.ts';
import { startTestService } from '../test/helpers/service.ts';
import { scrapeRequest } from '../src/contract/scrape.ts';
import { planScrape } from '../src/scrape/plan.ts';
import { transformHtml } from '../src/scrape/transform/index.ts';

const WARMUP = 30;
const SAMPLES = 200;
const OVERHEAD_BUDGET_MS = 60_000;
const CONCURRENCY = 16;
const TP_REQUESTS = 2000;
const TP_BUDGET_MS = 10_000;
const TP_ROUNDS = 2;

const site = await startFixtureSite();
// Rate limits off for the routes used; the team may run as many scrapes at once as there are
// clients (the default of 10 would queue 6 of the 16 and measure the limit, not the pipeline).
const svc = await startTestService({
  env: { GLEANER_RATE_LIMITS: 'scrape=0,status=0,account=0', GLEANER_TEAM_MAX_CONCURRENCY: String(CONCURRENCY) },
});

// Every database statement the service runs is timed, wall (the Scraper holds this same object).
// Scrapes run one at a time here; the page-cache write overlaps the transform.
let dbMs = 0;
let dbQueries = 0;
const cpuMs = (c: NodeJS.CpuUsage) => (c.user + c.system) / 1000;
const realQuery = svc.db.query.bind(svc.db);
svc.db.query = (async (text: string, params?: unknown[]) => {
  const t = performance.now();
  try {
    return await realQuery(text, params);
  } finally {
    dbMs += performance.now() - t;
    dbQueries++;
  }
}) as typeof svc.db.query;

const api = new Pool(svc.url, { connections: CONCURRENCY });
const auth = { authorization: `Bearer ${svc.key}`, 'content-type': 'application/json' };

async function scrape(url: string, maxAge?: number): Promise<string> {
  const res = await api.request({
    method: 'POST',
    path: '/v2/scrape',
    headers: auth,
    body: JSON.stringify({ url, ...(maxAge === undefined ? {} : { maxAge }) }),
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`scrape ${url}: ${res.statusCode} ${text.slice(0, 300)}`);
  return text;
}

async function raw(url: string): Promise<number> {
  const res = await request(url);
  const body = await res.body.arrayBuffer();
  if (res.statusCode !== 200) throw new Error(`raw ${url}: ${res.statusCode}`);
  return body.byteLength;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];

async function overhead(): Promise<void> {
  const url = site.url('/large?kb=200');
  const bytes = await raw(url);
  const first = JSON.parse(await scrape(url, 0)) as {
    data: { markdown: string; metadata: { cacheState: string; scrapeId: string } };
  };
  if (first.data.metadata.cacheState !== 'miss') throw new Error('maxAge: 0 did not fetch');
  // Nothing is deferred past the reply: the document can be read back at once.
  const back = await api.request({ method: 'GET', path: `/v2/scrape/${first.data.metadata.scrapeId}`, headers: auth });
  await back.body.text();
  if (back.statusCode !== 200) throw new Error(`GET /v2/scrape/{id} right after the POST: ${back.statusCode}`);
  for (let i = 0; i < WARMUP; i++) {
    await raw(url);
    await scrape(url, 0);
  }
  const rawMs: number[] = [];
  const scrapeMs: number[] = [];
  const rawCpu: number[] = [];
  const scrapeCpu: number[] = [];
  const dbPer: number[] = [];
  // This thread's CPU alone: the event loop's share (PGlite runs on a thread of its own).
  const mainCpu: number[] = [];
  const queriesPer: number[] = [];
  const started = performance.now();
  for (let i = 0; i < SAMPLES && performance.now() - started < OVERHEAD_BUDGET_MS; i++) {
    // Alternate which goes first so neither always runs right after the other's GC.
    const order = i % 2 ? ['raw', 'scrape'] : ['scrape', 'raw'];
    for (const which of order) {
      const c = process.cpuUsage();
      const t = performance.now();
      if (which === 'raw') {
        await raw(url);
        rawMs.push(performance.now() - t);
        rawCpu.push(cpuMs(process.cpuUsage(c)));
      } else {
        const [db0, q0] = [dbMs, dbQueries];
        const m = process.threadCpuUsage();
        await scrape(url, 0);
        scrapeMs.push(performance.now() - t);
        scrapeCpu.push(cpuMs(process.cpuUsage(c)));
        mainCpu.push(cpuMs(process.threadCpuUsage(m)));
        dbPer.push(dbMs - db0);
        queriesPer.push(dbQueries - q0);
      }
    }
  }

  // The transform alone on the same HTML, with the plan a default scrape gets (markdown).
  const html = Buffer.from(await (await request(url)).body.arrayBuffer()).toString('utf8');
  const req = scrapeRequest.parse({ url, maxAge: 0 });
  const input = {
    html,
    url,
    sourceURL: url,
    statusCode: 200,
    contentType: 'text/html; charset=utf-8',
    onlyMainContent: req.onlyMainContent,
    blockAds: req.blockAds,
    removeBase64Images: req.removeBase64Images,
    formats: planScrape(req).formats,
  };
  const transformMs: number[] = [];
  const transformCpu: number[] = [];
  for (let i = 0; i < 10; i++) transformHtml(input);
  for (let i = 0; i < 50; i++) {
    const c = process.cpuUsage();
    const t = performance.now();
    transformHtml(input);
    transformMs.push(performance.now() - t);
    transformCpu.push(cpuMs(process.cpuUsage(c)));
  }

  const mRaw = median(rawMs);
  const mScrape = median(scrapeMs);
  const over = mScrape - mRaw;
  const cpuOver = median(scrapeCpu) - median(rawCpu);
  console.log(
    `page: ${(bytes / 1024).toFixed(0)} KB, markdown ${(first.data.markdown.length / 1024).toFixed(0)} KB; ${scrapeMs.length} samples each, sequential, interleaved`,
  );
  console.log(
    `raw undici fetch+read: median ${mRaw.toFixed(2)} ms (p90 ${pct(rawMs, 0.9).toFixed(2)}), CPU ${median(rawCpu).toFixed(2)} ms`,
  );
  console.log(
    `POST /v2/scrape maxAge 0: median ${mScrape.toFixed(2)} ms (p90 ${pct(scrapeMs, 0.9).toFixed(2)}), CPU ${median(scrapeCpu).toFixed(2)} ms`,
  );
  // CPU time (this process, all threads) is the steadier measure on a busy machine: waiting for
  // a core does not count. The database runs on PGlite's own thread: its CPU is the process's
  // less this thread's; its wall time is how long the scrape waited for its statements.
  const mMain = median(mainCpu);
  console.log(
    `breakdown, CPU ms (medians): event-loop thread ${mMain.toFixed(2)} (transformHtml ${median(transformCpu).toFixed(2)}, wall ${median(transformMs).toFixed(2)}; ` +
      `rest: engine, decoding, validation, JSON, HTTP, fixture site ≈ ${(mMain - median(transformCpu)).toFixed(2)}); ` +
      `other threads (database) ≈ ${(median(scrapeCpu) - mMain).toFixed(2)}; statements' wall time ${median(dbPer).toFixed(2)} ms in ${median(queriesPer)} statements`,
  );
  console.log(
    `RESULT scrape-overhead-cpu: 200 KB page, median CPU ${cpuOver.toFixed(2)} ms over a raw fetch = ${(median(scrapeCpu) / median(rawCpu)).toFixed(1)}x raw`,
  );
  console.log(
    `RESULT scrape-overhead: 200 KB page, median ${over.toFixed(2)} ms over a raw fetch (bar: ≤ 10 ms) = ${(mScrape / mRaw).toFixed(2)}x raw`,
  );
}

interface Throughput {
  pagesPerSec: number;
  count: number;
  median: number;
}

/** CONCURRENCY workers over the URLs in turn until TP_REQUESTS are done or TP_BUDGET_MS passed. */
async function throughput(urls: string[], one: (url: string) => Promise<unknown>): Promise<Throughput> {
  let next = 0;
  let done = 0;
  const lat: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < TP_REQUESTS && performance.now() - started < TP_BUDGET_MS) {
        const url = urls[next++ % urls.length];
        const t = performance.now();
        await one(url);
        lat.push(performance.now() - t);
        done++;
      }
    }),
  );
  const elapsed = performance.now() - started;
  return { pagesPerSec: (done / elapsed) * 1000, count: done, median: median(lat) };
}

async function throughputs(): Promise<void> {
  const paths = [
    '/articles/1',
    '/articles/2',
    '/articles/3',
    '/docs/api',
    '/docs/getting-started',
    '/about',
    '/',
    '/blog/',
    '/forum/thread-1',
    '/products/widget',
    '/large?kb=50',
  ];
  const urls = paths.map((p) => site.url(p));
  const rawFn = (u: string) => raw(u);
  const fresh = (u: string) => scrape(u, 0);
  const cached = (u: string) => scrape(u); // default maxAge (2 days): the copies written by `fresh`
  // Warm-up, and every page in the cache.
  await throughput(urls.slice(), rawFn);
  for (const u of urls) await scrape(u, 0);
  const hit = JSON.parse(await scrape(urls[0])) as { data: { metadata: { cacheState: string } } };
  if (hit.data.metadata.cacheState !== 'hit') throw new Error('expected a cache hit');

  const runs = { raw: [] as Throughput[], fresh: [] as Throughput[], cached: [] as Throughput[] };
  for (let r = 0; r < TP_ROUNDS; r++) {
    runs.raw.push(await throughput(urls, rawFn));
    runs.fresh.push(await throughput(urls, fresh));
    runs.raw.push(await throughput(urls, rawFn));
    runs.cached.push(await throughput(urls, cached));
  }
  const mean = (xs: Throughput[]) => xs.reduce((a, b) => a + b.pagesPerSec, 0) / xs.length;
  const desc = (name: string, xs: Throughput[]) =>
    `${name}: ${mean(xs).toFixed(0)} pages/s (${xs.map((x) => `${x.count} in ${x.count === TP_REQUESTS ? 'count' : 'time'} bound`).join(', ')}; median latency ${median(xs.map((x) => x.median)).toFixed(1)} ms)`;
  console.log(
    `mix of ${paths.length} fixture pages (${paths.join(' ')}), ${CONCURRENCY} concurrent, ≤ ${TP_REQUESTS} requests or ${TP_BUDGET_MS / 1000} s per run, ${TP_ROUNDS} rounds`,
  );
  console.log(desc('raw undici fetches', runs.raw));
  console.log(desc('scrape, fetched (maxAge 0)', runs.fresh));
  console.log(desc('scrape, cache hits', runs.cached));
  console.log(
    `RESULT scrape-throughput: fetched ${mean(runs.fresh).toFixed(0)} pages/s = ${(mean(runs.fresh) / mean(runs.raw)).toFixed(3)}x raw fetches (${mean(runs.raw).toFixed(0)}/s)`,
  );
  console.log(
    `RESULT scrape-throughput-cached: cache hits ${mean(runs.cached).toFixed(0)} pages/s = ${(mean(runs.cached) / mean(runs.raw)).toFixed(3)}x raw fetches`,
  );
}

try {
  const only = process.env.BENCH_SCRAPE_PART;
  if (only !== 'throughput') await overhead();
  if (only !== 'overhead') await throughputs();
} finally {
  await api.close();
  await svc.destroy();
  await site.close();
}
