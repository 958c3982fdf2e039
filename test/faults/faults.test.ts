// Faults with real processes (issue 22), each failing if the fault loses, duplicates or leaks
// anything: a worker killed (SIGKILL) mid-batch; a database outage mid-crawl (every connection cut
// and new ones refused for a while, as in a Postgres restart); the API process killed mid-request (a prompt
// client error, and after a restart no job left half-done); a Chromium crash storm; targets that
// never answer, stream for ever or send 1 GB; and slowloris clients. (Killed workers mid-crawl and
// graceful stops: test/api/crawl-durability.test.ts, test/service/lifecycle.test.ts.)
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { type AddressInfo, type Socket, connect } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { chromiumAvailable } from '../../src/scrape/engines/browser.ts';
import { errorCodes } from '../../src/errors.ts';
import { type FixtureSite, startFixtureSite } from '../fixtures/site/index.ts';
import { type Api, apiClient } from '../helpers/api.ts';
import { type NodeProcess, startNode } from '../helpers/process.ts';
import { type TestService, newTestKey, startTestService } from '../helpers/service.ts';
import { waitUntil } from '../helpers/polling.ts';

const postgres = process.env.TEST_DATABASE_URL;
const cleanups: (() => Promise<unknown>)[] = [];
let site: FixtureSite;

before(async () => {
  site = await startFixtureSite();
});
after(async () => {
  for (const c of cleanups.reverse()) await c().catch(() => undefined);
  await site?.close();
});

function spawnNode(script: string, env: Record<string, string>): NodeProcess {
  const p = startNode(script, [], env);
  cleanups.push(() => p.kill());
  return p;
}

/** A service on Postgres that runs no jobs, and the environment of worker processes sharing it. */
async function apiWithoutWorkers(): Promise<{ svc: TestService; api: Api; workerEnv: Record<string, string> }> {
  const svc = await startTestService({ store: 'postgres', env: { GLEANER_WORKERS: '0' } });
  cleanups.push(() => svc.destroy());
  const workerEnv = {
    ...svc.env,
    GLEANER_WORKERS: '4',
    GLEANER_CRAWL_CONCURRENCY: '4',
    GLEANER_ALLOW_PRIVATE_NETWORK: 'true',
    GLEANER_MAX_CRAWL_DELAY: '0',
  };
  return { svc, api: apiClient(svc), workerEnv };
}

describe('workers and the database', { skip: !postgres && 'needs TEST_DATABASE_URL' }, () => {
  test('a worker killed (SIGKILL) mid-batch: every URL scraped and returned exactly once, in order', async () => {
    const { api, workerEnv } = await apiWithoutWorkers();
    const [victim, survivor] = [spawnNode('src/worker.ts', workerEnv), spawnNode('src/worker.ts', workerEnv)];
    await Promise.all([victim.line('gleaner worker ready'), survivor.line('gleaner worker ready')]);
    const urls = Array.from({ length: 40 }, (_, i) => site.url(`/slow?item=${i}&ms=300`));
    const start = await api('POST', '/v2/batch/scrape', { urls });
    assert.equal(start.status, 200, start.text);
    const id = start.json.id;
    await waitUntil(
      'the batch to be under way',
      async () => ((await api('GET', `/v2/batch/scrape/${id}?limit=1`)).json.completed >= 6 ? true : undefined),
      30_000,
    );
    victim.child.kill('SIGKILL');
    await victim.exit;
    const done = await api.waitForBatch(id, 120_000);
    assert.equal(done.status, 'completed');
    assert.equal(done.completed, 40);
    const docs = await api.batchDocs(id, 25);
    assert.deepEqual(
      docs.map((d) => d.metadata.sourceURL),
      urls,
      'every URL once, in request order',
    );
    assert.equal(done.creditsUsed, 40, 'each page charged once');
    survivor.child.kill('SIGTERM');
    assert.equal(await survivor.exit, 0);
  });

  test('a database outage mid-crawl (every connection cut, new ones refused for 3 s, as in a Postgres restart): API and worker reconnect, the crawl completes, every page once', async () => {
    // A database of its own, so that refusing connections touches nothing else on this server.
    const dbName = `gleaner_fault_${newTestKey().slice(-10)}`;
    const admin = new pg.Client({ connectionString: postgres });
    await admin.connect();
    cleanups.push(async () => {
      await admin.query(`ALTER DATABASE ${dbName} WITH ALLOW_CONNECTIONS true`).catch(() => undefined);
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`).catch(() => undefined);
      await admin.end();
    });
    await admin.query(`CREATE DATABASE ${dbName}`);
    const url = new URL(postgres!);
    url.pathname = `/${dbName}`;
    const svc = await startTestService({ store: 'postgres', env: { GLEANER_WORKERS: '0', DATABASE_URL: url.href } });
    cleanups.push(() => svc.destroy());
    const api = apiClient(svc);
    const worker = spawnNode('src/worker.ts', {
      ...svc.env,
      DATABASE_URL: url.href,
      GLEANER_WORKERS: '4',
      GLEANER_CRAWL_CONCURRENCY: '4',
      GLEANER_ALLOW_PRIVATE_NETWORK: 'true',
      GLEANER_MAX_CRAWL_DELAY: '0',
    });
    await worker.line('gleaner worker ready');
    const total = 40;
    const id = await api.startCrawl({
      url: site.url(`/generated/1?total=${total}&ms=200`),
      sitemap: 'skip',
      crawlEntireDomain: true,
    });
    await waitUntil(
      'the crawl to be under way',
      async () => ((await api.crawlStatus(id, '?limit=1')).json.completed >= 5 ? true : undefined),
      30_000,
    );
    let cut = 0;
    try {
      await admin.query(`ALTER DATABASE ${dbName} WITH ALLOW_CONNECTIONS false`);
      const { rowCount } = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [dbName],
      );
      cut = rowCount ?? 0;
      await sleep(3000);
    } finally {
      await admin.query(`ALTER DATABASE ${dbName} WITH ALLOW_CONNECTIONS true`);
    }
    assert.ok(cut > 0, 'there were connections to cut');
    const status = await waitUntil(
      'the crawl to complete',
      async () => {
        const res = await api.crawlStatus(id, '?limit=1').catch(() => undefined);
        return res?.json?.status === 'completed' ? res.json : undefined;
      },
      120_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}; the worker said: ${worker.stderr.join('').slice(-3000)}`);
    });
    assert.equal(status.completed, total);
    const docs = await api.crawlDocs(id, 25);
    assert.equal(new Set(docs.map((d) => d.metadata.sourceURL)).size, total, 'every page once');
    assert.equal(docs.length, total);
    assert.equal(worker.child.exitCode, null, 'the worker is still running');
    assert.equal((await api('GET', '/health')).status, 200, 'and so is the API');
    worker.child.kill('SIGTERM');
    assert.equal(await worker.exit, 0);
  });
});

describe('the API process killed mid-request', () => {
  test('the client gets a prompt error; after a restart on the same data no job is left active', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gleaner-fault-'));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const key = newTestKey();
    const env = {
      DATA_DIR: dir,
      PORT: '0',
      HOST: '127.0.0.1',
      GLEANER_API_KEY: key,
      GLEANER_ALLOW_PRIVATE_NETWORK: 'true',
    };
    const first = spawnNode('src/server.ts', env);
    const url = (await first.line('gleaner ready')).match(/"url":"([^"]+)"/)![1];
    const api = apiClient({ url, key });
    const inFlight = api.scrape({ url: site.url('/slow?ms=20000'), timeout: 60_000 });
    await waitUntil(
      'the scrape to reach the target',
      async () => (site.requests.some((r) => r.path === '/slow?ms=20000') ? true : undefined),
      15_000,
    );
    await waitUntil(
      'the scrape to count against the team',
      async () => ((await api('GET', '/v2/concurrency-check')).json.concurrency === 1 ? true : undefined),
      10_000,
    );
    const killedAt = Date.now();
    first.child.kill('SIGKILL');
    await assert.rejects(inFlight, 'the request fails (connection closed), it does not hang');
    assert.ok(Date.now() - killedAt < 5000, 'promptly');
    await first.exit;

    const second = spawnNode('src/server.ts', env);
    const url2 = (await second.line('gleaner ready')).match(/"url":"([^"]+)"/)![1];
    const api2 = apiClient({ url: url2, key });
    const activity = await api2('GET', '/v2/team/activity?limit=10');
    assert.equal(activity.status, 200, activity.text);
    const scrapes = activity.json.data.filter((j: { endpoint: string }) => j.endpoint === 'scrape');
    assert.equal(scrapes.length, 1, `the interrupted scrape is recorded: ${activity.text}`);
    const conc = await api2('GET', '/v2/concurrency-check');
    assert.equal(conc.json.concurrency, 0, 'closed (JOB_INTERRUPTED), it no longer counts against the team');
    // The service works as before.
    assert.equal((await api2.scrape({ url: site.url('/about') })).status, 200);
    second.child.kill('SIGTERM');
    assert.equal(await second.exit, 0);
  });
});

describe('hostile targets and clients', () => {
  let svc: TestService;
  let api: Api;
  let hostile: ReturnType<typeof createServer>;
  let hostileUrl: string;
  const sockets = new Set<Socket>();

  before(async () => {
    svc = await startTestService({
      env: { SCRAPE_MAX_BYTES: String(5 * 1024 * 1024), REQUEST_RECEIVE_TIMEOUT_MS: '3000' },
    });
    cleanups.push(() => svc.destroy());
    api = apiClient(svc);
    // A target that never answers (/never), streams for ever (/forever), or sends 1 GB (/gigabyte).
    hostile = createServer((req, res) => {
      if (req.url === '/never') return; // headers never come
      if (req.url === '/forever') {
        res.writeHead(200, { 'content-type': 'text/html' });
        res.write('<html><body>');
        const chunk = '<p>more</p>'.repeat(6000);
        let open = true;
        const pump = () => {
          while (open && res.write(chunk));
          if (open) res.once('drain', pump);
        };
        res.on('close', () => (open = false));
        pump();
        return;
      }
      if (req.url === '/gigabyte') {
        const total = 1024 ** 3;
        res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(total) });
        const chunk = Buffer.alloc(64 * 1024, 0x61);
        let sent = 0;
        const pump = () => {
          while (sent < total) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        res.on('close', () => (sent = total));
        pump();
        return;
      }
      res.writeHead(404).end();
    });
    hostile.on('connection', (s) => {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((r) => hostile.listen(0, '127.0.0.1', r));
    hostileUrl = `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`;
    cleanups.push(async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => hostile.close(r));
    });
  });

  test('a target that never answers: 408 SCRAPE_TIMEOUT within the timeout', async () => {
    const t0 = Date.now();
    const res = await api.scrape({ url: `${hostileUrl}/never`, timeout: 2000 });
    assert.equal(res.status, 408, res.text);
    assert.equal(res.json.code, 'SCRAPE_TIMEOUT');
    assert.ok(Date.now() - t0 < 4000, `${Date.now() - t0} ms`);
  });

  test('a target that streams for ever, and one that sends 1 GB: cut at the size cap, memory bounded', async () => {
    const rss0 = process.memoryUsage().rss;
    for (const path of ['/forever', '/gigabyte']) {
      const t0 = Date.now();
      const res = await api.scrape({ url: `${hostileUrl}${path}`, timeout: 30_000 });
      assert.equal(res.status, 502, `${path}: ${res.text}`);
      assert.equal(res.json.code, 'SCRAPE_RESPONSE_TOO_LARGE', path);
      assert.ok(Date.now() - t0 < 15_000, `${path}: ${Date.now() - t0} ms`);
    }
    const grown = (process.memoryUsage().rss - rss0) / 1024 / 1024;
    assert.ok(grown < 200, `RSS grew ${grown.toFixed(0)} MB`);
    assert.equal((await api('GET', '/health')).status, 200);
  });

  test('slowloris: 40 connections trickling headers do not starve other clients, and are cut', async () => {
    const { port } = new URL(svc.url);
    const slow: Socket[] = [];
    for (let i = 0; i < 40; i++) {
      const s = connect(Number(port), '127.0.0.1');
      s.on('error', () => undefined);
      s.on('end', () => s.destroy()); // the server's 408 and close
      s.resume();
      s.write('GET /health HTTP/1.1\r\nHost: x\r\n');
      slow.push(s);
    }
    const trickle = setInterval(() => {
      for (const s of slow) if (!s.destroyed) s.write('X-a: b\r\n');
    }, 500);
    try {
      for (let i = 0; i < 5; i++) {
        const t0 = Date.now();
        const res = await fetch(`${svc.url}/health`);
        assert.equal(res.status, 200);
        assert.ok(Date.now() - t0 < 3000, `health answered in ${Date.now() - t0} ms`);
        await sleep(300);
      }
    } finally {
      clearInterval(trickle);
    }
    // The server closes connections whose headers never end (its headers timeout).
    const cut = await waitUntil(
      'the slow connections to be closed by the server',
      async () => (slow.every((s) => s.destroyed) ? true : undefined),
      15_000,
    );
    assert.ok(cut);
    for (const s of slow) s.destroy();
  });
});

describe('a Chromium crash storm', { skip: !chromiumAvailable() && 'Chromium not installed' }, () => {
  test('browser scrapes while Chromium is killed again and again: every answer is a result or a clean error, then all is well', async () => {
    const svc = await startTestService();
    cleanups.push(() => svc.destroy());
    const api = apiClient(svc);
    assert.equal((await api.scrape({ url: site.url('/about'), waitFor: 100 })).status, 200);
    let kills = 0;
    let storming = true;
    const storm = (async () => {
      while (storming) {
        for (const pid of chromiumChildren()) {
          try {
            process.kill(pid, 'SIGKILL');
            kills++;
          } catch {
            /* gone */
          }
        }
        await sleep(1500);
      }
    })();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api.scrape({ url: site.url(`/articles/${(i % 5) + 1}?storm=${i}`), waitFor: 200, timeout: 30_000 }),
      ),
    );
    storming = false;
    await storm;
    assert.ok(kills >= 2, `Chromium was killed ${kills} times`);
    // During it, every answer is a document or one of our errors (a code, never a 500).
    for (const res of answers) {
      if (res.status === 200) continue;
      assert.equal(res.json.success, false, res.text);
      assert.ok(res.json.code in errorCodes, res.text);
      assert.ok(res.status >= 400 && res.status < 600 && res.status !== 500, res.text);
    }
    // Once the storm is over, the engine recovers: every scrape succeeds.
    const calm = await Promise.all(
      Array.from({ length: 4 }, (_, i) => api.scrape({ url: site.url(`/articles/${i + 1}?calm=1`), waitFor: 100 })),
    );
    assert.deepEqual(
      calm.map((r) => r.status),
      [200, 200, 200, 200],
      'the browser engine recovers',
    );
    assert.equal((await api('GET', '/health')).status, 200);
  });
});

/** Pids of Chromium main processes started by this process (Linux). */
function chromiumChildren(): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && stat.includes('(chrom')) out.push(Number(entry));
    } catch {
      /* exited */
    }
  }
  return out;
}
