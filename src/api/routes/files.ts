// GET /v2/files/{id}: screenshots and action PDFs served back by their unguessable id, without an
// API key (as a signed storage URL would be), so clients can show them directly.
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Db } from '../../store/db.ts';
import { readFile } from '../../store/files.ts';
import { NotFoundError } from '../errors.ts';

export async function fileRoutes(app: FastifyInstance, { db }: { db: Db }): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/v2/files/:name',
    {
      config: { public: true },
      schema: {
        tags: ['files'],
        summary: 'A stored screenshot or PDF (the URL returned in a scrape document)',
        description: 'Answers the bytes with their content type, or 404 FILE_NOT_FOUND once expired.',
        security: [],
        params: z.object({ name: z.string().regex(/^[0-9a-f]{32}(\.[a-z]{2,5})?$/) }),
      },
    },
    async (request, reply) => {
      const file = await readFile(db, request.params.name.slice(0, 32));
      if (!file) throw new NotFoundError('No such file (or it has expired)', 'FILE_NOT_FOUND');
      reply.header('content-type', file.contentType).header('cache-control', 'private, max-age=86400');
      return reply.send(file.data);
    },
  );
}
