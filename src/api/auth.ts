// Bearer-key authentication on every route but the public ones.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Db } from '../store/db.ts';
import { findCallerByKey, touchApiKey } from '../store/teams.ts';
import { UnauthorizedError } from './errors.ts';
import './types.ts';

// last_used_at is informative only: write it at most once a minute per key, off the request path.
const TOUCH_INTERVAL_MS = 60_000;

export function installAuth(app: FastifyInstance, db: Db): void {
  const lastTouched = new Map<string, number>();
  app.decorateRequest('caller', null as never);
  app.addHook('onRequest', async (request: FastifyRequest) => {
    if (request.routeOptions.config.public || !request.routeOptions.url) return; // unknown routes: JSON 404
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match) throw new UnauthorizedError();
    const caller = await findCallerByKey(db, match[1]);
    if (!caller) throw new UnauthorizedError('Unauthorized: the API key is not valid or was revoked');
    request.caller = caller;
    const now = Date.now();
    if ((lastTouched.get(caller.keyId) ?? 0) + TOUCH_INTERVAL_MS < now) {
      lastTouched.set(caller.keyId, now);
      touchApiKey(db, caller.keyId).catch((err) => request.log.warn({ err }, 'could not record key use'));
    }
  });
}
