// Monitors: a check of a 500-page crawl monitor against a plain crawl of the same pages in the same
// run, and the database bytes an unchanged check adds per page. The service runs in this process
// (startTestService: PGlite in a temporary directory, or Postgres with MONITOR_BENCH_DATABASE_URL)
// against the fixture site's generated pages (/generated/1 … /generated/500).
//
// - Plain crawl: POST /v2/crawl {url: /generated/1, limit 500, sitemap "skip", crawlEntireDomain,
//   ignoreRobotsTxt, scrapeOptions {formats [markdown], maxAge 0}} (maxAge 0: fetched fresh, as a
//   check does), polled every 50 ms until completed. Wall time from the POST.
// - Monitor check: a monitor with one crawl target of the same options; POST /v2/monitor/{id}/run,
//   polled every 50 ms until the check is no longer queued or running. The first check (every page
//   new) is a warm-up, not timed; the timed ones find every page unchanged.
// - Bytes per unchanged page per check: growth of the monitor tables (with indexes, TOAST) over
//   CHECKS more unchanged checks, divided by pages × checks. The crawls' own rows are not counted
//   (crawl results expire after 24 h).
//
// Figures: check time / crawl time (goal ≤ 1.3×, rounds alternate which goes first) and bytes per
// page (goal ≤ 200), as RESULT lines. A missed goal is printed, not an error. Knobs: MONITOR_BENCH_ROUNDS (default 2),
// MONITOR_BENCH_CHECKS (default 5).
import { setTimeout as sleep } from 'node:timers/promises';
import { startFixtureSite } from '../test/fixtures/site/index.ts';
import { apiClient } from '../test/helpers/api.ts';
import { startTestService } from '../test/helpers/service.ts';

const PAGES = 500;
const ROUNDS = Number(process.env.MONITOR_BENCH_ROUNDS || 2);
const CHECKS = Number(process.env.MONITOR_BENCH_CHECKS || 5);
const dbUrl = process.env.MONITOR_BENCH_DATABASE_URL;
if (dbUrl) process.env.TEST_DATABASE_URL = dbUrl;

const site = await startFixtureSite({ generatedTotal: PAGES });
const svc = await startTestService({ store: dbUrl ? 'postgres' : 'pglite', env: { GLEANER_MAX_CRAWL_DELAY: '0' } });
const api = apiClient(svc);
const crawlOptions = { sitemap: 'skip' as const, limit: PAGES, crawlEntireDomain: true, ignoreRobotsTxt: true };
const url = site.url('/generated/1');

async function plainCrawl(): Promise<number> {
  const t = performance.now();
  const res = await api.crawl({ url, ...crawlOptions, scrapeOptions: { formats: ['markdown'], maxAge: 0 } });
  if (res.status !== 200) throw new Error(res.text);
  for (;;) {
    const s = await api.crawlStatus(res.json.id, '?limit=1');
    if (s.json.status !== 'scraping') {
      if (s.json.completed !== PAGES) throw new Error(`crawl: ${s.json.completed} pages`);
      return performance.now() - t;
    }
    await sleep(50);
  }
}

const monitor = await api.startMonitor({
  name: 'bench',
  schedule: { text: 'daily at 3:00' },
  targets: [{ type: 'crawl', url, crawlOptions }],
});

async function check(): Promise<{ ms: number; summary: Record<string, number> }> {
  const t = performance.now();
  const res = await api.runMonitor(monitor.id);
  if (res.status !== 200) throw new Error(res.text);
  for (;;) {
    const c = await api.monitorCheck(monitor.id, res.json.data.id, '?limit=1');
    if (!['queued', 'running'].includes(c.json.data.status))
      return { ms: performance.now() - t, summary: c.json.data.summary };
    await sleep(50);
  }
}

const size = async (): Promise<number> =>
  Number(
    (
      await svc.db.query<{ n: string }>(
        `SELECT (pg_total_relation_size('monitor_check_pages') + pg_total_relation_size('monitor_checks')
           + pg_total_relation_size('monitor_pages') + pg_total_relation_size('monitor_contents'))::text AS n`,
      )
    ).rows[0].n,
  );

try {
  const warm = await check();
  console.log(`warm-up check: ${(warm.ms / 1000).toFixed(2)} s, ${JSON.stringify(warm.summary)}`);
  const ratios: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    let crawlMs: number;
    let c: { ms: number; summary: Record<string, number> };
    if (r % 2 === 0) {
      crawlMs = await plainCrawl();
      c = await check();
    } else {
      c = await check();
      crawlMs = await plainCrawl();
    }
    if (c.summary.same !== PAGES) throw new Error(`check: ${JSON.stringify(c.summary)}`);
    ratios.push(c.ms / crawlMs);
    console.log(
      `round ${r + 1}: plain crawl ${(crawlMs / 1000).toFixed(2)} s (${((PAGES / crawlMs) * 1000).toFixed(0)} pages/s), ` +
        `monitor check ${(c.ms / 1000).toFixed(2)} s: ${(c.ms / crawlMs).toFixed(2)}×`,
    );
  }
  const worst = Math.max(...ratios);
  console.log(
    `check / crawl: ${ratios.map((x) => x.toFixed(2)).join(', ')} (goal ≤ 1.3×: ${worst <= 1.3 ? 'met' : 'MISSED'})`,
  );
  const before = await size();
  for (let i = 0; i < CHECKS; i++) await check();
  const perPage = (await size()) - before;
  const bytes = perPage / (PAGES * CHECKS);
  console.log(
    `RESULT monitor-storage: database growth over ${CHECKS} unchanged checks of ${PAGES} pages: ${perPage} bytes, ` +
      `${bytes.toFixed(0)} bytes per page per check (goal ≤ 200: ${bytes <= 200 ? 'met' : 'NOT MET'})`,
  );
} finally {
  await svc.destroy();
  await site.close();
}
