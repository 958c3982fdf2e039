// Binary outputs (screenshots, action PDFs, media) kept for a while and served back by an unguessable id.
import { randomBytes } from 'node:crypto';
import type { Queryable } from './db.ts';

export interface StoredFile {
  contentType: string;
  data: Buffer;
}

export interface NewFile extends StoredFile {
  teamId: string;
  jobId?: string;
  /** How long the file stays readable. */
  ttlMs: number;
  /** And no later than this (its parent's results' expiry). */
  notAfter?: Date;
}

/** Stores the file and returns its id (32 hex characters, the read permission). */
export async function storeFile(db: Queryable, file: NewFile): Promise<string> {
  const id = randomBytes(16).toString('hex');
  await db.query(
    `INSERT INTO stored_files (id, team_id, job_id, content_type, data, expires_at)
     VALUES ($1, $2, $3, $4, $5, LEAST(clock_timestamp() + $6 * interval '1 millisecond', $7::timestamptz))`,
    [id, file.teamId, file.jobId ?? null, file.contentType, file.data, file.ttlMs, file.notAfter ?? null],
  );
  return id;
}

export async function readFile(db: Queryable, id: string): Promise<StoredFile | undefined> {
  const { rows } = await db.query<{ contentType: string; data: Uint8Array }>(
    'SELECT content_type AS "contentType", data FROM stored_files WHERE id = $1 AND expires_at > clock_timestamp()',
    [id],
  );
  const row = rows[0];
  return row && { contentType: row.contentType, data: Buffer.from(row.data.buffer, row.data.byteOffset, row.data.byteLength) };
}

/** A file's type and size, without its bytes. */
export async function readFileInfo(db: Queryable, id: string): Promise<{ contentType: string; size: number } | undefined> {
  const { rows } = await db.query<{ contentType: string; size: number }>(
    'SELECT content_type AS "contentType", octet_length(data)::int AS size FROM stored_files WHERE id = $1 AND expires_at > clock_timestamp()',
    [id],
  );
  return rows[0];
}

/** `length` bytes of a file from byte `start` (0-based): a Range request's part, without reading the rest. */
export async function readFileSlice(db: Queryable, id: string, start: number, length: number): Promise<Buffer | undefined> {
  const { rows } = await db.query<{ part: Uint8Array }>(
    'SELECT substring(data FROM $2 FOR $3) AS part FROM stored_files WHERE id = $1 AND expires_at > clock_timestamp()',
    [id, start + 1, length],
  );
  const part = rows[0]?.part;
  return part && Buffer.from(part.buffer, part.byteOffset, part.byteLength);
}

/** Removes expired files; returns how many. */
export async function deleteExpiredFiles(db: Queryable): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    'WITH gone AS (DELETE FROM stored_files WHERE expires_at <= clock_timestamp() RETURNING 1) SELECT count(*)::int AS n FROM gone',
  );
  return rows[0]?.n ?? 0;
}
