// Team account routes: activity listing, credit and token usage, concurrency and queue status.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { UNLIMITED, billingPeriod, creditStatus } from '../../billing/credits.ts';
import type { Config } from '../../config.ts';
import { authErrors } from '../../contract/common.ts';
import {
  activityQuery,
  activityResponse,
  byApiKeyQuery,
  concurrencyResponse,
  creditUsageHistoricalResponse,
  creditUsageResponse,
  queueStatusResponse,
  tokenUsageHistoricalResponse,
  tokenUsageResponse,
} from '../../contract/team.ts';
import type { Db } from '../../store/db-types.ts';
import { countTeamJobs, listActivity } from '../../store/jobs.ts';
import { type MonthlyUsage, type UsageKind, monthlyUsage, usageSince } from '../../store/usage.ts';
import { BadRequestError } from '../../errors.ts';

const ACTIVITY_WINDOW_MS = 24 * 60 * 60 * 1000;

// The cursor is the creation sequence number of the last entry sent: keyset pagination, so
// entries added meanwhile (always with a higher number) never shift the pages still to come.
function encodeCursor(seq: number): string {
  return Buffer.from(`a1:${seq}`).toString('base64url');
}

function decodeCursor(cursor: string): number {
  const m = /^a1:(\d{1,18})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m) {
    throw new BadRequestError('Invalid request: query.cursor: not a cursor returned by this endpoint', [
      { path: 'query.cursor', message: 'not a cursor returned by this endpoint' },
    ]);
  }
  return Number(m[1]);
}

function periodsOf(rows: MonthlyUsage[], byApiKey: boolean) {
  const periods = rows.map((r) => {
    const { start, end } = billingPeriod(r.month);
    return {
      startDate: start.toISOString(),
      endDate: end.toISOString(),
      ...(byApiKey ? { apiKey: r.keyPreview ?? 'unknown', apiKeyName: r.keyName ?? undefined } : {}),
      total: r.total,
    };
  });
  // Without a breakdown the current month is always listed, even before any usage.
  const current = billingPeriod();
  if (!byApiKey && !periods.some((p) => p.startDate === current.start.toISOString())) {
    periods.push({ startDate: current.start.toISOString(), endDate: current.end.toISOString(), total: 0 });
  }
  return periods;
}

export async function teamRoutes(app: FastifyInstance, { db, config }: { db: Db; config: Config }): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['team'];

  r.get(
    '/v2/team/activity',
    {
      schema: {
        tags,
        summary: "The team's API jobs of the last 24 hours, newest first",
        querystring: activityQuery,
        response: { 200: activityResponse, ...authErrors },
      },
    },
    async (request) => {
      const { endpoint, limit, cursor } = request.query;
      const rows = await listActivity(db, {
        teamId: request.caller.teamId,
        endpoint,
        limit,
        beforeSeq: cursor ? decodeCursor(cursor) : undefined,
        since: new Date(Date.now() - ACTIVITY_WINDOW_MS),
      });
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      const last = page.at(-1);
      return {
        success: true as const,
        data: page.map((j) => ({
          id: j.id,
          endpoint: j.endpoint,
          api_version: j.apiVersion,
          created_at: j.createdAt.toISOString(),
          target: j.target,
        })),
        cursor: hasMore && last ? encodeCursor(last.seq) : null,
        has_more: hasMore,
      };
    },
  );

  const historical = (kind: UsageKind) => async (teamId: string, byApiKey: boolean) =>
    periodsOf(await monthlyUsage(db, kind, teamId, byApiKey), byApiKey);
  const tokenHistory = historical('tokens');
  const creditHistory = historical('credits');

  const tokenHistorical = {
    schema: {
      tags,
      summary: 'LLM tokens used per calendar month (UTC), optionally per API key',
      querystring: byApiKeyQuery,
      response: { 200: tokenUsageHistoricalResponse, ...authErrors },
    },
  };
  for (const url of ['/v1/team/token-usage/historical', '/v2/team/token-usage/historical']) {
    r.get(url, tokenHistorical, async (request) => ({
      success: true as const,
      periods: (await tokenHistory(request.caller.teamId, request.query.byApiKey)).map(({ total, ...p }) => ({
        ...p,
        totalTokens: total,
        tokensUsed: total,
      })),
    }));
  }

  r.get(
    '/v2/team/credit-usage/historical',
    {
      schema: {
        tags,
        summary: 'Credits used per calendar month (UTC), optionally per API key',
        querystring: byApiKeyQuery,
        response: { 200: creditUsageHistoricalResponse, ...authErrors },
      },
    },
    async (request) => ({
      success: true as const,
      periods: (await creditHistory(request.caller.teamId, request.query.byApiKey)).map(({ total, ...p }) => ({
        ...p,
        creditsUsed: total,
        totalCredits: total,
      })),
    }),
  );

  r.get(
    '/v2/team/credit-usage',
    {
      schema: {
        tags,
        summary: 'Credits left in the current billing period (calendar month, UTC)',
        response: { 200: creditUsageResponse, ...authErrors },
      },
    },
    async (request) => {
      const s = await creditStatus(db, request.caller.teamId);
      return {
        success: true as const,
        data: {
          remainingCredits: s.remaining,
          planCredits: s.quota ?? UNLIMITED,
          creditsUsed: s.used,
          unlimited: s.quota === null,
          billingPeriodStart: s.period.start.toISOString(),
          billingPeriodEnd: s.period.end.toISOString(),
        },
      };
    },
  );

  r.get(
    '/v2/team/token-usage',
    {
      schema: {
        tags,
        summary: 'LLM tokens used in the current billing period',
        response: { 200: tokenUsageResponse, ...authErrors },
      },
    },
    async (request) => {
      const period = billingPeriod();
      const used = await usageSince(db, 'tokens', request.caller.teamId, period.start);
      return {
        success: true as const,
        data: {
          remainingTokens: UNLIMITED,
          planTokens: UNLIMITED,
          tokensUsed: used,
          billingPeriodStart: period.start.toISOString(),
          billingPeriodEnd: period.end.toISOString(),
        },
      };
    },
  );

  const maxConcurrency = config.teamMaxConcurrency;

  r.get(
    '/v2/concurrency-check',
    {
      schema: {
        tags,
        summary: 'Jobs running now against the team limit',
        response: { 200: concurrencyResponse, ...authErrors },
      },
    },
    async (request) => {
      const counts = await countTeamJobs(db, request.caller.teamId);
      const data = { concurrency: counts.active, maxConcurrency };
      return { success: true as const, ...data, data };
    },
  );

  r.get(
    '/v2/team/queue-status',
    {
      schema: {
        tags,
        summary: "The team's queued and running jobs",
        response: { 200: queueStatusResponse, ...authErrors },
      },
    },
    async (request) => {
      const counts = await countTeamJobs(db, request.caller.teamId);
      return {
        success: true as const,
        jobsInQueue: counts.queued + counts.active,
        activeJobsInQueue: counts.active,
        waitingJobsInQueue: counts.queued,
        maxConcurrency,
        mostRecentSuccess: counts.lastCompletedAt?.toISOString() ?? null,
      };
    },
  );
}
