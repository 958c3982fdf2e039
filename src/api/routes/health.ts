// Liveness and readiness: /health answers while the process runs, /ready when the database does.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Db } from '../../store/db-types.ts';
import { errorBody } from '../../contract/common.ts';
import { ApiError } from '../../errors.ts';

export async function healthRoutes(app: FastifyInstance, { db }: { db: Db }): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  const ok = z.object({ status: z.literal('ok') });
  const publicRoute = { config: { public: true }, schema: { tags: ['meta'], security: [] } } as const;

  r.get(
    '/health',
    { ...publicRoute, schema: { ...publicRoute.schema, summary: 'Process is up', response: { 200: ok } } },
    async () => ({
      status: 'ok' as const,
    }),
  );

  r.get(
    '/ready',
    {
      ...publicRoute,
      schema: {
        ...publicRoute.schema,
        summary: 'Database is reachable',
        response: { 200: ok.extend({ database: z.string() }), 503: errorBody },
      },
    },
    async () => {
      try {
        await db.query('SELECT 1');
      } catch (err) {
        app.log.warn({ err }, 'readiness check failed');
        throw new ApiError('NOT_READY', 'Database unreachable');
      }
      return { status: 'ok' as const, database: db.kind };
    },
  );
}
