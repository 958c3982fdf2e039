// GET /v2/files/{id}: screenshots, action PDFs and media served back by their unguessable id,
// without an API key (as a signed storage URL would be), so clients can show them directly.
// Single byte ranges (Range: bytes=…) are answered 206, so stored video plays and seeks in a
// browser; a file never changes, so its id is its ETag.
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { Db } from '../../store/db-types.ts';
import { readFileBytes, readFileInfo } from '../../store/files.ts';
import { NotFoundError, describeErrorCodes } from '../../errors.ts';

export async function fileRoutes(app: FastifyInstance, { db }: { db: Db }): Promise<void> {
  const r = app.withTypeProvider<ZodTypeProvider>();
  r.get(
    '/v2/files/:name',
    {
      config: { public: true },
      schema: {
        tags: ['files'],
        summary: 'A stored screenshot, PDF, video or audio file (the URL returned in a scrape document)',
        description:
          `Answers the bytes with their content type, or ${describeErrorCodes(['FILE_NOT_FOUND'])} once expired. ` +
          'A single byte range (`Range: bytes=start-end`, `start-`, `-suffix`) is answered 206 with Content-Range; ' +
          'an unsatisfiable one 416. Other range forms get the whole file (200).',
        security: [],
        params: z.object({ name: z.string().regex(/^[0-9a-f]{32}(\.[a-z0-9]{2,5})?$/) }),
      },
    },
    async (request, reply) => {
      const id = request.params.name.slice(0, 32);
      const etag = `"${id}"`;
      reply.header('cache-control', 'private, max-age=86400').header('accept-ranges', 'bytes').header('etag', etag);
      const info = await readFileInfo(db, id);
      if (!info) throw new NotFoundError('No such file (or it has expired)', 'FILE_NOT_FOUND');
      reply.header('content-type', info.contentType);
      const rangeHeader = request.headers.range;
      const ifRange = request.headers['if-range'];
      let range: ReturnType<typeof byteRange>;
      if (rangeHeader && (ifRange === undefined || ifRange === etag)) range = byteRange(rangeHeader, info.size);
      if (range === 'unsatisfiable') return reply.code(416).header('content-range', `bytes */${info.size}`).send();
      if (range) reply.code(206).header('content-range', `bytes ${range.start}-${range.end}/${info.size}`);
      const { start, end } = range ?? { start: 0, end: info.size - 1 };
      reply.header('content-length', String(end - start + 1));
      if (end < start) return reply.send(Buffer.alloc(0));
      // A few MiB at a time from the database (src/store/files.ts): a large video is never held whole.
      return reply.send(Readable.from(readFileBytes(db, id, info, start, end)));
    },
  );
}

/**
 * One byte range of a file of `size` bytes (RFC 9110 §14.1.2), inclusive bounds; undefined for a
 * header this route does not honour (several ranges, other units, malformed), which gets the
 * whole file.
 */
export function byteRange(header: string, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    // The last N bytes. Of an empty file that is satisfiable but nothing: the whole (empty) file.
    const n = Number(m[2]);
    if (n === 0) return 'unsatisfiable';
    if (size === 0) return undefined;
    return { start: Math.max(0, size - n), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (m[2] !== '' && Number(m[2]) < start) return undefined;
  if (start >= size) return 'unsatisfiable';
  return { start, end };
}
