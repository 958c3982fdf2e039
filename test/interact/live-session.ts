// What the interact tests share: a session's browser as the session manager will hand it over (a
// persistent context with its DevTools port open on loopback), and a small Fastify app set up as
// src/app.ts is (WebSocket plugin with its 64 KiB message limit, bearer-key auth, the error
// handler) with only the live routes registered.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { chromium } from 'playwright-core';
import { installAuth } from '../../src/api/auth.ts';
import { installErrorHandling } from '../../src/api/error-handler.ts';
import { type LiveSession, liveRoutes } from '../../src/api/routes/live.ts';
import type { LiveBrowser } from '../../src/interact/live-browser.ts';
import { CHROMIUM_ARGS, chromiumExecutable } from '../../src/scrape/engines/browser/browser-pool.ts';
import type { Db } from '../../src/store/db-types.ts';

export interface TestLiveBrowser extends LiveBrowser {
  close(): Promise<void>;
}

/** A session's Chromium: a persistent context in a fresh profile, its DevTools endpoint read from the profile. */
export async function launchLiveBrowser(): Promise<TestLiveBrowser> {
  const dir = await mkdtemp(join(tmpdir(), 'gleaner-live-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: chromiumExecutable(),
    headless: true,
    args: [...CHROMIUM_ARGS, '--remote-debugging-port=0'],
  });
  // Chromium writes the file when its DevTools server listens, before it answers Playwright's pipe.
  const [port, path] = (await readFile(join(dir, 'DevToolsActivePort'), 'utf8')).split('\n');
  return {
    context,
    cdpEndpoint: `ws://127.0.0.1:${port}${path}`,
    page: async () => context.pages().at(-1) ?? (await context.newPage()),
    async close() {
      await context.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export interface LiveApp {
  app: FastifyInstance;
  /** http://127.0.0.1:PORT */
  url: string;
}

/** An app with the live routes over `sessions` (by id). */
export async function startLiveApp(sessions: Map<string, LiveSession>): Promise<LiveApp> {
  const app = Fastify({ routerOptions: { ignoreTrailingSlash: true }, forceCloseConnections: 'idle' });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandling(app);
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });
  // Every route here is public: one that is not would ask for a key, and this database has none.
  installAuth(app, {} as Db);
  await app.register(liveRoutes, { lookup: (id) => sessions.get(id) });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, url };
}
