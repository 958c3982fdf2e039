// POST /v2/search: request and response, names from wire-names.md ("Search, agent, browser sessions")
// and the JS SDK's SearchRequest; one schema gives validation, types and the OpenAPI document.
import { z } from 'zod';
import { crawlScrapeOptions } from './crawl.ts';
import { clientLabels, scrapeDocument } from './scrape.ts';

export const SEARCH_DEFAULT_LIMIT = 5;
export const SEARCH_MAX_LIMIT = 100;
export const SEARCH_DEFAULT_TIMEOUT_MS = 60_000;

export const searchSources = ['web', 'news', 'images'] as const;
export type SearchSource = (typeof searchSources)[number];
export const searchCategories = ['github', 'research', 'pdf'] as const;
export type SearchCategory = (typeof searchCategories)[number];

/** One of `names`, as a string or {type}; anything else is refused naming the value. */
function nameOrType<const T extends readonly [string, ...string[]]>(names: T, what: string) {
  const name = z.enum(names, {
    error: (issue) => `unknown ${what} ${JSON.stringify(issue.input)}: one of ${names.join(', ')}`,
  });
  return z
    .union([name, z.object({ type: name }).strict()], {
      // The union's own message would be "Invalid input": name the value instead.
      error: (issue) => {
        const input = issue.input as { type?: unknown } | undefined;
        const value = input !== null && typeof input === 'object' ? input.type : input;
        return `unknown ${what} ${JSON.stringify(value)}: one of ${names.join(', ')}`;
      },
    })
    .transform((v) => (typeof v === 'string' ? v : v.type));
}

const domain = z.string().trim().min(1).max(253);

// A Google-style tbs: qdr:h|d|w|m|y (optionally with a count, qdr:h6), or cdr:1 with cd_min/cd_max
// (M/D/YYYY); sbd:0|1 is accepted alongside. src/search/tbs.ts reads it.
const TBS = /^(qdr:[hdwmy]\d{0,3}|cdr:1|cd_min:\d{1,2}\/\d{1,2}\/\d{4}|cd_max:\d{1,2}\/\d{1,2}\/\d{4}|sbd:[01])$/;

export const searchRequest = z
  .object({
    query: z
      .string()
      .trim()
      .min(1, 'must not be empty')
      .max(2000)
      .describe('The words to find (websearch syntax: "a phrase", -word, or)'),
    sources: z
      .array(nameOrType(searchSources, 'source'))
      .min(1)
      .max(3)
      .default(['web'])
      .describe('Result kinds: web (the own index, or SearXNG), news and images (SearXNG only); default ["web"]'),
    categories: z
      .array(nameOrType(searchCategories, 'category'))
      .max(3)
      .optional()
      .describe(
        'Narrow web results: github (github.com), research (academic sites), pdf (URLs of PDF files); each result names its category',
      ),
    includeDomains: z
      .array(domain)
      .max(100)
      .optional()
      .describe('Only results on these domains (and their subdomains); not with excludeDomains'),
    excludeDomains: z
      .array(domain)
      .max(100)
      .optional()
      .describe('No results on these domains (and their subdomains); not with includeDomains'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(SEARCH_MAX_LIMIT)
      .default(SEARCH_DEFAULT_LIMIT)
      .describe('Most results per source'),
    tbs: z
      .string()
      .trim()
      .max(200)
      .refine((s) => s === '' || s.split(',').every((p) => TBS.test(p.trim())), {
        message: 'qdr:h|d|w|m|y (e.g. qdr:w) or cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY',
      })
      .optional()
      .describe(
        'Time range: qdr:h|d|w|m|y, or cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY. The own index filters by when it scraped the page; SearXNG gets time_range',
      ),
    location: z
      .string()
      .trim()
      .max(200)
      .optional()
      .describe('Where results should be relevant ("Germany", "Berlin,Germany"): SearXNG gets its country\'s language'),
    country: z
      .string()
      .regex(/^[A-Za-z]{2}$/, 'an ISO 3166-1 alpha-2 code')
      .optional()
      .describe('ISO 3166-1 alpha-2 code: SearXNG gets its language (e.g. de → de-DE); wins over location'),
    timeout: z
      .number()
      .int()
      .min(1000)
      .max(300_000)
      .default(SEARCH_DEFAULT_TIMEOUT_MS)
      .describe('ms for the whole request, scraping included'),
    ignoreInvalidURLs: z
      .boolean()
      .default(false)
      .describe('Leave out results whose URL cannot be scraped (not http(s)) instead of returning them unscraped'),
    highlights: z
      .boolean()
      .default(true)
      .describe(
        "Each web result's description is a query-relevant passage of the page (own index: from the stored page; with scrapeOptions: from the scraped markdown; SearXNG: its snippet). false: the page's own meta description. Default true",
      ),
    scrapeOptions: crawlScrapeOptions
      .optional()
      .describe('Scrape every result as POST /v2/scrape would (in parallel); each result is then a Document'),
    domainTools: z
      .unknown()
      .optional()
      .describe(
        "Accepted and ignored: Firecrawl's hosted tool registry (the SDK passes it through), which Gleaner has no counterpart of",
      ),
    toolDetail: z
      .unknown()
      .optional()
      .describe('Accepted and ignored: the detail of those tools (the SDK passes it through)'),
    ...clientLabels,
  })
  .strict()
  .superRefine((req, ctx) => {
    if (req.includeDomains?.length && req.excludeDomains?.length)
      ctx.addIssue({ code: 'custom', path: ['excludeDomains'], message: 'cannot be combined with includeDomains' });
  })
  .meta({ id: 'SearchRequest' });

export type SearchRequest = z.infer<typeof searchRequest>;

/** A result: the hit's fields, and with scrapeOptions the scraped Document's. */
export const searchResult = scrapeDocument
  .partial()
  .extend({
    url: z.string(),
    title: z.string().optional(),
    description: z
      .string()
      .optional()
      .describe('web: a query-relevant passage of the page (highlights) or its meta description; images: the snippet'),
    snippet: z.string().optional().describe('news: the snippet'),
    date: z.string().optional().describe('news: when published, as the backend gives it'),
    imageUrl: z.string().optional().describe('images: the image; news: a thumbnail'),
    imageWidth: z.number().optional(),
    imageHeight: z.number().optional(),
    position: z.number().int().describe('1-based rank within its source'),
    category: z.string().optional().describe('With categories: the one the result belongs to'),
  })
  .meta({ id: 'SearchResult' });
export type SearchResult = z.infer<typeof searchResult>;

export const searchResponse = z.object({
  success: z.literal(true),
  data: z.object({
    web: z.array(searchResult).optional(),
    news: z.array(searchResult).optional(),
    images: z.array(searchResult).optional(),
  }),
  warning: z.string().optional(),
  id: z.string().describe('The search job (activity listing)'),
  creditsUsed: z.number().int(),
});
