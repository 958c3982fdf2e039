// URLs as the crawler and map see them beyond their normal form (src/net/url-key.ts): site
// relations (same host, same registrable domain), the scope a crawl or map keeps to (subdomains,
// external links, start path, include/exclude regexes) and which URLs look like pages.
import { getDomain } from 'tldts';
import { BadRequestError } from '../errors.ts';
import { parseUrl } from '../net/url-key.ts';
import { type PatternMatcher, compileRe2 } from '../contract/pattern.ts';

function bareHost(hostname: string): string {
  let h = hostname.toLowerCase().replace(/\.$/, '');
  if (h.startsWith('[') && h.endsWith(']')) h = h.slice(1, -1);
  return h;
}

/**
 * The registrable domain ("site") of a host name, from the Public Suffix List (private suffixes
 * included, so foo.github.io and bar.github.io are different sites): blog.example.co.uk →
 * example.co.uk. localhost and every *.localhost are one site, "localhost". An IP address, or a
 * name that is itself a public suffix, is its own site.
 */
export function registrableDomain(hostname: string): string {
  const h = bareHost(hostname);
  if (h === 'localhost' || h.endsWith('.localhost')) return 'localhost';
  return getDomain(h, { allowPrivateDomains: true }) ?? h;
}

/** Host names equal once lower-cased and one leading "www." is ignored (example.com = www.example.com). */
export function sameHost(a: string, b: string): boolean {
  const strip = (h: string) => bareHost(h).replace(/^www\./, '');
  return strip(a) === strip(b);
}

/** Same registrable domain: blog.example.co.uk, www.example.co.uk and example.co.uk are one site. */
export function sameSite(a: string, b: string): boolean {
  return registrableDomain(a) === registrableDomain(b);
}

/** `host` is `parent` or a subdomain of it (label-wise: notexample.com is not under example.com). */
export function isSubdomainOf(host: string, parent: string): boolean {
  const h = bareHost(host);
  const p = bareHost(parent);
  return h === p || h.endsWith(`.${p}`);
}

export type HostRelation = 'same-host' | 'same-site' | 'external';

/** How `host` relates to `startHost`: the same host (www-insensitive), another host of the same site, or external. */
export function hostRelation(host: string, startHost: string): HostRelation {
  if (sameHost(host, startHost)) return 'same-host';
  return sameSite(host, startHost) ? 'same-site' : 'external';
}

/**
 * Compiles caller-supplied regexes with RE2 semantics (linear time, no flags: see contract/pattern.ts). An
 * invalid one, or one RE2 cannot express (lookaround, backreferences), is a 400 naming the field
 * and index, e.g. `body.includePaths.1`.
 */
export function compilePatterns(patterns: readonly string[] | undefined, field: string): PatternMatcher[] {
  return (patterns ?? []).map((p, i) => {
    try {
      return compileRe2(p);
    } catch (err) {
      const message = (err as Error).message;
      throw new BadRequestError(`Invalid request: ${field}.${i}: ${message}`, [{ path: `${field}.${i}`, message }]);
    }
  });
}

export interface ScopeOptions {
  /** Accept other hosts of the start URL's registrable domain (map: includeSubdomains; crawl: allowSubdomains). */
  allowSubdomains?: boolean;
  /** Accept every host (crawl: allowExternalLinks). */
  allowExternalLinks?: boolean;
  /** Only URLs at or below the start URL's path, by whole segments (crawl default; crawlEntireDomain lifts it). */
  restrictToStartPath?: boolean;
  /** Regexes; a URL must match at least one when any are given. */
  includePaths?: readonly string[];
  /** Regexes; a URL matching any is out. */
  excludePaths?: readonly string[];
  /** Match include/exclude against the full URL instead of path + query. */
  regexOnFullURL?: boolean;
  /** Prefix of the field names in 400 messages (default "body"). */
  fieldPrefix?: string;
}

export type ScopeVerdict =
  'ok' | 'invalid' | 'external' | 'subdomain' | 'outside-start-path' | 'excluded' | 'not-included';

/**
 * Which URLs a crawl or map keeps to, relative to its start URL. Construct once per job (regexes
 * are compiled and checked here: invalid ones throw a 400 naming the field).
 */
export class UrlScope {
  readonly start: URL;
  readonly #opts: ScopeOptions;
  readonly #include: PatternMatcher[];
  readonly #exclude: PatternMatcher[];
  readonly #startPath: string;

  constructor(startUrl: string, opts: ScopeOptions = {}) {
    const start = parseUrl(startUrl);
    if (!start || (start.protocol !== 'http:' && start.protocol !== 'https:')) {
      const field = `${opts.fieldPrefix ?? 'body'}.url`;
      throw new BadRequestError(`Invalid request: ${field}: must be an http(s) URL`, [
        { path: field, message: 'must be an http(s) URL' },
      ]);
    }
    this.start = start;
    this.#opts = opts;
    const prefix = opts.fieldPrefix ?? 'body';
    this.#include = compilePatterns(opts.includePaths, `${prefix}.includePaths`);
    this.#exclude = compilePatterns(opts.excludePaths, `${prefix}.excludePaths`);
    this.#startPath = start.pathname.replace(/\/+$/, '');
  }

  /** Why a URL is in or out of scope ('ok' when in). */
  verdict(input: string | URL): ScopeVerdict {
    const u = typeof input === 'string' ? parseUrl(input) : input;
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || !u.hostname) return 'invalid';
    const relation = hostRelation(u.hostname, this.start.hostname);
    if (!this.#opts.allowExternalLinks) {
      if (relation === 'external') return 'external';
      if (relation === 'same-site' && !this.#opts.allowSubdomains) return 'subdomain';
    }
    // The start path describes the start host's layout only; include/exclude apply to every URL.
    if (this.#opts.restrictToStartPath && relation === 'same-host' && !this.#underStartPath(u.pathname))
      return 'outside-start-path';
    const subject = this.#opts.regexOnFullURL ? u.href : u.pathname + u.search;
    if (this.#exclude.some((r) => r.test(subject))) return 'excluded';
    if (this.#include.length && !this.#include.some((r) => r.test(subject))) return 'not-included';
    return 'ok';
  }

  allows(input: string | URL): boolean {
    return this.verdict(input) === 'ok';
  }

  #underStartPath(pathname: string): boolean {
    const base = this.#startPath;
    return base === '' || pathname === base || pathname.startsWith(`${base}/`);
  }
}

// Extensions of URLs that are not HTML pages: listed by map, never fetched to look for links.
const NON_PAGE_EXTENSIONS = new Set(
  (
    'css js mjs json xml rss atom txt csv tsv pdf doc docx xls xlsx ppt pptx odt ods odp epub rtf ' +
    'png jpg jpeg gif webp svg ico bmp tif tiff avif heic mp3 mp4 m4a m4v webm ogg oga ogv wav flac avi mov mkv ' +
    'zip gz tgz bz2 xz 7z rar tar dmg exe msi apk iso bin woff woff2 ttf otf eot wasm'
  ).split(' '),
);

/** False for URLs whose path ends in a known non-HTML file extension (.pdf, .png, .zip, ...). */
export function looksLikePage(input: string | URL): boolean {
  const u = typeof input === 'string' ? parseUrl(input) : input;
  if (!u) return false;
  const ext = /\.([a-z0-9]{1,6})$/i.exec(u.pathname)?.[1]?.toLowerCase();
  return !ext || !NON_PAGE_EXTENSIONS.has(ext);
}

/** scheme://host[:port] of a URL. */
export function originOf(input: string | URL): string {
  return (typeof input === 'string' ? new URL(input) : input).origin;
}
