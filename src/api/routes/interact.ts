// Browser sessions: POST/DELETE /v2/scrape/{jobId}/interact (bound to a scrape) and /v2/browser
// (standalone: create, execute, list, delete). Every success is 200 (clients treat 201/202 as
// failure). The machinery: src/interact/sessions.ts.
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authErrors, errorBody } from '../../contract/common.ts';
import {
  browserCreateRequest,
  browserCreateResponse,
  browserExecuteRequest,
  browserListQuery,
  browserListResponse,
  interactRequest,
  interactResult,
  sessionEndResponse,
} from '../../contract/interact.ts';
import { NotFoundError, describeErrorCodes } from '../../errors.ts';
import type { BrowserSessions } from '../../interact/sessions.ts';
import { publicBase } from './crawl-job-routes.ts';

// Ids are checked by the service: an id that is not a UUID is as unknown as any other (404).
// `id`, as GET /v2/scrape/{id} names it (one name per path position in the router): the scrape job id,
// data.metadata.scrapeId of the scrape's answer (the spec's jobId).
const jobParams = z.object({ id: z.string().max(100).describe('The scrape job id (data.metadata.scrapeId)') });
const idParams = z.object({ id: z.string().max(100) });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const unknownJob = (id: string) => new NotFoundError(`No scrape job ${id}`, 'BROWSER_SESSION_NOT_FOUND');
const unknownSession = (id: string) => new NotFoundError(`No browser session ${id}`, 'BROWSER_SESSION_NOT_FOUND');

const sessionErrors = {
  402: errorBody,
  403: errorBody,
  404: errorBody,
  409: errorBody,
  410: errorBody,
  429: errorBody,
  502: errorBody,
  503: errorBody,
};

// Clients stop sessions with DELETE, `content-type: application/json` and no body (firecrawl-mcp):
// a bodiless request has no content to parse.
const bodilessDelete: onRequestHookHandler = async (request) => {
  const length = request.headers['content-length'];
  if ((length === undefined || length === '0') && request.headers['transfer-encoding'] === undefined)
    delete request.headers['content-type'];
};

export async function interactRoutes(
  app: FastifyInstance,
  { sessions, publicUrl }: { sessions: BrowserSessions; publicUrl?: string },
): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const base = publicBase(publicUrl);
  const tags = ['interact'];
  const callErrors = describeErrorCodes([
    'INSUFFICIENT_CREDITS',
    'FORBIDDEN',
    'BROWSER_SESSION_NOT_FOUND',
    'INTERACT_REPLAY_UNAVAILABLE',
    'BROWSER_SESSION_DESTROYED',
    'BROWSER_SESSION_LIMIT',
    'INTERACT_EXECUTION_FAILED',
    'BROWSER_UNAVAILABLE',
    'SANDBOX_UNAVAILABLE',
    'LLM_UNAVAILABLE',
  ]);

  r.post(
    '/v2/scrape/:id/interact',
    {
      config: { rateLimit: 'browser' },
      schema: {
        tags,
        summary: "Run code or a prompt in the scrape's browser session",
        description:
          'The first call opens a browser session at the page state of the scrape (its URL, headers and cookies, ' +
          'device, location, actions and profile are replayed), later calls reuse the live page; DELETE stops it. ' +
          '`code` runs in a sandboxed process (`language` node: Playwright `page`, `context`, `browser`, top-level ' +
          'await, `result` is the last expression; python: the same `page` with Playwright async names; bash: the ' +
          '`agent-browser` CLI bound to the session). `prompt` runs an AI agent (needs an LLM). Sessions idle for ' +
          'INTERACT_IDLE_TIMEOUT_SECONDS (default 600) end; browser time costs 2 credits per minute, prorated by the ' +
          `second. Errors: ${callErrors}.`,
        params: jobParams,
        body: interactRequest,
        response: { 200: interactResult, ...authErrors, ...sessionErrors },
      },
    },
    async (request) => {
      if (!UUID.test(request.params.id)) throw unknownJob(request.params.id);
      return sessions.interact(request.caller, request.params.id, request.body, base(request));
    },
  );

  r.delete(
    '/v2/scrape/:id/interact',
    {
      config: { rateLimit: 'browser' },
      onRequest: bodilessDelete,
      schema: {
        tags,
        summary: "Stop the scrape's browser session",
        description:
          'Ends the session and bills its time (2 credits per minute, prorated by the second). A later POST is 410. ' +
          `Errors: ${describeErrorCodes(['FORBIDDEN', 'BROWSER_SESSION_NOT_FOUND', 'BROWSER_SESSION_DESTROYED'])}.`,
        params: jobParams,
        response: { 200: sessionEndResponse, ...authErrors, ...sessionErrors },
      },
    },
    async (request) => {
      if (!UUID.test(request.params.id)) throw unknownJob(request.params.id);
      const end = await sessions.stopInteract(request.caller, request.params.id);
      return { success: true as const, status: 'destroyed' as const, ...end };
    },
  );

  r.post(
    '/v2/browser',
    {
      config: { rateLimit: 'browser' },
      schema: {
        tags,
        summary: 'Create a browser session',
        description:
          'A live Chromium of its own, reachable through `cdpUrl` (a standard CDP client connects with it), shown ' +
          'by `liveViewUrl` and driven by `interactiveLiveViewUrl`, and by POST /v2/browser/{id}/execute. It ends ' +
          'after `ttl` seconds, after `activityTtl` seconds without a call, or on DELETE; 2 credits per minute. ' +
          `Errors: ${callErrors}.`,
        body: browserCreateRequest,
        response: { 200: browserCreateResponse, ...authErrors, ...sessionErrors },
      },
    },
    async (request) => {
      const s = await sessions.create(request.caller, request.body, base(request));
      return { success: true as const, id: s.id, ...s.urls, expiresAt: s.expiresAt.toISOString() };
    },
  );

  r.post(
    '/v2/browser/:id/execute',
    {
      config: { rateLimit: 'browser' },
      schema: {
        tags,
        summary: 'Run code in a browser session',
        description: `As interact's \`code\`; \`language\` defaults to bash (agent-browser). Errors: ${callErrors}.`,
        params: idParams,
        body: browserExecuteRequest,
        response: { 200: interactResult, ...authErrors, ...sessionErrors },
      },
    },
    async (request) => {
      if (!UUID.test(request.params.id)) throw unknownSession(request.params.id);
      return sessions.execute(request.caller, request.params.id, request.body);
    },
  );

  r.delete(
    '/v2/browser/:id',
    {
      config: { rateLimit: 'browser' },
      onRequest: bodilessDelete,
      schema: {
        tags,
        summary: 'Stop a browser session',
        description: `Ends the session and bills its time. Errors: ${describeErrorCodes(['BROWSER_SESSION_NOT_FOUND', 'BROWSER_SESSION_DESTROYED'])}.`,
        params: idParams,
        response: { 200: sessionEndResponse, ...authErrors, ...sessionErrors },
      },
    },
    async (request) => {
      if (!UUID.test(request.params.id)) throw unknownSession(request.params.id);
      const end = await sessions.delete(request.caller, request.params.id);
      return { success: true as const, status: 'destroyed' as const, ...end };
    },
  );

  r.get(
    '/v2/browser',
    {
      config: { rateLimit: 'status' },
      schema: {
        tags,
        summary: "The team's browser sessions",
        description: 'Newest first (at most 100), optionally only `status` active or destroyed.',
        querystring: browserListQuery,
        response: { 200: browserListResponse, ...authErrors },
      },
    },
    async (request) => {
      const rows = await sessions.list(request.caller, request.query.status);
      return {
        success: true as const,
        sessions: rows.map((s) => ({
          id: s.id,
          status: s.status,
          cdpUrl: s.cdpUrl,
          liveViewUrl: s.liveViewUrl,
          interactiveLiveViewUrl: s.interactiveLiveViewUrl,
          streamWebView: s.streamWebView,
          createdAt: s.createdAt.toISOString(),
          lastActivity: s.lastActivity.toISOString(),
        })),
      };
    },
  );
}
