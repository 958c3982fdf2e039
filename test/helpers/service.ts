// Starts the real service on a free loopback port, on PGlite in a temporary directory or on the
// Postgres of TEST_DATABASE_URL in a schema of its own (dropped afterwards, so reruns are clean).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { type Service, type StartOptions, startService } from '../../src/service.ts';

export type StoreKind = 'pglite' | 'postgres';

/** Stores every storage and API test runs on: PGlite always, Postgres when TEST_DATABASE_URL is set. */
export const storeKinds: StoreKind[] = process.env.TEST_DATABASE_URL ? ['pglite', 'postgres'] : ['pglite'];

export interface TestService extends Service {
  /** The GLEANER_API_KEY of the default team. */
  key: string;
  /** Environment the service was started with (to start a second process on the same store). */
  env: Record<string, string>;
  /** Stops the service and deletes its data. */
  destroy(): Promise<void>;
}

export interface TestServiceOptions extends StartOptions {
  store?: StoreKind;
  env?: Record<string, string>;
  /** Reuse the data of another test service (same DATA_DIR or schema); it is not deleted. */
  shareWith?: TestService;
}

export function newTestKey(): string {
  return `fc-test-${randomBytes(12).toString('hex')}`;
}

export async function testEnv(store: StoreKind): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
  if (store === 'postgres') {
    const url = process.env.TEST_DATABASE_URL;
    if (!url) throw new Error('TEST_DATABASE_URL is not set');
    const schema = `gleaner_test_${randomBytes(6).toString('hex')}`;
    const env = { DATABASE_URL: url, DATABASE_SCHEMA: schema };
    // The job queue's tables live beside ours, in the schema derived from DATABASE_SCHEMA.
    const { queueSchema } = loadConfig(env);
    return {
      env,
      cleanup: async () => {
        const client = new pg.Client({ connectionString: url });
        await client.connect();
        try {
          await client.query(`DROP SCHEMA IF EXISTS ${schema}, ${queueSchema} CASCADE`);
        } finally {
          await client.end();
        }
      },
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'gleaner-test-'));
  return { env: { DATA_DIR: dir }, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function startTestService(opts: TestServiceOptions = {}): Promise<TestService> {
  const store = opts.store ?? 'pglite';
  const shared = opts.shareWith;
  const { env: storeEnv, cleanup } = shared
    ? { env: shared.env, cleanup: async () => undefined }
    : await testEnv(store);
  const key = shared?.key ?? newTestKey();
  const env: Record<string, string> = {
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    GLEANER_ALLOW_PRIVATE_NETWORK: 'true',
    // The fixture site's robots.txt asks for Crawl-delay: 1 (1 page/s); tests that measure
    // politeness turn it back on (test/api/crawl-politeness.test.ts).
    GLEANER_MAX_CRAWL_DELAY: '0',
    GLEANER_API_KEY: key,
    ...storeEnv,
    ...opts.env,
  };
  let service: Service;
  try {
    service = await startService(loadConfig(env), { configure: opts.configure, jobs: opts.jobs });
  } catch (err) {
    await cleanup();
    throw err;
  }
  return {
    ...service,
    key,
    env: storeEnv,
    async destroy() {
      await service.stop();
      await cleanup();
    },
  };
}

/** A small JSON client for the API under test. */
export function client(base: string, key?: string) {
  return async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const res = await fetch(base + path, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let json: any;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, headers: res.headers, json, text };
  };
}
