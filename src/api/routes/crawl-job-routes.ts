// The routes crawls and batch scrapes share on their id: GET (status and data, with its
// WebSocket form), DELETE (cancel) and GET …/errors; each caller gives its path, kind and texts.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authErrors, errorBody } from '../../contract/common.ts';
import { crawlCancelled, crawlErrors, crawlStatus, crawlStatusQuery } from '../../contract/crawl.ts';
import type { CrawlKind } from '../../crawl/crawl-row.ts';
import type { Crawler } from '../../crawl/crawler.ts';
import { statusStream } from '../status-stream.ts';
import type { Db } from '../../store/db-types.ts';

/** Base of the URLs in answers: config.publicUrl, else the request's own. */
export function publicBase(publicUrl: string | undefined): (request: FastifyRequest) => string {
  return (request) => publicUrl ?? `${request.protocol}://${request.host}`;
}

export interface CrawlJobRoutesOptions {
  crawler: Crawler;
  db: Db;
  publicUrl?: string;
  kind: CrawlKind;
  /** '/v2/crawl' or '/v2/batch/scrape'. */
  path: string;
  tags: string[];
  status: { summary: string; description: string };
  cancel: { summary: string; description: string };
  errors: { summary: string };
}

export function crawlJobRoutes(app: FastifyInstance, o: CrawlJobRoutesOptions): void {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const { crawler, db, publicUrl, kind, tags } = o;
  const base = publicBase(publicUrl);
  const params = z.object({ id: z.uuid() });

  // `route` rather than `get`: only RouteOptions carry wsHandler (the WebSocket form of the same path).
  r.route({
    method: 'GET',
    url: `${o.path}/:id`,
    config: { rateLimit: 'status' },
    schema: {
      tags,
      ...o.status,
      params,
      querystring: crawlStatusQuery,
      response: { 200: crawlStatus, 404: errorBody, ...authErrors },
    },
    handler: async (request) =>
      crawler.status(request.caller.teamId, request.params.id, kind, request.query, base(request)),
    wsHandler: statusStream({ crawler, db, kind, publicUrl }),
  });

  r.delete(
    `${o.path}/:id`,
    {
      config: { rateLimit: 'status' },
      schema: { tags, ...o.cancel, params, response: { 200: crawlCancelled, 404: errorBody, ...authErrors } },
    },
    async (request) => {
      await crawler.cancel(request.caller.teamId, request.params.id, kind);
      return { status: 'cancelled' as const };
    },
  );

  r.get(
    `${o.path}/:id/errors`,
    {
      config: { rateLimit: 'status' },
      schema: { tags, ...o.errors, params, response: { 200: crawlErrors, 404: errorBody, ...authErrors } },
    },
    async (request) => crawler.errors(request.caller.teamId, request.params.id, kind),
  );
}
