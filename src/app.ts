// Builds the HTTP application: hooks (request id, auth, rate limits, errors), the OpenAPI
// document and every route. No I/O happens here beyond what the routes do per request.
import { randomUUID } from 'node:crypto';
import { availableParallelism } from 'node:os';
import websocket from '@fastify/websocket';
import Fastify, { type FastifyInstance } from 'fastify';
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import { installAuth } from './api/auth.ts';
import { clientErrorHandler, frameworkErrors, installErrorHandling } from './api/error-handler.ts';
import { installOpenApi } from './api/openapi.ts';
import { installRateLimits } from './api/rate-limit.ts';
import { batchScrapeRoutes } from './api/routes/batch.ts';
import { crawlRoutes } from './api/routes/crawl.ts';
import { agentRoutes } from './api/routes/agent.ts';
import { extractRoutes } from './api/routes/extract.ts';
import { healthRoutes } from './api/routes/health.ts';
import { interactRoutes } from './api/routes/interact.ts';
import { browserSessionUrls, liveRoutes, redactTokens } from './api/routes/live.ts';
import { mapRoutes } from './api/routes/map.ts';
import { monitorRoutes } from './api/routes/monitor.ts';
import { parseRoutes } from './api/routes/parse.ts';
import { playgroundRoutes } from './api/routes/playground.ts';
import { fileRoutes } from './api/routes/files.ts';
import { scrapeRoutes } from './api/routes/scrape.ts';
import { searchRoutes } from './api/routes/search.ts';
import { teamRoutes } from './api/routes/team.ts';
import type { Config } from './config.ts';
import { Crawler } from './crawl/crawler.ts';
import { Mapper } from './crawl/map.ts';
import type { SiteFiles } from './crawl/site-files.ts';
import { Agents } from './agent/agent.ts';
import { Extractor } from './extract/extract.ts';
import { runPromptAgent } from './interact/prompt-agent.ts';
import { Sandbox } from './interact/sandbox/sandbox.ts';
import type { LiveBrowser } from './interact/live-browser.ts';
import { BrowserSessions, type CodeRunner } from './interact/sessions.ts';
import { SessionLauncher } from './interact/session-browser.ts';
import { SessionTokens } from './interact/session-tokens.ts';
import { AdBlocker } from './scrape/engines/browser/adblock.ts';
import { Monitors } from './monitor/monitors.ts';
import { MonitorScheduler } from './monitor/scheduler.ts';
import { UploadParser } from './scrape/parse-upload.ts';
import type { ScrapeStack } from './scrape/stack.ts';
import { createSearcher } from './searcher.ts';
import type { Db } from './store/db-types.ts';
import { version } from './version.ts';

export interface AppDeps {
  config: Config;
  db: Db;
  /** The job queue (started), for routes that enqueue work. */
  queue?: import('./jobs/queue.ts').JobQueue;
  /** Engines and scraper of this process, shared with the queue's workers. */
  stack: ScrapeStack;
  /** The robots.txt cache and sitemap reader of this process, shared with the queue's workers. */
  site: SiteFiles;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

export async function buildApp({ config, db, queue, stack, site }: AppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      // A browser session's URLs carry their tokens (the permission itself): kept out of the logs.
      serializers: {
        req: (req: { method: string; url: string; host?: string; ip?: string }) => ({
          method: req.method,
          url: redactTokens(req.url),
          host: req.host,
          remoteAddress: req.ip,
        }),
      },
    },
    // Every log line of a request carries reqId; a caller's own X-Request-Id is kept when sane.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    bodyLimit: config.bodyLimitBytes,
    // Receiving a request (headers, then body) is bounded, so clients trickling bytes (slowloris)
    // cannot hold connections for ever; the handler's own time is not (a scrape may take minutes).
    requestTimeout: config.requestReceiveTimeoutMs,
    http: {
      requestTimeout: config.requestReceiveTimeoutMs,
      // Headers within a minute (Node's default), or sooner when the whole request must be.
      headersTimeout: Math.min(60_000, config.requestReceiveTimeoutMs),
      connectionsCheckingInterval: Math.min(30_000, Math.ceil(config.requestReceiveTimeoutMs / 2)),
    },
    // On close: refuse new requests with 503, drop idle keep-alive sockets, let in-flight ones finish.
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    routerOptions: { ignoreTrailingSlash: true },
    // The router's and the HTTP parser's own errors (414, malformed URLs, timeouts…) in our shape.
    frameworkErrors,
    clientErrorHandler,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  installErrorHandling(app);
  await installOpenApi(app, version);
  // WebSocket forms of routes (the crawl and batch scrape status streams). Before the routes, and
  // before auth: its onRequest hook marks upgrade requests so that a refused one (401, 429…)
  // gets its socket closed after the answer.
  await app.register(websocket, { options: { maxPayload: 64 * 1024 }, preClose: closeSockets });
  installAuth(app, db);
  installRateLimits(app, db, config.rateLimits);
  // A scrape's storage finishes after its answer (src/scrape/pending-writes.ts); the team's next
  // request sees it (credits, activity, the stored document). Scrapes themselves do not wait.
  app.addHook('preHandler', async (request) => {
    const writes =
      request.caller && !request.routeOptions.config.skipPendingWrites
        ? stack.scraper.pendingWrites.forTeam(request.caller.teamId)
        : undefined;
    if (writes) await writes;
  });

  await app.register(healthRoutes, { db });
  await app.register(playgroundRoutes, { publicUrl: config.publicUrl });
  await app.register(teamRoutes, { db, config });

  const { scraper, http } = stack;
  const { robots, sitemaps } = site;
  await app.register(scrapeRoutes, { db, scraper, publicUrl: config.publicUrl });
  await app.register(fileRoutes, { db });
  // Documents are parsed in the stack's worker threads (one pool per process).
  const uploadParser = new UploadParser({
    db,
    pool: stack.parsePool,
    llm: stack.llm,
    llmMaxOutputTokens: config.llm.maxOutputTokens,
  });
  await app.register(parseRoutes, { uploadParser });
  const sessions = browserSessions(app, config, db, stack);
  await app.register(interactRoutes, { sessions, publicUrl: config.publicUrl });
  await app.register(liveRoutes, { lookup: (id) => sessions.lookup(id), publicUrl: config.publicUrl });
  const mapper = new Mapper({ db, http, robots, sitemaps, politeness: site.politeness, log: app.log });
  await app.register(mapRoutes, { mapper });
  const search = createSearcher(config, db, stack, app.log);
  app.addHook('onClose', search.close);
  await app.register(searchRoutes, { searcher: search.searcher, publicUrl: config.publicUrl });
  if (queue) {
    // Routes only start crawls and read them; the pages run in the queue's workers.
    const crawler = new Crawler({
      db,
      queue,
      scraper,
      robots,
      sitemaps,
      log: app.log,
      allowPrivateNetwork: config.allowPrivateNetwork,
    });
    await app.register(crawlRoutes, { crawler, db, publicUrl: config.publicUrl });
    await app.register(batchScrapeRoutes, { crawler, db, publicUrl: config.publicUrl });
    await app.register(extractRoutes, {
      extractor: new Extractor({ db, queue, scraper }),
      publicUrl: config.publicUrl,
    });
    const agents = new Agents({
      db,
      queue,
      log: app.log,
      allowPrivateNetwork: config.allowPrivateNetwork,
      model: stack.llm.available ? stack.llm.model : undefined,
    });
    await app.register(agentRoutes, { agents, publicUrl: config.publicUrl });
    const scheduler = new MonitorScheduler({ db, queue, log: app.log });
    await app.register(monitorRoutes, {
      monitors: new Monitors({ db, scheduler, allowPrivateNetwork: config.allowPrivateNetwork }),
      publicUrl: config.publicUrl,
    });
  }
  return app;
}

// Browser sessions live in this process: each a Chromium of its own and a sandbox for code. They end
// (billed) when the app closes.
function browserSessions(app: FastifyInstance, config: Config, db: Db, stack: ScrapeStack): BrowserSessions {
  let adblocker: Promise<AdBlocker> | undefined;
  const startRunner = (browser: LiveBrowser) =>
    Sandbox.start({ cdpEndpoint: browser.cdpEndpoint, log: (m) => app.log.warn(m) });
  const sessions = new BrowserSessions({
    db,
    log: app.log,
    launcher: new SessionLauncher<CodeRunner>({
      executablePath: config.chromiumPath,
      allowPrivateNetwork: config.allowPrivateNetwork,
      proxyUrl: config.proxyUrl,
      spares: config.sessions.spares,
      prepare: startRunner,
      dispose: (runner) => runner.close(),
    }),
    startRunner,
    runPrompt: (req) => runPromptAgent({ llm: stack.llm, ...req }),
    makeAccess: SessionTokens.make,
    urlsOf: browserSessionUrls,
    adblocker: () => (adblocker ??= AdBlocker.load(config.adblockLists)),
    perTeam: config.sessions.perTeam,
    perProcess: config.sessions.perProcess,
    openConcurrency: Math.max(2, availableParallelism()),
    interactIdleMs: config.sessions.interactIdleMs,
    replayTtlMs: config.sessions.replayTtlMs,
  });
  app.addHook('onReady', async () => sessions.start());
  app.addHook('onClose', async () => sessions.close());
  return sessions;
}

// On close: open streams get 1001 (going away); a client that does not answer the closing
// handshake within a second is cut, so the server's close never waits on it.
function closeSockets(this: FastifyInstance, done: () => void): void {
  const wss = this.websocketServer;
  for (const socket of wss.clients) {
    socket.close(1001, 'server shutting down');
    setTimeout(() => socket.terminate(), 1000).unref();
  }
  wss.close();
  done();
}
