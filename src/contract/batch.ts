// POST /v2/batch/scrape and its status, cancel and errors routes (wire-names.md, "Batch scrape
// request"): the scrape fields flattened at top level, as clients send them. Status and errors
// have the crawl's shapes.
import { z } from 'zod';
import { crawlWebhook } from './crawl.ts';
import { clientLabels, scrapeOptionsShape } from './scrape.ts';

/** Most URLs in one request (and in one batch, appends included). */
export const BATCH_MAX_URLS = 10_000;

export const batchScrapeRequest = z
  .object({
    urls: z
      .array(z.string().max(8192))
      .min(1)
      .max(BATCH_MAX_URLS)
      .describe(
        'Pages to scrape, in the order their documents are returned (a bare host name gets https://); a URL listed twice is scraped twice',
      ),
    ...scrapeOptionsShape,
    webhook: crawlWebhook('batch_scrape'),
    ignoreInvalidURLs: z
      .boolean()
      .default(false)
      .describe('Leave invalid URLs out (listed in invalidURLs) instead of answering 400'),
    maxConcurrency: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe('Pages of this batch scraped at once per worker process'),
    appendToId: z
      .uuid()
      .optional()
      .describe('Add the URLs to this running batch scrape of the team instead of starting one'),
    idempotencyKey: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        "Repeating a request with the same key returns the first one's batch instead of starting another (also header x-idempotency-key)",
      ),
    ...clientLabels,
  })
  .strict()
  .meta({ id: 'BatchScrapeRequest' });

export type BatchScrapeRequest = z.infer<typeof batchScrapeRequest>;

export const batchScrapeStarted = z.object({
  success: z.literal(true),
  id: z.string(),
  url: z.string().describe('The status URL'),
  invalidURLs: z.array(z.string()).optional().describe('With ignoreInvalidURLs: the URLs left out'),
});
