// Entry point: `npm run worker`. Runs jobs only (no HTTP), beside API processes on one Postgres.
import { loadConfigOrExit } from './config.ts';
import { startWorker, stopWorkerOnSignals, WorkerConfigError } from './worker-service.ts';

async function main(): Promise<void> {
  const config = loadConfigOrExit();
  let worker;
  try {
    worker = await startWorker(config);
  } catch (err) {
    if (err instanceof WorkerConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  worker.log.info({ workers: config.workers, queueSchema: config.queueSchema }, 'gleaner worker ready');
  stopWorkerOnSignals(worker);
}

main().catch((err) => {
  console.error(err instanceof Error ? `${err.name}: ${err.message}` : err);
  process.exit(1);
});
