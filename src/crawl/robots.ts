// robots.txt: fetched once per origin (scheme://host:port) through the HttpEngine (so the SSRF
// guard applies), parsed with robots-parser (groups by user agent, Allow/Disallow with `*`
// wildcards and `$` anchors, longest match wins, Allow wins ties; Crawl-delay; Sitemap lines),
// and kept in a small per-process cache.
//
// Fetch outcomes, as Google documents them
// (https://developers.google.com/search/docs/crawling-indexing/robots/robots_txt):
// - 2xx: the file's rules (only its first 500 KiB are read, as Google does).
// - 4xx other than 429 (404, 401, 403, 410, ...): no robots.txt, everything allowed ('missing').
// - 5xx, 429, and no answer at all (connection refused or reset, DNS failure, timeout, too many
//   redirects): the site may be down or overloaded, so crawling is treated as fully disallowed
//   ('unreachable'). Unlike Google, which keeps a last good copy for up to 30 days, we only cache
//   this outcome briefly (UNREACHABLE_TTL_MS) and try again.
// - the origin is refused by the SSRF guard: 'blocked', everything disallowed; callers that
//   fetch the site anyway get the same refusal from the engine (403 SCRAPE_BLOCKED_URL).
// Redirects are followed by the engine (up to 5 hops); the rules then apply to the origin that
// was asked for.
import robotsParserModule from 'robots-parser';
import type { HttpEngine } from '../scrape/engines/http.ts';
import { BlockedUrlError, ScrapeError } from '../errors.ts';

// robots-parser is CommonJS (module.exports = the function) but its types declare an ES default
// export: at run time the default import is the function itself.
const robotsParser = robotsParserModule as unknown as typeof robotsParserModule.default;

/** Product token matched against robots.txt User-agent lines when none is given. */
export const DEFAULT_ROBOTS_USER_AGENT = 'Gleaner';

export type RobotsStatus = 'ok' | 'missing' | 'unreachable' | 'blocked';

export interface RobotsTxt {
  /** scheme://host[:port] the rules apply to. */
  origin: string;
  /** The robots.txt URL asked for. */
  url: string;
  status: RobotsStatus;
  /** HTTP status of the robots.txt response, when there was one. */
  httpStatus?: number;
  /** Why it is 'unreachable' or 'blocked'. */
  error?: string;
  /** Date.now() when it was read. */
  fetchedAt: number;
  /** Sitemap: lines, absolute URLs in file order. */
  sitemaps: string[];
  /** Whether `url` may be crawled by `userAgent` (a product token such as "Gleaner" or "Gleaner/1.0"). */
  isAllowed(url: string, userAgent?: string): boolean;
  /** Crawl-delay of the group matching `userAgent`, in seconds, if any. */
  crawlDelay(userAgent?: string): number | undefined;
}

/** Bytes of robots.txt read; the rest is ignored (Google's limit). */
export const MAX_ROBOTS_BYTES = 500 * 1024;

/** Parses a robots.txt body for the origin of `robotsUrl`. Pure; used by the cache and by tests. */
export function parseRobotsTxt(
  robotsUrl: string,
  text: string,
  meta: { status?: RobotsStatus; httpStatus?: number; fetchedAt?: number } = {},
): RobotsTxt {
  const url = new URL('/robots.txt', robotsUrl);
  const robot = robotsParser(url.href, text.slice(0, MAX_ROBOTS_BYTES));
  const sitemaps: string[] = [];
  for (const s of robot.getSitemaps()) {
    try {
      const abs = new URL(s.trim(), url);
      if ((abs.protocol === 'http:' || abs.protocol === 'https:') && !sitemaps.includes(abs.href))
        sitemaps.push(abs.href);
    } catch {
      // not a URL: ignored
    }
  }
  return {
    origin: url.origin,
    url: url.href,
    status: meta.status ?? 'ok',
    httpStatus: meta.httpStatus,
    fetchedAt: meta.fetchedAt ?? Date.now(),
    sitemaps,
    isAllowed(target, userAgent = DEFAULT_ROBOTS_USER_AGENT) {
      // undefined: the URL is on another origin, which these rules do not govern.
      return robot.isAllowed(target, userAgent) ?? true;
    },
    crawlDelay(userAgent = DEFAULT_ROBOTS_USER_AGENT) {
      const d = robot.getCrawlDelay(userAgent);
      return typeof d === 'number' && Number.isFinite(d) && d >= 0 ? d : undefined;
    },
  };
}

function fixed(
  origin: string,
  status: RobotsStatus,
  allowed: boolean,
  extra: { httpStatus?: number; error?: string } = {},
): RobotsTxt {
  return {
    origin,
    url: `${origin}/robots.txt`,
    status,
    ...extra,
    fetchedAt: Date.now(),
    sitemaps: [],
    isAllowed: () => allowed,
    crawlDelay: () => undefined,
  };
}

/** Everything allowed: no robots.txt (4xx), or robots ignored by request. */
export const allowAll = (origin: string, httpStatus?: number): RobotsTxt =>
  fixed(origin, 'missing', true, { httpStatus });

export interface RobotsCacheOptions {
  http: HttpEngine;
  /** How long a fetched robots.txt is reused (default 10 minutes). */
  ttlMs?: number;
  /** How long an unreachable (5xx, 429, network error) outcome is reused (default 1 minute). */
  unreachableTtlMs?: number;
  /** Origins kept (default 1000); the least recently added are dropped first. */
  maxEntries?: number;
  /** Timeout of one robots.txt fetch (default 10 s). */
  timeoutMs?: number;
  /** Accept any TLS certificate (default true, as scrape's default: pages of such a site are fetched too). */
  skipTlsVerification?: boolean;
}

export const DEFAULT_ROBOTS_TTL_MS = 10 * 60_000;
export const UNREACHABLE_TTL_MS = 60_000;

interface Entry {
  expires: number;
  value: Promise<RobotsTxt>;
}

/** Per-process robots.txt cache: one fetch per origin at a time, shared by every caller. */
export class RobotsCache {
  readonly #http: HttpEngine;
  readonly #ttl: number;
  readonly #unreachableTtl: number;
  readonly #max: number;
  readonly #timeoutMs: number;
  readonly #skipTls: boolean;
  readonly #entries = new Map<string, Entry>();

  constructor(opts: RobotsCacheOptions) {
    this.#http = opts.http;
    this.#ttl = opts.ttlMs ?? DEFAULT_ROBOTS_TTL_MS;
    this.#unreachableTtl = Math.min(opts.unreachableTtlMs ?? UNREACHABLE_TTL_MS, this.#ttl);
    this.#max = opts.maxEntries ?? 1000;
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
    this.#skipTls = opts.skipTlsVerification ?? true;
  }

  /**
   * The robots.txt governing `url`'s origin. Never rejects for the site's sake (failures become a
   * status); rejects only when the caller's `signal` aborts first (the shared fetch continues and
   * is cached for the next caller).
   */
  async get(url: string, opts: { signal?: AbortSignal } = {}): Promise<RobotsTxt> {
    const origin = new URL(url).origin;
    const now = Date.now();
    let entry = this.#entries.get(origin);
    if (!entry || entry.expires <= now) {
      const value = this.#fetch(origin);
      entry = { expires: now + this.#ttl, value };
      this.#entries.delete(origin);
      this.#entries.set(origin, entry);
      const e = entry;
      // Unreachable outcomes expire sooner, counted from when they are known.
      void value.then((r) => {
        if (r.status === 'unreachable') e.expires = Math.min(e.expires, Date.now() + this.#unreachableTtl);
      });
      while (this.#entries.size > this.#max) this.#entries.delete(this.#entries.keys().next().value as string);
    }
    return opts.signal ? raceSignal(entry.value, opts.signal) : entry.value;
  }

  /** Shorthand: may `url` be crawled by `userAgent`? */
  async isAllowed(url: string, userAgent?: string, opts: { signal?: AbortSignal } = {}): Promise<boolean> {
    return (await this.get(url, opts)).isAllowed(url, userAgent);
  }

  /** Drops every cached entry (tests; configuration changes). */
  clear(): void {
    this.#entries.clear();
  }

  async #fetch(origin: string): Promise<RobotsTxt> {
    const url = `${origin}/robots.txt`;
    try {
      const res = await this.#http.fetch({
        url,
        timeoutMs: this.#timeoutMs,
        skipTlsVerification: this.#skipTls,
        mobile: false,
        proxy: 'basic',
        maxRedirects: 5,
        headers: { accept: 'text/plain,*/*;q=0.5' },
      });
      if (res.status >= 200 && res.status < 300) {
        const text = res.body
          .subarray(0, MAX_ROBOTS_BYTES)
          .toString('utf8')
          .replace(/^\uFEFF/, '');
        return parseRobotsTxt(url, text, { status: 'ok', httpStatus: res.status });
      }
      if (res.status >= 400 && res.status < 500 && res.status !== 429) return allowAll(origin, res.status);
      // 5xx, 429, and a 3xx the engine did not follow (no Location): treated as unreachable.
      return fixed(origin, 'unreachable', false, {
        httpStatus: res.status,
        error: `robots.txt answered ${res.status}`,
      });
    } catch (err) {
      if (err instanceof BlockedUrlError) return fixed(origin, 'blocked', false, { error: err.message });
      const error = err instanceof ScrapeError ? `${err.code}: ${err.message}` : (err as Error).message;
      return fixed(origin, 'unreachable', false, { error });
    }
  }
}

function raceSignal<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
