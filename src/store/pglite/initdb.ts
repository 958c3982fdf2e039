// Creates a PGlite data directory, then exits (run as a child process by openPglite, with
// PGLITE_INIT_NODE_ARGS). initdb in WASM holds two copies of a Postgres instance's 128 MB
// memory (PGlite restores a snapshot of it before each of initdb's server runs) and runs
// thousands of catalog statements once; doing it in a short-lived child keeps that peak out of
// the service, which then opens the ready directory. The settings are the service's own (they
// also go into the directory's postgresql.conf).
import { PGlite } from '@electric-sql/pglite';
import { PGLITE_SETTINGS } from './wasm.ts';

const path = process.argv[2];
if (!path) {
  console.error('usage: initdb.ts <data directory>');
  process.exit(2);
}
const settings = PGLITE_SETTINGS.flatMap((s) => ['-c', s]);
const db = await PGlite.create(path, {
  initDbStartParams: settings,
  startParams: [...PGlite.defaultStartParams, ...settings],
});
await db.close();
