// SearXNG (https://docs.searxng.org), the metasearch engine users self-host, through its JSON API:
// GET {SEARXNG_URL}/search?q&format=json&categories=general|news|images&pageno&time_range&language.
// Its results become web, news and images hits. The instance must allow the json format
// (settings.yml: search.formats), or it answers 403.
//
// SEARXNG_URL is the operator's own configured service, not a caller's URL: it is fetched without
// the SSRF guard that protects scrapes (it is typically on localhost or a private network).
import { Agent, request } from 'undici';
import type { SearchSource } from '../contract/search.ts';
import { SearchBackendError } from '../errors.ts';
import type { SearchBackend, SearchHit, SearchParams } from './backend.ts';
import { categoryOf, hostOf, onDomains } from './filters.ts';

const CATEGORY: Record<SearchSource, string> = { web: 'general', news: 'news', images: 'images' };
/** Result pages read at most to fill `limit` after the domain and category filters. */
const MAX_PAGES = 5;
const MAX_BODY_BYTES = 8 * 1024 * 1024;

interface SearxResult {
  url?: string;
  title?: string;
  content?: string;
  publishedDate?: string | null;
  img_src?: string;
  thumbnail_src?: string;
  thumbnail?: string;
  resolution?: string;
}

export interface SearxngOptions {
  baseUrl: string;
  timeoutMs: number;
}

export class SearxngBackend implements SearchBackend {
  readonly name = 'SearXNG';
  readonly sources = ['web', 'news', 'images'] as const;
  readonly #o: SearxngOptions;
  readonly #agent: Agent;

  constructor(o: SearxngOptions) {
    this.#o = o;
    this.#agent = new Agent({ connections: 16, headersTimeout: o.timeoutMs, bodyTimeout: o.timeoutMs });
  }

  async search(p: SearchParams): Promise<SearchHit[]> {
    const hits: SearchHit[] = [];
    const seen = new Set<string>();
    for (let page = 1; page <= MAX_PAGES && hits.length < p.limit; page++) {
      const results = await this.#page(p, page);
      let fresh = 0;
      for (const r of results) {
        const hit = toHit(p.source, r);
        if (!hit || seen.has(hit.url)) continue;
        seen.add(hit.url);
        fresh++;
        if (!wanted(hit, p)) continue;
        hits.push({ ...hit, position: hits.length + 1 });
        if (hits.length >= p.limit) break;
      }
      // The engines have nothing more (an empty page, or one repeating what came before).
      if (fresh === 0) break;
    }
    return hits;
  }

  async #page(p: SearchParams, pageno: number): Promise<SearxResult[]> {
    const url = new URL(`${this.#o.baseUrl}/search`);
    url.searchParams.set('q', queryWithSite(p));
    url.searchParams.set('format', 'json');
    url.searchParams.set('categories', CATEGORY[p.source]);
    url.searchParams.set('pageno', String(pageno));
    if (p.time?.range) url.searchParams.set('time_range', p.time.range);
    const language = p.country ? languageOf(p.country) : undefined;
    if (language) url.searchParams.set('language', language);
    const signal = AbortSignal.any([p.signal, AbortSignal.timeout(this.#o.timeoutMs)]);
    let status: number;
    let text: string;
    try {
      const res = await request(url, {
        dispatcher: this.#agent,
        signal,
        headers: { accept: 'application/json' },
      });
      status = res.statusCode;
      text = await readCapped(res.body, MAX_BODY_BYTES);
    } catch (err) {
      if (p.signal.aborted) throw err;
      throw new SearchBackendError(`SearXNG at ${this.#o.baseUrl} did not answer: ${(err as Error).message}`);
    }
    if (status === 403)
      throw new SearchBackendError(
        'SearXNG refused the JSON format (403): add "json" to search.formats in its settings.yml',
      );
    if (status !== 200) throw new SearchBackendError(`SearXNG answered HTTP ${status}`);
    let body: { results?: unknown };
    try {
      body = JSON.parse(text) as { results?: unknown };
    } catch {
      throw new SearchBackendError('SearXNG answered something that is not JSON');
    }
    return Array.isArray(body.results) ? (body.results as SearxResult[]) : [];
  }

  async close(): Promise<void> {
    await this.#agent.close();
  }
}

/** One include domain narrows the engines' own search (`site:`); the hits are filtered either way. */
function queryWithSite(p: SearchParams): string {
  return p.includeDomains?.length === 1 ? `${p.query} site:${p.includeDomains[0]}` : p.query;
}

function toHit(source: SearchSource, r: SearxResult): Omit<SearchHit, 'position'> | undefined {
  if (typeof r.url !== 'string' || !r.url) return undefined;
  const hit: Omit<SearchHit, 'position'> = {
    source,
    url: r.url,
    title: typeof r.title === 'string' ? r.title : '',
    description: typeof r.content === 'string' ? r.content : '',
  };
  if (r.publishedDate) hit.date = r.publishedDate;
  const image = source === 'images' ? r.img_src : (r.thumbnail ?? r.thumbnail_src ?? r.img_src);
  if (typeof image === 'string' && image) hit.imageUrl = image;
  const size = /^\s*(\d+)\s*[x×]\s*(\d+)\s*$/.exec(r.resolution ?? '');
  if (source === 'images' && size) {
    hit.imageWidth = Number(size[1]);
    hit.imageHeight = Number(size[2]);
  }
  return hit;
}

/** Domain, category and time filters the engines may not have honoured. */
function wanted(hit: Omit<SearchHit, 'position'>, p: SearchParams): boolean {
  const host = hostOf(hit.url);
  if (!host) return true; // an odd URL is the caller's to judge (ignoreInvalidURLs)
  if (p.includeDomains?.length && !onDomains(host, p.includeDomains)) return false;
  if (p.excludeDomains?.length && onDomains(host, p.excludeDomains)) return false;
  if (p.source === 'web' && p.categories?.length && !categoryOf(hit.url, p.categories)) return false;
  if (hit.date && p.time && (p.time.since || p.time.until)) {
    const at = Date.parse(hit.date);
    if (Number.isFinite(at) && ((p.time.since && at < +p.time.since) || (p.time.until && at > +p.time.until)))
      return false;
  }
  return true;
}

/** The country's most likely language as SearXNG's locale ("de" → "de-DE"). */
export function languageOf(country: string): string | undefined {
  try {
    const region = country.toUpperCase();
    const { language } = new Intl.Locale(`und-${region}`).maximize();
    return language && language !== 'und' ? `${language}-${region}` : undefined;
  } catch {
    return undefined;
  }
}

async function readCapped(body: AsyncIterable<Buffer>, max: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > max) throw new SearchBackendError(`SearXNG answered more than ${max} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
