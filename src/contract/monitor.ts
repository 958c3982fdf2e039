// /v2/monitor: monitors (scheduled change detection), their checks and check pages. Names and
// shapes from wire-names.md ("Monitors") and the official SDK's types; search targets' limits
// (1-12 queries of up to 256 characters, the searchWindow values, maxResults 1-50) are Firecrawl's.
import { z } from 'zod';
import { crawlRequest, crawlScrapeOptions } from './crawl.ts';
import { clientLabels, targetUrl } from './scrape.ts';

export const MONITOR_DEFAULT_RETENTION_DAYS = 30;
export const monitorCheckStatuses = [
  'queued',
  'running',
  'completed',
  'partial',
  'failed',
  'skipped_overlap',
  'skipped_no_credits',
] as const;
export type MonitorCheckStatus = (typeof monitorCheckStatuses)[number];
export const monitorPageStatuses = ['same', 'new', 'changed', 'removed', 'error'] as const;
export type MonitorPageStatus = (typeof monitorPageStatuses)[number];
/** Webhook events of a monitor (the SDK and MCP server subscribe to these). */
export const monitorWebhookEvents = ['monitor.page', 'monitor.check.completed'] as const;

export const monitorSchedule = z
  .object({
    cron: z.string().min(1).max(200).optional().describe('A 5-field cron expression'),
    text: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe('"hourly", "every 15 minutes", "daily at 9:00", "weekdays at 18:30"…; answered as cron'),
    timezone: z.string().min(1).max(100).optional().describe('IANA timezone of the schedule (default UTC)'),
  })
  .strict()
  .describe('Exactly one of cron or text; at least 5 minutes between runs');

/** Crawl options of a crawl target: those of POST /v2/crawl but the URL, webhook and scrape options. */
export const monitorCrawlOptions = crawlRequest
  .omit({
    url: true,
    webhook: true,
    scrapeOptions: true,
    prompt: true,
    origin: true,
    integration: true,
    zeroDataRetention: true,
    stopOnContent: true,
  })
  .strict();

const targetId = z.string().min(1).max(100).optional().describe('Kept when given; assigned otherwise');

/** A search target's recency windows (Firecrawl's values; default 24h). */
export const monitorSearchWindows = ['5m', '15m', '1h', '6h', '24h', '7d'] as const;
export type MonitorSearchWindow = (typeof monitorSearchWindows)[number];
export const MONITOR_SEARCH_DEFAULT_WINDOW: MonitorSearchWindow = '24h';
export const MONITOR_SEARCH_DEFAULT_MAX_RESULTS = 10;
const searchDomain = z.string().trim().min(1).max(253);

export const monitorTarget = z.discriminatedUnion('type', [
  z
    .object({
      id: targetId,
      type: z.literal('scrape'),
      urls: z.array(targetUrl).min(1).max(1000),
      scrapeOptions: crawlScrapeOptions.optional(),
    })
    .strict(),
  z
    .object({
      id: targetId,
      type: z.literal('crawl'),
      url: targetUrl,
      crawlOptions: monitorCrawlOptions.optional(),
      scrapeOptions: crawlScrapeOptions.optional(),
    })
    .strict(),
  z
    .object({
      id: targetId,
      type: z.literal('search'),
      queries: z
        .array(z.string().trim().min(1, 'must not be empty').max(256))
        .min(1)
        .max(12)
        .describe('Search queries run on every check (1-12, each up to 256 characters)'),
      searchWindow: z
        .enum(monitorSearchWindows)
        .optional()
        .describe('Only results from this recent window (the search tbs; default 24h)'),
      maxResults: z
        .number()
        .int()
        .min(1)
        .max(50)
        .optional()
        .describe('Results compared per check, merged and deduplicated across the queries (default 10)'),
      includeDomains: z
        .array(searchDomain)
        .max(50)
        .optional()
        .describe('Only results on these domains (and subdomains); not with excludeDomains'),
      excludeDomains: z
        .array(searchDomain)
        .max(50)
        .optional()
        .describe('No results on these domains (and subdomains); not with includeDomains'),
    })
    .strict()
    .superRefine((t, ctx) => {
      if (t.includeDomains?.length && t.excludeDomains?.length)
        ctx.addIssue({ code: 'custom', path: ['excludeDomains'], message: 'cannot be combined with includeDomains' });
    })
    .describe(
      'Runs the queries on the search backends every check and compares the results (by URL) with the last check; needs a goal unless judgeEnabled is false',
    ),
]);
export type MonitorTargetInput = z.infer<typeof monitorTarget>;

export const monitorWebhook = z
  .object({
    url: z.string().min(1).max(2048),
    headers: z.record(z.string(), z.string().max(8192)).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    events: z
      .array(z.enum(monitorWebhookEvents))
      .optional()
      .describe('monitor.page (one per new, changed or removed page) and monitor.check.completed; default both'),
  })
  .strict();

export const monitorNotification = z
  .object({
    email: z
      .object({
        enabled: z.boolean().optional(),
        recipients: z.array(z.email()).max(50).optional(),
        includeDiffs: z.boolean().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

const retentionDays = z.number().int().min(1).max(365).describe('Checks older than this are deleted (default 30)');
const goal = z.string().max(10_000).describe('What changes matter, in plain language (the judge reads it)');

export const monitorCreateRequest = z
  .object({
    name: z.string().min(1).max(200),
    schedule: monitorSchedule,
    targets: z.array(monitorTarget).min(1).max(50),
    webhook: monitorWebhook.optional(),
    notification: monitorNotification.optional(),
    retentionDays: retentionDays.optional(),
    goal: goal.optional(),
    judgeEnabled: z
      .boolean()
      .optional()
      .describe('Judge each change against the goal (default: true when a goal is set)'),
    ...clientLabels,
  })
  .strict()
  .meta({ id: 'MonitorCreateRequest' });
export type MonitorCreateRequest = z.infer<typeof monitorCreateRequest>;

export const monitorUpdateRequest = z
  .object({
    name: z.string().min(1).max(200).optional(),
    status: z.enum(['active', 'paused']).optional(),
    schedule: monitorSchedule.optional(),
    targets: z.array(monitorTarget).min(1).max(50).optional(),
    webhook: monitorWebhook.nullable().optional(),
    notification: monitorNotification.nullable().optional(),
    retentionDays: retentionDays.optional(),
    goal: goal.nullable().optional(),
    judgeEnabled: z.boolean().optional(),
    ...clientLabels,
  })
  .strict()
  .meta({ id: 'MonitorUpdateRequest' });
export type MonitorUpdateRequest = z.infer<typeof monitorUpdateRequest>;

export const monitorSummary = z.object({
  totalPages: z.number().int(),
  same: z.number().int(),
  changed: z.number().int(),
  new: z.number().int(),
  removed: z.number().int(),
  error: z.number().int(),
});
export type MonitorSummary = z.infer<typeof monitorSummary>;

export const monitor = z
  .object({
    id: z.string(),
    name: z.string(),
    status: z.enum(['active', 'paused', 'deleted']),
    schedule: z.object({ cron: z.string(), timezone: z.string(), text: z.string().optional() }),
    nextRunAt: z.string().nullable(),
    lastRunAt: z.string().nullable(),
    currentCheckId: z.string().nullable(),
    targets: z.array(z.record(z.string(), z.unknown())).describe('The targets, each with its id'),
    webhook: z.record(z.string(), z.unknown()).nullable(),
    notification: z.record(z.string(), z.unknown()).nullable(),
    retentionDays: z.number().int(),
    estimatedCreditsPerMonth: z.number().nullable(),
    lastCheckSummary: monitorSummary.nullable(),
    goal: z.string().nullable(),
    judgeEnabled: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Monitor' });
export type Monitor = z.infer<typeof monitor>;

export const monitorCheck = z
  .object({
    id: z.string(),
    monitorId: z.string(),
    status: z.enum(monitorCheckStatuses),
    trigger: z.enum(['scheduled', 'manual']),
    scheduledFor: z.string().nullable(),
    startedAt: z.string().nullable(),
    finishedAt: z.string().nullable(),
    estimatedCredits: z.number().nullable(),
    reservedCredits: z.number().nullable(),
    actualCredits: z.number().nullable(),
    billingStatus: z.enum(['not_applicable', 'reserved', 'confirmed', 'released', 'failed']),
    summary: monitorSummary,
    targetResults: z.array(z.record(z.string(), z.unknown())),
    notificationStatus: z.record(z.string(), z.unknown()),
    error: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'MonitorCheck' });
export type MonitorCheck = z.infer<typeof monitorCheck>;

export const monitorCheckPage = z
  .object({
    id: z.string(),
    targetId: z.string(),
    url: z.string(),
    status: z.enum(monitorPageStatuses),
    previousScrapeId: z.string().nullable(),
    currentScrapeId: z.string().nullable(),
    statusCode: z.number().int().nullable(),
    error: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    diff: z.object({ text: z.string().optional(), json: z.unknown().optional() }).nullable(),
    snapshot: z.object({ json: z.unknown().optional() }).nullable(),
    judgment: z.record(z.string(), z.unknown()).nullable(),
    createdAt: z.string(),
  })
  .meta({ id: 'MonitorCheckPage' });
export type MonitorCheckPage = z.infer<typeof monitorCheckPage>;

export const monitorCheckDetail = monitorCheck
  .extend({
    pages: z.array(monitorCheckPage),
    next: z.string().nullable().describe('URL of the next page of results; null when this is the last'),
  })
  .meta({ id: 'MonitorCheckDetail' });
export type MonitorCheckDetail = z.infer<typeof monitorCheckDetail>;

export const monitorListQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(25),
    offset: z.coerce.number().int().min(0).default(0),
  })
  .strict();

export const monitorChecksQuery = monitorListQuery.extend({ status: z.enum(monitorCheckStatuses).optional() }).strict();

export const monitorCheckQuery = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(100),
    skip: z.coerce.number().int().min(0).default(0),
    status: z.enum(monitorPageStatuses).optional(),
  })
  .strict();

export const monitorParams = z.object({ id: z.uuid() });
export const monitorCheckParams = z.object({ id: z.uuid(), checkId: z.uuid() });

export const monitorAnswer = z.object({ success: z.literal(true), data: monitor });
export const monitorListAnswer = z.object({ success: z.literal(true), data: z.array(monitor) });
export const monitorCheckAnswer = z.object({ success: z.literal(true), data: monitorCheck });
export const monitorChecksAnswer = z.object({ success: z.literal(true), data: z.array(monitorCheck) });
export const monitorCheckDetailAnswer = z.object({
  success: z.literal(true),
  next: z.string().nullable(),
  data: monitorCheckDetail,
});
export const monitorDeleted = z.object({ success: z.literal(true) });
