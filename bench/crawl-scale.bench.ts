// Crawl memory and speed against the crawl's size: does a crawl's cost stay bounded by its
// concurrency, or grow with the pages crawled? (issue 24)
//
// For each size T (CRAWL_SCALE_SIZES, default "1000,5000,20000,100000"), on the embedded database
// (PGlite) and on Postgres (CRAWL_SCALE_DATABASE_URL; skipped when unset):
// - the real service as a child process, started as `npm start` starts it (bench/load-mix.ts's
//   startService: its environment and Node flags, a fresh DATA_DIR, and on Postgres a fresh schema
//   dropped afterwards; rate limits off, GLEANER_ALLOW_PRIVATE_NETWORK for the loopback site);
// - POST /v2/crawl {url: /generated/1?total=T, limit: T, sitemap: "skip", crawlEntireDomain,
//   ignoreRobotsTxt, scrapeOptions: {formats: ["markdown"]}} on the fixture site (its generated
//   pages link to each other, so all T are reachable from the first);
// - status read as the Firecrawl SDK's `crawl()` reads it (firecrawl-js 4.x waitForCrawlCompletion
//   and getCrawlStatus): GET /v2/crawl/{id}, then every `next` until there is none (while the crawl
//   runs, `next` stays set, so the client keeps reading from where it got to), then again after
//   2 s, until the status is terminal. The bench counts the documents it is given, and keeps none;
// - the service's RSS (/proc/<pid>/status VmRSS) sampled every 200 ms from the POST to the end, and
//   its VmHWM at the end (start-up's peak included: the larger of the two is the peak).
// Printed per run: pages/s (POST to the first poll that sees `completed`), peak RSS, RSS when
// ready, and the ratios peak RSS / the 1k run's and pages/s / the 5k run's (goal, issue 24: peak
// RSS at 100k ≤ 1.25× the 1k figure and < 500 MB on Postgres; pages/s at 100k within 10% of 5k).
// A missed goal, or a run that does not finish in CRAWL_SCALE_TIMEOUT_S (default 1800 s), is
// reported, not an error. Knobs: CRAWL_SCALE_SIZES, CRAWL_SCALE_DATABASE_URL, CRAWL_SCALE_STORES
// (pglite,postgres), CRAWL_SCALE_TIMEOUT_S, CRAWL_SCALE_PROGRESS=1 (a line every 10 s),
// GLEANER_BENCH_NODE_ARGS (extra Node flags for the service, e.g. "--heapsnapshot-signal=SIGUSR2").
import { readFile } from 'node:fs/promises';
import { Pool } from 'undici';
import { startFixtureSite } from '../test/fixtures/site/index.ts';
import { type Service, startService } from './load-mix.ts';

const SIZES = (process.env.CRAWL_SCALE_SIZES || '1000,5000,20000,100000')
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const PG = process.env.CRAWL_SCALE_DATABASE_URL;
const STORES = (process.env.CRAWL_SCALE_STORES || 'pglite,postgres')
  .split(',')
  .filter((s) => s === 'pglite' || (s === 'postgres' && PG));
const TIMEOUT_MS = Number(process.env.CRAWL_SCALE_TIMEOUT_S || 1800) * 1000;
const PROGRESS = !!process.env.CRAWL_SCALE_PROGRESS;
const SAMPLE_MS = 200;
const POLL_INTERVAL_MS = 2000; // the SDK's default pollInterval

async function kb(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  try {
    const m = (await readFile(`/proc/${pid}/status`, 'utf8')).match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0; // gone
  }
}

interface Run {
  store: string;
  size: number;
  pages: number;
  seconds: number;
  peakMb: number;
  hwmMb: number;
  readyMb: number;
  /** Documents the status reads handed over (each read once, plus what the repeated reads of the tail gave). */
  docsRead: number;
  requests: number;
  note?: string;
}

const site = await startFixtureSite({ generatedTotal: Math.max(...SIZES) });

async function crawlOnce(store: string, size: number): Promise<Run> {
  if (store === 'postgres') process.env.LOAD_DATABASE_URL = PG;
  else delete process.env.LOAD_DATABASE_URL;
  const service: Service = await startService();
  const pool = new Pool(service.base, { connections: 2, headersTimeout: 120_000, bodyTimeout: 120_000 });
  const auth = { authorization: `Bearer ${service.key}` };
  let peakKb = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peakKb = Math.max(peakKb, await kb(service.pid, 'VmRSS'));
      await new Promise((r) => setTimeout(r, SAMPLE_MS));
    }
  })();
  try {
    const readyKb = await kb(service.pid, 'VmRSS');
    const started = performance.now();
    const res = await pool.request({
      method: 'POST',
      path: '/v2/crawl',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: site.url(`/generated/1?total=${size}`),
        limit: size,
        sitemap: 'skip',
        crawlEntireDomain: true,
        ignoreRobotsTxt: true,
        scrapeOptions: { formats: ['markdown'] },
      }),
    });
    const created = (await res.body.json()) as { success?: boolean; id?: string };
    if (res.statusCode !== 200 || !created.id)
      throw new Error(`POST /v2/crawl: ${res.statusCode} ${JSON.stringify(created)}`);
    type Status = { success: boolean; status: string; completed: number; total: number; next?: string | null };
    let docsRead = 0;
    let requests = 0;
    let lastReport = started;
    const get = async (path: string): Promise<Status> => {
      requests++;
      const r = await pool.request({ method: 'GET', path, headers: auth });
      const body = (await r.body.json()) as Status & { data?: unknown[] };
      if (r.statusCode !== 200) throw new Error(`GET ${path}: ${r.statusCode} ${JSON.stringify(body).slice(0, 300)}`);
      docsRead += body.data?.length ?? 0;
      if (PROGRESS && performance.now() - lastReport > 10_000) {
        lastReport = performance.now();
        console.log(
          `  ${store} ${size}: ${body.completed}/${body.total} after ${((lastReport - started) / 1000).toFixed(0)} s, RSS ${(
            (await kb(service.pid, 'VmRSS')) / 1024
          ).toFixed(0)} MB, ${docsRead} documents read`,
        );
      }
      return body;
    };
    let status: Status;
    let note: string | undefined;
    for (;;) {
      // getCrawlStatus: the status, then every `next` (autoPaginate), the documents kept by the SDK (not here).
      status = await get(`/v2/crawl/${created.id}`);
      for (let next = status.next; next;) {
        const url = new URL(next);
        const page = await get(url.pathname + url.search);
        if (!page.success) break;
        next = page.next;
        if (performance.now() - started > TIMEOUT_MS) break;
      }
      if (['completed', 'failed', 'cancelled'].includes(status.status)) break;
      if (performance.now() - started > TIMEOUT_MS) {
        note = `NOT FINISHED in ${TIMEOUT_MS / 1000} s: ${status.completed}/${status.total}`;
        break;
      }
      await new Promise((r) => setTimeout(r, POLL_INTERVAL_MS));
    }
    // The SDK's reads end once a poll sees the crawl ended: the end is the first status that says so.
    const seconds = (performance.now() - started) / 1000;
    sampling = false;
    await sampler;
    const hwmKb = await kb(service.pid, 'VmHWM');
    if (!note && status.status !== 'completed') note = `crawl ended ${status.status}`;
    if (!note && status.completed !== size) note = `CHECK: ${status.completed} of ${size} pages`;
    return {
      store: service.store,
      size,
      pages: status.completed,
      seconds,
      peakMb: Math.max(peakKb, hwmKb) / 1024,
      hwmMb: hwmKb / 1024,
      readyMb: readyKb / 1024,
      docsRead,
      requests,
      note,
    };
  } finally {
    sampling = false;
    await sampler;
    await pool.close();
    await service.stop();
  }
}

const runs: Run[] = [];
const f0 = (n: number) => n.toFixed(0);
for (const store of STORES) {
  for (const size of SIZES) {
    let run: Run;
    try {
      run = await crawlOnce(store, size);
    } catch (err) {
      console.log(`RESULT crawl-scale ${store} ${size}: FAILED ${(err as Error).message}`);
      continue;
    }
    runs.push(run);
    const base1k = runs.find((r) => r.store === run.store && r.size === 1000);
    const base5k = runs.find((r) => r.store === run.store && r.size === 5000);
    console.log(
      `RESULT crawl-scale ${run.store} ${run.size} pages: ${f0(run.pages / run.seconds)} pages/s (${run.seconds.toFixed(1)} s), ` +
        `peak RSS ${f0(run.peakMb)} MB (VmHWM ${f0(run.hwmMb)}, ready ${f0(run.readyMb)})` +
        (base1k ? `, ${(run.peakMb / base1k.peakMb).toFixed(2)}× the 1k peak` : '') +
        (base5k ? `, ${(run.pages / run.seconds / (base5k.pages / base5k.seconds)).toFixed(2)}× the 5k pages/s` : '') +
        `; status reads: ${run.requests} requests, ${run.docsRead} documents` +
        (run.note ? ` — ${run.note}` : ''),
    );
  }
}

// The goals, reported (never asserted: the machine is shared).
for (const store of new Set(runs.map((r) => r.store))) {
  const of = (n: number) => runs.find((r) => r.store === store && r.size === n);
  const [k1, k5] = [of(1000), of(5000)];
  const largest = runs.filter((r) => r.store === store).at(-1)!;
  if (!k1 || !k5 || largest.size <= 5000) continue;
  const rss = largest.peakMb / k1.peakMb;
  const speed = largest.pages / largest.seconds / (k5.pages / k5.seconds);
  console.log(
    `RESULT crawl-scale ${store} goal at ${largest.size}: peak RSS ${rss.toFixed(2)}× 1k (≤ 1.25×: ${rss <= 1.25 ? 'met' : 'not met'}` +
      (store === 'Postgres' ? `; ${f0(largest.peakMb)} MB < 500: ${largest.peakMb < 500 ? 'met' : 'not met'}` : '') +
      `), pages/s ${speed.toFixed(2)}× 5k (≥ 0.90×: ${speed >= 0.9 ? 'met' : 'not met'})` +
      (largest.size < 100_000 ? ' (the 100k size not run)' : ''),
  );
}
await site.close();
