// Bearer-key authentication on every route but the public ones (WebSocket upgrades: the key may
// also be the subprotocol).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../store/db-types.ts';
import { type Caller, findCallerByKey, touchApiKey } from '../store/teams.ts';
import './types.ts';
import { UnauthorizedError } from '../errors.ts';

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
    const key = match?.[1] ?? (header ? undefined : subprotocolKey(request));
    if (!key) throw new UnauthorizedError();
    const now = Date.now();
    const caller = await lookup(key, now);
    if (!caller) throw new UnauthorizedError('Unauthorized: the API key is not valid or was revoked');
    request.caller = caller;
    if ((lastTouched.get(caller.keyId) ?? 0) + TOUCH_INTERVAL_MS < now) {
      lastTouched.set(caller.keyId, now);
      touchApiKey(db, caller.keyId).catch((err) => request.log.warn({ err }, 'could not record key use'));
    }
  });
}

/**
 * A WebSocket upgrade without an Authorization header may carry the key as its subprotocol
 * (browsers cannot set headers; Firecrawl's SDK watchers do this): `Sec-WebSocket-Protocol: <key>`.
 * The server then selects that subprotocol (ws picks the client's first one).
 */
function subprotocolKey(request: FastifyRequest): string | undefined {
  if (request.headers.upgrade?.toLowerCase() !== 'websocket') return undefined;
  const value = request.headers['sec-websocket-protocol'];
  if (typeof value !== 'string') return undefined;
  const protocols = value
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean);
  return protocols.find((p) => p.startsWith('fc-')) ?? protocols[0];
}
