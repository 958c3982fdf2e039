// Per-team rate limits by route class (requests per minute), through rate-limiter-flexible.
// On Postgres the counters live in our database (rate_limits), so processes sharing it share
// them. The embedded PGlite database belongs to one process (DATA_DIR is locked), so there the
// counters live in memory: the same limits, without a database write per request.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  type RateLimiterAbstract,
  RateLimiterMemory,
  RateLimiterPostgres,
  RateLimiterRes,
} from 'rate-limiter-flexible';
import type { RateLimitClass } from '../config.ts';
import type { Db } from '../store/db-types.ts';
import './types.ts';
import { RateLimitedError } from '../errors.ts';

const WINDOW_SECONDS = 60;

export function installRateLimits(app: FastifyInstance, db: Db, limits: Record<RateLimitClass, number>): void {
  // The store calls `query({text, values})` on its client; our Db takes (text, values).
  const storeClient = { query: (q: { text: string; values?: unknown[] }) => db.query(q.text, q.values) };
  const limiters = new Map<RateLimitClass, RateLimiterAbstract>();
  for (const [cls, points] of Object.entries(limits) as [RateLimitClass, number][]) {
    if (points <= 0) continue;
    const common = { keyPrefix: `rl:${cls}`, points, duration: WINDOW_SECONDS };
    limiters.set(
      cls,
      db.kind === 'pglite'
        ? new RateLimiterMemory(common)
        : new RateLimiterPostgres({
            ...common,
            storeClient,
            storeType: 'client',
            tableName: 'rate_limits',
            tableCreated: true, // created by our migrations
            // Once a key is over its limit, later requests in the window are refused without a query.
            inMemoryBlockOnConsumed: points,
          }),
    );
  }

  app.addHook('preHandler', async (request: FastifyRequest, reply) => {
    if (request.routeOptions.config.public || !request.caller) return;
    const cls = request.routeOptions.config.rateLimit ?? 'account';
    const limiter = limiters.get(cls);
    if (!limiter) return;
    try {
      const res = await limiter.consume(request.caller.teamId);
      reply.header('x-ratelimit-limit', String(limiter.points));
      reply.header('x-ratelimit-remaining', String(res.remainingPoints));
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection; // a store failure: 500
      throw new RateLimitedError(Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)), cls);
    }
  });
}
