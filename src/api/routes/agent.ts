// POST /v2/agent, GET /v2/agent/{id}, GET /v2/agent, DELETE /v2/agent/{id}: an agent that answers a
// prompt from pages it searches, maps and reads, on the job queue (src/agent/job.ts).
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Agents } from '../../agent/agent.ts';
import {
  AGENT_DEFAULT_MAX_CREDITS,
  AGENT_LIST_PAGE,
  agentCancelled,
  agentList,
  agentListQuery,
  agentRequest,
  agentStarted,
  agentStatus,
} from '../../contract/agent.ts';
import { authErrors, errorBody } from '../../contract/common.ts';
import { describeErrorCodes } from '../../errors.ts';
import { publicBase } from './crawl-job-routes.ts';

export async function agentRoutes(
  app: FastifyInstance,
  { agents, publicUrl }: { agents: Agents; publicUrl?: string },
): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['agent'];
  const base = publicBase(publicUrl);
  const params = z.object({ id: z.uuid() });
  const notFound = describeErrorCodes(['AGENT_NOT_FOUND']);

  r.post(
    '/v2/agent',
    {
      config: { rateLimit: 'crawl' },
      schema: {
        tags,
        summary: 'Start an agent that answers a prompt from the pages it finds',
        description:
          'Asynchronously: with an LLM (OPENAI_BASE_URL), a plan/act loop over tools (search, map, scrape, extract) that ' +
          'answers with `data` valid for `schema` (validated; one retry with the problems) or {answer, sources}; without one, ' +
          'a deterministic agent (the given URLs and the own index searched for the key terms, then the schema filled from the ' +
          'pages or the best passages) with a warning saying so. Each tool use costs what its operation costs (a search 2 per ' +
          `10 results, a map or a page 1), charged on its own job; at most maxCredits (default ${AGENT_DEFAULT_MAX_CREDITS}). ` +
          'strictConstrainToURLs keeps it to the URLs given and pages under them. Webhook events: agent.started, agent.action, ' +
          'agent.completed, agent.failed, agent.cancelled (signed X-Firecrawl-Signature). Refused with 400 naming the field: ' +
          'an empty prompt, an unusable schema, strictConstrainToURLs without urls, unknown webhook events. ' +
          `Errors: ${describeErrorCodes(['BAD_REQUEST', 'INSUFFICIENT_CREDITS', ['RATE_LIMITED', 'class crawl']])}.`,
        body: agentRequest,
        response: { 200: agentStarted, 402: errorBody, ...authErrors },
      },
    },
    async (request) => {
      const { id } = await agents.start(request.caller, request.body, base(request));
      return { success: true as const, id };
    },
  );

  r.get(
    '/v2/agent',
    {
      config: { rateLimit: 'status' },
      schema: {
        tags,
        summary: "The team's agents, newest first",
        description: `${AGENT_LIST_PAGE} a page; \`next\` is the URL of the older ones (before=<ms>). Agents expire after 24 h.`,
        querystring: agentListQuery,
        response: { 200: agentList, ...authErrors },
      },
    },
    async (request) => ({
      success: true as const,
      ...(await agents.list(request.caller.teamId, request.query.before, base(request))),
    }),
  );

  r.get(
    '/v2/agent/:id',
    {
      config: { rateLimit: 'status' },
      schema: {
        tags,
        summary: 'Agent status and answer',
        description:
          'processing, then completed (`data`), failed (`error`, starting with its code: AGENT_INVALID_OUTPUT, ' +
          'AGENT_CREDITS_EXHAUSTED, AGENT_NOTHING_FOUND, AGENT_FAILED) or cancelled. `actions` lists each tool use; ' +
          `creditsUsed sums them. Readable for 24 h (expiresAt). ${notFound} for another team's id or an expired one.`,
        params,
        response: { 200: agentStatus, 404: errorBody, ...authErrors },
      },
    },
    async (request) => agents.status(request.caller.teamId, request.params.id),
  );

  r.delete(
    '/v2/agent/:id',
    {
      config: { rateLimit: 'status' },
      schema: {
        tags,
        summary: 'Cancel an agent',
        description:
          'A processing agent becomes cancelled at once; a running one stops before its next step (an LLM request in ' +
          `flight is aborted). An agent already done is left as it is. ${notFound} for another team's id.`,
        params,
        response: { 200: agentCancelled, 404: errorBody, ...authErrors },
      },
    },
    async (request) => {
      await agents.cancel(request.caller.teamId, request.params.id);
      return { success: true as const };
    },
  );
}
