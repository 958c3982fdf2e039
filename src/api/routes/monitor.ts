// /v2/monitor: create, list, get, update, delete monitors; run one now; list its checks; read one
// check with its pages. Every success is 200 {success: true, data} (clients treat 201/202 as
// failure). The monitors themselves: src/monitor/monitors.ts.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authErrors, errorBody } from '../../contract/common.ts';
import {
  monitorAnswer,
  monitorCheckAnswer,
  monitorCheckDetailAnswer,
  monitorCheckQuery,
  monitorChecksAnswer,
  monitorChecksQuery,
  monitorCreateRequest,
  monitorDeleted,
  monitorListAnswer,
  monitorListQuery,
  monitorUpdateRequest,
} from '../../contract/monitor.ts';
import { describeErrorCodes } from '../../errors.ts';
import type { Monitors } from '../../monitor/monitors.ts';
import { publicBase } from './crawl-job-routes.ts';

// Ids are checked by the service: an id that is not a UUID is as unknown as any other (404).
const params = z.object({ id: z.string().max(100) });
const checkParams = z.object({ id: z.string().max(100), checkId: z.string().max(100) });

export async function monitorRoutes(
  app: FastifyInstance,
  { monitors, publicUrl }: { monitors: Monitors; publicUrl?: string },
): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['monitor'];
  const base = publicBase(publicUrl);
  const notFound = describeErrorCodes(['MONITOR_NOT_FOUND']);

  r.post(
    '/v2/monitor',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags,
        summary: 'Create a monitor',
        description:
          'Checks its targets on a schedule (cron, or text such as "hourly", "every 15 minutes", "daily at 9:00", ' +
          '"weekdays at 18:30", answered as cron; timezone IANA, default UTC; at least 5 minutes apart): scrape targets ' +
          '(urls) and crawl targets (url, crawlOptions), always fetched fresh, each page compared with the previous check: ' +
          'same, new, changed (with diff and, with judgeEnabled, a judgment against the goal), removed or error; search ' +
          'targets (queries, searchWindow, maxResults, domains) run their queries on the search backends and compare the ' +
          'results by URL (title and description), notifying the new and changed ones the goal finds relevant. A webhook ' +
          'gets monitor.page and monitor.check.completed, signed and retried as crawl webhooks are. ' +
          `Errors: ${describeErrorCodes(['BAD_REQUEST'])} naming the field (schedule.cron, schedule.text, schedule.timezone, ` +
          'targets, targets.N.queries, targets.N.excludeDomains, goal: a search target needs one unless judgeEnabled is false).',
        body: monitorCreateRequest,
        response: { 200: monitorAnswer, ...authErrors },
      },
    },
    async (request) => ({
      success: true as const,
      data: await monitors.create(request.caller, request.body, base(request)),
    }),
  );

  r.get(
    '/v2/monitor',
    {
      config: { rateLimit: 'status' },
      schema: {
        tags,
        summary: "The team's monitors",
        description: 'Newest first, `limit` (1-100, default 25) from `offset`.',
        querystring: monitorListQuery,
        response: { 200: monitorListAnswer, ...authErrors },
      },
    },
    async (request) => ({ success: true as const, data: await monitors.list(request.caller, request.query) }),
  );

  r.get(
    '/v2/monitor/:id',
    {
      config: { rateLimit: 'status' },
      schema: {
        tags,
        summary: 'A monitor',
        description: `${notFound} (also for another team's monitor).`,
        params,
        response: { 200: monitorAnswer, 404: errorBody, ...authErrors },
      },
    },
    async (request) => ({ success: true as const, data: await monitors.get(request.caller, request.params.id) }),
  );

  r.patch(
    '/v2/monitor/:id',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags,
        summary: 'Update a monitor',
        description:
          'Any field of the create request, and `status` (active or paused). A new schedule, or a resume, counts ' +
          `the next run from now. Errors: ${describeErrorCodes(['BAD_REQUEST'])} as on create, ${notFound}.`,
        params,
        body: monitorUpdateRequest,
        response: { 200: monitorAnswer, 404: errorBody, ...authErrors },
      },
    },
    async (request) => ({
      success: true as const,
      data: await monitors.update(request.caller, request.params.id, request.body),
    }),
  );

  r.delete(
    '/v2/monitor/:id',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags,
        summary: 'Delete a monitor',
        description: `The monitor, its checks and stored contents are deleted; it is never run again. ${notFound}.`,
        params,
        response: { 200: monitorDeleted, 404: errorBody, ...authErrors },
      },
    },
    async (request) => {
      await monitors.delete(request.caller, request.params.id);
      return { success: true as const };
    },
  );

  r.post(
    '/v2/monitor/:id/run',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags,
        summary: 'Run a check now',
        description:
          'Queues a manual check and answers it (status queued); read it with GET /v2/monitor/{id}/checks/{checkId}. ' +
          `Errors: ${describeErrorCodes(['INSUFFICIENT_CREDITS', 'MONITOR_PAUSED', 'MONITOR_CHECK_RUNNING', 'MONITOR_NOT_FOUND'])}.`,
        params,
        response: { 200: monitorCheckAnswer, 402: errorBody, 404: errorBody, 409: errorBody, ...authErrors },
      },
    },
    async (request) => ({ success: true as const, data: await monitors.run(request.caller, request.params.id) }),
  );

  r.get(
    '/v2/monitor/:id/checks',
    {
      config: { rateLimit: 'status' },
      schema: {
        tags,
        summary: "A monitor's checks",
        description: `Newest first, \`limit\` (1-100, default 25) from \`offset\`, optionally of one \`status\`. ${notFound}.`,
        params,
        querystring: monitorChecksQuery,
        response: { 200: monitorChecksAnswer, 404: errorBody, ...authErrors },
      },
    },
    async (request) => ({
      success: true as const,
      data: await monitors.checks(request.caller, request.params.id, request.query),
    }),
  );

  r.get(
    '/v2/monitor/:id/checks/:checkId',
    {
      config: { rateLimit: 'status' },
      schema: {
        tags,
        summary: 'A check with its pages',
        description:
          'Pages in check order, `limit` (1-100, default 100) from `skip`, optionally of one page `status`; `next` (at the ' +
          'top level and inside data) is the URL of the rest, null on the last page: following it returns every page once. ' +
          `Errors: ${describeErrorCodes(['MONITOR_NOT_FOUND', 'MONITOR_CHECK_NOT_FOUND'])}.`,
        params: checkParams,
        querystring: monitorCheckQuery,
        response: { 200: monitorCheckDetailAnswer, 404: errorBody, ...authErrors },
      },
    },
    async (request) => {
      const { id, checkId } = request.params;
      const data = await monitors.check(request.caller, id, checkId, request.query, base(request));
      return { success: true as const, next: data.next, data };
    },
  );
}
