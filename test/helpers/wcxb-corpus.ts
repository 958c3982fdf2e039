// A corpus in the WCXB layout (the dev split in ../shared/corpora/wcxb-dev, or the CI sample in
// test/fixtures/wcxb-sample): metadata.json (id → page type, URL), html/<id>.html.gz, ground-truth/<id>.json,
// score.mjs. Here: reading it, serving its pages from loopback, and scraping them through a running service.
//
// Each page is served at its original path and query (extractors may read the URL's shape), on as many loopback
// ports as the most pages sharing one path need ("/" is shared by dozens of home pages); only the host differs.
// The body is the page as fetched, gunzipped, with the charset its meta tag declares in the Content-Type.
import { existsSync, readFileSync } from 'node:fs';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Api } from './api.ts';
import type { WcxbTruth } from './wcxb-score.ts';

export interface WcxbPage {
  id: string;
  type: string;
  /** The URL the page was fetched from (a few pages have none). */
  url: string | null;
}

/** The WCXB dev split: WCXB_DIR, else shared/corpora/wcxb-dev in the nearest ancestor of `from` that has it; null. */
export function findWcxbDev(from: string): string | null {
  if (process.env.WCXB_DIR) return resolve(process.env.WCXB_DIR);
  for (let d = resolve(from); ; d = dirname(d)) {
    const candidate = join(d, 'shared/corpora/wcxb-dev');
    if (existsSync(join(candidate, 'metadata.json'))) return candidate;
    if (dirname(d) === d) return null;
  }
}

/** The corpus's pages, by id. */
export function readPages(dir: string): WcxbPage[] {
  const { files } = JSON.parse(readFileSync(join(dir, 'metadata.json'), 'utf8')) as {
    files: Record<string, { page_type: string; url: string | null }>;
  };
  return Object.entries(files)
    .map(([id, f]) => ({ id, type: f.page_type, url: f.url }))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export function readTruth(dir: string, id: string): WcxbTruth {
  return (JSON.parse(readFileSync(join(dir, 'ground-truth', `${id}.json`), 'utf8')) as { ground_truth: WcxbTruth })
    .ground_truth;
}

export function readHtml(dir: string, id: string): Buffer {
  return gunzipSync(readFileSync(join(dir, 'html', `${id}.html.gz`)));
}

const META_CHARSET = /<meta\b[^>]*?charset\s*=\s*["']?\s*([\w.:-]+)/i;

/** The Content-Type to serve a page with: text/html, with the charset its first meta tag names (if any). */
export function contentTypeOf(html: Buffer): string {
  const charset = META_CHARSET.exec(html.subarray(0, 65536).toString('latin1'))?.[1];
  return charset ? `text/html; charset=${charset.toLowerCase()}` : 'text/html';
}

/** The path (and query) a page is served at. */
function pathOf(page: WcxbPage): string {
  try {
    const u = new URL(page.url ?? '');
    return u.pathname + u.search;
  } catch {
    return `/${page.id}`;
  }
}

export interface PageServer {
  /** The loopback URL serving the page. */
  urlOf(id: string): string;
  close(): Promise<void>;
}

export async function servePages(dir: string, pages: WcxbPage[]): Promise<PageServer> {
  // Per port, path → id; a page takes the first port where its path is free.
  const routes: Map<string, string>[] = [];
  const where = new Map<string, { port: number; path: string }>();
  const assigned = pages.map((p) => {
    const path = pathOf(p);
    let i = routes.findIndex((r) => !r.has(path));
    if (i < 0) i = routes.push(new Map()) - 1;
    routes[i].set(path, p.id);
    return { id: p.id, slot: i, path };
  });
  const servers: Server[] = [];
  const close = () =>
    Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())))).then(() => undefined);
  try {
    for (const paths of routes) {
      const server = createServer((req, res) => {
        const id = paths.get(req.url ?? '');
        if (!id) {
          res.writeHead(404, { 'content-type': 'text/plain' }).end('not a page of the corpus');
          return;
        }
        const html = readHtml(dir, id);
        res.writeHead(200, { 'content-type': contentTypeOf(html), 'content-length': html.length }).end(html);
      });
      servers.push(server);
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, '127.0.0.1', () => resolve());
      });
    }
  } catch (err) {
    await close();
    throw err;
  }
  for (const a of assigned) where.set(a.id, { port: (servers[a.slot].address() as AddressInfo).port, path: a.path });
  return {
    urlOf(id) {
      const w = where.get(id);
      if (!w) throw new Error(`page ${id} is not served`);
      return `http://127.0.0.1:${w.port}${w.path}`;
    },
    close,
  };
}

export interface ScrapedPage {
  id: string;
  /** The markdown of the scrape ('' when it failed). */
  markdown: string;
  /** Wall time of the scrape call, ms. */
  ms: number;
  error?: string;
}

/**
 * Scrapes every page with onlyMainContent, fresh (maxAge 0, not stored in the cache, so each page is really fetched
 * and transformed), `concurrency` at a time; calls `onPage` as each ends, in completion order.
 */
export async function scrapePages(
  api: Api,
  server: PageServer,
  ids: string[],
  { concurrency = 8, onPage }: { concurrency?: number; onPage?: (p: ScrapedPage) => void | Promise<void> } = {},
): Promise<ScrapedPage[]> {
  const out: ScrapedPage[] = [];
  let next = 0;
  const worker = async () => {
    while (next < ids.length) {
      const id = ids[next++];
      const t = performance.now();
      const res = await api.scrape({
        url: server.urlOf(id),
        formats: ['markdown'],
        onlyMainContent: true,
        maxAge: 0,
        storeInCache: false,
      });
      const ms = performance.now() - t;
      const ok = res.status === 200 && typeof res.json?.data?.markdown === 'string';
      const page: ScrapedPage = ok
        ? { id, markdown: res.json.data.markdown as string, ms }
        : { id, markdown: '', ms, error: `${res.status} ${res.text.slice(0, 200)}` };
      out.push(page);
      await onPage?.(page);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, worker));
  return out;
}
