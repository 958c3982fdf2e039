// Creates a PGlite data directory, then exits (run as a child process by openPglite). initdb in
// WASM peaks at ~1 GB of memory that the process never gives back; doing it in a short-lived
// child keeps that peak out of the service, which then opens the ready directory (~300 MB).
import { PGlite } from '@electric-sql/pglite';

const path = process.argv[2];
if (!path) {
  console.error('usage: pglite-init.ts <data directory>');
  process.exit(2);
}
const db = await PGlite.create(path);
await db.close();
