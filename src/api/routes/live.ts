// The routes of a browser session's three URLs: the CDP proxy (cdpUrl), and the live view page
// with its stream (liveViewUrl, interactiveLiveViewUrl). None takes the API key: the unguessable
// token in each URL is the permission (as a signed URL's signature is), and an unknown session
// and a wrong token get the same 404, so a URL reveals nothing about sessions it does not open.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorBody } from '../../contract/common.ts';
import { CdpProxy, openUpstream } from '../../interact/cdp-proxy.ts';
import type { LiveBrowser } from '../../interact/live-browser.ts';
import { LIVE_VIEW_CSP, LIVE_VIEW_HTML } from '../../interact/live-view-page.ts';
import { attachViewerSocket } from '../../interact/live-view-socket.ts';
import { LiveView } from '../../interact/live-view.ts';
import { type LiveAccess, type SessionTokenSet, SessionTokens } from '../../interact/session-tokens.ts';
import { BadRequestError, BrowserUnavailableError, NotFoundError } from '../../errors.ts';

export interface LiveSession {
  browser: LiveBrowser;
  tokens: SessionTokenSet;
  /** False when the session was created with streamWebView false: its live view URLs answer 404. */
  liveView?: boolean;
  /** Marks the session in use while a CDP client is connected (it does not idle out); returns the release. */
  hold?: () => () => void;
}

export interface LiveRoutesOptions {
  /** The live session of this id, if any (the session manager's). */
  lookup(sessionId: string): LiveSession | undefined | Promise<LiveSession | undefined>;
  /** Base of the URLs given out (config.publicUrl); unset: from the request. */
  publicUrl?: string;
}

export interface BrowserSessionUrls {
  cdpUrl: string;
  liveViewUrl: string;
  interactiveLiveViewUrl: string;
}

/**
 * The three URLs of a session from the service's base URL (`https://host[/prefix]`). The CDP
 * token is in the path, not the query: clients use a ws:// URL as given, but given an http(s)://
 * one they append `/json/version` to it, which a query would break.
 */
export function browserSessionUrls(base: string, sessionId: string, tokens: SessionTokenSet): BrowserSessionUrls {
  const http = `${base.replace(/\/+$/, '')}/v2/browser/${encodeURIComponent(sessionId)}`;
  const ws = http.replace(/^http/, 'ws'); // https: → wss:
  return {
    cdpUrl: `${ws}/cdp/${tokens.cdp}`,
    liveViewUrl: `${http}/live?token=${tokens.view}`,
    interactiveLiveViewUrl: `${http}/live?token=${tokens.interactive}`,
  };
}

/** A URL with the tokens of browser session URLs (`/cdp/<token>`, `token=`) replaced. */
export function redactTokens(url: string): string {
  return url.replace(/(\/cdp\/)[^/?#]+/, '$1[token]').replace(/([?&]token=)[^&#]*/, '$1[token]');
}

/** On an upgrade request the route takes over the socket; ws handles the rest of the handshake. */
const isUpgrade = (request: FastifyRequest) => request.headers.upgrade?.toLowerCase() === 'websocket';
// RFC 6455 4.1: a client sends nothing after its handshake until the server's answer, so the bytes
// read past the request (Node's `head`) are empty.
const NO_HEAD = Buffer.alloc(0);
const notFound = () => new NotFoundError();

export async function liveRoutes(app: FastifyInstance, { lookup, publicUrl }: LiveRoutesOptions): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['browser'];
  const security: [] = [];
  const base = (request: FastifyRequest) => publicUrl ?? `${request.protocol}://${request.host}`;
  const proxy = new CdpProxy();
  app.addHook('preClose', async () => proxy.close());
  const views = new WeakMap<LiveBrowser, LiveView>();
  const liveView = (browser: LiveBrowser) => {
    let view = views.get(browser);
    if (!view) {
      view = new LiveView(browser, { onError: (err) => app.log.warn({ err }, 'live view screencast failed') });
      views.set(browser, view);
    }
    return view;
  };

  /** The session whose `kind` token this is, or the 404 of every refusal. */
  async function session(id: string, token: unknown, kind: 'cdp'): Promise<LiveSession>;
  async function session(id: string, token: unknown, kind: 'live'): Promise<LiveSession & { access: LiveAccess }>;
  async function session(id: string, token: unknown, kind: 'cdp' | 'live') {
    const found = await lookup(id);
    if (!found) throw notFound();
    if (kind === 'cdp') {
      if (!SessionTokens.check(found.tokens.cdp, token)) throw notFound();
      return found;
    }
    const access = SessionTokens.liveAccess(found.tokens, token);
    if (!access || found.liveView === false) throw notFound();
    return { ...found, access };
  }
  /** What the stream's hook found, for its handler (the upgrade happens in between). */
  const streamSessions = new WeakMap<FastifyRequest, LiveSession & { access: LiveAccess }>();

  const cdpParams = z.object({ id: z.string(), token: z.string() });
  r.get(
    '/v2/browser/:id/cdp/:token',
    {
      config: { public: true },
      schema: {
        tags,
        security,
        summary: "The session's CDP endpoint (cdpUrl): a WebSocket relayed to its Chromium",
        description:
          'Connect a CDP client to this URL (Playwright `chromium.connectOverCDP(cdpUrl)`, Puppeteer ' +
          '`connect({browserWSEndpoint: cdpUrl})`); messages are relayed both ways as they are. A request ' +
          'that is not a WebSocket upgrade answers 400. Unknown session or wrong token: 404.',
        params: cdpParams,
        response: { 400: errorBody, 404: errorBody, 503: errorBody },
      },
      onRequest: async (request, reply) => {
        const { id, token } = request.params as z.infer<typeof cdpParams>;
        const found = await session(id, token, 'cdp');
        const { browser } = found;
        if (!isUpgrade(request)) return; // the handler answers
        // Chromium's endpoint first: if it is gone, the caller gets an HTTP error, not a socket that closes.
        const upstream = await openUpstream(browser.cdpEndpoint).catch((err: Error) => {
          throw new BrowserUnavailableError(`The session's browser does not answer: ${err.message}`);
        });
        // Not through @fastify/websocket's server: CDP messages exceed its payload limit (cdp-proxy.ts).
        reply.hijack();
        const release = found.hold?.();
        if (release) request.raw.socket.once('close', release);
        proxy.upgrade(request.raw, request.raw.socket, NO_HEAD, upstream);
      },
    },
    async () => {
      throw new BadRequestError('This is a CDP WebSocket endpoint: connect a CDP client to it');
    },
  );

  r.get(
    '/v2/browser/:id/cdp/:token/json/version',
    {
      config: { public: true },
      schema: {
        tags,
        security,
        summary: 'CDP discovery: the browser version and the WebSocket URL to connect to',
        description:
          'What Chromium answers on /json/version, with webSocketDebuggerUrl pointing at this proxy: clients ' +
          'given the http(s) form of cdpUrl read it first.',
        params: cdpParams,
        response: { 200: z.record(z.string(), z.string()), 404: errorBody, 503: errorBody },
      },
    },
    async (request) => {
      const { id, token } = request.params;
      const { browser, tokens } = await session(id, token, 'cdp');
      const endpoint = new URL(browser.cdpEndpoint);
      endpoint.protocol = 'http:';
      endpoint.pathname = '/json/version';
      let version: Record<string, string>;
      try {
        const res = await fetch(endpoint, { signal: AbortSignal.timeout(5_000) });
        if (!res.ok) throw new Error(`HTTP ${res.status}`);
        version = (await res.json()) as Record<string, string>;
      } catch (err) {
        throw new BrowserUnavailableError(`The session's browser does not answer: ${(err as Error).message}`);
      }
      return { ...version, webSocketDebuggerUrl: browserSessionUrls(base(request), id, tokens).cdpUrl };
    },
  );

  const liveParams = z.object({ id: z.string() });
  const liveQuery = z.object({ token: z.string().optional() });
  r.get(
    '/v2/browser/:id/live',
    {
      config: { public: true },
      schema: {
        tags,
        security,
        summary: 'The live view page (liveViewUrl, interactiveLiveViewUrl)',
        description:
          'An HTML page showing the session as it is. With the interactive token it also forwards mouse and ' +
          'keyboard; with the view token input is refused. Unknown session or wrong token: 404.',
        params: liveParams,
        querystring: liveQuery,
        produces: ['text/html'],
        response: { 200: z.string().describe('The HTML page'), 404: errorBody },
      },
    },
    async (request, reply) => {
      await session(request.params.id, request.query.token, 'live');
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', LIVE_VIEW_CSP)
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-store')
        .header('x-content-type-options', 'nosniff')
        .send(LIVE_VIEW_HTML);
    },
  );

  // `route` rather than `get`: only RouteOptions carry wsHandler.
  r.route({
    method: 'GET',
    url: '/v2/browser/:id/live/stream',
    config: { public: true },
    schema: {
      tags,
      security,
      summary: "The live view's WebSocket: frames out, input in",
      description:
        'The live view page connects here (the same token in the query). Server to viewer: a JSON hello ' +
        '(`{"type":"hello","interactive":bool}`), JPEG frames as binary messages, JSON `viewport`, `refused`, ' +
        '`invalid` and `ended` messages. Viewer to server, interactive token only: JSON input messages (mouse, ' +
        'wheel, key, text; positions as fractions of the frame). A request that is not a WebSocket upgrade answers 400.',
      params: liveParams,
      querystring: liveQuery,
      response: { 400: errorBody, 404: errorBody },
    },
    onRequest: async (request) => {
      const { id } = request.params as z.infer<typeof liveParams>;
      const { token } = request.query as z.infer<typeof liveQuery>;
      streamSessions.set(request, await session(id, token, 'live'));
    },
    handler: async () => {
      throw new BadRequestError("This is the live view's WebSocket: open the live view page instead");
    },
    wsHandler: (socket, request) => {
      const found = streamSessions.get(request);
      if (!found) return socket.close(1011); // cannot happen: the hook ran
      attachViewerSocket(liveView(found.browser), socket, found.access, (err) =>
        request.log.warn({ err }, 'live view input failed'),
      );
    },
  });
}
