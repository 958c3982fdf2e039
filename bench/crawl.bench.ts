// Crawl throughput and memory: a link crawl of the fixture site's 2,000 generated pages
// (/generated/1 … /generated/2000, each linking to 2n, 2n+1, n+1, 7n mod 2000 + 1 and 1: every
// page is reachable from /generated/1), with Markdown output, by Gleaner and by Crawlee.
//
// - Gleaner: the real service as a child process, started as `npm start` starts it (package.json's
//   start script: its environment variables, `node`, its Node flags, `src/server.ts`), PGlite in a temporary DATA_DIR,
//   default GLEANER_WORKERS and team concurrency unless GLEANER_BENCH_WORKERS is set. Twice per
//   round: on a fresh data directory (the run includes making it: a copy of the empty database
//   `npm install` prepared, or PGlite's initdb child where there is none, and the migrations)
//   and on an existing one (made by a start and a graceful stop of the service first, not
//   measured; the run is a restart: migrations already applied). Each run:
//   POST /v2/crawl {url, limit: 2000, sitemap: "skip", crawlEntireDomain: true,
//   ignoreRobotsTxt: true, scrapeOptions: {formats: ["markdown"]}} (robots.txt ignored as Crawlee
//   does by default: the fixture's Crawl-delay of 1 s would make it 1 page/s), then GET /v2/crawl/{id}?limit=1 every 100 ms until
//   it is `completed` (limit=1 keeps the polls cheap: a client reading every document as it goes
//   would add that reading to the crawl). Wall time: from the POST to the first poll that sees
//   `completed`. Then every document is read back (not timed) to check there are 2,000, each with
//   non-empty Markdown.
// - Crawlee: bench/crawlee-crawl.ts as a child process (CheerioCrawler + turndown with the GFM
//   plugin, same start URL, same-hostname links, maxRequestsPerCrawl 2000, in-memory storage;
//   its concurrency setting is explained there). Wall time: crawler.run() as the child measures it.
//
// Peak RSS: of each child and any processes under it (Gleaner's initdb child on a fresh data
// directory, when no template exists; plain HTML needs no browser), summed, sampled every 100 ms from /proc, from the
// process's start to the end of the crawl; the child's own VmHWM is reported beside it. For
// Gleaner the RSS when ready and the peak between the POST and completion are printed too.
// Store: PGlite (the default) unless CRAWL_BENCH_DATABASE_URL names a Postgres database; then
// Gleaner runs on it, in a schema of its own dropped afterwards (the scale-out setup: the process
// holds no database, so its RSS is the crawler's own).
// Knobs: CRAWL_BENCH_ONLY=gleaner|crawlee, CRAWL_BENCH_MODES=fresh,existing (which Gleaner runs),
// CRAWL_BENCH_PROGRESS=1, GLEANER_BENCH_WORKERS, GLEANER_BENCH_TEAM_CONCURRENCY,
// GLEANER_BENCH_NODE_ARGS (added to the start script's flags, e.g. "--cpu-prof --cpu-prof-dir=/tmp/p").
//
// Figures: pages/s of each, the ratio (goal: Gleaner ≥ 5× Crawlee) and peak RSS (goal: Gleaner
// < 400 MB). Rounds (default 2, CRAWL_BENCH_ROUNDS) alternate which goes first. A missed goal is
// printed, not an error.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pgClient from 'pg';
import { request } from 'undici';
import { loadConfig } from '../src/config.ts';
import { startFixtureSite } from '../test/fixtures/site/index.ts';
import { newTestKey } from '../test/helpers/service.ts';

const PAGES = 2000;
const ROUNDS = Number(process.env.CRAWL_BENCH_ROUNDS || 2);
const TIMEOUT_MS = 10 * 60_000;
const root = new URL('../', import.meta.url).pathname;
const node = process.execPath;
type Mode = 'fresh' | 'existing';
const MODES = (process.env.CRAWL_BENCH_MODES || 'fresh,existing')
  .split(',')
  .filter((m): m is Mode => m === 'fresh' || m === 'existing');

/**
 * How `npm start` runs the service: package.json's start script is
 * "[NAME=value …] node [flags …] src/server.ts"; its environment assignments and Node flags.
 */
function startScript(): { env: Record<string, string>; nodeArgs: string[] } {
  const words = (
    JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { scripts: { start: string } }
  ).scripts.start
    .trim()
    .split(/\s+/);
  const env: Record<string, string> = {};
  while (/^[A-Z_][A-Z0-9_]*=/.test(words[0])) {
    const [name, ...value] = words.shift()!.split('=');
    env[name] = value.join('=');
  }
  if (words[0] !== 'node' || words.at(-1) !== 'src/server.ts')
    throw new Error(`unexpected start script: ${words.join(' ')}`);
  return { env, nodeArgs: words.slice(1, -1) };
}
const start = startScript();
const serviceNodeArgs = [
  ...start.nodeArgs,
  ...(process.env.GLEANER_BENCH_NODE_ARGS ? process.env.GLEANER_BENCH_NODE_ARGS.split(' ') : []),
];

const site = await startFixtureSite({ generatedTotal: PAGES });
const startUrl = site.url('/generated/1');

// ---------------------------------------------------------------------------------------------
// Memory of a process tree, from /proc

async function kb(pid: number, field: 'VmRSS' | 'VmHWM'): Promise<number> {
  try {
    const m = (await readFile(`/proc/${pid}/status`, 'utf8')).match(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0; // gone
  }
}

async function descendants(pid: number): Promise<number[]> {
  const out: number[] = [];
  let tasks: string[] = [];
  try {
    tasks = await readdir(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tasks) {
    let kids = '';
    try {
      kids = await readFile(`/proc/${pid}/task/${t}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const k of kids.split(/\s+/).filter(Boolean).map(Number)) out.push(k, ...(await descendants(k)));
  }
  return out;
}

/** Samples the RSS of `pid` and its descendants every 100 ms; stop() gives the peak sum (KB), the largest number of descendants seen and the process's own VmHWM. */
function watchMemory(pid: number): {
  mark(): void;
  stop(): Promise<{ peakKb: number; hwmKb: number; children: number; sinceMarkKb: number }>;
} {
  let peakKb = 0;
  let sinceMarkKb = 0;
  let children = 0;
  let hwmKb = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const kids = await descendants(pid);
      children = Math.max(children, kids.length);
      const sizes = await Promise.all([pid, ...kids].map((p) => kb(p, 'VmRSS')));
      const sum = sizes.reduce((a, b) => a + b, 0);
      peakKb = Math.max(peakKb, sum);
      sinceMarkKb = Math.max(sinceMarkKb, sum);
      hwmKb = Math.max(hwmKb, await kb(pid, 'VmHWM'));
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    mark() {
      sinceMarkKb = 0;
    },
    async stop() {
      hwmKb = Math.max(hwmKb, await kb(pid, 'VmHWM'));
      stopped = true;
      await loop;
      return { peakKb: Math.max(peakKb, hwmKb), hwmKb, children, sinceMarkKb };
    },
  };
}

// ---------------------------------------------------------------------------------------------

interface Run {
  /** Gleaner: the data directory it started on. */
  mode?: Mode;
  pages: number;
  wallMs: number;
  peakMb: number;
  hwmMb: number;
  children: number;
  cpuS?: number;
  /** CPU seconds of this process (the fixture site, and for Gleaner the status polling) during the crawl. */
  siteCpuS?: number;
  /** Gleaner: RSS when ready, before the POST (start-up's peak is past by then). */
  idleMb?: number;
  /** Gleaner: largest RSS sampled between the POST and completion. */
  crawlPeakMb?: number;
  note?: string;
}

const mb = (k: number) => k / 1024;

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const { port } = srv.address() as { port: number };
  await new Promise((r) => srv.close(r));
  return port;
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((r) => {
    if (child.exitCode !== null || child.signalCode !== null) r(child.exitCode);
    else child.once('exit', (code) => r(code));
  });
}

/** user + system CPU seconds of a live process (its threads included), from /proc/<pid>/stat. */
async function cpuSeconds(pid: number): Promise<number> {
  try {
    const f = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100; // fields 14, 15 (utime, stime) in clock ticks
  } catch {
    return NaN;
  }
}

async function waitReady(child: ChildProcess, base: string): Promise<void> {
  for (let t = Date.now(); ;) {
    if (child.exitCode !== null) throw new Error(`gleaner exited with ${child.exitCode} at start-up`);
    try {
      const res = await request(`${base}/ready`);
      await res.body.dump();
      if (res.statusCode === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() - t > 120_000) throw new Error('gleaner did not become ready in 120 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
  await exited(child);
  clearTimeout(t);
}

async function gleaner(mode: Mode): Promise<Run> {
  const dataDir = await mkdtemp(join(tmpdir(), 'gleaner-crawl-bench-'));
  const pg = process.env.CRAWL_BENCH_DATABASE_URL;
  const schema = `gleaner_bench_${Date.now().toString(36)}`;
  const key = newTestKey();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = {
    ...process.env,
    ...start.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ...(pg ? { DATABASE_URL: pg, DATABASE_SCHEMA: schema } : {}),
    GLEANER_ALLOW_PRIVATE_NETWORK: 'true',
    GLEANER_API_KEY: key,
    LOG_LEVEL: 'warn',
  } as Record<string, string>;
  if (process.env.GLEANER_BENCH_WORKERS) env.GLEANER_WORKERS = process.env.GLEANER_BENCH_WORKERS;
  if (process.env.GLEANER_BENCH_TEAM_CONCURRENCY)
    env.GLEANER_TEAM_MAX_CONCURRENCY = process.env.GLEANER_BENCH_TEAM_CONCURRENCY;
  const spawnService = () =>
    spawn(node, [...serviceNodeArgs, 'src/server.ts'], { cwd: root, env, stdio: ['ignore', 'inherit', 'inherit'] });
  if (mode === 'existing') {
    // The data directory a restart finds: created, migrated and the key stored by a first start.
    const first = spawnService();
    try {
      await waitReady(first, base);
    } finally {
      await stop(first);
    }
  }
  const child = spawnService();
  const mem = watchMemory(child.pid!);
  const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  try {
    await waitReady(child, base);
    const cpu0 = await cpuSeconds(child.pid!);
    const idleKb = await kb(child.pid!, 'VmRSS');
    mem.mark();
    const site0 = process.cpuUsage();
    const started = performance.now();
    const res = await request(`${base}/v2/crawl`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({
        url: startUrl,
        limit: PAGES,
        sitemap: 'skip',
        crawlEntireDomain: true,
        ignoreRobotsTxt: true,
        scrapeOptions: { formats: ['markdown'] },
      }),
    });
    const created = (await res.body.json()) as { success: boolean; id: string };
    if (res.statusCode !== 200 || !created.success)
      throw new Error(`POST /v2/crawl: ${res.statusCode} ${JSON.stringify(created)}`);
    let status: { status: string; completed: number; total: number };
    let lastReport = started;
    for (;;) {
      const r = await request(`${base}/v2/crawl/${created.id}?limit=1`, { headers: auth });
      status = (await r.body.json()) as typeof status;
      if (r.statusCode !== 200) throw new Error(`GET /v2/crawl/{id}: ${r.statusCode} ${JSON.stringify(status)}`);
      if (status.status !== 'scraping') break;
      if (process.env.CRAWL_BENCH_PROGRESS && performance.now() - lastReport > 5000) {
        lastReport = performance.now();
        console.log(
          `  gleaner: ${status.completed}/${status.total} after ${((lastReport - started) / 1000).toFixed(0)} s, RSS ${mb(await kb(child.pid!, 'VmRSS')).toFixed(0)} MB`,
        );
      }
      if (performance.now() - started > TIMEOUT_MS)
        throw new Error(`crawl not done after ${TIMEOUT_MS / 1000} s: ${status.completed}/${status.total}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    const wallMs = performance.now() - started;
    const cpuS = (await cpuSeconds(child.pid!)) - cpu0;
    const siteCpu = process.cpuUsage(site0);
    const m = await mem.stop();
    if (status.status !== 'completed') throw new Error(`crawl ended ${status.status}`);
    // Every document, checked (not timed).
    let docs = 0;
    let empty = 0;
    const urls = new Set<string>();
    for (let skip = 0; ;) {
      const r = await request(`${base}/v2/crawl/${created.id}?skip=${skip}&limit=500`, { headers: auth });
      const page = (await r.body.json()) as {
        data: { markdown?: string; metadata: { sourceURL?: string; url?: string } }[];
        next: string | null;
      };
      for (const d of page.data) {
        docs++;
        if (!d.markdown?.trim()) empty++;
        urls.add(d.metadata.url ?? d.metadata.sourceURL ?? '');
      }
      skip += page.data.length;
      if (!page.next || page.data.length === 0) break;
    }
    const note =
      docs !== PAGES || empty || urls.size !== PAGES
        ? `CHECK FAILED: ${docs} documents, ${urls.size} distinct URLs, ${empty} with empty markdown`
        : undefined;
    return {
      mode,
      pages: status.completed,
      wallMs,
      peakMb: mb(m.peakKb),
      hwmMb: mb(m.hwmKb),
      children: m.children,
      cpuS,
      siteCpuS: (siteCpu.user + siteCpu.system) / 1e6,
      idleMb: mb(idleKb),
      crawlPeakMb: mb(m.sinceMarkKb),
      note,
    };
  } finally {
    await mem.stop();
    await stop(child);
    await rm(dataDir, { recursive: true, force: true });
    if (pg) {
      const client = new pgClient.Client({ connectionString: pg });
      await client.connect();
      try {
        await client.query(
          `DROP SCHEMA IF EXISTS ${schema}, ${loadConfig({ DATABASE_URL: pg, DATABASE_SCHEMA: schema }).queueSchema} CASCADE`,
        );
      } finally {
        await client.end();
      }
    }
  }
}

async function crawlee(): Promise<Run> {
  const storage = await mkdtemp(join(tmpdir(), 'crawlee-bench-'));
  const site0 = process.cpuUsage();
  const child = spawn(node, [join(root, 'bench/crawlee-crawl.ts'), startUrl, String(PAGES)], {
    cwd: storage,
    env: { ...process.env, CRAWLEE_STORAGE_DIR: storage, CRAWLEE_PERSIST_STORAGE: 'false' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const mem = watchMemory(child.pid!);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (out += d));
  let m: Awaited<ReturnType<typeof mem.stop>> | undefined;
  // The child prints its result and exits: take the memory figures as the line arrives.
  await new Promise<void>((resolve) => {
    child.stdout!.on('data', () => {
      if (out.includes('\n') && !m) void mem.stop().then((x) => ((m = x), resolve()));
    });
    child.once('exit', () => resolve());
  });
  m ??= await mem.stop();
  const siteCpu = process.cpuUsage(site0);
  const code = await exited(child);
  await rm(storage, { recursive: true, force: true });
  if (code !== 0 && !out.includes('\n')) throw new Error(`crawlee child exited with ${code}`);
  const r = JSON.parse(out.trim().split('\n').pop()!) as {
    pages: number;
    markdownEmpty: number;
    wallMs: number;
    failed: number;
  };
  const note =
    r.pages !== PAGES || r.markdownEmpty || r.failed
      ? `CHECK FAILED: ${r.pages} pages, ${r.markdownEmpty} empty, ${r.failed} failed`
      : undefined;
  return {
    pages: r.pages,
    wallMs: r.wallMs,
    peakMb: mb(m.peakKb),
    hwmMb: mb(m.hwmKb),
    children: m.children,
    siteCpuS: (siteCpu.user + siteCpu.system) / 1e6,
    note,
  };
}

const pps = (r: Run) => (r.pages / r.wallMs) * 1000;
const desc = (name: string, r: Run) =>
  `${name}: ${r.pages} pages in ${(r.wallMs / 1000).toFixed(2)} s = ${pps(r).toFixed(0)} pages/s; peak RSS ${r.peakMb.toFixed(0)} MB (VmHWM ${r.hwmMb.toFixed(0)} MB, ${r.children} child processes)` +
  (r.crawlPeakMb !== undefined
    ? `; RSS when ready ${r.idleMb!.toFixed(0)} MB, peak during the crawl ${r.crawlPeakMb.toFixed(0)} MB`
    : '') +
  (r.cpuS !== undefined ? `; CPU ${r.cpuS.toFixed(1)} s (${((r.cpuS * 1000) / r.pages).toFixed(1)} ms/page)` : '') +
  (r.siteCpuS !== undefined ? `; fixture site ${r.siteCpuS.toFixed(1)} s CPU` : '') +
  (r.note ? ` ${r.note}` : '');

try {
  const runs = { gleaner: [] as Run[], crawlee: [] as Run[] };
  console.log(
    `site: ${PAGES} generated pages from ${startUrl}; ${ROUNDS} rounds, alternating order; Gleaner on ${process.env.CRAWL_BENCH_DATABASE_URL ? 'Postgres' : 'PGlite'} ` +
      `(${Object.entries(start.env)
        .map(([k, v]) => `${k}=${v} `)
        .join('')}node ${serviceNodeArgs.join(' ')} src/server.ts; data directory: ${MODES.join(' and ')})`,
  );
  const contenders = [...MODES.map((m) => `gleaner:${m}` as const), 'crawlee' as const];
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 ? [...contenders].reverse() : contenders;
    for (const which of order.filter(
      (w) => !process.env.CRAWL_BENCH_ONLY || w.startsWith(process.env.CRAWL_BENCH_ONLY),
    )) {
      if (which === 'crawlee') {
        const r = await crawlee();
        runs.crawlee.push(r);
        console.log(`round ${round + 1} ${desc('Crawlee CheerioCrawler + turndown', r)}`);
      } else {
        const mode = which.slice('gleaner:'.length) as Mode;
        const r = await gleaner(mode);
        runs.gleaner.push(r);
        console.log(`round ${round + 1} ${desc(`Gleaner (${mode} data directory)`, r)}`);
      }
    }
  }
  if (!runs.gleaner.length || !runs.crawlee.length) process.exit(0);
  const mean = (xs: Run[]) => xs.reduce((a, r) => a + pps(r), 0) / xs.length;
  const peak = (xs: Run[]) => Math.max(...xs.map((r) => r.peakMb));
  const g = mean(runs.gleaner);
  const c = mean(runs.crawlee);
  const ratio = g / c;
  const byMode = MODES.map((m) => {
    const xs = runs.gleaner.filter((r) => r.mode === m);
    return `${m} ${mean(xs).toFixed(0)} pages/s = ${(mean(xs) / c).toFixed(2)}x`;
  });
  console.log(
    `RESULT crawl: ${g.toFixed(0)} pages/s = ${ratio.toFixed(2)}x Crawlee CheerioCrawler + turndown (${c.toFixed(0)} pages/s), ${PAGES}-page link crawl with markdown (${byMode.join(', ')}; goal ≥ 5x: ${ratio >= 5 ? 'met' : 'NOT MET'})`,
  );
  for (const m of MODES) {
    const xs = runs.gleaner.filter((r) => r.mode === m);
    const crawlPeak = Math.max(...xs.map((r) => r.crawlPeakMb ?? 0));
    const own = Math.max(...xs.map((r) => r.hwmMb));
    console.log(
      `RESULT crawl-rss (${m} data directory): peak RSS ${peak(xs).toFixed(0)} MB from start-up to the end of the crawl, the service and its children ` +
        `(the service process alone ${own.toFixed(0)} MB; during the crawl ${crawlPeak.toFixed(0)} MB) vs Crawlee ${peak(runs.crawlee).toFixed(0)} MB (goal < 400 MB: ${peak(xs) < 400 ? 'met' : 'NOT MET'})`,
    );
  }
} finally {
  await site.close();
}
