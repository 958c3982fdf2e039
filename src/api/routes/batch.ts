// POST /v2/batch/scrape, GET/DELETE /v2/batch/scrape/{id}, GET /v2/batch/scrape/{id}/errors. A
// batch runs as a crawl of kind batch_scrape (src/crawl/batch-scrape.ts): same queue, status shape,
// pagination, cancel and webhooks (batch_scrape.* events).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { batchScrapeRequest, batchScrapeStarted } from '../../contract/batch.ts';
import { authErrors, errorBody } from '../../contract/common.ts';
import type { Crawler } from '../../crawl/crawler.ts';
import { crawlJobRoutes, publicBase } from './crawl-job-routes.ts';
import { BadRequestError, describeErrorCodes } from '../../errors.ts';
import type { Db } from '../../store/db-types.ts';

export async function batchScrapeRoutes(
  app: FastifyInstance,
  { crawler, db, publicUrl }: { crawler: Crawler; db: Db; publicUrl?: string },
): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['batch scrape'];
  const base = publicBase(publicUrl);

  r.post(
    '/v2/batch/scrape',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags,
        summary: 'Scrape many URLs asynchronously',
        description:
          'Scrapes every URL with the scrape options given at top level (as POST /v2/scrape; formats default ["markdown"]), ' +
          'on the job queue; documents come back in the order of `urls`. Each page costs what a scrape costs. ' +
          'Invalid URLs are a 400 naming body.urls.N unless ignoreInvalidURLs (then listed in invalidURLs). ' +
          '`appendToId` adds the URLs to a running batch of the team ' +
          `(${describeErrorCodes(['BATCH_SCRAPE_NOT_RUNNING'])} once it ended). ` +
          "`idempotencyKey` (or header x-idempotency-key): a repeat within 24 h returns the first batch's id without starting another; " +
          `the same key with another body is ${describeErrorCodes(['IDEMPOTENCY_KEY_REUSED'])}, ` +
          `a repeat while the first is still being started ${describeErrorCodes(['IDEMPOTENCY_KEY_IN_USE'])}. ` +
          '`webhook` as for crawls, with batch_scrape.* events. ' +
          'Refused with 400: zeroDataRetention (results are stored until they expire). ' +
          'Errors: ' +
          describeErrorCodes([
            'BAD_REQUEST',
            'INSUFFICIENT_CREDITS',
            ['BATCH_SCRAPE_NOT_FOUND', 'appendToId'],
            'BATCH_SCRAPE_NOT_RUNNING',
            'IDEMPOTENCY_KEY_REUSED',
            'IDEMPOTENCY_KEY_IN_USE',
            ['RATE_LIMITED', 'class crawl'],
          ]) +
          '.',
        body: batchScrapeRequest,
        headers: z.object({ 'x-idempotency-key': z.string().min(1).max(200).optional() }).loose(),
        response: { 200: batchScrapeStarted, 402: errorBody, 404: errorBody, 409: errorBody, ...authErrors },
      },
    },
    async (request) => {
      const header = request.headers['x-idempotency-key'];
      const key = request.body.idempotencyKey ?? header;
      if (header !== undefined && request.body.idempotencyKey !== undefined && header !== request.body.idempotencyKey) {
        const message = 'differs from the x-idempotency-key header';
        throw new BadRequestError(`Invalid request: body.idempotencyKey: ${message}`, [
          { path: 'body.idempotencyKey', message },
        ]);
      }
      const { id, invalidURLs } = await crawler.startBatch(request.caller, request.body, base(request), key);
      return {
        success: true as const,
        id,
        url: `${base(request)}/v2/batch/scrape/${id}`,
        ...(invalidURLs ? { invalidURLs } : {}),
      };
    },
  );

  crawlJobRoutes(app, {
    crawler,
    db,
    publicUrl,
    kind: 'batch_scrape',
    path: '/v2/batch/scrape',
    tags,
    status: {
      summary: 'Batch scrape status and data',
      description:
        'As GET /v2/crawl/{id}: documents in the order of the URLs, from `skip`, at most `limit` and about 10 MiB; `next` whenever more ' +
        'data remains or the batch still runs. ' +
        `${describeErrorCodes(['BATCH_SCRAPE_NOT_FOUND'])} for another team's id. ` +
        'Also a WebSocket on the same path ' +
        '(API key as the subprotocol): catchup, then document messages as pages finish, then done, as for crawls.',
    },
    cancel: {
      summary: 'Cancel a batch scrape',
      description:
        "Cancelled is terminal: pages not yet started are never scraped. 404 BATCH_SCRAPE_NOT_FOUND for another team's id.",
    },
    errors: {
      summary: "A batch scrape's failed pages (robotsBlocked is always empty: a batch does not read robots.txt)",
    },
  });
}
