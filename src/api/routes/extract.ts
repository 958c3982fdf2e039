// POST /v2/extract, GET /v2/extract/{id}: structured data from pages (and "/*" site globs), with
// the LLM or deterministically, on the job queue (src/extract/job.ts). No cancel: Firecrawl's v2
// extract has none.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authErrors, errorBody } from '../../contract/common.ts';
import {
  EXTRACT_GLOB_MAX_PAGES,
  EXTRACT_MAX_PAGES,
  extractRequest,
  extractStarted,
  extractStatus,
} from '../../contract/extract.ts';
import type { Extractor } from '../../extract/extract.ts';
import { publicBase } from './crawl-job-routes.ts';
import { describeErrorCodes } from '../../errors.ts';

export async function extractRoutes(
  app: FastifyInstance,
  { extractor, publicUrl }: { extractor: Extractor; publicUrl?: string },
): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['extract'];
  const base = publicBase(publicUrl);

  r.post(
    '/v2/extract',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags,
        summary: 'Extract structured data from pages, asynchronously',
        description:
          'Reads the pages of `urls` (a URL ending in "/*": the site\'s pages at or below that path, found with a map; ' +
          `at most ${EXTRACT_GLOB_MAX_PAGES} per glob and ${EXTRACT_MAX_PAGES} pages in all) and extracts one JSON value for the ` +
          '`schema` and/or `prompt`: with the LLM over all the pages, grounded by the deterministic fill; without an LLM (or when it fails) ' +
          'the deterministic fill of each page merged, with a warning. 1 credit per page scraped; LLM tokens go to the token ledger. ' +
          'Refused with 400: enableWebSearch (extract does not search yet: use POST /v2/search), neither prompt nor schema, an unusable schema, ' +
          'invalid URLs when ignoreInvalidURLs is false (otherwise listed in invalidURLs). ' +
          `Errors: ${describeErrorCodes(['BAD_REQUEST', 'INSUFFICIENT_CREDITS', ['RATE_LIMITED', 'class crawl']])}.`,
        body: extractRequest,
        response: { 200: extractStarted, 402: errorBody, ...authErrors },
      },
    },
    async (request) => {
      const { id, invalidURLs } = await extractor.start(request.caller, request.body, base(request));
      return { success: true as const, id, ...(invalidURLs ? { invalidURLs } : {}) };
    },
  );

  r.get(
    '/v2/extract/:id',
    {
      config: { rateLimit: 'status' },
      schema: {
        tags,
        summary: 'Extract status and data',
        description:
          'processing, then completed (`data`) or failed (`error`). `warning` says when the data did not come from the LLM alone. ' +
          'Readable for 24 h (expiresAt). ' +
          `${describeErrorCodes(['EXTRACT_NOT_FOUND'])} for another team's id or an expired one.`,
        params: z.object({ id: z.uuid() }),
        response: { 200: extractStatus, 404: errorBody, ...authErrors },
      },
    },
    async (request) => extractor.status(request.caller.teamId, request.params.id),
  );
}
