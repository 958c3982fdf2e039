// Starts the real service on a free loopback port, on PGlite in a temporary directory or on the
// Postgres of TEST_DATABASE_URL in a schema of its own (dropped afterwards, so reruns are clean);
// with the fixture site, for the end-to-end suites.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { loadConfig } from '../../src/config.ts';
import { type Service, type StartOptions, startService } from '../../src/service.ts';
import { openDb } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations.ts';
import { type FixtureSite, type FixtureSiteOptions, startFixtureSite } from '../fixtures/site/index.ts';
import { type Api, apiClient } from './api.ts';
import type { Db } from '../../src/store/db-types.ts';

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

export async function testEnv(
  store: StoreKind,
): Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }> {
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

/** The database of a fresh test environment on `store` (migrated unless `migrated` is false); `cleanup` closes and deletes it. */
export async function openTestDb(
  store: StoreKind,
  { migrated = true } = {},
): Promise<{ db: Db; cleanup: () => Promise<void> }> {
  const { env, cleanup } = await testEnv(store);
  const db = await openDb({ dataDir: env.DATA_DIR ?? '', databaseUrl: env.DATABASE_URL, schema: env.DATABASE_SCHEMA });
  try {
    if (migrated) await migrate(db);
  } catch (err) {
    await db.close();
    await cleanup();
    throw err;
  }
  return {
    db,
    cleanup: async () => {
      await db.close();
      await cleanup();
    },
  };
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

/** The fixture site, a service with a client, and the site's origin on the name localhost. */
export interface SiteAndService {
  site: FixtureSite;
  svc: TestService;
  api: Api;
  main: string;
}

/** Starts the fixture site (with `site` options) and a service (with the others). */
export async function startSiteAndService(
  opts: TestServiceOptions & { site?: FixtureSiteOptions } = {},
): Promise<SiteAndService> {
  const { site: siteOptions, ...serviceOptions } = opts;
  const site = await startFixtureSite(siteOptions);
  let svc: TestService;
  try {
    svc = await startTestService(serviceOptions);
  } catch (err) {
    await site.close();
    throw err;
  }
  return { site, svc, api: apiClient(svc), main: site.hostOrigin('localhost') };
}

/** Stops what startSiteAndService started (either may be missing when its start failed). */
export async function stopSiteAndService(svc: TestService | undefined, site: FixtureSite | undefined): Promise<void> {
  await svc?.destroy();
  await site?.close();
}
