// Shared by bench/load.bench.ts (`npm run bench -- load`) and scripts/soak.ts (`npm run soak`): the
// real service started as a user starts it (a child process, `npm start`'s environment and Node
// flags, `src/server.ts`), the fixture site, and a mixed load of API clients on loopback.
//
// The service: PGlite in a fresh temporary DATA_DIR, or Postgres when LOAD_DATABASE_URL is set (in
// a schema of its own, dropped at the end); GLEANER_RATE_LIMITS with every class at 0 (off),
// GLEANER_ALLOW_PRIVATE_NETWORK (the fixture site is on 127.0.0.1), GLEANER_MAX_CRAWL_DELAY 0,
// LOG_LEVEL warn; everything else at its default (GLEANER_WORKERS, team concurrency 10…).
// GLEANER_BENCH_NODE_ARGS adds Node flags (e.g. "--cpu-prof --cpu-prof-dir=/tmp/p").
//
// The mix (each client picks its next request at random with these weights, `MIX`):
// - scrape: POST /v2/scrape {url, formats: [markdown]} of a fixture page: the 13 linked pages, one
//   of the 2,000 generated pages (so many are first fetches, later some cache hits) or /large?kb=50;
// - scrape-fresh: the same with maxAge 0 (always fetched);
// - map: POST /v2/map of the fixture site (start page /, /blog/ or /docs/api; sitemaps included);
// - crawl-status: GET /v2/crawl/{id}?limit=10 of the current crawl (a link crawl of the generated
//   pages, `crawlLimit` pages, started when the load starts and again every `crawlEveryMs`);
// - parse: POST /v2/parse (multipart) of a small real document from the fixture site: the 3-page
//   report.pdf or report.docx;
// - health: GET /health, the cheapest route, as the in-run reference for what queueing alone costs.
// An error is a non-2xx answer or a network failure (timeout 120 s); the first few are kept.
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, readdir, readlink, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pgClient from 'pg';
import { Pool, request } from 'undici';
import { loadConfig } from '../src/config.ts';
import { type FixtureSite, linkedPages } from '../test/fixtures/site/index.ts';
import { newTestKey } from '../test/helpers/service.ts';

const root = new URL('../', import.meta.url).pathname;

// ---------------------------------------------------------------------------------------------
// The service as a child process

/** How `npm start` runs the service: package.json's start script "[NAME=value …] node [flags …] src/server.ts". */
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

export interface Service {
  base: string;
  key: string;
  pid: number;
  /** "PGlite" or "Postgres". */
  store: string;
  stop(): Promise<void>;
}

/** Every rate-limit class at 0: off. */
const RATE_LIMITS_OFF = ['scrape', 'crawl', 'map', 'search', 'extract', 'status', 'account', 'browser']
  .map((c) => `${c}=0`)
  .join(',');

export async function startService(extraEnv: Record<string, string> = {}): Promise<Service> {
  const start = startScript();
  const dataDir = await mkdtemp(join(tmpdir(), 'gleaner-load-'));
  const pg = process.env.LOAD_DATABASE_URL;
  const schema = `gleaner_load_${Date.now().toString(36)}`;
  const key = newTestKey();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env: Record<string, string> = { ...(process.env as Record<string, string>) };
  delete env.DATABASE_URL;
  Object.assign(env, start.env, {
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    ...(pg ? { DATABASE_URL: pg, DATABASE_SCHEMA: schema } : {}),
    GLEANER_ALLOW_PRIVATE_NETWORK: 'true',
    GLEANER_MAX_CRAWL_DELAY: '0',
    GLEANER_RATE_LIMITS: RATE_LIMITS_OFF,
    GLEANER_API_KEY: key,
    LOG_LEVEL: 'warn',
    ...extraEnv,
  });
  const nodeArgs = [...start.nodeArgs, ...(process.env.GLEANER_BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [])];
  const child = spawn(process.execPath, [...nodeArgs, 'src/server.ts'], {
    cwd: root,
    env,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited(child);
      clearTimeout(t);
    }
    await rm(dataDir, { recursive: true, force: true });
    if (pg) {
      const client = new pgClient.Client({ connectionString: pg });
      await client.connect();
      try {
        const queue = loadConfig({ DATABASE_URL: pg, DATABASE_SCHEMA: schema }).queueSchema;
        await client.query(`DROP SCHEMA IF EXISTS ${schema}, ${queue} CASCADE`);
      } finally {
        await client.end();
      }
    }
  };
  try {
    for (const t = Date.now(); ;) {
      if (child.exitCode !== null) throw new Error(`gleaner exited with ${child.exitCode} at start-up`);
      try {
        const res = await request(`${base}/ready`);
        await res.body.dump();
        if (res.statusCode === 200) break;
      } catch {
        // not listening yet
      }
      if (Date.now() - t > 120_000) throw new Error('gleaner did not become ready in 120 s');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { base, key, pid: child.pid!, store: pg ? 'Postgres' : 'PGlite', stop };
}

// ---------------------------------------------------------------------------------------------
// A process's resources, from /proc

export interface ProcessSample {
  rssMb: number;
  /** Open file descriptors (sockets, files, pipes, eventfds…). */
  fds: number;
  threads: number;
  /** user + system CPU seconds so far, all threads. */
  cpuS: number;
  /**
   * CPU seconds so far, and seconds runnable but waiting for a CPU (/proc/<pid>/task/<tid>/schedstat:
   * what other processes on the machine cost it), by kind of thread: the event loop (`MainThread`),
   * Node worker threads (`WorkerThread`: PGlite's thread, the document parsers), V8's GC and
   * compiler helpers (`V8Worker`) and the rest (libuv's pool…).
   */
  byThread: Record<ThreadKind, { cpuS: number; waitS: number }>;
}

export const THREAD_KINDS = ['event loop', 'worker threads', 'V8 helpers', 'other'] as const;
export type ThreadKind = (typeof THREAD_KINDS)[number];

export async function sampleProcess(pid: number): Promise<ProcessSample> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(status.match(new RegExp(`^${name}:\\s+(\\d+)`, 'm'))?.[1] ?? NaN);
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  const byThread = Object.fromEntries(THREAD_KINDS.map((k) => [k, { cpuS: 0, waitS: 0 }])) as ProcessSample['byThread'];
  let cpuS = 0;
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    try {
      const dir = `/proc/${pid}/task/${tid}`;
      const [comm, stat, sched] = await Promise.all(
        ['comm', 'stat', 'schedstat'].map((f) => readFile(`${dir}/${f}`, 'utf8')),
      );
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      const cpu = (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks
      const name = comm.trim();
      const kind: ThreadKind =
        tid === String(pid)
          ? 'event loop'
          : name === 'WorkerThread'
            ? 'worker threads'
            : name === 'V8Worker'
              ? 'V8 helpers'
              : 'other';
      byThread[kind].cpuS += cpu;
      byThread[kind].waitS += Number(sched.split(' ')[1]) / 1e9; // ns on a CPU, ns waiting, slices
      cpuS += cpu;
    } catch {
      // the thread ended
    }
  }
  return { rssMb: field('VmRSS') / 1024, fds, threads: field('Threads'), cpuS, byThread };
}

/** Open file descriptors by what they are: socket, pipe, anon_inode:[eventfd]…, or the directory of a file. */
export async function fdKinds(pid: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => '(closed)');
    const kind = target.startsWith('/') ? target.replace(/\/[^/]*$/, '/') : target.replace(/:\[\d+\]$/, '');
    out[kind] = (out[kind] ?? 0) + 1;
  }
  return out;
}

/** Per kind of thread between two samples: CPU ms per request and the share of `seconds` spent waiting for a CPU. */
export function threadCosts(before: ProcessSample, after: ProcessSample, requests: number, seconds: number): string {
  return THREAD_KINDS.map((k) => {
    const cpu = after.byThread[k].cpuS - before.byThread[k].cpuS;
    const wait = after.byThread[k].waitS - before.byThread[k].waitS;
    return `${k} ${((cpu / requests) * 1000).toFixed(1)} ms CPU/request (${((cpu / seconds) * 100).toFixed(0)}% busy, waited for a CPU ${((wait / seconds) * 100).toFixed(0)}%)`;
  }).join('; ');
}

// ---------------------------------------------------------------------------------------------
// Statistics

export const OPS = ['scrape', 'scrape-fresh', 'map', 'crawl-status', 'parse', 'health'] as const;
export type Op = (typeof OPS)[number];

/** Relative weights of the operations in the mix. */
export const MIX: Record<Op, number> = {
  scrape: 40,
  'scrape-fresh': 15,
  map: 8,
  'crawl-status': 15,
  parse: 7,
  health: 15,
};

export interface OpStats {
  count: number;
  errors: number;
  p50: number;
  p99: number;
  max: number;
}

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))];
}

function stats(latencies: number[], errors: number): OpStats {
  const s = [...latencies].sort((a, b) => a - b);
  return { count: s.length, errors, p50: percentile(s, 0.5), p99: percentile(s, 0.99), max: s.at(-1) ?? NaN };
}

/** Latencies (ms, every request: errors included) and errors per operation. */
export class Recorder {
  latencies = new Map<Op, number[]>(OPS.map((o) => [o, []]));
  errors = new Map<Op, number>(OPS.map((o) => [o, 0]));
  /** The first few errors: operation, status or message, a piece of the body. */
  samples: string[] = [];

  add(op: Op, ms: number, error?: string): void {
    this.latencies.get(op)!.push(ms);
    if (error) {
      this.errors.set(op, this.errors.get(op)! + 1);
      if (this.samples.length < 10) this.samples.push(`${op}: ${error}`);
    }
  }

  /** Per operation (those with requests), and `all` over every operation but health. */
  summary(): Record<Op | 'all', OpStats> {
    const out = {} as Record<Op | 'all', OpStats>;
    const all: number[] = [];
    let allErrors = 0;
    for (const op of OPS) {
      out[op] = stats(this.latencies.get(op)!, this.errors.get(op)!);
      if (op !== 'health') {
        all.push(...this.latencies.get(op)!);
        allErrors += this.errors.get(op)!;
      }
    }
    out.all = stats(all, allErrors);
    return out;
  }

  /** Requests and errors over every operation (health included). */
  totals(): { requests: number; errors: number } {
    let requests = 0;
    let errors = 0;
    for (const op of OPS) {
      requests += this.latencies.get(op)!.length;
      errors += this.errors.get(op)!;
    }
    return { requests, errors };
  }
}

const f = (ms: number) => (Number.isNaN(ms) ? '-' : ms >= 100 ? ms.toFixed(0) : ms.toFixed(1));

/** A table: one line per operation and `all` (every operation but health), with req/s over `seconds`. */
export function formatSummary(rec: Recorder, seconds: number): string {
  const s = rec.summary();
  const lines = [
    `  ${'operation'.padEnd(14)}${'count'.padStart(7)}${'req/s'.padStart(8)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}${'max ms'.padStart(9)}${'errors'.padStart(8)}`,
  ];
  for (const op of [...OPS, 'all'] as const) {
    const o = s[op];
    if (o.count === 0) continue;
    lines.push(
      `  ${op.padEnd(14)}${String(o.count).padStart(7)}${(o.count / seconds).toFixed(1).padStart(8)}${f(o.p50).padStart(9)}${f(o.p99).padStart(9)}${f(o.max).padStart(9)}${String(o.errors).padStart(8)}`,
    );
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------
// The load

export interface LoadOptions {
  service: Service;
  site: FixtureSite;
  clients: number;
  /** How long the clients start new requests; requests in flight then are awaited and counted. */
  durationMs: number;
  /** Requests per second over all clients (each client paced to its share); unset: as fast as answered. */
  ratePerSecond?: number;
  /** Pages of each crawl (default 200). */
  crawlLimit?: number;
  /** Start a new crawl (whose status the clients then read) this often; unset: only the one at the start. */
  crawlEveryMs?: number;
  /** Called with each request's result, e.g. to keep per-minute figures beside the run's. */
  recorders?: () => Recorder[];
  /** Seed of the request choices (default 1): the same run makes the same requests in the same order per client. */
  seed?: number;
}

/** mulberry32: a small seeded PRNG, so runs make the same choices. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const GENERATED_PAGES = 2000;

/** Multipart body of one file part. */
function multipart(file: Buffer, fileName: string, type: string): { body: Buffer; contentType: string } {
  const boundary = `----gleaner-load-${fileName.replace(/\W/g, '')}`;
  const head = Buffer.from(
    `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="${fileName}"\r\ncontent-type: ${type}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return { body: Buffer.concat([head, file, tail]), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function download(url: string): Promise<Buffer> {
  const res = await request(url);
  if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode}`);
  return Buffer.from(await res.body.arrayBuffer());
}

/** Runs the mixed load; resolves with its recorder once every client has finished. */
export async function runLoad(o: LoadOptions): Promise<Recorder> {
  const { service, site } = o;
  const rec = new Recorder();
  const recorders = () => [rec, ...(o.recorders?.() ?? [])];
  const auth = { authorization: `Bearer ${service.key}` };
  const json = { ...auth, 'content-type': 'application/json' };
  const pool = new Pool(service.base, {
    connections: o.clients + 2,
    headersTimeout: 120_000,
    bodyTimeout: 120_000,
  });
  const documents = [
    multipart(await download(site.url('/files/report.pdf')), 'report.pdf', 'application/pdf'),
    multipart(
      await download(site.url('/files/report.docx')),
      'report.docx',
      'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
    ),
  ];

  let crawlId = '';
  const startCrawl = async () => {
    const res = await pool.request({
      method: 'POST',
      path: '/v2/crawl',
      headers: json,
      body: JSON.stringify({
        url: site.url(`/generated/${1 + Math.floor(Math.random() * GENERATED_PAGES)}`),
        limit: o.crawlLimit ?? 200,
        sitemap: 'skip',
        crawlEntireDomain: true,
        ignoreRobotsTxt: true,
        scrapeOptions: { formats: ['markdown'], maxAge: 0 },
      }),
    });
    const body = (await res.body.json()) as { success?: boolean; id?: string };
    if (res.statusCode !== 200 || !body.id)
      throw new Error(`POST /v2/crawl: ${res.statusCode} ${JSON.stringify(body)}`);
    crawlId = body.id;
  };
  await startCrawl();
  const crawlTimer =
    o.crawlEveryMs !== undefined
      ? setInterval(
          () =>
            startCrawl().catch((err: Error) => {
              for (const r of recorders()) r.samples.push(`crawl start: ${err.message}`);
            }),
          o.crawlEveryMs,
        )
      : undefined;

  const ops = OPS.filter((op) => MIX[op] > 0);
  const weightSum = ops.reduce((a, op) => a + MIX[op], 0);
  const scrapeTarget = (rand: () => number): string => {
    const r = rand();
    if (r < 0.3) return site.url(linkedPages[Math.floor(rand() * linkedPages.length)]);
    if (r < 0.35) return site.url('/large?kb=50');
    return site.url(`/generated/${1 + Math.floor(rand() * GENERATED_PAGES)}`);
  };

  async function one(op: Op, rand: () => number): Promise<void> {
    let method: 'GET' | 'POST' = 'POST';
    let path: string;
    let headers: Record<string, string> = json;
    let body: string | Buffer | undefined;
    switch (op) {
      case 'scrape':
      case 'scrape-fresh':
        path = '/v2/scrape';
        body = JSON.stringify({
          url: scrapeTarget(rand),
          formats: ['markdown'],
          ...(op === 'scrape-fresh' ? { maxAge: 0 } : {}),
        });
        break;
      case 'map':
        path = '/v2/map';
        body = JSON.stringify({ url: site.url(['/', '/blog/', '/docs/api'][Math.floor(rand() * 3)]) });
        break;
      case 'crawl-status':
        method = 'GET';
        path = `/v2/crawl/${crawlId}?limit=10`;
        headers = auth;
        break;
      case 'parse': {
        const doc = documents[Math.floor(rand() * documents.length)];
        path = '/v2/parse';
        headers = { ...auth, 'content-type': doc.contentType };
        body = doc.body;
        break;
      }
      case 'health':
        method = 'GET';
        path = '/health';
        headers = {};
        break;
    }
    const t = performance.now();
    let error: string | undefined;
    try {
      const res = await pool.request({ method, path, headers, body });
      const text = await res.body.text();
      if (res.statusCode < 200 || res.statusCode > 299) error = `${res.statusCode} ${text.slice(0, 200)}`;
    } catch (err) {
      error = (err as Error).message;
    }
    const ms = performance.now() - t;
    for (const r of recorders()) r.add(op, ms, error);
  }

  const started = performance.now();
  const end = started + o.durationMs;
  const interval = o.ratePerSecond ? (1000 * o.clients) / o.ratePerSecond : 0;
  await Promise.all(
    Array.from({ length: o.clients }, async (_, i) => {
      const rand = prng((o.seed ?? 1) * 1000 + i);
      // Paced clients start spread over one interval, so their requests do not come in bursts.
      let next = started + (interval * i) / o.clients;
      while (performance.now() < end) {
        if (interval) {
          const wait = next - performance.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          if (performance.now() >= end) break;
          next = Math.max(next + interval, performance.now() - interval);
        }
        let x = rand() * weightSum;
        const op = ops.find((candidate) => (x -= MIX[candidate]) < 0) ?? ops[0];
        await one(op, rand);
      }
    }),
  );
  clearInterval(crawlTimer);
  await pool.close();
  return rec;
}
