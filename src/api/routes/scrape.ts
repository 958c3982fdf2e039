// POST /v2/scrape and GET /v2/scrape/{id}.
import { setTimeout as sleep } from 'node:timers/promises';
import type { FastifyInstance } from 'fastify';
import { ResponseSerializationError, type ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { authErrors, errorBody } from '../../contract/common.ts';
import { type ScrapeDocument, scrapeRequest, scrapeResponse } from '../../contract/scrape.ts';
import type { Scraper } from '../../scrape/scrape.ts';
import type { Db } from '../../store/db-types.ts';
import { getTeamJob } from '../../store/jobs.ts';
import { readScrapeResult } from '../../store/pages.ts';
import { NotFoundError, describeErrorCodes } from '../../errors.ts';

export async function scrapeRoutes(
  app: FastifyInstance,
  { db, scraper, publicUrl }: { db: Db; scraper: Scraper; publicUrl?: string },
): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const tags = ['scrape'];

  r.post(
    '/v2/scrape',
    {
      config: { rateLimit: 'scrape', skipPendingWrites: true },
      schema: {
        tags,
        summary: 'Scrape one URL',
        description:
          'Fetches the page and returns the requested formats. Target failures answer with a code (the Error schema ' +
          'says what each means): ' +
          describeErrorCodes([
            'SCRAPE_TIMEOUT',
            'SCRAPE_BLOCKED_URL',
            'SCRAPE_DNS_RESOLUTION_ERROR',
            'SCRAPE_CONNECTION_ERROR',
            'SCRAPE_SSL_ERROR',
            'SCRAPE_TOO_MANY_REDIRECTS',
            'SCRAPE_RESPONSE_TOO_LARGE',
            'SCRAPE_SITE_ERROR',
            'SCRAPE_UNSUPPORTED_FILE_ERROR',
            ['SCRAPE_ACTION_ERROR', "the message names the action's index"],
            ['BROWSER_UNAVAILABLE', 'the request needs Chromium'],
            'SCRAPE_NO_CACHED_DATA',
            'SCRAPE_LOCKDOWN_CACHE_MISS',
          ]) +
          '. Formats audio and video: ' +
          describeErrorCodes([
            'SCRAPE_MEDIA_TOO_LARGE',
            'SCRAPE_MEDIA_FETCH_FAILED',
            'SCRAPE_MEDIA_UNSUPPORTED',
            'MEDIA_FFMPEG_UNAVAILABLE',
          ]) +
          '; a page without media is a success with a warning. ' +
          "A target's own 4xx/5xx is a successful scrape with metadata.statusCode and metadata.error.",
        body: scrapeRequest,
        response: {
          200: scrapeResponse,
          402: errorBody,
          403: errorBody,
          404: errorBody,
          408: errorBody,
          415: errorBody,
          422: errorBody,
          502: errorBody,
          503: errorBody,
          ...authErrors,
        },
      },
    },
    async (request, reply) => {
      const { document, json } = await scraper.scrape(request.caller, request.body, {
        publicUrl: publicUrl ?? `${request.protocol}://${request.host}`,
      });
      // The document's JSON text was made once, for the database; the answer reuses it instead
      // of serialising it again (1–2 ms of the event loop for a 200 KB page). Still checked
      // against the contract, as every answer is.
      reply.serializer((payload: unknown) => {
        const checked = scrapeResponse.safeParse(payload);
        if (!checked.success)
          throw new ResponseSerializationError(request.method, request.url, { cause: checked.error });
        const warning = checked.data.warning === undefined ? '' : `,"warning":${JSON.stringify(checked.data.warning)}`;
        return `{"success":true,"data":${json}${warning}}`;
      });
      return { success: true as const, data: document, ...(document.warning ? { warning: document.warning } : {}) };
    },
  );

  r.get(
    '/v2/scrape/:id',
    {
      config: { rateLimit: 'status' },
      schema: {
        tags,
        summary: "A finished scrape's document (never stored under zero data retention)",
        description:
          'While the scrape is still active (being fetched, or stored by another process), waits for it up to 5 s. ' +
          `Errors: ${describeErrorCodes(['SCRAPE_NOT_FOUND'])}.`,
        params: z.object({ id: z.uuid() }),
        response: { 200: scrapeResponse, 404: errorBody, ...authErrors },
      },
    },
    async (request) => {
      const { teamId } = request.caller;
      const { id } = request.params;
      // Stored right after the answer (src/scrape/pending-writes.ts): by this process, or by
      // another one that may still be at it while the job is active.
      await scraper.pendingWrites.forJob(id);
      const deadline = Date.now() + STORE_WAIT_MS;
      for (;;) {
        const document = (await readScrapeResult(db, teamId, id)) as ScrapeDocument | undefined;
        if (document) return { success: true as const, data: document };
        const job = Date.now() < deadline ? await getTeamJob(db, teamId, id, 'scrape') : undefined;
        if (job?.status !== 'active') throw new NotFoundError(`No scrape ${id} for this team`, 'SCRAPE_NOT_FOUND');
        await sleep(STORE_POLL_MS);
      }
    },
  );

  // Nothing a scrape answered is lost on a graceful stop: its storage ends before the database closes.
  app.addHook('onClose', () => scraper.pendingWrites.drain());
}

/** How long GET /v2/scrape/{id} waits for an active scrape's document (it is being fetched or stored). */
const STORE_WAIT_MS = 5_000;
const STORE_POLL_MS = 25;
