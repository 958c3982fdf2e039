// Per-team rate limits by route class (requests per minute), through rate-limiter-flexible's
// Postgres store on our own database: processes sharing one Postgres share the counters, and the
// embedded PGlite database gives the same behaviour in one process.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import type { RateLimitClass } from '../config.ts';
import type { Db } from '../store/db.ts';
import { RateLimitedError } from './errors.ts';
import './types.ts';

const WINDOW_SECONDS = 60;

export function installRateLimits(app: FastifyInstance, db: Db, limits: Record<RateLimitClass, number>): void {
  // The store calls `query({text, values})` on its client; our Db takes (text, values).
  const storeClient = { query: (q: { text: string; values?: unknown[] }) => db.query(q.text, q.values) };
  const limiters = new Map<RateLimitClass, RateLimiterPostgres>();
  for (const [cls, points] of Object.entries(limits) as [RateLimitClass, number][]) {
    if (points <= 0) continue;
    limiters.set(
      cls,
      new RateLimiterPostgres({
        storeClient,
        storeType: 'client',
        tableName: 'rate_limits',
        tableCreated: true, // created by our migrations
        keyPrefix: `rl:${cls}`,
        points,
        duration: WINDOW_SECONDS,
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
