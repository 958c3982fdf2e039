// POST /v2/crawl, GET/DELETE /v2/crawl/{id}, GET /v2/crawl/{id}/errors, GET /v2/crawl/active
// (alias /v2/crawl/ongoing). The crawling itself runs on the job queue (src/crawl/crawler.ts).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { authErrors, errorBody } from '../../contract/common.ts';
import { crawlActive, crawlRequest, crawlStarted } from '../../contract/crawl.ts';
import type { Crawler } from '../../crawl/crawler.ts';
import { crawlJobRoutes, publicBase } from './crawl-job-routes.ts';
import type { Db } from '../../store/db-types.ts';
import { describeErrorCodes } from '../../errors.ts';

export async function crawlRoutes(
  app: FastifyInstance,
  { crawler, db, publicUrl }: { crawler: Crawler; db: Db; publicUrl?: string },
): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['crawl'];
  const base = publicBase(publicUrl);

  r.post(
    '/v2/crawl',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags,
        summary: 'Start a crawl',
        description:
          'Crawls a site asynchronously: the start URL, the links found on each page (in scope, within maxDiscoveryDepth) and, ' +
          'unless sitemap is "skip", the sitemaps; robots.txt obeyed unless ignoreRobotsTxt. Every page goes through the scrape ' +
          'pipeline with scrapeOptions and costs what a scrape costs. `webhook` (a URL or {url, headers, metadata, events}) receives ' +
          'crawl.started, crawl.page (one per page, data [document]), crawl.completed, crawl.failed and crawl.cancelled as signed POSTs ' +
          '(X-Firecrawl-Signature: sha256=<HMAC-SHA256 of the raw body under the team webhook secret>), delivered at least once: 10 s ' +
          'timeout, a non-2xx answer is retried (default after 60, 300 and 900 s); a non-http(s) webhook URL is a 400 naming body.webhook.url. ' +
          'Refused with 400 naming the field: prompt, zeroDataRetention (not supported yet). ' +
          `Errors: ${describeErrorCodes(['BAD_REQUEST', 'INSUFFICIENT_CREDITS', ['RATE_LIMITED', 'class crawl']])}.`,
        body: crawlRequest,
        response: { 200: crawlStarted, 402: errorBody, ...authErrors },
      },
    },
    async (request) => {
      const { id, warning } = await crawler.start(request.caller, request.body, base(request));
      return { success: true as const, id, url: `${base(request)}/v2/crawl/${id}`, ...(warning ? { warning } : {}) };
    },
  );

  const active = async (request: FastifyRequest) => ({
    success: true as const,
    crawls: await crawler.active(request.caller.teamId),
  });
  for (const path of ['/v2/crawl/active', '/v2/crawl/ongoing']) {
    r.get(
      path,
      {
        config: { rateLimit: 'status' },
        schema: { tags, summary: "The team's running crawls", response: { 200: crawlActive, ...authErrors } },
      },
      active,
    );
  }

  crawlJobRoutes(app, {
    crawler,
    db,
    publicUrl,
    kind: 'crawl',
    path: '/v2/crawl',
    tags,
    status: {
      summary: 'Crawl status and data',
      description:
        'Documents of the pages scraped so far, in admission order, from `skip`, at most `limit` and about 10 MiB; ' +
        '`next` is the URL of the rest whenever more data remains or the crawl is still running. ' +
        `${describeErrorCodes(['CRAWL_NOT_FOUND'])} for another team's id. ` +
        'Also a WebSocket on the same path (what the SDK watchers open; the API key as the subprotocol or the Authorization header, ' +
        'a wrong key is refused with 401): JSON messages {type: "catchup", data: <this status document>}, then ' +
        '{type: "document", data: <document>} as each page is done (every page once), then {type: "done", data: <terminal status, data []>} ' +
        'and close 1000; {type: "error", error, code} then close 1008 (unknown id) or 1011.',
    },
    cancel: {
      summary: 'Cancel a crawl',
      description:
        "Cancelled is terminal: pages not yet started are never scraped. 404 CRAWL_NOT_FOUND for another team's id.",
    },
    errors: { summary: "A crawl's failed pages and the URLs robots.txt disallowed" },
  });
}
