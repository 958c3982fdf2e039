// POST /v2/search.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { authErrors, errorBody } from '../../contract/common.ts';
import { searchRequest, searchResponse } from '../../contract/search.ts';
import { describeErrorCodes } from '../../errors.ts';
import type { Searcher } from '../../search/search.ts';

export async function searchRoutes(
  app: FastifyInstance,
  { searcher, publicUrl }: { searcher: Searcher; publicUrl?: string },
): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/v2/search',
    {
      config: { rateLimit: 'search' },
      schema: {
        tags: ['search'],
        summary: 'Search the web, or the pages you scraped and crawled',
        description:
          'web results come from the own index (every page the team scraped or crawled, not under zero data retention, ' +
          'in Postgres full-text search: title and URL words weigh most) or, with SEARCH_WEB_BACKEND=searxng (the default ' +
          'when SEARXNG_URL is set), from SearXNG; news and images from SearXNG only (without it: a warning, no results). ' +
          'With scrapeOptions every web and news result is scraped as POST /v2/scrape would, in parallel, and returned as a ' +
          'Document with the result fields. Costs 2 credits per 10 results (rounded up) plus each scrape. Errors: ' +
          describeErrorCodes([
            [
              'BAD_REQUEST',
              'details name the field: empty query, unknown source or category, includeDomains with excludeDomains',
            ],
            'INSUFFICIENT_CREDITS',
            ['SEARCH_TIMEOUT', 'no backend answered within timeout'],
            ['SEARCH_BACKEND_ERROR', 'every requested source failed; one failing is a warning'],
            ['RATE_LIMITED', 'class search'],
          ]) +
          '.',
        body: searchRequest,
        response: { 200: searchResponse, 402: errorBody, 408: errorBody, 502: errorBody, ...authErrors },
      },
    },
    async (request) => {
      const outcome = await searcher.search(request.caller, request.body, {
        publicUrl: publicUrl ?? `${request.protocol}://${request.host}`,
      });
      return { success: true as const, ...outcome };
    },
  );
}
