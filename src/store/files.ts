// Binary outputs (screenshots, action PDFs, media) kept for a while and served back by an unguessable id.
// The bytes are kept in chunks of CHUNK_BYTES (stored_file_chunks, migration 13): a 100 MiB video
// is written from its temporary file and read back a chunk at a time, so neither side ever holds
// the whole file in memory or hands it to the database thread in one message. Files stored
// before migration 13 keep their bytes in stored_files.data and are read through the same calls.
import { randomBytes } from 'node:crypto';
import { open, stat } from 'node:fs/promises';
import type { Queryable } from './db-types.ts';

export const CHUNK_BYTES = 1 << 20;
/** Chunks read per statement when streaming a file. */
const CHUNKS_PER_READ = 4;

export interface NewFile {
  teamId: string;
  jobId?: string;
  contentType: string;
  /** The bytes, or a file on disk to read them from (large media). */
  data: Buffer | { path: string };
  /** How long the file stays readable. */
  ttlMs: number;
  /** And no later than this (its parent's results' expiry). */
  notAfter?: Date;
}

export interface FileInfo {
  contentType: string;
  size: number;
  /** Stored before migration 13: the bytes are in stored_files.data. */
  legacy: boolean;
}

const EXPIRES = `LEAST(clock_timestamp() + $5 * interval '1 millisecond', $6::timestamptz)`;

/** Stores the file and returns its id (32 hex characters, the read permission). */
export async function storeFile(db: Queryable, file: NewFile): Promise<string> {
  const id = randomBytes(16).toString('hex');
  const head = [id, file.teamId, file.jobId ?? null, file.contentType, file.ttlMs, file.notAfter ?? null];
  if (Buffer.isBuffer(file.data) && file.data.length <= CHUNK_BYTES) {
    // A screenshot or a PDF: the file and its one chunk in one statement.
    await db.query(
      `WITH f AS (
         INSERT INTO stored_files (id, team_id, job_id, content_type, expires_at, size) VALUES ($1, $2, $3, $4, ${EXPIRES}, $7) RETURNING id
       )
       INSERT INTO stored_file_chunks (file_id, n, data) SELECT id, 0, $8 FROM f`,
      [...head, file.data.length, file.data],
    );
    return id;
  }
  const size = Buffer.isBuffer(file.data) ? file.data.length : (await stat(file.data.path)).size;
  // The id is handed out only once every chunk is in, so a half-stored file is never served.
  await db.query(
    `INSERT INTO stored_files (id, team_id, job_id, content_type, expires_at, size) VALUES ($1, $2, $3, $4, ${EXPIRES}, $7)`,
    [...head, size],
  );
  try {
    let n = 0;
    for await (const chunk of chunksOf(file.data)) {
      await db.query('INSERT INTO stored_file_chunks (file_id, n, data) VALUES ($1, $2, $3)', [id, n++, chunk]);
    }
  } catch (err) {
    await db.query('DELETE FROM stored_files WHERE id = $1', [id]).catch(() => undefined);
    throw err;
  }
  return id;
}

async function* chunksOf(data: Buffer | { path: string }): AsyncGenerator<Buffer> {
  if (Buffer.isBuffer(data)) {
    for (let at = 0; at < data.length; at += CHUNK_BYTES) yield data.subarray(at, at + CHUNK_BYTES);
    return;
  }
  const handle = await open(data.path, 'r');
  try {
    for (;;) {
      const buf = Buffer.allocUnsafe(CHUNK_BYTES);
      const { bytesRead } = await handle.read(buf, 0, CHUNK_BYTES, null);
      if (bytesRead === 0) return;
      yield buf.subarray(0, bytesRead);
    }
  } finally {
    await handle.close();
  }
}

/** A live file's type and size, without its bytes. */
export async function readFileInfo(db: Queryable, id: string): Promise<FileInfo | undefined> {
  const { rows } = await db.query<FileInfo>(
    `SELECT content_type AS "contentType", COALESCE(size, octet_length(data)) AS size, data IS NOT NULL AS legacy
     FROM stored_files WHERE id = $1 AND expires_at > clock_timestamp()`,
    [id],
  );
  return rows[0] && { ...rows[0], size: Number(rows[0].size) };
}

/**
 * Bytes `start`..`end` (inclusive) of a file, a few chunks per statement; ends early (with an
 * error) if the file expires or is removed meanwhile.
 */
export async function* readFileBytes(
  db: Queryable,
  id: string,
  info: FileInfo,
  start = 0,
  end = info.size - 1,
): AsyncGenerator<Buffer> {
  for (let at = start; at <= end;) {
    const upTo = Math.min(end, (Math.floor(at / CHUNK_BYTES) + CHUNKS_PER_READ) * CHUNK_BYTES - 1);
    const part = await readRange(db, id, info, at, upTo);
    if (!part || part.length !== upTo - at + 1)
      throw new Error(`stored file ${id} is gone or changed while it was read`);
    yield part;
    at = upTo + 1;
  }
}

async function readRange(
  db: Queryable,
  id: string,
  info: FileInfo,
  start: number,
  end: number,
): Promise<Buffer | undefined> {
  if (info.legacy) {
    const { rows } = await db.query<{ part: Buffer }>(
      'SELECT substring(data FROM $2 FOR $3) AS part FROM stored_files WHERE id = $1 AND expires_at > clock_timestamp()',
      [id, start + 1, end - start + 1],
    );
    return rows[0]?.part;
  }
  const first = Math.floor(start / CHUNK_BYTES);
  const last = Math.floor(end / CHUNK_BYTES);
  const { rows } = await db.query<{ data: Buffer }>(
    `SELECT c.data FROM stored_files f JOIN stored_file_chunks c ON c.file_id = f.id
     WHERE f.id = $1 AND f.expires_at > clock_timestamp() AND c.n BETWEEN $2 AND $3 ORDER BY c.n`,
    [id, first, last],
  );
  if (rows.length !== last - first + 1) return undefined;
  const all = rows.length === 1 ? rows[0].data : Buffer.concat(rows.map((r) => r.data));
  return all.subarray(start - first * CHUNK_BYTES, end - first * CHUNK_BYTES + 1);
}

/** A whole file in memory (screenshots and the like; the file route streams instead). */
export async function readFile(db: Queryable, id: string): Promise<{ contentType: string; data: Buffer } | undefined> {
  const info = await readFileInfo(db, id);
  if (!info) return undefined;
  const parts: Buffer[] = [];
  for await (const part of readFileBytes(db, id, info)) parts.push(part);
  return { contentType: info.contentType, data: Buffer.concat(parts) };
}

/** Removes expired files (their chunks go with them); returns how many. */
export async function deleteExpiredFiles(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'WITH gone AS (DELETE FROM stored_files WHERE expires_at <= clock_timestamp() RETURNING 1) SELECT count(*)::int AS n FROM gone',
  );
  return rows[0]?.n ?? 0;
}
