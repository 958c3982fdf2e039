// The browser engine's cost against plain playwright-core doing the same navigation on the same
// Chromium in the same run: a fresh context, goto, page.content(), close. Figures: the ratio of
// median fetch latencies (one at a time) and of pages/s with 8 fetches at once, on a local fixture
// article; then memory after 1,000 engine fetches against after 100 (must stay within 1.5×).
//
// The engine does more than the baseline on purpose (a guarded proxy for every connection, the
// ad-block route, the smart wait for network and DOM quiet, init scripts); the run also measures
// it with the smart wait off, to show what the wait costs and what the rest costs.
// Memory is the RSS (and PSS, which counts shared pages once) of this process plus every
// Chromium process under it, read from /proc.
import { readFileSync, readdirSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { BrowserEngine, CHROMIUM_ARGS, chromiumAvailable, chromiumExecutable } from '../src/scrape/engines/browser.ts';
import { startFixtureSite } from '../test/fixtures/site/index.ts';

const SEQUENTIAL = Number(process.env.BENCH_BROWSER_SEQ ?? 30);
const CONCURRENT_TOTAL = Number(process.env.BENCH_BROWSER_CONC_TOTAL ?? 80);
const CONCURRENCY = 8;
const MEMORY_FETCHES = Number(process.env.BENCH_BROWSER_MEMORY ?? 1000);

if (!chromiumAvailable()) {
  console.log(`SKIP browser: no Chromium at ${chromiumExecutable()} (apt-get install chromium, or set CHROMIUM_PATH)`);
  process.exit(0);
}

const site = await startFixtureSite();
const url = site.url('/articles/1');

type Fetcher = () => Promise<unknown>;

async function sequential(fetch: Fetcher, n: number): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fetch();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return times[times.length >> 1];
}

async function concurrent(fetch: Fetcher, total: number, concurrency: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        next++;
        await fetch();
      }
    }),
  );
  return (total / (performance.now() - started)) * 1000;
}

function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(entry));
      children.set(ppid, list);
    } catch {
      /* exited */
    }
  }
  const out: number[] = [];
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** RSS and PSS in MB of this process and all its descendants (Chromium and its renderers). */
function memory(): { rss: number; pss: number; processes: number } {
  let rss = 0;
  let pss = 0;
  const pids = descendants(process.pid);
  for (const pid of pids) {
    try {
      const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
      rss += Number(/^Rss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
      pss += Number(/^Pss:\s+(\d+)/m.exec(rollup)?.[1] ?? 0);
    } catch {
      /* exited */
    }
  }
  return { rss: rss / 1024, pss: pss / 1024, processes: pids.length };
}

const baselineBrowser: Browser = await chromium.launch({
  executablePath: chromiumExecutable(),
  headless: true,
  args: CHROMIUM_ARGS,
});
const plain: Fetcher = async () => {
  const context = await baselineBrowser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'load' });
    await page.content();
  } finally {
    await context.close();
  }
};
const plainIdle: Fetcher = async () => {
  const context = await baselineBrowser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'networkidle' });
    await page.content();
  } finally {
    await context.close();
  }
};

const engine = new BrowserEngine({ allowPrivateNetwork: true, maxPages: CONCURRENCY });
const noWait = new BrowserEngine({ allowPrivateNetwork: true, maxPages: CONCURRENCY, settle: { maxMs: 0 } });
await Promise.all([engine.warm(), noWait.warm()]);
const ours: Fetcher = () => engine.fetch({ url, timeoutMs: 30_000, skipTlsVerification: true, mobile: false });
const oursNoWait: Fetcher = () => noWait.fetch({ url, timeoutMs: 30_000, skipTlsVerification: true, mobile: false });

try {
  // Warm every path, then alternate twice so drift on a shared machine hits all sides alike.
  for (const f of [plain, plainIdle, ours, oursNoWait]) await sequential(f, 3);
  const med = { plain: [] as number[], idle: [] as number[], ours: [] as number[], noWait: [] as number[] };
  const rate = { plain: [] as number[], ours: [] as number[], noWait: [] as number[] };
  for (let round = 0; round < 2; round++) {
    med.plain.push(await sequential(plain, SEQUENTIAL / 2));
    med.idle.push(await sequential(plainIdle, SEQUENTIAL / 2));
    med.ours.push(await sequential(ours, SEQUENTIAL / 2));
    med.noWait.push(await sequential(oursNoWait, SEQUENTIAL / 2));
    rate.plain.push(await concurrent(plain, CONCURRENT_TOTAL / 2, CONCURRENCY));
    rate.ours.push(await concurrent(ours, CONCURRENT_TOTAL / 2, CONCURRENCY));
    rate.noWait.push(await concurrent(oursNoWait, CONCURRENT_TOTAL / 2, CONCURRENCY));
  }
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const m = { plain: avg(med.plain), idle: avg(med.idle), ours: avg(med.ours), noWait: avg(med.noWait) };
  const r = { plain: avg(rate.plain), ours: avg(rate.ours), noWait: avg(rate.noWait) };
  await noWait.close();
  await baselineBrowser.close();
  console.log(
    `page: ${url} (fixture article with 4 images), ${SEQUENTIAL} sequential and ${CONCURRENT_TOTAL} at ${CONCURRENCY} concurrent per side`,
  );
  console.log(`plain playwright (goto load):        median ${m.plain.toFixed(0)} ms, ${r.plain.toFixed(1)} pages/s`);
  console.log(`plain playwright (goto networkidle): median ${m.idle.toFixed(0)} ms`);
  console.log(`gleaner engine:                      median ${m.ours.toFixed(0)} ms, ${r.ours.toFixed(1)} pages/s`);
  console.log(`gleaner engine, smart wait off:      median ${m.noWait.toFixed(0)} ms, ${r.noWait.toFixed(1)} pages/s`);

  // Memory: 1,000 fetches through the engine at 8 at once (recycling after 500 pages, the default),
  // measured when idle after the first 100 and after all of them.
  let next = 0;
  const batch = async (upTo: number) =>
    Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < upTo) {
          next++;
          await engine.fetch({
            url: site.url(`/generated/${(next % 2000) + 1}`),
            timeoutMs: 60_000,
            skipTlsVerification: true,
            mobile: false,
          });
        }
      }),
    );
  const idle = () => new Promise((resolve) => setTimeout(resolve, 1000));
  const started = performance.now();
  await batch(100);
  await idle();
  const at100 = memory();
  await batch(MEMORY_FETCHES);
  await idle();
  const at1000 = memory();
  const elapsed = (performance.now() - started) / 1000;
  const stats = engine.stats();
  console.log(
    `memory after 100 fetches: RSS ${at100.rss.toFixed(0)} MB, PSS ${at100.pss.toFixed(0)} MB (${at100.processes} processes); ` +
      `after ${MEMORY_FETCHES}: RSS ${at1000.rss.toFixed(0)} MB, PSS ${at1000.pss.toFixed(0)} MB (${at1000.processes} processes); ` +
      `${elapsed.toFixed(0)} s, ${stats.launches} launches, ${stats.recycles} recycles, ${stats.crashes} crashes`,
  );
  const rssRatio = at1000.rss / at100.rss;
  console.log(
    `RESULT browser: median fetch = ${(m.ours / m.plain).toFixed(2)}x plain playwright-core (${(m.noWait / m.plain).toFixed(2)}x with the smart wait off); ` +
      `pages/s at ${CONCURRENCY} concurrent = ${(r.ours / r.plain).toFixed(2)}x (${(r.noWait / r.plain).toFixed(2)}x); ` +
      `RSS after ${MEMORY_FETCHES} / after 100 = ${rssRatio.toFixed(2)} (PSS ${(at1000.pss / at100.pss).toFixed(2)})`,
  );
  if (rssRatio > 1.5) process.exitCode = 1;
} finally {
  await engine.close();
  await noWait.close();
  if (baselineBrowser.isConnected()) await baselineBrowser.close();
  await site.close();
}
