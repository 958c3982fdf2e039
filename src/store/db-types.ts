// The database interface every store module and engine shares (src/store/db.ts opens one; the
// PGlite client implements it), apart from the opening code so neither imports the other.

export interface QueryResult<T> {
  rows: T[];
  rowCount: number;
}

/** What a query runs on: the database itself or an open transaction. */
export interface Queryable {
  query<T = Record<string, unknown>>(text: string, params?: unknown[]): Promise<QueryResult<T>>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /**
   * Several statements without parameters, like exec, returning the rows of every statement in
   * order (the job queue's PGlite adapter needs a RETURNING in the middle of a BEGIN…COMMIT).
   */
  execRows(sql: string): Promise<Record<string, unknown>[][]>;
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
