// Named browser profiles: a team's persistent browser storage (cookies, localStorage, IndexedDB)
// as one JSON document. A save replaces the whole state in one statement, so concurrent writers
// never interleave: the last complete state wins and `version` counts the saves.
import type { Queryable } from './db-types.ts';

export interface BrowserProfile {
  state: unknown;
  version: number;
  updatedAt: Date;
}

export async function readProfile(db: Queryable, teamId: string, name: string): Promise<BrowserProfile | undefined> {
  const { rows } = await db.query<BrowserProfile>(
    'SELECT state, version, updated_at AS "updatedAt" FROM browser_profiles WHERE team_id = $1 AND name = $2',
    [teamId, name],
  );
  return rows[0];
}

export async function saveProfile(db: Queryable, teamId: string, name: string, state: unknown): Promise<number> {
  const { rows } = await db.query<{ version: number }>(
    `INSERT INTO browser_profiles (team_id, name, state) VALUES ($1, $2, $3::jsonb)
     ON CONFLICT (team_id, name) DO UPDATE SET state = EXCLUDED.state,
       version = browser_profiles.version + 1, updated_at = clock_timestamp()
     RETURNING version`,
    [teamId, name, JSON.stringify(state)],
  );
  return rows[0].version;
}
