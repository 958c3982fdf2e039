// Stored files in 1 MiB chunks (src/store/files.ts): written from a path or a Buffer, read back
// whole or by byte range across chunk boundaries, files from before the chunks still readable,
// a file that expires while it is streamed ends the stream, and chunks go with their file.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  CHUNK_BYTES,
  deleteExpiredFiles,
  readFile,
  readFileBytes,
  readFileInfo,
  storeFile,
} from '../../src/store/files.ts';
import { ensureTeam } from '../../src/store/teams.ts';
import { openTestDb, storeKinds } from '../helpers/service.ts';
import type { Db } from '../../src/store/db-types.ts';

async function collect(parts: AsyncIterable<Buffer>): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const p of parts) out.push(p);
  return Buffer.concat(out);
}

for (const store of storeKinds) {
  describe(`stored files on ${store}`, () => {
    let db: Db;
    let cleanup: () => Promise<void>;
    let teamId: string;
    let dir: string;
    before(async () => {
      ({ db, cleanup } = await openTestDb(store));
      teamId = (await ensureTeam(db, 'files')).id;
      dir = await mkdtemp(join(tmpdir(), 'gleaner-files-test-'));
    });
    after(async () => {
      await cleanup?.();
      await rm(dir, { recursive: true, force: true });
    });

    test('a file from a path is stored in chunks and read back whole and by any range', async () => {
      const bytes = randomBytes(Math.floor(2.5 * CHUNK_BYTES));
      const path = join(dir, 'video.mp4');
      await writeFile(path, bytes);
      const id = await storeFile(db, { teamId, contentType: 'video/mp4', data: { path }, ttlMs: 60_000 });
      const { rows } = await db.query<{ n: number; len: number }>(
        'SELECT n, octet_length(data) AS len FROM stored_file_chunks WHERE file_id = $1 ORDER BY n',
        [id],
      );
      assert.deepEqual(
        rows.map((r) => Number(r.len)),
        [CHUNK_BYTES, CHUNK_BYTES, bytes.length - 2 * CHUNK_BYTES],
      );
      const info = await readFileInfo(db, id);
      assert.deepEqual(info, { contentType: 'video/mp4', size: bytes.length, legacy: false });
      assert.ok((await collect(readFileBytes(db, id, info!))).equals(bytes));
      for (const [s, e] of [
        [0, 0],
        [CHUNK_BYTES - 3, CHUNK_BYTES + 2],
        [10, 2 * CHUNK_BYTES + 100],
        [bytes.length - 1, bytes.length - 1],
      ]) {
        assert.ok((await collect(readFileBytes(db, id, info!, s, e))).equals(bytes.subarray(s, e + 1)), `${s}-${e}`);
      }
      // One larger than a chunk, from a Buffer, too.
      const fromBuffer = await storeFile(db, {
        teamId,
        contentType: 'application/pdf',
        data: bytes.subarray(0, CHUNK_BYTES + 1),
        ttlMs: 60_000,
      });
      assert.ok((await readFile(db, fromBuffer))!.data.equals(bytes.subarray(0, CHUNK_BYTES + 1)));
    });

    test('small and empty files are one chunk; files from before the chunks are read the same way', async () => {
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
      const id = await storeFile(db, { teamId, contentType: 'image/png', data: png, ttlMs: 60_000 });
      assert.deepEqual(await readFile(db, id), { contentType: 'image/png', data: png });
      const empty = await storeFile(db, { teamId, contentType: 'text/plain', data: Buffer.alloc(0), ttlMs: 60_000 });
      assert.deepEqual(await readFile(db, empty), { contentType: 'text/plain', data: Buffer.alloc(0) });

      const old = randomBytes(CHUNK_BYTES + 500);
      await db.query(
        `INSERT INTO stored_files (id, team_id, content_type, data, expires_at) VALUES ('0123456789abcdef0123456789abcdef', $1, 'audio/mpeg', $2, now() + interval '1 hour')`,
        [teamId, old],
      );
      const info = await readFileInfo(db, '0123456789abcdef0123456789abcdef');
      assert.deepEqual(info, { contentType: 'audio/mpeg', size: old.length, legacy: true });
      assert.ok((await collect(readFileBytes(db, '0123456789abcdef0123456789abcdef', info!))).equals(old));
      assert.ok(
        (
          await collect(readFileBytes(db, '0123456789abcdef0123456789abcdef', info!, CHUNK_BYTES - 1, CHUNK_BYTES + 1))
        ).equals(old.subarray(CHUNK_BYTES - 1, CHUNK_BYTES + 2)),
      );
    });

    test('a file that expires while it is read ends the read; expired files and their chunks are removed', async () => {
      const bytes = randomBytes(6 * CHUNK_BYTES);
      const id = await storeFile(db, { teamId, contentType: 'video/mp4', data: bytes, ttlMs: 60_000 });
      const info = await readFileInfo(db, id);
      const reading = readFileBytes(db, id, info!);
      assert.equal((await reading.next()).value?.length, 4 * CHUNK_BYTES, 'four chunks a statement');
      await db.query(`UPDATE stored_files SET expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
      await assert.rejects(reading.next(), /gone or changed/);
      assert.equal(await readFileInfo(db, id), undefined);
      assert.ok((await deleteExpiredFiles(db)) >= 1);
      const { rows } = await db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM stored_file_chunks WHERE file_id = $1',
        [id],
      );
      assert.equal(rows[0].n, 0);
    });
  });
}
