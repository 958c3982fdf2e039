// Team routes: activity listing, credit and token usage, concurrency and queue status.
import { z } from 'zod';
import { jobEndpoints } from './common.ts';
import { queryBoolean } from './common.ts';

export const activityQuery = z
  .object({
    endpoint: z.enum(jobEndpoints).optional().describe('Only jobs of this endpoint'),
    limit: z.coerce.number().int().min(1).max(100).default(50).describe('Entries per page, 1..100'),
    cursor: z.string().min(1).optional().describe('Opaque cursor from the previous page'),
  })
  .strict();

export const activityEntry = z
  .object({
    id: z.string().describe('Job id, read with the matching retrieval endpoint (e.g. GET /v2/crawl/{id})'),
    endpoint: z.enum(jobEndpoints),
    api_version: z.string(),
    created_at: z.string().describe('ISO 8601'),
    target: z.string().nullable().describe('URL or file the job worked on; null under zero data retention'),
  })
  .meta({ id: 'ActivityEntry' });

export const activityResponse = z.object({
  success: z.literal(true),
  data: z.array(activityEntry),
  cursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last page'),
  has_more: z.boolean(),
});

export const byApiKeyQuery = z
  .object({
    byApiKey: queryBoolean.default(false).describe('Break usage down per API key'),
  })
  .strict();

export const usagePeriod = z.object({
  startDate: z.string().describe('First instant of the calendar month (UTC)'),
  endDate: z.string().describe('Last millisecond of the calendar month (UTC)'),
  apiKey: z.string().optional().describe('With byApiKey: the key, shown redacted (its first and last characters)'),
  apiKeyName: z.string().optional(),
});

export const tokenUsageHistoricalResponse = z.object({
  success: z.literal(true),
  periods: z.array(
    usagePeriod.extend({
      totalTokens: z.number().int(),
      tokensUsed: z.number().int().describe('Same as totalTokens (name used by some clients)'),
    }),
  ),
});

export const creditUsageHistoricalResponse = z.object({
  success: z.literal(true),
  periods: z.array(
    usagePeriod.extend({
      creditsUsed: z.number().int(),
      totalCredits: z.number().int().describe('Same as creditsUsed (name used by some clients)'),
    }),
  ),
});

const periodBounds = {
  billingPeriodStart: z.string(),
  billingPeriodEnd: z.string(),
};

export const creditUsageResponse = z.object({
  success: z.literal(true),
  data: z.object({
    remainingCredits: z.number().int().describe(`Credits left this month; ${999_999_999} when the team has no quota`),
    planCredits: z.number().int().describe(`The team's monthly quota; ${999_999_999} when unlimited`),
    creditsUsed: z.number().int(),
    unlimited: z.boolean(),
    ...periodBounds,
  }),
});

export const tokenUsageResponse = z.object({
  success: z.literal(true),
  data: z.object({
    remainingTokens: z.number().int().describe('Tokens are not capped separately: unlimited (999999999)'),
    planTokens: z.number().int(),
    tokensUsed: z.number().int(),
    ...periodBounds,
  }),
});

export const concurrencyResponse = z.object({
  success: z.literal(true),
  concurrency: z.number().int().describe('Jobs of the team running now'),
  maxConcurrency: z.number().int(),
  data: z.object({ concurrency: z.number().int(), maxConcurrency: z.number().int() }),
});

export const queueStatusResponse = z.object({
  success: z.literal(true),
  jobsInQueue: z.number().int(),
  activeJobsInQueue: z.number().int(),
  waitingJobsInQueue: z.number().int(),
  maxConcurrency: z.number().int(),
  mostRecentSuccess: z.string().nullable(),
});
