// Sitemaps: discovery and reading.
//
// Discovery: the Sitemap: lines of the site's robots.txt; when it lists none, /sitemap.xml and
// /sitemap_index.xml of the start URL's origin (tried in that order, both read if both exist).
// Sitemaps are read whatever robots.txt's Allow/Disallow rules say: they are published for bots.
//
// Reading: XML urlsets and sitemap indexes (indexes followed recursively, breadth first, up to
// maxDepth levels, each file at most once, so loops end), RSS 2.0 and Atom feeds (item links),
// and plain-text sitemaps (one URL per line). A body whose first bytes are the gzip magic (1f 8b)
// is gunzipped whatever its Content-Type or name says (Content-Encoding is undone by the engine
// before that). Parsing is streaming (htmlparser2 in xmlMode fed chunk by chunk from the gunzip
// stream) and stops at the URL cap or at maxBytesPerFile of XML, so memory stays bounded: one
// response (the engine's size cap) plus the entries kept. Counts of files and URLs are capped;
// hitting a cap sets `truncated`.
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { Parser } from 'htmlparser2';
import type { HttpEngine } from '../scrape/engines/http.ts';
import type { RobotsCache } from './robots.ts';
import { BlockedUrlError } from '../errors.ts';

export interface SitemapEntry {
  url: string;
  /** <lastmod> as written (W3C datetime), when given. */
  lastmod?: string;
}

export type SitemapKind = 'urlset' | 'sitemapindex' | 'rss' | 'atom' | 'text' | 'unknown';

export interface ParsedSitemap {
  kind: SitemapKind;
  /** Page URLs (urlset, feed, text). */
  entries: SitemapEntry[];
  /** Child sitemap URLs (sitemapindex). */
  sitemaps: SitemapEntry[];
  /** Stopped early at maxUrls or maxBytes. */
  truncated: boolean;
}

export interface ParseSitemapOptions {
  /** Base for relative <loc> values (the sitemap's own URL). */
  baseUrl: string;
  /** Most page URLs kept from this file (default 50,000, the protocol's per-file limit). */
  maxUrls?: number;
  /** Most bytes of (decompressed) sitemap read (default 50 MiB, the protocol's limit). */
  maxBytes?: number;
  /** Entries failing this test are skipped and do not count toward maxUrls. */
  accept?: (url: string) => boolean;
}

export const SITEMAP_DEFAULTS = {
  maxUrls: 100_000,
  maxFiles: 50,
  maxDepth: 3,
  maxBytesPerFile: 50 * 1024 * 1024,
  timeoutMs: 15_000,
  concurrency: 4,
} as const;

const isGzip = (b: Buffer) => b.length >= 2 && b[0] === 0x1f && b[1] === 0x8b;

function absoluteHttp(value: string, base: string): string | undefined {
  try {
    const u = new URL(value.trim(), base);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** Chunks of the body, gunzipped when it starts with the gzip magic (Content-Encoding was already undone by the engine). */
async function* chunksOf(body: Buffer): AsyncGenerator<Buffer> {
  if (!isGzip(body)) {
    for (let i = 0; i < body.length; i += 64 * 1024) yield body.subarray(i, i + 64 * 1024);
    return;
  }
  const gunzip = zlib.createGunzip();
  const source = Readable.from([body]);
  source.pipe(gunzip);
  try {
    for await (const chunk of gunzip) yield chunk as Buffer;
  } finally {
    source.destroy();
    gunzip.destroy();
  }
}

/**
 * Parses one sitemap file (XML urlset or index, RSS/Atom feed, or plain text; gzipped or not).
 * Streaming; stops at maxUrls or maxBytes. A corrupt gzip stream keeps what was read before it.
 */
export async function parseSitemap(body: Buffer, opts: ParseSitemapOptions): Promise<ParsedSitemap> {
  const maxUrls = opts.maxUrls ?? 50_000;
  const maxBytes = opts.maxBytes ?? SITEMAP_DEFAULTS.maxBytesPerFile;
  const out: ParsedSitemap = { kind: 'unknown', entries: [], sitemaps: [], truncated: false };
  const seen = new Set<string>();
  const addEntry = (loc: string, lastmod?: string) => {
    const url = absoluteHttp(loc, opts.baseUrl);
    if (!url || seen.has(url) || (opts.accept && !opts.accept(url))) return;
    if (out.entries.length >= maxUrls) {
      out.truncated = true;
      return;
    }
    seen.add(url);
    out.entries.push(lastmod ? { url, lastmod } : { url });
  };
  const addSitemap = (loc: string, lastmod?: string) => {
    const url = absoluteHttp(loc, opts.baseUrl);
    if (!url || out.sitemaps.some((s) => s.url === url)) return;
    if (out.sitemaps.length >= maxUrls) {
      out.truncated = true;
      return;
    }
    out.sitemaps.push(lastmod ? { url, lastmod } : { url });
  };
  const full = () => out.entries.length >= maxUrls && out.truncated;

  // Element stack of local names (namespace prefixes dropped: <sm:url> is <url>, but <image:loc>
  // sits under <image:image>, not under <url>, so it is never taken for the page URL).
  const stack: string[] = [];
  let text = '';
  let capturing = false;
  let current: { loc?: string; lastmod?: string; href?: string } | undefined;
  let mode: 'detect' | 'xml' | 'text' = 'detect';
  let textRest = '';

  const local = (name: string) => {
    const i = name.indexOf(':');
    return (i >= 0 ? name.slice(i + 1) : name).toLowerCase();
  };
  const parser = new Parser(
    {
      onopentag(name, attribs) {
        const n = local(name);
        const parent = stack[stack.length - 1];
        stack.push(n);
        if (stack.length === 1) {
          if (n === 'urlset') out.kind = 'urlset';
          else if (n === 'sitemapindex') out.kind = 'sitemapindex';
          else if (n === 'rss' || n === 'rdf') out.kind = 'rss';
          else if (n === 'feed') out.kind = 'atom';
          return;
        }
        if ((n === 'url' && out.kind === 'urlset') || (n === 'sitemap' && out.kind === 'sitemapindex')) current = {};
        else if ((n === 'item' && out.kind === 'rss') || (n === 'entry' && out.kind === 'atom')) current = {};
        else if (current && n === 'loc' && (parent === 'url' || parent === 'sitemap')) startText();
        else if (current && n === 'lastmod' && (parent === 'url' || parent === 'sitemap')) startText();
        else if (current && n === 'link' && parent === 'item') startText();
        else if (current && n === 'updated' && parent === 'entry') startText();
        else if (current && n === 'link' && parent === 'entry') {
          const rel = (attribs.rel ?? 'alternate').toLowerCase();
          if (rel === 'alternate' && attribs.href && current.href === undefined) current.href = attribs.href;
        }
      },
      ontext(t) {
        if (capturing) text += t;
      },
      onclosetag(name) {
        const n = local(name);
        stack.pop();
        if (capturing && current) {
          const value = text.trim();
          if (n === 'loc' || (n === 'link' && out.kind === 'rss')) current.loc = value;
          else if (n === 'lastmod' || n === 'updated') current.lastmod = value || undefined;
          capturing = false;
          text = '';
          return;
        }
        if (!current) return;
        if (n === 'url' || n === 'item') {
          if (current.loc) addEntry(current.loc, current.lastmod);
          current = undefined;
        } else if (n === 'entry') {
          if (current.href) addEntry(current.href, current.lastmod);
          current = undefined;
        } else if (n === 'sitemap') {
          if (current.loc) addSitemap(current.loc, current.lastmod);
          current = undefined;
        }
      },
    },
    { xmlMode: true, decodeEntities: true },
  );
  function startText() {
    capturing = true;
    text = '';
  }

  const textLines = (chunk: string, final: boolean) => {
    const lines = (textRest + chunk).split(/\r?\n|\r/);
    textRest = final ? '' : (lines.pop() ?? '');
    for (const line of lines) {
      const l = line.trim();
      if (/^https?:\/\//i.test(l)) addEntry(l);
      if (full()) return;
    }
  };

  let bytes = 0;
  const decoder = new TextDecoder('utf-8');
  try {
    for await (const chunk of chunksOf(body)) {
      let buf = chunk;
      if (bytes + buf.length > maxBytes) {
        buf = buf.subarray(0, maxBytes - bytes);
        out.truncated = true;
      }
      bytes += buf.length;
      const s = decoder.decode(buf, { stream: true });
      if (mode === 'detect') {
        const head = s.replace(/^\uFEFF/, '').trimStart();
        if (head) {
          mode = head.startsWith('<') ? 'xml' : 'text';
          if (mode === 'text') out.kind = 'text';
        }
      }
      if (mode === 'xml') parser.write(s);
      else if (mode === 'text') textLines(s, false);
      if (full() || bytes >= maxBytes) break;
    }
  } catch {
    // Corrupt or truncated gzip: keep what was parsed.
    out.truncated = true;
  }
  if (mode === 'xml') parser.end();
  else if (mode === 'text') textLines(decoder.decode(), true);
  if (out.kind === 'unknown' && mode === 'xml') out.entries.length = 0;
  return out;
}

export interface SitemapFileReport {
  url: string;
  /** Index depth: 0 for the files the read started with. */
  depth: number;
  kind?: SitemapKind;
  /** Page URLs it listed (after `accept`). */
  urls?: number;
  /** HTTP status, when it answered. */
  status?: number;
  error?: string;
}

export interface SitemapReadOptions {
  /** Most page URLs returned overall (default 100,000). */
  maxUrls?: number;
  /** Most sitemap files fetched (default 50). */
  maxFiles?: number;
  /** Index levels followed below the starting files (default 3). */
  maxDepth?: number;
  /** Most bytes of XML read per file, after gunzip (default 50 MiB). */
  maxBytesPerFile?: number;
  /** Timeout of each file's fetch (default 15 s). */
  timeoutMs?: number;
  /** Files fetched at once (default 4). */
  concurrency?: number;
  /** Stops the read: files not yet fetched are skipped, what was read is returned. */
  signal?: AbortSignal;
  /** Entries failing this (e.g. another site's URLs) are skipped and do not count. */
  accept?: (url: string) => boolean;
  /** Accept-Language, most preferred first. */
  languages?: string[];
  /** Accept any TLS certificate (default true, as scrape's default). */
  skipTlsVerification?: boolean;
}

export interface SitemapReadResult {
  /** Page URLs, each once, in file order (files in discovery order, breadth first). */
  entries: SitemapEntry[];
  /** Every file asked for, in discovery order. */
  files: SitemapFileReport[];
  /** A cap (URLs, files, depth, bytes) or the signal cut the read short. */
  truncated: boolean;
}

export interface SitemapReaderDeps {
  http: HttpEngine;
  robots: RobotsCache;
}

/** Finds and reads a site's sitemaps through the HttpEngine (SSRF-guarded, size-capped). */
export class SitemapReader {
  readonly #http: HttpEngine;
  readonly #robots: RobotsCache;

  constructor(deps: SitemapReaderDeps) {
    this.#http = deps.http;
    this.#robots = deps.robots;
  }

  /**
   * Sitemap URLs for the site of `siteUrl`: robots.txt's Sitemap lines, else the two
   * conventional locations. Throws BlockedUrlError when the origin is refused by the SSRF guard.
   */
  async discover(siteUrl: string, opts: { signal?: AbortSignal } = {}): Promise<string[]> {
    const robots = await this.#robots.get(siteUrl, opts);
    if (robots.status === 'blocked') throw new BlockedUrlError(robots.error ?? `Blocked request to ${robots.origin}`);
    if (robots.sitemaps.length) return robots.sitemaps;
    const origin = new URL(siteUrl).origin;
    return [`${origin}/sitemap.xml`, `${origin}/sitemap_index.xml`];
  }

  /** discover() then read(). */
  async readSite(siteUrl: string, opts: SitemapReadOptions = {}): Promise<SitemapReadResult> {
    const urls = await this.discover(siteUrl, { signal: opts.signal });
    return this.read(urls, opts);
  }

  /** Reads the given sitemap files and, recursively, the sitemaps their indexes list. */
  async read(sitemapUrls: string[], opts: SitemapReadOptions = {}): Promise<SitemapReadResult> {
    const maxUrls = opts.maxUrls ?? SITEMAP_DEFAULTS.maxUrls;
    const maxFiles = opts.maxFiles ?? SITEMAP_DEFAULTS.maxFiles;
    const maxDepth = opts.maxDepth ?? SITEMAP_DEFAULTS.maxDepth;
    const concurrency = Math.max(1, opts.concurrency ?? SITEMAP_DEFAULTS.concurrency);
    const files: SitemapFileReport[] = [];
    const results: SitemapEntry[][] = [];
    const queued = new Set<string>();
    let truncated = false;
    let collected = 0;

    const enqueue = (url: string, depth: number) => {
      const key = url.replace(/#.*$/, '');
      if (queued.has(key)) return; // loops and repeats: each file once
      if (depth > maxDepth) {
        truncated = true;
        return;
      }
      if (files.length >= maxFiles) {
        truncated = true;
        return;
      }
      queued.add(key);
      files.push({ url: key, depth });
    };
    for (const u of sitemapUrls) enqueue(u, 0);

    let next = 0;
    const worker = async () => {
      while (next < files.length) {
        if (opts.signal?.aborted || collected >= maxUrls) {
          truncated ||= next < files.length;
          return;
        }
        const index = next++;
        const report = files[index];
        const parsed = await this.#readOne(report, opts, maxUrls - collected);
        if (!parsed) continue;
        results[index] = parsed.entries;
        collected += parsed.entries.length;
        if (parsed.truncated) truncated = true;
        for (const child of parsed.sitemaps) enqueue(child.url, report.depth + 1);
      }
    };
    // Workers pick files in discovery order; children are appended as indexes are read.
    await Promise.all(Array.from({ length: concurrency }, worker));
    // A worker may have stopped while others added files: finish those with one more pass.
    while (next < files.length && !opts.signal?.aborted && collected < maxUrls) await worker();
    if (next < files.length) truncated = true;

    const entries: SitemapEntry[] = [];
    const seen = new Set<string>();
    for (const list of results) {
      for (const e of list ?? []) {
        if (seen.has(e.url)) continue;
        if (entries.length >= maxUrls) {
          truncated = true;
          break;
        }
        seen.add(e.url);
        entries.push(e);
      }
    }
    return { entries, files, truncated };
  }

  async #readOne(
    report: SitemapFileReport,
    opts: SitemapReadOptions,
    room: number,
  ): Promise<ParsedSitemap | undefined> {
    try {
      const res = await this.#http.fetch({
        url: report.url,
        timeoutMs: opts.timeoutMs ?? SITEMAP_DEFAULTS.timeoutMs,
        skipTlsVerification: opts.skipTlsVerification ?? true,
        mobile: false,
        proxy: 'basic',
        languages: opts.languages,
        maxRedirects: 5,
        signal: opts.signal,
        headers: { accept: 'application/xml,text/xml;q=0.9,text/plain;q=0.8,*/*;q=0.5' },
      });
      report.status = res.status;
      if (res.status < 200 || res.status >= 300) {
        report.error = `answered ${res.status}`;
        return undefined;
      }
      const parsed = await parseSitemap(res.body, {
        baseUrl: res.url,
        maxUrls: Math.max(0, room),
        maxBytes: opts.maxBytesPerFile,
        accept: opts.accept,
      });
      report.kind = parsed.kind;
      report.urls = parsed.entries.length;
      return parsed;
    } catch (err) {
      report.error = (err as Error).message;
      return undefined;
    }
  }
}
