// Soak (`npm run soak`): the mixed load of bench/load-mix.ts (the real service as a child process
// on PGlite, rate limits off, the fixture site, scrape / map / crawl status / parse / health) at a
// moderate paced rate for SOAK_MINUTES (30), printing every minute the service's RSS
// (/proc/<pid>/status VmRSS), open file descriptors (/proc/<pid>/fd), threads, CPU used, and that
// minute's requests, errors, p50 and p99; a new crawl starts every minute. At the end a verdict:
// RSS and descriptor growth from minute 5 (the warm-up; half the run when shorter) to the end,
// which should be flat. The service does not expose its V8 heap, so only what /proc shows is
// reported. Loopback only.
// Knobs: SOAK_MINUTES (30), SOAK_CLIENTS (8), SOAK_RATE (requests/s over all clients, 20),
// SOAK_CRAWL_LIMIT (100), LOAD_DATABASE_URL (Postgres instead of PGlite).
import { loadavg } from 'node:os';
import { Recorder, fdKinds, runLoad, sampleProcess, startService } from '../bench/load-mix.ts';
import { startFixtureSite } from '../test/fixtures/site/index.ts';

const MINUTES = Number(process.env.SOAK_MINUTES || 30);
const CLIENTS = Number(process.env.SOAK_CLIENTS || 8);
const RATE = Number(process.env.SOAK_RATE || 20);
const CRAWL_LIMIT = Number(process.env.SOAK_CRAWL_LIMIT || 100);
const MINUTE_MS = 60_000;

const site = await startFixtureSite();
const service = await startService();
console.log(
  `soak: gleaner (${service.store}, child process ${service.pid}), ${CLIENTS} clients at ${RATE} requests/s in all ` +
    `for ${MINUTES} min, a crawl of ${CRAWL_LIMIT} pages every minute; heap: not exposed by the service (RSS and fds from /proc)`,
);
const start = await sampleProcess(service.pid);
const startFds = await fdKinds(service.pid);
console.log(
  `start: RSS ${start.rssMb.toFixed(0)} MB, ${start.fds} fds, ${start.threads} threads (load average ${loadavg()[0].toFixed(2)})`,
);
console.log(
  `${'min'.padStart(4)}${'RSS MB'.padStart(8)}${'fds'.padStart(6)}${'threads'.padStart(9)}${'CPU'.padStart(6)}` +
    `${'requests'.padStart(10)}${'errors'.padStart(8)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'load'.padStart(7)}`,
);

interface Minute {
  minute: number;
  rssMb: number;
  fds: number;
}
const minutes: Minute[] = [];
let current = new Recorder();
let last = start;
let lastAt = performance.now();

async function report(minute: number): Promise<void> {
  const rec = current;
  current = new Recorder();
  site.requests.length = 0; // the fixture site's request log: this process's memory, not the service's
  const s = await sampleProcess(service.pid);
  const now = performance.now();
  const cpu = (s.cpuS - last.cpuS) / ((now - lastAt) / 1000);
  last = s;
  lastAt = now;
  const { requests, errors } = rec.totals();
  const all = rec.summary().all;
  minutes.push({ minute, rssMb: s.rssMb, fds: s.fds });
  console.log(
    `${String(minute).padStart(4)}${s.rssMb.toFixed(0).padStart(8)}${String(s.fds).padStart(6)}${String(s.threads).padStart(9)}` +
      `${cpu.toFixed(2).padStart(6)}${String(requests).padStart(10)}${String(errors).padStart(8)}` +
      `${all.p50.toFixed(1).padStart(8)}${all.p99.toFixed(0).padStart(8)}${loadavg()[0].toFixed(2).padStart(7)}`,
  );
  for (const e of rec.samples) console.log(`     error: ${e}`);
}

let exitCode = 0;
try {
  let minute = 0;
  const tick = setInterval(() => void report(++minute), MINUTE_MS);
  const total = await runLoad({
    service,
    site,
    clients: CLIENTS,
    durationMs: MINUTES * MINUTE_MS,
    ratePerSecond: RATE,
    crawlLimit: CRAWL_LIMIT,
    crawlEveryMs: MINUTE_MS,
    recorders: () => [current],
  });
  clearInterval(tick);
  // The last minute, unless its tick came first (then the few requests still in flight at the end
  // count in the totals only).
  if (minute < MINUTES) await report(++minute);
  // Idle: what the service keeps once the load stops.
  await new Promise((r) => setTimeout(r, 15_000));
  const idle = await sampleProcess(service.pid);
  const idleFds = await fdKinds(service.pid);
  const kinds = [...new Set([...Object.keys(startFds), ...Object.keys(idleFds)])].sort();
  console.log(
    `fds by kind, start → idle after: ${kinds.map((k) => `${k} ${startFds[k] ?? 0} → ${idleFds[k] ?? 0}`).join(', ')}`,
  );

  const { requests, errors } = total.totals();
  const warm = Math.min(5, Math.max(1, Math.floor(minutes.length / 2)));
  const from = minutes.find((m) => m.minute === warm) ?? minutes[0];
  const to = minutes.at(-1)!;
  const span = to.minute - from.minute;
  const growth = to.rssMb - from.rssMb;
  const perHour = span > 0 ? (growth / span) * 60 : 0;
  const peak = Math.max(...minutes.filter((m) => m.minute >= warm).map((m) => m.rssMb));
  console.log(`idle 15 s after the load: RSS ${idle.rssMb.toFixed(0)} MB, ${idle.fds} fds, ${idle.threads} threads`);
  console.log(
    `RESULT soak: ${MINUTES} min, ${requests} requests, ${errors} errors; RSS minute ${from.minute} → ${to.minute}: ` +
      `${from.rssMb.toFixed(0)} → ${to.rssMb.toFixed(0)} MB (${growth >= 0 ? '+' : ''}${growth.toFixed(0)} MB, ` +
      `${perHour >= 0 ? '+' : ''}${perHour.toFixed(0)} MB/h; peak after warm-up ${peak.toFixed(0)} MB), ` +
      `fds ${from.fds} → ${to.fds} (${to.fds - from.fds >= 0 ? '+' : ''}${to.fds - from.fds}); ` +
      `start ${start.rssMb.toFixed(0)} MB / ${start.fds} fds, idle after ${idle.rssMb.toFixed(0)} MB / ${idle.fds} fds`,
  );
  for (const e of total.samples) console.log(`  error: ${e}`);
} catch (err) {
  console.error(err);
  exitCode = 1;
} finally {
  await service.stop();
  await site.close();
}
process.exitCode = exitCode;
