// The browser's SSRF guard: a small forward proxy on 127.0.0.1, one per fetch, through which the
// fetch's browser context sends every request (page, redirects, subresources, XHR, WebSockets,
// service workers: Chromium sends them all to the proxy, and resolves no name itself).
//
// Why a proxy and not request interception: Playwright's route handlers see only the first
// request of a redirect chain, so a public page redirecting to http://169.254.169.254/ would pass
// a route-level check. Here each connection is opened by Node through the same guard as the HTTP
// engine (src/net/ssrf.ts: IP literals and localhost names judged directly, every other name
// resolved by createGuardedLookup, which judges exactly the addresses the socket then uses), so
// redirects and DNS rebinding are covered too.
//
// Plain http:// requests arrive in absolute form and are forwarded with node:http; https:// and
// ws(s):// arrive as CONNECT tunnels (TLS stays end to end between Chromium and the target).
// A refused or failed connection answers 403/502 with an `x-gleaner-guard` header (plain HTTP) or
// a failed CONNECT, and is recorded in `failures`, so the engine can tell why a navigation failed.
import { promises as dnsPromises } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import {
  type IncomingMessage,
  Agent as HttpAgent,
  type ServerResponse,
  createServer,
  request as httpRequest,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { connect as tlsConnect } from 'node:tls';
import {
  type AddressInfo,
  type Server as NetServer,
  type Socket,
  connect,
  createServer as createNetServer,
  isIP,
} from 'node:net';
import type { LookupFunction } from 'node:net';
import type { Duplex } from 'node:stream';
import {
  BlockedAddressError,
  type GuardedLookupOptions,
  InvalidTargetUrlError,
  type Resolver,
  assertUrlAllowed,
  createGuardedLookup,
} from '../../../net/ssrf.ts';

/** Header set on the proxy's own error answers (stripped from targets' responses). */
export const GUARD_HEADER = 'x-gleaner-guard';

export type GuardFailureKind = 'blocked' | 'dns' | 'connect' | 'invalid';

export interface GuardFailure {
  kind: GuardFailureKind;
  /** host[:port] or URL the browser asked for. */
  target: string;
  hostname: string;
  message: string;
}

export interface GuardProxyOptions extends GuardedLookupOptions {
  /** TCP connect timeout to targets (default 10 s). */
  connectTimeoutMs?: number;
  /**
   * Send every request on through this proxy (PROXY_URL, http:// or https://, credentials in the
   * URL): plain requests in absolute form, everything else as CONNECT tunnels. Each target is
   * still judged here first (its name resolved and checked), since the upstream proxy resolves it
   * again and would reach whatever it finds.
   */
  upstreamProxy?: string;
  /**
   * Also serve the proxy on this Unix socket: a browser in a network namespace of its own
   * (src/interact/sandbox/chromium-jail.ts) reaches it only this way.
   */
  socketPath?: string;
}

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  GUARD_HEADER,
]);

const systemResolver: Resolver = (hostname, options) => dnsPromises.lookup(hostname, { ...options, all: true });

export class GuardProxy {
  /** http://127.0.0.1:PORT, for the browser context's `proxy.server`. */
  readonly url: string;
  /** Every refused or failed connection, in order. */
  readonly failures: GuardFailure[] = [];
  readonly #opts: GuardProxyOptions;
  readonly #lookup: LookupFunction;
  readonly #server: ReturnType<typeof createServer>;
  readonly #agent: HttpAgent;
  readonly #tunnels = new Set<Socket | Duplex>();
  #unix: NetServer | undefined;
  readonly #upstream: Upstream | undefined;

  private constructor(opts: GuardProxyOptions, server: ReturnType<typeof createServer>, port: number) {
    this.#opts = opts;
    this.#server = server;
    this.url = `http://127.0.0.1:${port}`;
    // One DNS answer per name for the whole fetch: the browser opens many connections to the same
    // few hosts, and each is judged again (cheaply) against the cached addresses.
    const resolve = opts.resolver ?? systemResolver;
    const cache = new Map<string, Promise<LookupAddress[]>>();
    const resolver: Resolver = (hostname: string, options: LookupOptions) => {
      const key = `${hostname}|${options.family ?? 0}`;
      let answer = cache.get(key);
      if (!answer) {
        answer = resolve(hostname, options);
        answer.catch(() => cache.delete(key));
        cache.set(key, answer);
      }
      return answer;
    };
    this.#lookup = createGuardedLookup({ ...opts, resolver });
    this.#agent = new HttpAgent({ keepAlive: true, maxSockets: 16 });
    this.#upstream = upstreamOf(opts.upstreamProxy);
  }

  static async start(opts: GuardProxyOptions): Promise<GuardProxy> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const proxy = new GuardProxy(opts, server, (server.address() as AddressInfo).port);
    if (opts.socketPath) {
      const unix = createNetServer((socket) => server.emit('connection', socket));
      await new Promise<void>((resolve, reject) => {
        unix.once('error', reject);
        unix.listen(opts.socketPath, () => resolve());
      });
      proxy.#unix = unix;
    }
    server.on('request', (req, res) => proxy.#forward(req, res));
    server.on('connect', (req, socket, head) => proxy.#tunnel(req, socket, head));
    server.on('upgrade', (_req, socket) => socket.destroy()); // WebSockets come as CONNECT
    server.on('clientError', (_err, socket) => socket.destroy());
    return proxy;
  }

  /**
   * Judges a URL the way the proxy will when the browser asks for it (scheme, IP literal,
   * localhost names, DNS answer): throws InvalidTargetUrlError, BlockedAddressError or an
   * ENOTFOUND error. Its DNS answer is cached for the proxy's later connections.
   */
  async check(url: string): Promise<URL> {
    const parsed = assertUrlAllowed(url, this.#opts);
    await this.#judge(parsed.hostname);
    return parsed;
  }

  /** The last failure recorded for this hostname (or the last one at all). */
  failureFor(hostname?: string): GuardFailure | undefined {
    const host = hostname === undefined ? undefined : bareHost(hostname);
    for (let i = this.failures.length - 1; i >= 0; i--) {
      if (host === undefined || this.failures[i].hostname === host) return this.failures[i];
    }
    return undefined;
  }

  async close(): Promise<void> {
    for (const t of this.#tunnels) t.destroy();
    this.#tunnels.clear();
    this.#agent.destroy();
    this.#upstream?.agent.destroy();
    // Not awaiting server.close(): its callback waits for sockets' close events, and nothing here
    // needs that; every socket is destroyed above or just below.
    this.#unix?.close();
    this.#server.close();
    this.#server.closeAllConnections();
  }

  #record(kind: GuardFailureKind, target: string, hostname: string, message: string): GuardFailure {
    const failure = { kind, target, hostname: bareHost(hostname), message };
    this.failures.push(failure);
    if (this.failures.length > 200) this.failures.shift();
    return failure;
  }

  // Plain HTTP: absolute-form request, forwarded over a guarded connection.
  #forward(req: IncomingMessage, res: ServerResponse): void {
    let url: URL;
    try {
      url = assertUrlAllowed(req.url ?? '', this.#opts);
      if (url.protocol !== 'http:')
        throw new InvalidTargetUrlError(url.href, 'only http:// is proxied in absolute form');
    } catch (err) {
      const host = safeHostname(req.url);
      this.#refuse(res, this.#record(kindOf(err), req.url ?? '', host, (err as Error).message));
      return;
    }
    const headers: string[] = [];
    const raw = req.rawHeaders;
    for (let i = 0; i < raw.length; i += 2) if (!HOP_BY_HOP.has(raw[i].toLowerCase())) headers.push(raw[i], raw[i + 1]);
    const via = this.#upstream;
    if (!via) {
      this.#send(req, res, url, httpRequest({ ...this.#direct(url), method: req.method, headers }));
      return;
    }
    req.pause();
    this.#judge(url.hostname).then(
      () => {
        if (via.auth) headers.push('Proxy-Authorization', via.auth);
        const send = via.url.protocol === 'https:' ? httpsRequest : httpRequest;
        this.#send(
          req,
          res,
          url,
          send({
            host: bareHost(via.url.hostname),
            port: via.url.port || (via.url.protocol === 'https:' ? 443 : 80),
            method: req.method,
            path: url.href,
            headers,
            agent: via.agent,
          }),
        );
        req.resume();
      },
      (err: Error) => this.#refuse(res, this.#record(kindOf(err), url.href, url.hostname, err.message)),
    );
  }

  // A direct connection to a plain-HTTP target, through the guarded lookup.
  #direct(url: URL) {
    return {
      host: bareHost(url.hostname),
      port: url.port || 80,
      path: url.pathname + url.search,
      agent: this.#agent,
      lookup: this.#lookup,
    };
  }

  // Resolves once hostname is an allowed target (IP literals were judged with the URL).
  #judge(hostname: string): Promise<void> {
    const host = bareHost(hostname);
    if (isIP(host)) return Promise.resolve();
    return new Promise<void>((resolve, reject) =>
      this.#lookup(host, { all: true }, (err) => (err ? reject(err) : resolve())),
    );
  }

  // Relays the answer of a forwarded plain-HTTP request.
  #send(req: IncomingMessage, res: ServerResponse, url: URL, upstream: ReturnType<typeof httpRequest>): void {
    // A bound on connecting only (a target may take its time to answer once connected).
    upstream.once('socket', (socket) => {
      if (!socket.connecting) return;
      const timer = setTimeout(
        () => upstream.destroy(Object.assign(new Error(`connect to ${url.host} timed out`), { code: 'ETIMEDOUT' })),
        this.#opts.connectTimeoutMs ?? 10_000,
      );
      socket.once('connect', () => clearTimeout(timer));
      socket.once('close', () => clearTimeout(timer));
    });
    upstream.once('response', (up) => {
      const out: string[] = [];
      const rawUp = up.rawHeaders;
      for (let i = 0; i < rawUp.length; i += 2)
        if (!HOP_BY_HOP.has(rawUp[i].toLowerCase())) out.push(rawUp[i], rawUp[i + 1]);
      res.writeHead(up.statusCode ?? 502, up.statusMessage, out);
      up.pipe(res);
      up.once('error', () => res.destroy());
    });
    upstream.once('error', (err) => {
      if (res.headersSent) return void res.destroy();
      this.#refuse(res, this.#record(kindOf(err), url.href, url.hostname, (err as Error).message));
    });
    res.once('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  }

  #refuse(res: ServerResponse, failure: GuardFailure): void {
    const status = failure.kind === 'blocked' ? 403 : failure.kind === 'invalid' ? 400 : 502;
    const body = `<!DOCTYPE html><title>Refused</title><p>${escapeHtml(failure.message)}</p>`;
    res.writeHead(status, {
      'content-type': 'text/html; charset=utf-8',
      'content-length': Buffer.byteLength(body),
      [GUARD_HEADER]: failure.kind,
    });
    res.end(body);
  }

  // CONNECT host:port (https, wss, and anything else the browser tunnels).
  #tunnel(req: IncomingMessage, client: Duplex, head: Buffer): void {
    this.#tunnels.add(client);
    client.once('close', () => this.#tunnels.delete(client));
    client.on('error', () => client.destroy());
    const authority = req.url ?? '';
    const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(authority);
    const fail = (kind: GuardFailureKind, hostname: string, message: string) => {
      const f = this.#record(kind, authority, hostname, message);
      const status = kind === 'blocked' ? '403 Forbidden' : kind === 'invalid' ? '400 Bad Request' : '502 Bad Gateway';
      client.end(`HTTP/1.1 ${status}\r\n${GUARD_HEADER}: ${f.kind}\r\ncontent-length: 0\r\n\r\n`);
    };
    if (!m) return fail('invalid', authority, `Invalid CONNECT target "${authority}"`);
    const hostname = bareHost(m[1]);
    try {
      assertUrlAllowed(`https://${m[1]}:${m[2]}/`, this.#opts);
    } catch (err) {
      return fail(kindOf(err), hostname, (err as Error).message);
    }
    const via = this.#upstream;
    if (via) {
      this.#judge(hostname).then(
        () => this.#tunnelVia(via, authority, client, head, fail),
        (err: Error) => fail(kindOf(err), hostname, err.message),
      );
      return;
    }
    const upstream = connect({
      host: hostname,
      port: Number(m[2]),
      lookup: this.#lookup,
      timeout: this.#opts.connectTimeoutMs ?? 10_000,
    });
    this.#tunnels.add(upstream);
    let connected = false;
    upstream.once('connect', () => {
      connected = true;
      upstream.setTimeout(0);
      this.#splice(client, upstream, head, Buffer.alloc(0));
    });
    upstream.once('timeout', () =>
      upstream.destroy(Object.assign(new Error(`connect to ${authority} timed out`), { code: 'ETIMEDOUT' })),
    );
    upstream.on('error', (err) => {
      if (connected) client.destroy();
      else fail(kindOf(err), hostname, err.message);
    });
    upstream.once('close', () => {
      this.#tunnels.delete(upstream);
      if (connected) client.destroy();
    });
    client.once('close', () => upstream.destroy());
  }

  // Both ways between the browser and an open connection (the target's, or a tunnel through the upstream proxy).
  #splice(client: Duplex, upstream: Duplex, head: Buffer, early: Buffer): void {
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (early.length) client.write(early);
    if (head.length) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  }

  // CONNECT through the upstream proxy: its own CONNECT, its answer read, then the two spliced.
  #tunnelVia(
    via: Upstream,
    authority: string,
    client: Duplex,
    head: Buffer,
    fail: (kind: GuardFailureKind, hostname: string, message: string) => void,
  ): void {
    if (client.destroyed) return;
    const host = bareHost(via.url.hostname);
    const timeout = this.#opts.connectTimeoutMs ?? 10_000;
    const https = via.url.protocol === 'https:';
    const port = Number(via.url.port || (https ? 443 : 80));
    const upstream: Socket = https
      ? tlsConnect({ host, port, servername: isIP(host) ? undefined : host, timeout })
      : connect({ host, port, timeout });
    this.#tunnels.add(upstream);
    let answered = false;
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end === -1) {
        if (buffered.length > 16_384)
          upstream.destroy(new Error('the upstream proxy answered CONNECT with oversized headers'));
        return;
      }
      upstream.off('data', onData);
      answered = true;
      upstream.setTimeout(0);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(buffered.subarray(0, end).toString('latin1'))?.[1];
      if (status !== '200') {
        upstream.destroy();
        return fail(
          'connect',
          bareHost(authority.replace(/:\d+$/, '')),
          `the upstream proxy refused CONNECT ${authority} (${status ?? 'no status'})`,
        );
      }
      this.#splice(client, upstream, head, buffered.subarray(end + 4));
    };
    upstream.once(https ? 'secureConnect' : 'connect', () => {
      const auth = via.auth ? `Proxy-Authorization: ${via.auth}\r\n` : '';
      upstream.write(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n${auth}\r\n`);
    });
    upstream.on('data', onData);
    upstream.once('timeout', () =>
      upstream.destroy(Object.assign(new Error(`connect to the upstream proxy timed out`), { code: 'ETIMEDOUT' })),
    );
    upstream.on('error', (err) => {
      if (answered) client.destroy();
      else fail('connect', bareHost(authority.replace(/:\d+$/, '')), `upstream proxy: ${err.message}`);
    });
    upstream.once('close', () => {
      this.#tunnels.delete(upstream);
      if (answered) client.destroy();
    });
    client.once('close', () => upstream.destroy());
  }
}

/** The upstream proxy of PROXY_URL: where it is, its Proxy-Authorization, a keep-alive agent for plain requests. */
interface Upstream {
  url: URL;
  auth: string | undefined;
  agent: HttpAgent;
}

function upstreamOf(proxyUrl: string | undefined): Upstream | undefined {
  if (!proxyUrl) return undefined;
  const url = new URL(proxyUrl);
  const auth = url.username
    ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
    : undefined;
  const agent =
    url.protocol === 'https:'
      ? new HttpsAgent({ keepAlive: true, maxSockets: 16 })
      : new HttpAgent({ keepAlive: true, maxSockets: 16 });
  return { url, auth, agent };
}

function kindOf(err: unknown): GuardFailureKind {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof BlockedAddressError) return 'blocked';
    if (e instanceof InvalidTargetUrlError) return 'invalid';
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME' || code === 'EAI_NODATA') return 'dns';
  }
  return 'connect';
}

function bareHost(hostname: string): string {
  const h = hostname.toLowerCase();
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

function safeHostname(url: string | undefined): string {
  try {
    return new URL(url ?? '').hostname;
  } catch {
    return url ?? '';
  }
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}
