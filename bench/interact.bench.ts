// Interact: what a browser session costs a caller, against doing it yourself with Playwright in the same run.
//
// - Time to first result: scrape a fixture page, then the first POST /v2/scrape/{id}/interact with
//   `await page.title()` (session opened at the scrape's page state, sandbox started, code run), timed
//   from the interact POST. Baseline: what a caller does without Gleaner to get a live page of the same
//   URL: launch Chromium with Playwright (Gleaner's flags), open a page, goto the URL, read its title.
//   Also printed against a page load on an already-running browser (newContext + goto + title).
// - Per-call overhead of a reused session: POST interact {code: "1+1"} on a live session, median of
//   CALLS, against `page.evaluate('1+1')` over CDP from this process (the floor of any remote call).
// - 20 concurrent sessions: SESSIONS sessions opened at once, each running code; peak memory of this
//   process and every process under it (Chromiums, sandboxes) as PSS, sampled every 500 ms.
//
// Goals (issue 18): first result ≤ 1.3× the fresh Playwright page load; 1+1 ≤ 20 ms. Printed as RESULT
// lines; a missed goal is printed, not an error. Knobs: INTERACT_BENCH_ROUNDS (5), INTERACT_BENCH_CALLS (50),
// INTERACT_BENCH_SESSIONS (20).
import { readFileSync, readdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import { startFixtureSite } from '../test/fixtures/site/index.ts';
import { apiClient } from '../test/helpers/api.ts';
import { startTestService } from '../test/helpers/service.ts';
import { CHROMIUM_ARGS, chromiumExecutable } from '../src/scrape/engines/browser.ts';

const ROUNDS = Number(process.env.INTERACT_BENCH_ROUNDS || 5);
const CALLS = Number(process.env.INTERACT_BENCH_CALLS || 50);
const SESSIONS = Number(process.env.INTERACT_BENCH_SESSIONS || 20);

const site = await startFixtureSite();
const svc = await startTestService({
  env: { BROWSER_SESSIONS_PER_TEAM: String(SESSIONS + 5), BROWSER_SESSIONS_MAX: String(SESSIONS + 5) },
});
const api = apiClient(svc);
const url = site.url('/');
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function scrapeId(): Promise<string> {
  const res = await api.scrape({ url, formats: ['markdown'] } as never);
  if (res.status !== 200) throw new Error(res.text);
  await svc.settled();
  return res.json.data.metadata.scrapeId;
}

async function firstResult(): Promise<number> {
  const id = await scrapeId();
  const t = performance.now();
  const res = await api.interact(id, { code: 'await page.title()' });
  const ms = performance.now() - t;
  if (res.status !== 200 || !res.json.success) throw new Error(res.text);
  await api.stopInteract(id);
  return ms;
}

async function freshPlaywright(): Promise<number> {
  const t = performance.now();
  const browser = await chromium.launch({ executablePath: chromiumExecutable(), args: CHROMIUM_ARGS });
  const page = await browser.newPage();
  await page.goto(url);
  await page.title();
  const ms = performance.now() - t;
  await browser.close();
  return ms;
}

const warmBrowser = await chromium.launch({ executablePath: chromiumExecutable(), args: CHROMIUM_ARGS });
async function warmPageLoad(): Promise<number> {
  const t = performance.now();
  const context = await warmBrowser.newContext();
  const page = await context.newPage();
  await page.goto(url);
  await page.title();
  const ms = performance.now() - t;
  await context.close();
  return ms;
}

// Warm-up (caches, the first spare, the sandbox binaries in the page cache), not timed.
await firstResult();
await freshPlaywright();
const ours: number[] = [];
const fresh: number[] = [];
const warm: number[] = [];
// A session taking the spare browser makes the service launch and prepare the next one, which
// takes a core for ~1.5 s: every round waits for that to finish, then times the baselines before
// the session, so no figure shares the machine with the spare's preparation.
for (let i = 0; i < ROUNDS; i++) {
  await new Promise((r) => setTimeout(r, 4000));
  fresh.push(await freshPlaywright());
  warm.push(await warmPageLoad());
  ours.push(await firstResult());
}
const first = median(ours) / median(fresh);
console.log(
  `first result: ${median(ours).toFixed(0)} ms (runs ${ours.map((x) => x.toFixed(0)).join(', ')}); fresh Playwright launch + load ` +
    `${median(fresh).toFixed(0)} ms; load on a running browser ${median(warm).toFixed(0)} ms`,
);
console.log(`RESULT interact first result / fresh playwright page load: ${first.toFixed(2)}x (goal <= 1.3x)`);
console.log(
  `RESULT interact first result / page load on a running browser: ${(median(ours) / median(warm)).toFixed(2)}x`,
);

// Per-call overhead.
const id = await scrapeId();
const open = await api.interact(id, { code: '1+1' });
const direct = await chromium.connectOverCDP(open.json.cdpUrl);
const directPage = direct.contexts()[0].pages().at(-1)!;
const calls: number[] = [];
const evals: number[] = [];
for (let i = 0; i < CALLS; i++) {
  let t = performance.now();
  const res = await api.interact(id, { code: '1+1' });
  calls.push(performance.now() - t);
  if (res.json.result !== '2') throw new Error(res.text);
  t = performance.now();
  await directPage.evaluate('1+1');
  evals.push(performance.now() - t);
}
await direct.close();
await api.stopInteract(id);
console.log(
  `RESULT interact 1+1 on a reused session: ${median(calls).toFixed(1)} ms median (p90 ${[...calls].sort((a, b) => a - b)[Math.floor(CALLS * 0.9)].toFixed(1)}) ` +
    `vs page.evaluate over CDP ${median(evals).toFixed(1)} ms: ${(median(calls) / median(evals)).toFixed(1)}x (goal <= 20 ms)`,
);

// Concurrent sessions and memory.
// Proportional set size (PSS: shared pages split between the processes sharing them; summing RSS
// would count Chromium's shared libraries once per process) of a process and all under it.
function treePss(root: number): number {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // gone meanwhile
    }
  }
  let total = 0;
  for (const pid of parents.keys()) {
    let p: number | undefined = pid;
    while (p && p !== root) p = parents.get(p);
    if (p !== root) continue;
    try {
      const pss = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      total += Number(pss?.[1] ?? 0) * 1024;
    } catch {
      // gone meanwhile
    }
  }
  return total;
}
const before = treePss(process.pid);
let peak = before;
const sampler = setInterval(() => (peak = Math.max(peak, treePss(process.pid))), 500);
const ids = await Promise.all(Array.from({ length: SESSIONS }, () => scrapeId()));
const t0 = performance.now();
const answers = await Promise.all(ids.map((s) => api.interact(s, { code: "await page.title(); 'ok'" })));
const openMs = performance.now() - t0;
const failed = answers.filter((a) => a.status !== 200 || !a.json.success);
await Promise.all(ids.map((s) => api.interact(s, { code: '1+1' })));
peak = Math.max(peak, treePss(process.pid));
clearInterval(sampler);
await Promise.all(ids.map((s) => api.stopInteract(s)));
console.log(
  `RESULT ${SESSIONS} concurrent sessions: opened in ${(openMs / 1000).toFixed(1)} s, ${failed.length} failed; peak PSS ` +
    `${(peak / 2 ** 20).toFixed(0)} MiB (before ${(before / 2 ** 20).toFixed(0)} MiB, ${((peak - before) / SESSIONS / 2 ** 20).toFixed(0)} MiB per session)`,
);
if (failed.length) console.log(failed[0].text);

await warmBrowser.close();
await svc.destroy();
await site.close();
