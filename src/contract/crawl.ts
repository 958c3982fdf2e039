// POST /v2/crawl and the crawl status, errors and listing routes: names and defaults from
// wire-names.md ("Crawl request", Routes) and the spec's "Crawl job". Options this version cannot
// honour (prompt, zeroDataRetention) are accepted by the schema only to be refused by
// name with a 400 in the route (never accepted and ignored).
import { z } from 'zod';
import { scrapeDocument, scrapeOptionsShape, clientLabels, targetUrl } from './scrape.ts';

export const CRAWL_DEFAULT_LIMIT = 10_000;
export const CRAWL_MAX_LIMIT = 100_000;

/** Values of webhook.events (wire-names.md). */
export const webhookEvents = ['started', 'page', 'completed', 'failed'] as const;

/** The `webhook` field of a crawl or batch scrape: a URL or {url, headers, metadata, events}. */
export function crawlWebhook(kind: 'crawl' | 'batch_scrape') {
  return z
    .union([
      z.string().min(1).max(2048),
      z
        .object({
          url: z.string().min(1).max(2048),
          headers: z.record(z.string(), z.string().max(8192)).optional().describe('Sent with every delivery'),
          metadata: z.record(z.string(), z.unknown()).optional().describe('Echoed in every payload'),
          // Checked by the crawler (a 400 naming body.webhook.events.N): inside a union, zod names only body.webhook.
          events: z
            .array(z.string())
            .optional()
            .describe(
              `Events to send, among ${webhookEvents.join(', ')} (default all); cancelled goes with completed/failed`,
            ),
        })
        .strict(),
    ])
    .optional()
    .describe(
      `A URL, or {url, headers, metadata, events}: POSTs {success, type: "${kind}.started"|"${kind}.page"|"${kind}.completed"|"${kind}.failed"|"${kind}.cancelled", ` +
        'id, webhookId, data, metadata, error?}, signed X-Firecrawl-Signature: sha256=<HMAC-SHA256 of the body under the team webhook secret>; ' +
        '10 s timeout, retried on non-2xx (GLEANER_WEBHOOK_RETRY_DELAYS)',
    );
}

export const crawlScrapeOptions = z.object(scrapeOptionsShape).strict();

export const crawlRequest = z
  .object({
    url: targetUrl.describe('Where the crawl starts (a bare host name gets https://)'),
    prompt: z.string().max(10_000).optional().describe('Refused: deriving options from a prompt needs an LLM'),
    includePaths: z
      .array(z.string().min(1).max(1000))
      .max(100)
      .optional()
      .describe('Regexes; a discovered URL must match one (on the path + query unless regexOnFullURL)'),
    excludePaths: z
      .array(z.string().min(1).max(1000))
      .max(100)
      .optional()
      .describe('Regexes; a discovered URL matching one is skipped'),
    regexOnFullURL: z.boolean().default(false).describe('Match includePaths/excludePaths against the full URL'),
    maxDiscoveryDepth: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .optional()
      .describe('Link levels followed below the start URL (sitemap URLs are depth 0)'),
    sitemap: z
      .enum(['include', 'skip', 'only'])
      .default('include')
      .describe('include: sitemap URLs plus links; skip: links only; only: sitemap URLs only'),
    ignoreQueryParameters: z
      .boolean()
      .default(false)
      .describe('Drop query strings: URLs differing only by their query are one page'),
    deduplicateSimilarURLs: z
      .boolean()
      .default(true)
      .describe('Treat http/https and www/non-www variants of a URL as one page'),
    limit: z
      .number()
      .int()
      .min(1)
      .max(CRAWL_MAX_LIMIT)
      .default(CRAWL_DEFAULT_LIMIT)
      .describe('Most pages admitted to the crawl (exact)'),
    crawlEntireDomain: z
      .boolean()
      .default(false)
      .describe('Follow links anywhere on the host, not only below the start path'),
    allowExternalLinks: z.boolean().default(false).describe('Follow links to other sites'),
    allowSubdomains: z
      .boolean()
      .default(false)
      .describe("Follow links to other hosts of the start URL's registrable domain"),
    ignoreRobotsTxt: z.boolean().default(false),
    robotsUserAgent: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('User agent whose robots.txt group applies (default Gleaner)'),
    delay: z.number().min(0).max(60).optional().describe('Seconds between two pages of this crawl starting'),
    maxConcurrency: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe('Pages of this crawl scraped at once per worker process'),
    webhook: crawlWebhook('crawl'),
    scrapeOptions: crawlScrapeOptions
      .prefault({})
      .describe('Applied to every page (as POST /v2/scrape); formats default ["markdown"]'),
    zeroDataRetention: z
      .boolean()
      .default(false)
      .describe('Refused when true: crawl results are stored until they expire'),
    stopOnContent: z
      .unknown()
      .optional()
      .describe("Accepted from newer SDKs; has no effect, named in the answer's `warning`"),
    ...clientLabels,
  })
  .strict()
  .meta({ id: 'CrawlRequest' });

export type CrawlRequest = z.infer<typeof crawlRequest>;

export const crawlStarted = z.object({
  success: z.literal(true),
  id: z.string(),
  url: z.string().describe('The status URL'),
  warning: z.string().optional().describe('Options accepted that have no effect here'),
});

export const crawlStatusQuery = z
  .object({
    skip: z.coerce.number().int().min(0).default(0).describe('Documents to skip (from a previous `next`)'),
    limit: z.coerce.number().int().min(1).max(CRAWL_MAX_LIMIT).optional().describe('Most documents in this response'),
  })
  .strict();

export const crawlStatus = z
  .object({
    success: z.literal(true),
    status: z.enum(['scraping', 'completed', 'failed', 'cancelled']),
    total: z.number().int(),
    completed: z.number().int(),
    creditsUsed: z.number().int(),
    expiresAt: z.string(),
    createdAt: z.string(),
    completedAt: z.string().optional(),
    duration: z.number().optional().describe('Seconds'),
    next: z.string().nullable().optional().describe('Absolute URL of the rest of the data'),
    data: z.array(scrapeDocument),
  })
  .meta({ id: 'CrawlStatus' });

export const crawlErrors = z.object({
  errors: z.array(
    z.object({
      id: z.string(),
      timestamp: z.string(),
      url: z.string(),
      error: z.string(),
      code: z.string().optional(),
    }),
  ),
  robotsBlocked: z.array(z.string()),
});

export const crawlActive = z.object({
  success: z.literal(true),
  crawls: z.array(
    z.object({
      id: z.string(),
      teamId: z.string(),
      url: z.string(),
      options: z.record(z.string(), z.unknown()),
      created_at: z.string(),
    }),
  ),
});

export const crawlCancelled = z.object({ status: z.literal('cancelled') });
