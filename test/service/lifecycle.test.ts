// The service as a process: `npm start`'s entry, configuration errors, the CLI, the data
// directory lock, graceful shutdown on SIGTERM with a request in flight, and a restart that
// finds everything it had.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { apiClient } from '../helpers/api.ts';
import { type NodeProcess, startNode } from '../helpers/process.ts';
import { newTestKey, storeKinds, testEnv } from '../helpers/service.ts';

/** Starts src/server.ts and returns its URL, read from the "gleaner ready" log line. */
async function startServer(env: Record<string, string>): Promise<{ proc: NodeProcess; url: string }> {
  const proc = startNode('src/server.ts', [], { PORT: '0', HOST: '127.0.0.1', ...env });
  const url = await proc.until('server start', () =>
    proc.stdout
      .join('')
      .split('\n')
      .map((l) => /"url":"([^"]+)".*gleaner ready/.exec(l)?.[1])
      .find(Boolean),
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
  const proc = startNode('src/server.ts', [], { PORT: 'not-a-port', GLEANER_RATE_LIMITS: 'scrape=fast' });
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
    assert.equal((await apiClient({ url })('GET', '/ready')).json.database, 'pglite');
    assert.equal((await apiClient({ url }, key)('GET', '/v2/team/credit-usage')).status, 200);
    assert.equal((await apiClient({ url }, 'fc-other')('GET', '/v2/team/credit-usage')).status, 401);
    // Log lines of a request carry its id.
    const lines = proc.stdout
      .join('')
      .split('\n')
      .filter((l) => l.includes('/v2/team/credit-usage'));
    assert.ok(lines.length > 0 && lines.every((l) => /"reqId":"[^"]+"/.test(l)), lines.join('\n'));

    // The embedded database allows one process: the CLI says so instead of corrupting it.
    const cli = startNode('src/cli.ts', ['keys', 'list'], { DATA_DIR: dataDir });
    assert.equal(await cli.exit, 1);
    assert.match(cli.stderr.join(''), /in use by process \d+/);
  } finally {
    proc.child.kill('SIGTERM');
    assert.equal(await proc.exit, 0);
  }
});

test('the CLI creates, lists and revokes keys that the server then accepts or refuses', async () => {
  const dataDir = await tempDir();
  const created = startNode('src/cli.ts', ['keys', 'create', '--team', 'acme', '--name', 'ci'], { DATA_DIR: dataDir });
  assert.equal(await created.exit, 0, created.stderr.join(''));
  const key = created.stdout.join('').trim().split('\n').at(-1)!;
  assert.match(key, /^fc-[0-9a-f]{48}$/);

  const listed = startNode('src/cli.ts', ['keys', 'list', '--team', 'acme'], { DATA_DIR: dataDir });
  assert.equal(await listed.exit, 0);
  const [row] = listed.stdout.join('').trim().split('\n');
  const [keyId, team, name, preview, state] = row.split('\t');
  assert.deepEqual([team, name, state], ['acme', 'ci', 'active']);
  assert.ok(!listed.stdout.join('').includes(key), 'the key itself is never listed');
  assert.equal(preview, `${key.slice(0, 6)}…${key.slice(-4)}`);

  const quota = startNode('src/cli.ts', ['teams', 'quota', '--team', 'acme', '--credits', '100'], {
    DATA_DIR: dataDir,
  });
  assert.equal(await quota.exit, 0, quota.stderr.join(''));
  const bad = startNode('src/cli.ts', ['keys', 'frobnicate'], { DATA_DIR: dataDir });
  assert.equal(await bad.exit, 2);
  assert.match(bad.stderr.join(''), /Unknown command: keys frobnicate[\s\S]*Usage/);

  let server = await startServer({ DATA_DIR: dataDir });
  const usage = await apiClient({ url: server.url }, key)('GET', '/v2/team/credit-usage');
  assert.equal(usage.status, 200);
  assert.equal(usage.json.data.planCredits, 100);
  server.proc.child.kill('SIGTERM');
  assert.equal(await server.proc.exit, 0);

  const revoked = startNode('src/cli.ts', ['keys', 'revoke', keyId], { DATA_DIR: dataDir });
  assert.equal(await revoked.exit, 0, revoked.stderr.join(''));
  server = await startServer({ DATA_DIR: dataDir });
  assert.equal((await apiClient({ url: server.url }, key)('GET', '/v2/team/credit-usage')).status, 401);
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
      const proc = startNode('test/helpers/slow-server.ts', [], env);
      const url = await proc.until('harness start', () => proc.stdout.join('').match(/^(http:\/\/\S+)$/m)?.[1]);
      const call = apiClient({ url }, key);

      const inFlight = call('GET', '/test/slow?ms=1500');
      await proc.line('slow request started');
      proc.child.kill('SIGTERM');
      await proc.line('shutting down');
      const late = await call('GET', '/v2/team/activity').catch((err: Error) => err);
      assert.ok(
        late instanceof Error || late.status === 503,
        `a request after SIGTERM is refused (${JSON.stringify(late)})`,
      );
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
        assert.equal((await apiClient({ url: again.url }, key)('GET', '/v2/team/activity')).status, 200);
      } finally {
        again.proc.child.kill('SIGTERM');
        assert.equal(await again.proc.exit, 0);
      }
    });

    test('the shutdown bound cuts requests that outlive it', async () => {
      const { env: storeEnv, cleanup } = await testEnv(store);
      cleanups.push(cleanup);
      const key = newTestKey();
      const proc = startNode('test/helpers/slow-server.ts', [], {
        ...storeEnv,
        PORT: '0',
        GLEANER_API_KEY: key,
        SHUTDOWN_TIMEOUT_MS: '300',
      });
      const url = await proc.until('harness start', () => proc.stdout.join('').match(/^(http:\/\/\S+)$/m)?.[1]);
      const inFlight = apiClient({ url }, key)('GET', '/test/slow?ms=20000').catch((err: Error) => err);
      await proc.line('slow request started');
      const started = Date.now();
      proc.child.kill('SIGTERM');
      assert.equal(await proc.exit, 0);
      assert.ok(Date.now() - started < 5000, 'stopped within the bound, not after the 20 s request');
      assert.ok((await inFlight) instanceof Error, 'the cut request fails on the client side');
    });
  });
}
