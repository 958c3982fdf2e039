// Per-route settings and per-request state that the hooks in src/api share.
import type { RateLimitClass } from '../config.ts';
import type { Caller } from '../store/teams.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Served without an API key (health, docs, OpenAPI). */
    public?: boolean;
    /** Which per-team rate limit the route counts against; unset: `account`. */
    rateLimit?: RateLimitClass;
    /**
     * The route runs without first waiting for the team's scrape storage still under way
     * (src/scrape/pending-writes.ts): POST /v2/scrape, which waits only for its own page's copy.
     */
    skipPendingWrites?: boolean;
  }
  interface FastifyRequest {
    /** The authenticated team and key; set on every non-public route. */
    caller: Caller;
  }
}
