// Per-request cost of Gleaner's HTTP stack (request id, key lookup, rate-limit counter in the
// database, zod validation and serialisation) against a bare Fastify route answering a JSON body
// of the same size, measured in the same run on loopback. Figure: the ratio of median latencies.
import Fastify from 'fastify';
import { Pool } from 'undici';
import { startTestService } from '../test/helpers/service.ts';

const REQUESTS = 3000;
const CONCURRENCY = 16;

async function measure(
  origin: string,
  path: string,
  headers: Record<string, string>,
): Promise<{ median: number; p99: number; rps: number }> {
  const pool = new Pool(origin, { connections: CONCURRENCY });
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < REQUESTS) {
        next++;
        const t = performance.now();
        const res = await pool.request({ method: 'GET', path, headers });
        await res.body.text();
        if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
        latencies.push(performance.now() - t);
      }
    }),
  );
  const elapsed = performance.now() - started;
  await pool.close();
  latencies.sort((a, b) => a - b);
  return {
    median: latencies[latencies.length >> 1],
    p99: latencies[Math.floor(latencies.length * 0.99)],
    rps: (REQUESTS / elapsed) * 1000,
  };
}

const svc = await startTestService({ env: { GLEANER_RATE_LIMITS: process.env.BENCH_RL ?? 'account=1000000' } });
const path = '/v2/team/token-usage';
const sample = await (await fetch(svc.url + path, { headers: { authorization: `Bearer ${svc.key}` } })).text();

const bare = Fastify({ logger: false });
bare.get(path, async (_req, reply) => reply.type('application/json').send(sample));
await bare.listen({ port: 0, host: '127.0.0.1' });
const bareAddr = bare.server.address() as { port: number };

try {
  // Warm both, then alternate twice so drift on a shared machine hits both sides alike.
  await measure(`http://127.0.0.1:${bareAddr.port}`, path, {});
  await measure(svc.url, path, { authorization: `Bearer ${svc.key}` });
  const runs = { bare: [] as number[], gleaner: [] as number[] };
  const last = { bare: { median: 0, p99: 0, rps: 0 }, gleaner: { median: 0, p99: 0, rps: 0 } };
  for (let i = 0; i < 2; i++) {
    last.bare = await measure(`http://127.0.0.1:${bareAddr.port}`, path, {});
    last.gleaner = await measure(svc.url, path, { authorization: `Bearer ${svc.key}` });
    runs.bare.push(last.bare.median);
    runs.gleaner.push(last.gleaner.median);
  }
  const med = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `bare fastify:  median ${med(runs.bare).toFixed(2)} ms, ${last.bare.rps.toFixed(0)} req/s (${CONCURRENCY} concurrent)`,
  );
  console.log(
    `gleaner (PGlite): median ${med(runs.gleaner).toFixed(2)} ms, p99 ${last.gleaner.p99.toFixed(2)} ms, ${last.gleaner.rps.toFixed(0)} req/s`,
  );
  console.log(
    `RESULT api-overhead: authenticated request median latency = ${(med(runs.gleaner) / med(runs.bare)).toFixed(2)}x bare Fastify`,
  );
} finally {
  await bare.close();
  await svc.destroy();
}
