// POST /v2/map.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { authErrors, errorBody } from '../../contract/common.ts';
import { mapRequest, mapResponse } from '../../contract/map.ts';
import type { Mapper } from '../../crawl/map.ts';
import { describeErrorCodes } from '../../errors.ts';

export async function mapRoutes(app: FastifyInstance, { mapper }: { mapper: Mapper }): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.post(
    '/v2/map',
    {
      config: { rateLimit: 'map' },
      schema: {
        tags: ['map'],
        summary: "List a site's URLs",
        description:
          'Collects the URLs of a site without scraping it: the start page and its links, the sitemaps (robots.txt ' +
          'Sitemap lines, else /sitemap.xml and /sitemap_index.xml; indexes, gzip and text sitemaps) and a shallow crawl ' +
          '(same-site pages up to two links deep, robots.txt obeyed). URLs are normalised and listed once; title and ' +
          'description come from the pages fetched on the way. Costs 1 credit per call. Errors: ' +
          describeErrorCodes([
            ['BAD_REQUEST', 'details name the field'],
            'INSUFFICIENT_CREDITS',
            'SCRAPE_BLOCKED_URL',
            'MAP_TIMEOUT',
            'SCRAPE_DNS_RESOLUTION_ERROR',
            'SCRAPE_CONNECTION_ERROR',
            'SCRAPE_SSL_ERROR',
            'SCRAPE_SITE_ERROR',
            ['RATE_LIMITED', 'class map'],
          ]) +
          '; the 502 codes when the start page failed and nothing was found elsewhere.',
        body: mapRequest,
        response: { 200: mapResponse, 402: errorBody, 403: errorBody, 408: errorBody, 502: errorBody, ...authErrors },
      },
    },
    async (request) => {
      const { links } = await mapper.map(request.caller, request.body);
      return { success: true as const, links };
    },
  );
}
