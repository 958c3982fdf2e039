// The web playground (docs/playground.md): GET / serves its page and GET /playground/{version}/{file}
// its scripts and styles, the hand-written files of src/playground/ (no build step, nothing from a CDN).
// Public like /docs: the page asks for the API key itself and sends it only in Authorization headers
// (and as the WebSocket subprotocol of the crawl status stream), never in a URL. Files are read and
// compressed once at start-up; their version is a hash of their contents, so assets are cached for
// good and the page itself is revalidated (ETag).
import { createHash } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { errorBody } from '../../contract/common.ts';
import { NotFoundError } from '../../errors.ts';

const DIR = new URL('../../playground/', import.meta.url);
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};
/** The page names its assets with this placeholder, replaced by the version. */
const VERSION_MARK = '__VERSION__';

interface Asset {
  type: string;
  etag: string;
  identity: Buffer;
  gzip: Buffer;
  br: Buffer;
}

function asset(name: string, body: Buffer): Asset {
  const type = TYPES[name.slice(name.lastIndexOf('.'))];
  const hash = createHash('sha256').update(body).digest('base64url').slice(0, 16);
  return {
    type,
    etag: `"${hash}"`,
    identity: body,
    gzip: gzipSync(body, { level: 9 }),
    br: brotliCompressSync(body, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }),
  };
}

/** The page and its assets, read from src/playground/ (files of the known types only). */
function loadPlayground(): { page: Asset; assets: Map<string, Asset>; version: string } {
  const names = readdirSync(DIR)
    .filter((n) => /^[\w-]+\.(js|css|svg)$/.test(n))
    .sort();
  const files = names.map((n) => [n, readFileSync(new URL(n, DIR))] as const);
  const all = createHash('sha256');
  for (const [n, body] of files) all.update(n).update(body);
  const version = all.digest('base64url').slice(0, 12);
  const html = readFileSync(new URL('index.html', DIR), 'utf8').replaceAll(VERSION_MARK, version);
  return {
    page: asset('index.html', Buffer.from(html)),
    assets: new Map(files.map(([n, body]) => [n, asset(n, body)])),
    version,
  };
}

/** The Content-Security-Policy of the page: its own origin only, plus the live view's when it is elsewhere. */
export function playgroundCsp(publicUrl?: string): string {
  const extra = publicUrl ? ` ${new URL(publicUrl).origin}` : '';
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob:${extra}`,
    // 'self' covers ws:// and wss:// of the same host (the crawl status stream).
    `connect-src 'self'${extra}`,
    `frame-src 'self'${extra}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** The content codings a client accepts (`br;q=0` refuses br). */
function acceptedCodings(header: string | undefined): Set<string> {
  const out = new Set<string>();
  for (const part of (header ?? '').split(',')) {
    const [coding, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    if (coding && !(q && Number(q.slice(2)) === 0)) out.add(coding);
  }
  return out;
}

function send(request: FastifyRequest, reply: FastifyReply, file: Asset, cacheControl: string, csp?: string) {
  reply
    .type(file.type)
    .header('cache-control', cacheControl)
    .header('etag', file.etag)
    .header('vary', 'accept-encoding')
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'no-referrer');
  if (csp) reply.header('content-security-policy', csp);
  const match = request.headers['if-none-match'];
  if (match && match.split(',').some((t) => t.trim().replace(/^W\//, '') === file.etag)) {
    return reply.code(304).send();
  }
  const accepted = acceptedCodings(request.headers['accept-encoding']);
  const accepts = (coding: string) => accepted.has(coding);
  if (accepts('br')) return reply.header('content-encoding', 'br').send(file.br);
  if (accepts('gzip')) return reply.header('content-encoding', 'gzip').send(file.gzip);
  return reply.send(file.identity);
}

export async function playgroundRoutes(app: FastifyInstance, { publicUrl }: { publicUrl?: string }): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { page, assets, version } = loadPlayground();
  const csp = playgroundCsp(publicUrl);
  const meta = { tags: ['meta'], security: [] as [] };

  r.get(
    '/',
    {
      config: { public: true },
      schema: {
        ...meta,
        summary: 'The web playground (an HTML page; docs/playground.md)',
        description:
          'A page to try the API from a browser: scrape, map, crawl with live progress, parse an upload, ' +
          'search, monitors and their diffs, browser sessions. It asks for the API key and keeps it in the ' +
          "browser's localStorage; no key is needed to load it.",
        produces: ['text/html'],
        response: { 200: z.string().describe('The HTML page') },
      },
    },
    async (request, reply) => send(request, reply, page, 'no-cache', csp),
  );

  r.get(
    '/playground/:version/:file',
    {
      config: { public: true },
      schema: {
        ...meta,
        summary: "The playground's scripts and styles",
        description:
          'Static files of the playground page. Under the current version they are cached for a year; ' +
          'under another one they are served but not cached. Unknown file: 404.',
        params: z.object({ version: z.string(), file: z.string() }),
        produces: ['text/javascript', 'text/css'],
        response: { 200: z.string().describe('The file'), 404: errorBody },
      },
    },
    async (request, reply) => {
      const file = assets.get(request.params.file);
      if (!file) throw new NotFoundError();
      const current = request.params.version === version;
      return send(request, reply, file, current ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  );
}
