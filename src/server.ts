// Entry point: `npm start`. Reads configuration, starts the service, stops it on SIGTERM/SIGINT.
// (package.json's start script sets the Node flags and allocator settings; README, "Memory".)
import { loadConfigOrExit } from './config.ts';
import { preparePgliteDataDir } from './store/db.ts';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  // A new embedded database is a copy of the template npm install made; without one, a child
  // process makes it (PGlite's initdb: ~450 MB for a few seconds), and made before the service's
  // modules load, that child overlaps a ~70 MB process, not ~150 MB (src/store/pglite/template.ts).
  if (!config.databaseUrl) await preparePgliteDataDir(config.dataDir);
  const { startService, stopOnSignals } = await import('./service.ts');
  const service = await startService(config);
  service.app.log.info({ url: service.url, database: service.db.kind }, 'gleaner ready');
  if (process.pid === 1)
    // As a container's init, Node would inherit Chromium's orphaned processes and never reap them.
    service.app.log.warn(
      'running as PID 1: start the container with an init (podman/docker run --init) so exited browser processes are reaped',
    );
  stopOnSignals(service);
}

main().catch((err) => {
  console.error(err instanceof Error ? `${err.name}: ${err.message}` : err);
  process.exit(1);
});
