// The HTTP engine: fetches a target with undici through the SSRF guard, follows redirects itself
// (so each hop is checked and cookies set along the way are kept, by the rules of cookie-jar.ts),
// decompresses with a size cap, and reports failures as ScrapeErrors with codes. It returns bytes;
// decoding and parsing happen in the transform stage.
import { type Readable, Transform, type Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';
import { type Dispatcher, ProxyAgent, request } from 'undici';
import {
  BlockedAddressError,
  type SsrfOptions,
  type GuardedLookupOptions,
  InvalidTargetUrlError,
  assertUrlAllowed,
  createGuardedAgent,
  createGuardedLookup,
} from '../../net/ssrf.ts';
import { timeoutSignal } from '../../net/timeout.ts';
import { callerHeadersFor } from './caller-headers.ts';
import { FetchCookieJar } from './cookie-jar.ts';
import {
  BadRequestError,
  BlockedUrlError,
  ConnectionError,
  DnsResolutionError,
  ResponseTooLargeError,
  ScrapeError,
  ScrapeTimeoutError,
  SiteError,
  TlsError,
  TooManyRedirectsError,
} from '../../errors.ts';

export const DESKTOP_USER_AGENT =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';
export const MOBILE_USER_AGENT =
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Mobile Safari/537.36';

export interface HttpEngineOptions {
  allowPrivateNetwork: boolean;
  /** Upstream proxy for proxy "basic" (none: direct). */
  proxyUrl?: string;
  /** Upstream proxy for proxy "enhanced" (and "auto"'s retry). */
  enhancedProxyUrl?: string;
  /** Largest response body accepted, after decompression. */
  maxBytes: number;
  /** Resolver and exception hook for the SSRF guard (tests: fake DNS without network). */
  ssrf?: Pick<GuardedLookupOptions, 'resolver' | 'isAllowed'>;
}

export interface HttpFetchRequest {
  url: string;
  headers?: Record<string, string>;
  timeoutMs: number;
  skipTlsVerification: boolean;
  mobile: boolean;
  /** Accept-Language, most preferred first. */
  languages?: string[];
  proxy: 'none' | 'basic' | 'enhanced';
  maxRedirects?: number;
  signal?: AbortSignal;
  /**
   * Called once with the answer's Content-Type and its first HEAD_BYTES decoded bytes (all of a
   * shorter body): true leaves the rest unread (`bodySkipped`), as for a media file, which the
   * media stage downloads itself under its own cap.
   */
  skipBody?: (contentType: string, head: Buffer) => boolean;
  /**
   * Headers sent only on hops to `origin`, never after a redirect elsewhere: a caller's
   * credentials for one site (the media of a page get the page's headers on its origin only).
   */
  originHeaders?: { origin: string; headers: Record<string, string> };
}

/** The bytes HttpFetchRequest.skipBody sees. */
export const HEAD_BYTES = 1024;

export interface HttpResponse {
  /** The URL asked for. */
  requestedUrl: string;
  /** The URL that answered, after redirects. */
  url: string;
  status: number;
  headers: Record<string, string>;
  contentType: string;
  body: Buffer;
  redirects: string[];
  /** The body was left unread past its first bytes (HttpFetchRequest.skipBody); `body` holds those. */
  bodySkipped?: boolean;
}

/** A download's answer; its body went to the destination. */
export interface HttpDownload extends Omit<HttpResponse, 'body'> {
  /** Bytes received (decoded); 0 for a non-2xx answer, whose body is not read. */
  size: number;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

export class HttpEngine {
  readonly #opts: HttpEngineOptions;
  readonly #dispatchers = new Map<string, Dispatcher>();

  constructor(opts: HttpEngineOptions) {
    this.#opts = opts;
  }

  get hasEnhancedProxy(): boolean {
    return Boolean(this.#opts.enhancedProxyUrl);
  }

  async fetch(req: HttpFetchRequest): Promise<HttpResponse> {
    const timer = timeoutSignal(req.timeoutMs);
    const timeout = timer.signal;
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    const maxRedirects = req.maxRedirects ?? 10;
    const jar = new FetchCookieJar();
    const redirects: string[] = [];
    const at = { url: this.#check(req.url) };
    try {
      for (;;) {
        const res = await this.#follow(at, req, jar, redirects, signal);
        const page = await this.#read(req.url, at.url, res, redirects, signal, req.skipBody);
        if (page.bodySkipped) return page;
        const location = metaRefreshTarget(page);
        if (location === undefined || new URL(location, at.url).href === at.url.href) return page;
        if (redirects.length >= maxRedirects) throw new TooManyRedirectsError(req.url, maxRedirects);
        redirects.push(at.url.href);
        at.url = this.#check(new URL(location, at.url).href);
      }
    } catch (err) {
      throw this.#describe(err, at.url, req, timeout);
    } finally {
      timer.clear();
    }
  }

  /**
   * GETs a file as fetch does (proxy, SSRF guard on every hop, redirects, cookies, decoding) but
   * without following <meta refresh>, and with a cap of its own: the decoded body is streamed
   * into `to`, at most `maxBytes`, else ResponseTooLargeError. A non-2xx answer's body is not read.
   */
  async download(req: HttpFetchRequest, opts: { maxBytes: number; to: Writable }): Promise<HttpDownload> {
    const timer = timeoutSignal(req.timeoutMs);
    const timeout = timer.signal;
    const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout;
    const at = { url: this.#check(req.url) };
    try {
      const redirects: string[] = [];
      const res = await this.#follow(at, req, new FetchCookieJar(), redirects, signal);
      if (res.statusCode < 200 || res.statusCode > 299) {
        discard(res.body);
        return { ...responseHead(req.url, at.url, res, redirects, false), size: 0 };
      }
      const declared = Number(header(res.headers, 'content-length'));
      if (!header(res.headers, 'content-encoding') && declared > opts.maxBytes) {
        discard(res.body);
        throw new ResponseTooLargeError(req.url, opts.maxBytes);
      }
      const decoded = decode(res.body, header(res.headers, 'content-encoding'));
      let size = 0;
      const count = new Transform({
        transform(chunk: Buffer, _enc, done) {
          size += chunk.length;
          done(size > opts.maxBytes ? new ResponseTooLargeError(req.url, opts.maxBytes) : null, chunk);
        },
      });
      await pipeline(decoded, count, opts.to, { signal });
      signal.throwIfAborted();
      return { ...responseHead(req.url, at.url, res, redirects, decoded !== res.body), size };
    } catch (err) {
      throw this.#describe(err, at.url, req, timeout);
    } finally {
      timer.clear();
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.#dispatchers.values()].map((d) => d.close()));
    this.#dispatchers.clear();
  }

  /** The SSRF policy this engine connects under (for the request-time checks: src/net/ssrf.ts refuseBlockedTarget). */
  get targetPolicy(): SsrfOptions {
    return { allowPrivateNetwork: this.#opts.allowPrivateNetwork, isAllowed: this.#opts.ssrf?.isAllowed };
  }

  #check(url: string): URL {
    try {
      return assertUrlAllowed(url, {
        allowPrivateNetwork: this.#opts.allowPrivateNetwork,
        isAllowed: this.#opts.ssrf?.isAllowed,
      });
    } catch (err) {
      throw this.#describe(err, undefined, undefined, undefined);
    }
  }

  // Follows HTTP redirects from at.url (each hop checked, cookies kept); resolves to the first
  // answer that is not a redirect, with at.url its URL.
  async #follow(
    at: { url: URL },
    req: HttpFetchRequest,
    jar: FetchCookieJar,
    redirects: string[],
    signal: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    const maxRedirects = req.maxRedirects ?? 10;
    for (;;) {
      const res = await this.#request(at.url, req, jar, signal);
      jar.store(at.url, res.headers['set-cookie']);
      const location = REDIRECT_STATUSES.has(res.statusCode) ? header(res.headers, 'location') : undefined;
      if (location === undefined) return res;
      res.body.resume(); // a redirect's body is not needed; let the connection be reused
      if (redirects.length >= maxRedirects) throw new TooManyRedirectsError(req.url, maxRedirects);
      redirects.push(at.url.href);
      at.url = this.#check(new URL(location, at.url).href);
    }
  }

  async #request(
    url: URL,
    req: HttpFetchRequest,
    jar: FetchCookieJar,
    signal: AbortSignal,
  ): Promise<Dispatcher.ResponseData> {
    const headers: Record<string, string> = {
      'user-agent': req.mobile ? MOBILE_USER_AGENT : DESKTOP_USER_AGENT,
      accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8',
      'accept-language': acceptLanguage(req.languages),
      'accept-encoding': 'gzip, deflate, br, zstd',
    };
    // The caller's credentials only for the host it asked for (src/scrape/engines/caller-headers.ts).
    for (const [k, v] of Object.entries(callerHeadersFor(req.headers, new URL(req.url), url)))
      headers[k.toLowerCase()] = v;
    if (req.originHeaders?.origin === url.origin)
      for (const [k, v] of Object.entries(req.originHeaders.headers)) headers[k.toLowerCase()] = v;
    const cookies = [headers.cookie, jar.header(url)].filter(Boolean);
    if (cookies.length) headers.cookie = cookies.join('; ');
    const dispatcher = await this.#dispatcher(url, req);
    return request(url, { method: 'GET', headers, signal, dispatcher });
  }

  // One dispatcher per (TLS verification, proxy) pair, created on first use and kept for reuse.
  async #dispatcher(url: URL, req: HttpFetchRequest): Promise<Dispatcher> {
    const proxyUrl =
      req.proxy === 'enhanced' ? this.#opts.enhancedProxyUrl : req.proxy === 'basic' ? this.#opts.proxyUrl : undefined;
    if (req.proxy === 'enhanced' && !proxyUrl)
      throw new BadRequestError('proxy "enhanced" needs PROXY_ENHANCED_URL to be configured');
    if (proxyUrl) {
      // Through a proxy the proxy resolves the name: resolve and judge it here first.
      await this.#checkResolves(url.hostname);
    }
    const key = `${req.skipTlsVerification}|${proxyUrl ?? ''}`;
    let d = this.#dispatchers.get(key);
    if (!d) {
      d = proxyUrl
        ? new ProxyAgent({ uri: proxyUrl, requestTls: { rejectUnauthorized: !req.skipTlsVerification } })
        : createGuardedAgent({
            ...this.#opts.ssrf,
            allowPrivateNetwork: this.#opts.allowPrivateNetwork,
            rejectUnauthorized: !req.skipTlsVerification,
          });
      this.#dispatchers.set(key, d);
    }
    return d;
  }

  async #checkResolves(hostname: string): Promise<void> {
    const lookup = createGuardedLookup({ ...this.#opts.ssrf, allowPrivateNetwork: this.#opts.allowPrivateNetwork });
    await new Promise<void>((resolve, reject) =>
      lookup(hostname, { all: true }, (err) => (err ? reject(err) : resolve())),
    );
  }

  async #read(
    requestedUrl: string,
    url: URL,
    res: Dispatcher.ResponseData,
    redirects: string[],
    signal: AbortSignal,
    skipBody?: HttpFetchRequest['skipBody'],
  ): Promise<HttpResponse> {
    const chunks: Buffer[] = [];
    let size = 0;
    const decoded = decode(res.body, header(res.headers, 'content-encoding'));
    const answer = (bodySkipped: boolean): HttpResponse => ({
      ...responseHead(requestedUrl, url, res, redirects, decoded !== res.body),
      body: Buffer.concat(chunks, size),
      ...(bodySkipped ? { bodySkipped } : {}),
    });
    // Asked once, when HEAD_BYTES have arrived or the body ended shorter.
    let skip = skipBody && ((head: Buffer) => skipBody(header(res.headers, 'content-type') ?? '', head));
    for await (const chunk of decoded) {
      size += (chunk as Buffer).length;
      chunks.push(chunk as Buffer);
      // Asked before the cap is applied: a media file is not a page, SCRAPE_MAX_BYTES is not its cap.
      if (skip && size >= HEAD_BYTES) {
        if (skip(Buffer.concat(chunks, size))) {
          decoded.destroy();
          discard(res.body);
          return answer(true);
        }
        skip = undefined;
      }
      if (size > this.#opts.maxBytes) {
        decoded.destroy();
        res.body.destroy();
        throw new ResponseTooLargeError(requestedUrl, this.#opts.maxBytes);
      }
    }
    signal.throwIfAborted();
    return answer(Boolean(skip?.(Buffer.concat(chunks, size))));
  }

  // Maps whatever failed (guard, DNS, socket, TLS, abort) to one ScrapeError with a code.
  #describe(
    err: unknown,
    url: URL | undefined,
    req: HttpFetchRequest | undefined,
    timeout: AbortSignal | undefined,
  ): Error {
    if (err instanceof ScrapeError || err instanceof BadRequestError) return err;
    const e = err as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    const target = url?.href ?? req?.url ?? '';
    // Our own timer, or the caller's deadline (the scrape's overall timeout), ran out.
    const callerTimedOut = req?.signal?.aborted && (req.signal.reason as Error | undefined)?.name === 'TimeoutError';
    if (req && (timeout?.aborted || callerTimedOut)) return new ScrapeTimeoutError(req.timeoutMs, req.url);
    const blocked = findCause(e, (c) => c instanceof BlockedAddressError);
    if (blocked) return new BlockedUrlError((blocked as Error).message);
    if (e instanceof InvalidTargetUrlError)
      return new BadRequestError(`Invalid request: body.url: ${e.message}`, [{ path: 'body.url', message: e.message }]);
    const code = String(findCause(e, (c) => typeof (c as NodeJS.ErrnoException).code === 'string')?.code ?? '');
    const message = e.cause?.message ?? e.message;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME')
      return new DnsResolutionError(url?.hostname ?? target);
    if (code === 'UND_ERR_RES_EXCEEDED_MAX_SIZE') return new ResponseTooLargeError(target, this.#opts.maxBytes);
    if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return new TlsError(target, message);
    if (
      [
        'ECONNREFUSED',
        'ECONNRESET',
        'EHOSTUNREACH',
        'ENETUNREACH',
        'UND_ERR_CONNECT_TIMEOUT',
        'UND_ERR_SOCKET',
        'EPIPE',
      ].includes(code)
    ) {
      return new ConnectionError(target, message);
    }
    return new SiteError(target, message);
  }
}

// Content-Encoding layers, undone in reverse order of application. The size cap is applied by
// the reader to the decoded bytes, so a compression bomb stops at maxBytes.
function decode(body: Readable, contentEncoding: string | undefined): Readable {
  const codings = (contentEncoding ?? '')
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c && c !== 'identity');
  if (!codings.length) return body;
  const stages: Transform[] = [];
  for (const coding of codings.reverse()) {
    if (coding === 'gzip' || coding === 'x-gzip')
      stages.push(zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH }));
    else if (coding === 'deflate') stages.push(inflateEither());
    else if (coding === 'br') stages.push(zlib.createBrotliDecompress());
    else if (coding === 'zstd') stages.push(zlib.createZstdDecompress());
    else return body; // unknown coding: hand the bytes over untouched, as served
  }
  let out: Readable = body;
  for (const stage of stages) {
    out.on('error', (err) => stage.destroy(err));
    out = out.pipe(stage);
  }
  return out;
}

// "deflate" is zlib-wrapped by the RFC but raw from some servers: the first two bytes tell which.
function inflateEither(): Transform {
  let inner: zlib.Inflate | zlib.InflateRaw | undefined;
  const out = new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (!inner) {
        const wrapped = chunk.length >= 2 && (chunk[0] & 0x0f) === 8 && ((chunk[0] << 8) | chunk[1]) % 31 === 0;
        const opts = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
        inner = wrapped ? zlib.createInflate(opts) : zlib.createInflateRaw(opts);
        inner.on('data', (d: Buffer) => out.push(d));
        inner.on('error', (err) => out.destroy(err));
      }
      inner.write(chunk, () => done());
    },
    flush(done) {
      if (!inner) return done();
      inner.once('end', () => done());
      inner.end();
    },
  });
  return out;
}

// A body not to be read: the connection is closed rather than drained (it may be a large file).
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

// `decoded`: the body is the decoded bytes, so the headers say so, as a browser's view of the
// response would (no Content-Encoding, no Content-Length of the encoded bytes).
function responseHead(
  requestedUrl: string,
  url: URL,
  res: Dispatcher.ResponseData,
  redirects: string[],
  decoded: boolean,
): Omit<HttpResponse, 'body'> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers))
    if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(', ') : v;
  if (decoded) {
    delete headers['content-encoding'];
    delete headers['content-length'];
  }
  return {
    requestedUrl,
    url: url.href,
    status: res.statusCode,
    headers,
    contentType: headers['content-type'] ?? '',
    redirects,
  };
}

function findCause(err: unknown, test: (e: unknown) => boolean): NodeJS.ErrnoException | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (test(e)) return e as NodeJS.ErrnoException;
  }
  return undefined;
}

function header(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function acceptLanguage(languages: string[] | undefined): string {
  if (!languages?.length) return 'en-US,en;q=0.9';
  return languages.map((l, i) => (i === 0 ? l : `${l};q=${Math.max(0.1, 1 - i * 0.1).toFixed(1)}`)).join(',');
}

// An HTML page that only forwards the reader (<meta http-equiv="refresh" content="0; url=...">,
// within a few seconds) is treated as a redirect, as a browser would follow it.
const MAX_REFRESH_SECONDS = 5;
function metaRefreshTarget(page: HttpResponse): string | undefined {
  if (!/html/i.test(page.contentType)) return undefined;
  const head = page.body.subarray(0, 8192).toString('latin1');
  const tag = /<meta[^>]+http-equiv\s*=\s*["']?refresh["']?[^>]*>/i.exec(head)?.[0];
  const content = tag && /content\s*=\s*(["'])(.*?)\1/i.exec(tag)?.[2];
  const m = content && /^\s*(\d+(?:\.\d+)?)\s*[;,]\s*(?:url\s*=\s*)?["']?([^"']+)["']?\s*$/i.exec(content);
  if (!m || Number(m[1]) > MAX_REFRESH_SECONDS) return undefined;
  return m[2].trim();
}
