// The service as a process: `npm start`'s entry, configuration errors, the CLI, the data
// directory lock, graceful shutdown on SIGTERM with a request in flight, and a restart that
// finds everything it had.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { client, newTestKey, storeKinds, testEnv } from '../helpers/service.ts';

const root = new URL('../../', import.meta.url).pathname;

interface Proc {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  exit: Promise<number | null>;
}

function run(script: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  child.stdout!.setEncoding('utf8').on('data', (d: string) => stdout.push(d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => stderr.push(d));
  const exit = once(child, 'exit').then(([code]) => code as number | null);
  return { child, stdout, stderr, exit };
}

async function waitFor<T>(what: string, fn: () => T | undefined, proc: Proc, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = fn();
    if (v !== undefined) return v;
    if (proc.child.exitCode !== null) break;
    await sleep(50);
  }
  throw new Error(`${what} did not happen; stderr: ${proc.stderr.join('')} stdout: ${proc.stdout.join('')}`);
}

/** Starts src/server.ts and returns its URL, read from the "gleaner ready" log line. */
async function startServer(env: Record<string, string>): Promise<{ proc: Proc; url: string }> {
  const proc = run('src/server.ts', [], { PORT: '0', HOST: '127.0.0.1', ...env });
  const url = await waitFor(
    'server start',
    () => proc.stdout.join('').split('\n').map((l) => /"url":"([^"]+)".*gleaner ready/.exec(l)?.[1]).find(Boolean),
    proc,
  );
  return { proc, url };
}

const cleanups: (() => Promise<unknown>)[] = [];
after(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'gleaner-life-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('a wrong configuration value stops start-up naming the variable', async () => {
  const proc = run('src/server.ts', [], { PORT: 'not-a-port', GLEANER_RATE_LIMITS: 'scrape=fast' });
  assert.equal(await proc.exit, 2);
  const err = proc.stderr.join('');
  assert.match(err, /PORT="not-a-port"/);
  assert.match(err, /GLEANER_RATE_LIMITS/);
});

test('npm start’s entry serves /ready with the embedded store, and GLEANER_API_KEY authenticates', async () => {
  const dataDir = await tempDir();
  const key = newTestKey();
  const { proc, url } = await startServer({ DATA_DIR: dataDir, GLEANER_API_KEY: key });
  try {
    assert.equal((await client(url)('GET', '/ready')).json.database, 'pglite');
    assert.equal((await client(url, key)('GET', '/v2/team/credit-usage')).status, 200);
    assert.equal((await client(url, 'fc-other')('GET', '/v2/team/credit-usage')).status, 401);
    // Log lines of a request carry its id.
    const lines = proc.stdout.join('').split('\n').filter((l) => l.includes('/v2/team/credit-usage'));
    assert.ok(lines.length > 0 && lines.every((l) => /"reqId":"[^"]+"/.test(l)), lines.join('\n'));

    // The embedded database allows one process: the CLI says so instead of corrupting it.
    const cli = run('src/cli.ts', ['keys', 'list'], { DATA_DIR: dataDir });
    assert.equal(await cli.exit, 1);
    assert.match(cli.stderr.join(''), /in use by process \d+/);
  } finally {
    proc.child.kill('SIGTERM');
    assert.equal(await proc.exit, 0);
  }
});

test('the CLI creates, lists and revokes keys that the server then accepts or refuses', async () => {
  const dataDir = await tempDir();
  const created = run('src/cli.ts', ['keys', 'create', '--team', 'acme', '--name', 'ci'], { DATA_DIR: dataDir });
  assert.equal(await created.exit, 0, created.stderr.join(''));
  const key = created.stdout.join('').trim().split('\n').at(-1)!;
  assert.match(key, /^fc-[0-9a-f]{48}$/);

  const listed = run('src/cli.ts', ['keys', 'list', '--team', 'acme'], { DATA_DIR: dataDir });
  assert.equal(await listed.exit, 0);
  const [row] = listed.stdout.join('').trim().split('\n');
  const [keyId, team, name, preview, state] = row.split('\t');
  assert.deepEqual([team, name, state], ['acme', 'ci', 'active']);
  assert.ok(!listed.stdout.join('').includes(key), 'the key itself is never listed');
  assert.equal(preview, `${key.slice(0, 6)}…${key.slice(-4)}`);

  const quota = run('src/cli.ts', ['teams', 'quota', '--team', 'acme', '--credits', '100'], { DATA_DIR: dataDir });
  assert.equal(await quota.exit, 0, quota.stderr.join(''));
  const bad = run('src/cli.ts', ['keys', 'frobnicate'], { DATA_DIR: dataDir });
  assert.equal(await bad.exit, 64);
  assert.match(bad.stderr.join(''), /Unknown command: keys frobnicate[\s\S]*Usage/);

  let server = await startServer({ DATA_DIR: dataDir });
  const usage = await client(server.url, key)('GET', '/v2/team/credit-usage');
  assert.equal(usage.status, 200);
  assert.equal(usage.json.data.planCredits, 100);
  server.proc.child.kill('SIGTERM');
  assert.equal(await server.proc.exit, 0);

  const revoked = run('src/cli.ts', ['keys', 'revoke', keyId], { DATA_DIR: dataDir });
  assert.equal(await revoked.exit, 0, revoked.stderr.join(''));
  server = await startServer({ DATA_DIR: dataDir });
  assert.equal((await client(server.url, key)('GET', '/v2/team/credit-usage')).status, 401);
  server.proc.child.kill('SIGTERM');
  assert.equal(await server.proc.exit, 0);
});

for (const store of storeKinds) {
  describe(`graceful shutdown on ${store}`, () => {
    test('SIGTERM mid-request completes the request, refuses new ones, and a restart loses nothing', async () => {
      const { env: storeEnv, cleanup } = await testEnv(store);
      cleanups.push(cleanup);
      const key = newTestKey();
      const env = { ...storeEnv, PORT: '0', HOST: '127.0.0.1', GLEANER_API_KEY: key, SHUTDOWN_TIMEOUT_MS: '10000' };
      const proc = run('test/helpers/slow-server.ts', [], env);
      const url = await waitFor('harness start', () => proc.stdout.join('').match(/^(http:\/\/\S+)$/m)?.[1], proc);
      const call = client(url, key);

      const inFlight = call('GET', '/test/slow?ms=1500');
      await sleep(300);
      proc.child.kill('SIGTERM');
      await sleep(200);
      const late = await call('GET', '/v2/team/activity').catch((err: Error) => err);
      assert.ok(late instanceof Error || late.status === 503, `a request after SIGTERM is refused (${JSON.stringify(late)})`);
      const res = await inFlight;
      assert.equal(res.status, 200);
      assert.deepEqual(res.json, { success: true, finished: true });
      const answered = Date.now();
      assert.equal(await proc.exit, 0, proc.stderr.join(''));
      assert.ok(Date.now() - answered < 3000, 'exits once the last request is done, not at the bound');

      // The key was written by that process; a fresh one (without GLEANER_API_KEY) still knows it.
      const { GLEANER_API_KEY: _, ...withoutKey } = env;
      const again = await startServer(withoutKey);
      try {
        assert.equal((await client(again.url, key)('GET', '/v2/team/activity')).status, 200);
      } finally {
        again.proc.child.kill('SIGTERM');
        assert.equal(await again.proc.exit, 0);
      }
    });

    test('the shutdown bound cuts requests that outlive it', async () => {
      const { env: storeEnv, cleanup } = await testEnv(store);
      cleanups.push(cleanup);
      const key = newTestKey();
      const proc = run('test/helpers/slow-server.ts', [], { ...storeEnv, PORT: '0', GLEANER_API_KEY: key, SHUTDOWN_TIMEOUT_MS: '300' });
      const url = await waitFor('harness start', () => proc.stdout.join('').match(/^(http:\/\/\S+)$/m)?.[1], proc);
      const inFlight = client(url, key)('GET', '/test/slow?ms=20000').catch((err: Error) => err);
      await sleep(200);
      const started = Date.now();
      proc.child.kill('SIGTERM');
      assert.equal(await proc.exit, 0);
      assert.ok(Date.now() - started < 5000, 'stopped within the bound, not after the 20 s request');
      assert.ok((await inFlight) instanceof Error, 'the cut request fails on the client side');
    });
  });
}
