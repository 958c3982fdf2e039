// Bearer-key authentication on every route but the public ones.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../store/db.ts';
import { type Caller, findCallerByKey, touchApiKey } from '../store/teams.ts';
import { UnauthorizedError } from './errors.ts';
import './types.ts';

// last_used_at is informative only: write it at most once a minute per key, off the request path.
const TOUCH_INTERVAL_MS = 60_000;
// Valid keys are remembered briefly so a busy client costs no key query per request; a revoked
// key (or a changed quota) takes effect within this time in every process.
const CALLER_TTL_MS = 2_000;
const CALLER_CACHE_MAX = 10_000;

export function installAuth(app: FastifyInstance, db: Db): void {
  const lastTouched = new Map<string, number>();
  const callers = new Map<string, { caller: Caller; until: number }>();
  async function lookup(key: string, now: number): Promise<Caller | undefined> {
    const hit = callers.get(key);
    if (hit && hit.until > now) return hit.caller;
    const caller = await findCallerByKey(db, key);
    if (callers.size >= CALLER_CACHE_MAX) callers.clear();
    if (caller) callers.set(key, { caller, until: now + CALLER_TTL_MS });
    else callers.delete(key);
    return caller;
  }
  app.decorateRequest('caller', null as never);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.routeOptions.config.public || !request.routeOptions.url) return; // unknown routes: JSON 404
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) throw new UnauthorizedError();
    const now = Date.now();
    const caller = await lookup(match[1], now);
    if (!caller) throw new UnauthorizedError('Unauthorized: the API key is not valid or was revoked');
    request.caller = caller;
    if ((lastTouched.get(caller.keyId) ?? 0) + TOUCH_INTERVAL_MS < now) {
      lastTouched.set(caller.keyId, now);
      touchApiKey(db, caller.keyId).catch((err) => request.log.warn({ err }, 'could not record key use'));
    }
  });
}
