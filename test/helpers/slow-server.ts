// A service process for shutdown tests: the real service with one extra route that takes
// `?ms=` milliseconds to answer, so a test can send SIGTERM while a request is in flight.
// Prints its URL on the first stdout line, and "slow request started" as each slow request arrives.
import { setTimeout as sleep } from 'node:timers/promises';
import { loadConfig } from '../../src/config.ts';
import { startService, stopOnSignals } from '../../src/service.ts';

const service = await startService(loadConfig(), {
  configure(app) {
    app.get('/test/slow', async (request) => {
      process.stdout.write('slow request started\n');
      await sleep(Number((request.query as { ms?: string }).ms ?? 1000));
      return { success: true, finished: true };
    });
  },
});
stopOnSignals(service);
process.stdout.write(`${service.url}\n`);
