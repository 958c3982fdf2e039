// POST /v2/map: request and response, names and defaults from wire-names.md ("Map").
import { z } from 'zod';
import { describeErrorCodes } from '../errors.ts';
import { clientLabels, targetUrl } from './scrape.ts';

export const MAP_MAX_LIMIT = 100_000;
export const MAP_DEFAULT_LIMIT = 5000;

export const mapRequest = z
  .object({
    url: targetUrl.describe('Site to map (a bare host name gets https://)'),
    search: z
      .string()
      .max(1000)
      .optional()
      .describe(
        'Order the links by relevance to this term: links whose URL path, title or description contain its words come first ' +
          '(whole-word matches before partial ones); the others follow in discovery order',
      ),
    sitemap: z
      .enum(['include', 'skip', 'only'])
      .default('include')
      .describe('include: sitemaps plus links found on the site; skip: ignore sitemaps; only: only sitemap URLs'),
    includeSubdomains: z
      .boolean()
      .default(true)
      .describe("Also list other hosts of the URL's registrable domain (blog.example.com for example.com)"),
    ignoreQueryParameters: z
      .boolean()
      .default(true)
      .describe('Drop query strings, so URLs differing only by their query are listed once'),
    limit: z.number().int().min(1).max(MAP_MAX_LIMIT).default(MAP_DEFAULT_LIMIT).describe('Most links returned'),
    timeout: z
      .number()
      .int()
      .min(1)
      .max(600_000)
      .optional()
      .describe(
        'ms; no default. When it expires before the start page (or, with sitemap "only", robots.txt) is read: ' +
          describeErrorCodes(['MAP_TIMEOUT']),
      ),
    location: z
      .object({
        country: z
          .string()
          .regex(/^[A-Za-z]{2}$/)
          .default('US'),
        languages: z.array(z.string().min(2).max(35)).max(20).optional(),
      })
      .strict()
      .optional()
      .describe('languages set Accept-Language; country is accepted (no geo proxy is configured)'),
    ...clientLabels,
  })
  .strict();

export type MapRequest = z.infer<typeof mapRequest>;

export const mapLink = z
  .object({
    url: z.string(),
    title: z.string().optional().describe('From the page, when it was fetched during the map'),
    description: z.string().optional(),
  })
  .meta({ id: 'MapLink' });

export type MapLink = z.infer<typeof mapLink>;

export const mapResponse = z.object({
  success: z.literal(true),
  links: z.array(mapLink),
  warning: z.string().optional(),
});
