// URL normal form and dedup key, for any layer that fetches, stores or compares URLs (crawl,
// map, change tracking, extract): one normal form for fetching and reporting, one key for
// dedup/visited sets.

export interface NormalizeOptions {
  /** Drop the whole query string (the wire option ignoreQueryParameters). */
  ignoreQueryParameters?: boolean;
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** Upper-cases percent-escapes and decodes those of unreserved characters (RFC 3986 §6.2.2). */
function normalizeEscapes(s: string): string {
  return s.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => {
    const ch = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/** Query parameters sorted by name, stable, without re-encoding; empty pieces dropped. */
function sortQuery(search: string): string {
  const pieces = search.replace(/^\?/, '').split('&').filter(Boolean).map(normalizeEscapes);
  if (!pieces.length) return '';
  const name = (p: string) => {
    const eq = p.indexOf('=');
    return eq < 0 ? p : p.slice(0, eq);
  };
  const sorted = pieces
    .map((p, i) => ({ p, i, k: name(p) }))
    .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : a.i - b.i));
  return `?${sorted.map((x) => x.p).join('&')}`;
}

/** The URL, or undefined when the input (trimmed, resolved against `base`) is not one. */
export function parseUrl(input: string | URL, base?: string | URL): URL | undefined {
  try {
    return typeof input === 'string' ? new URL(input.trim(), base) : new URL(input.href);
  } catch {
    return undefined;
  }
}

/**
 * The normal form of an absolute http(s) URL, or undefined when the input is not one. With
 * `base`, relative references are resolved against it first.
 *
 * Normal form (normalizeUrl): http(s) only (anything else is dropped: mailto:, javascript:, data:,
 * ftp:, ...); scheme and host lower-cased, one trailing dot of the host removed, default ports
 * dropped, dot segments resolved (WHATWG URL does these); user:password@ dropped; the fragment
 * dropped; percent-escapes upper-cased and escapes of unreserved characters (A-Z a-z 0-9 - . _ ~)
 * decoded; the query either dropped whole (ignoreQueryParameters) or kept with its parameters
 * sorted by name (stable: repeated names keep their relative order; values are not re-encoded);
 * an empty query ("?") removed.
 */
export function normalizeUrl(
  input: string | URL,
  opts: NormalizeOptions = {},
  base?: string | URL,
): string | undefined {
  const u = parseUrl(input, base);
  if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:')) return undefined;
  if (u.hostname.endsWith('.')) u.hostname = u.hostname.slice(0, -1);
  if (!u.hostname) return undefined;
  // Only what differs is assigned: each assignment re-serialises the whole URL, and most URLs
  // are in normal form already (this runs several times for every crawled page and link).
  if (u.username) u.username = '';
  if (u.password) u.password = '';
  // A serialised URL holds "#" only as the fragment's mark, and "?" (once the fragment is gone)
  // only as the query's: a lone "#" or "?" from the input shows there, not in hash or search.
  if (u.href.includes('#')) u.hash = '';
  const path = u.pathname;
  if (path.includes('%')) {
    const normal = normalizeEscapes(path);
    if (normal !== path) u.pathname = normal;
  }
  const search = u.search;
  const query = opts.ignoreQueryParameters || !search ? '' : sortQuery(search);
  // Assigning "" to search leaves no "?".
  if (query !== search || (!query && u.href.includes('?'))) u.search = query;
  return u.href;
}

/**
 * The dedup/visited-set key: the normal form with one trailing slash of a non-root path ignored.
 *
 * Trailing slash policy: the normal form keeps the path as the site wrote it, because the slash
 * can matter to the server (/blog answers 301 → /blog/). The dedup key (urlKey) ignores ONE
 * trailing slash on a non-root path, so /docs and /docs/ are one entry; whichever form is seen
 * first is the one fetched and reported. The root path is always "/".
 */
export function urlKey(input: string | URL, opts: NormalizeOptions = {}): string | undefined {
  const n = normalizeUrl(input, opts);
  if (!n) return undefined;
  const u = new URL(n);
  if (u.pathname.length > 1 && u.pathname.endsWith('/')) u.pathname = u.pathname.slice(0, -1);
  return u.href;
}

/**
 * A link as written in a page (href) made absolute against the page's base URL and normalised;
 * undefined for empty, fragment-only, non-http(s) (mailto:, tel:, javascript:, data:) or broken
 * references.
 */
export function resolveLink(href: string, base: string | URL, opts: NormalizeOptions = {}): string | undefined {
  const h = href.trim();
  if (!h || h.startsWith('#')) return undefined;
  return normalizeUrl(h, opts, base);
}

export function isHttpUrl(s: string): boolean {
  const u = parseUrl(s);
  return Boolean(u && (u.protocol === 'http:' || u.protocol === 'https:') && u.hostname);
}
