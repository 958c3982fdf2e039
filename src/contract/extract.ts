// POST /v2/extract and GET /v2/extract/{id} (wire-names.md Routes: "async LLM extraction over
// URLs"): names and defaults as Firecrawl v2's extract. Options this version cannot honour
// (enableWebSearch: extract does not search yet) are accepted by the schema only to be refused by name with
// a 400 in the route, never accepted and ignored.
import { z } from 'zod';
import { crawlScrapeOptions } from './crawl.ts';
import { clientLabels } from './scrape.ts';

/** Most entries in `urls`. */
export const EXTRACT_MAX_URLS = 100;
/** Pages one "/*" glob expands to at most (in the map's order). */
export const EXTRACT_GLOB_MAX_PAGES = 50;
/** Pages one extract scrapes at most (exact URLs first, then the globs' pages). */
export const EXTRACT_MAX_PAGES = 100;

export const extractRequest = z
  .object({
    urls: z
      .array(z.string().max(8192))
      .min(1)
      .max(EXTRACT_MAX_URLS)
      .describe(
        `Pages to read (a bare host name gets https://). A URL ending in "/*" stands for the site's pages at or below that path, ` +
          `found with a map of the site (at most ${EXTRACT_GLOB_MAX_PAGES} per glob; ${EXTRACT_MAX_PAGES} pages per extract in all)`,
      ),
    prompt: z.string().max(10_000).optional().describe('What to extract (at least one of prompt and schema)'),
    schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('JSON Schema of the result (at least one of prompt and schema)'),
    enableWebSearch: z
      .boolean()
      .default(false)
      .describe('Refused when true: extract does not search the web yet (find pages with POST /v2/search)'),
    ignoreSitemap: z.boolean().default(false).describe("Globs: do not read the site's sitemaps when listing its pages"),
    includeSubdomains: z
      .boolean()
      .default(true)
      .describe("Globs: also list pages on other hosts of the URL's registrable domain"),
    showSources: z
      .boolean()
      .default(false)
      .describe('Add `sources` to the status: the URLs of the pages the data was extracted from'),
    scrapeOptions: crawlScrapeOptions
      .prefault({})
      .describe(
        "Applied to every page (as POST /v2/scrape); `formats` is ignored: extraction reads the markdown (and the HTML's structured data)",
      ),
    ignoreInvalidURLs: z
      .boolean()
      .default(true)
      .describe('Leave invalid URLs out (listed in invalidURLs) instead of answering 400'),
    ...clientLabels,
  })
  .strict()
  .meta({ id: 'ExtractRequest' });

export type ExtractRequest = z.infer<typeof extractRequest>;

export const extractStarted = z.object({
  success: z.literal(true),
  id: z.string(),
  invalidURLs: z.array(z.string()).optional().describe('With ignoreInvalidURLs (default): the URLs left out'),
});

export const extractStatus = z
  .object({
    success: z.literal(true),
    status: z.enum(['processing', 'completed', 'failed', 'cancelled']),
    data: z.unknown().optional().describe('The extracted JSON (when completed)'),
    error: z.string().optional().describe('Why the extract failed'),
    warning: z
      .string()
      .optional()
      .describe(
        'How the data was produced when not by the LLM alone (no LLM configured, LLM failure, pages that failed)',
      ),
    expiresAt: z.string().describe('When the result stops being readable (24 h after the request)'),
    tokensUsed: z.number().int().optional().describe('LLM tokens of this extract (also in the token ledger)'),
    creditsUsed: z.number().int().optional().describe('Credits charged: one per page scraped'),
    sources: z
      .array(z.string())
      .optional()
      .describe('With showSources: the URLs of the pages the data was extracted from'),
  })
  .meta({ id: 'ExtractStatus' });

export type ExtractStatus = z.infer<typeof extractStatus>;
