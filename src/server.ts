// Entry point: `npm start`. Reads configuration, starts the service, stops it on SIGTERM/SIGINT.
import { loadConfigOrExit } from './config.ts';
import { startService, stopOnSignals } from './service.ts';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const service = await startService(config);
  service.app.log.info({ url: service.url, database: service.db.kind }, 'gleaner ready');
  stopOnSignals(service);
}

main().catch((err) => {
  console.error(err instanceof Error ? `${err.name}: ${err.message}` : err);
  process.exit(1);
});
