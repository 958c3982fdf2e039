// Search: the own index (src/store/search-index.ts) on embedded PGlite, against a plain ILIKE scan of
// the same rows in the same run, and what indexing costs a crawl.
//
// - Index: SEARCH_BENCH_PAGES (default 100,000) generated pages (a 30,000-word pseudo-vocabulary,
//   Zipf-distributed; title 4–8 words, description ~20, markdown ~250 words ≈ 1.8 KB) written through
//   the index's own SQL (to_tsvector of title, URL words, description and markdown, GIN insert, upsert)
//   64 pages a statement, as a crawl's record flush writes them: index build rate in pages/s. The same
//   rows (url, title, markdown) go into a plain table for the baseline, outside the timing. Then
//   VACUUM (ANALYZE), as the hourly maintenance does on PGlite.
// - Queries: SEARCH_BENCH_QUERIES (default 200) queries, after 20 warm-up ones: 60% one mid-frequency
//   word (rank 200–20,000), 30% two words (rank 50–5,000), 10% one common word (rank 10–200);
//   searchIndex with limit 10 (ranked: ts_rank_cd plus title/URL boosts): p50 and p99 latency.
//   The baseline, `WHERE (title ILIKE '%w%' OR markdown ILIKE '%w%') [AND …] ORDER BY (title ILIKE
//   '%w%') DESC, url LIMIT 10` (the plainest ranking: title matches first; like any ranking it reads
//   every row), runs the first SEARCH_BENCH_ILIKE (default 20) of the same queries.
// - Crawl: the fixture site's 2,000 generated pages crawled (maxAge 0, markdown) by a service with
//   the index on and one with GLEANER_SEARCH_INDEX=false, in this process, SEARCH_BENCH_CRAWL_ROUNDS
//   (default 2) alternating rounds: pages/s of each and the ratio (goal: indexing costs ≤ 10%).
//
// Goals: ≥ 50× faster than ILIKE at the median, p99 ≤ 50 ms. RESULT lines; a missed goal is printed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDb } from '../src/store/db.ts';
import { createJob } from '../src/store/jobs.ts';
import { migrate } from '../src/store/migrations.ts';
import { UPSERT_SQL, searchIndex, vectorsSql } from '../src/store/search-index.ts';
import { ensureTeam } from '../src/store/teams.ts';
import { startFixtureSite } from '../test/fixtures/site/index.ts';
import { apiClient } from '../test/helpers/api.ts';
import { startTestService } from '../test/helpers/service.ts';

const PAGES = Number(process.env.SEARCH_BENCH_PAGES || 100_000);
const QUERIES = Number(process.env.SEARCH_BENCH_QUERIES || 200);
const ILIKE_QUERIES = Number(process.env.SEARCH_BENCH_ILIKE || 20);
const CRAWL_ROUNDS = Number(process.env.SEARCH_BENCH_CRAWL_ROUNDS || 2);
const BATCH = 64;
const VOCAB = 30_000;

// Deterministic pseudo-random numbers (mulberry32).
let seed = 0x5eed;
function rand(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

// Pronounceable distinct words: syllables of consonant + vowel (+ consonant).
const C = 'bcdfghjklmnprstvwz';
const V = 'aeiou';
const words: string[] = [];
const seen = new Set<string>();
while (words.length < VOCAB) {
  let w = '';
  const syllables = 2 + Math.floor(rand() * 3);
  for (let i = 0; i < syllables; i++) w += C[Math.floor(rand() * C.length)] + V[Math.floor(rand() * V.length)];
  if (rand() < 0.4) w += C[Math.floor(rand() * C.length)];
  if (!seen.has(w)) {
    seen.add(w);
    words.push(w);
  }
}
// Zipf (s = 1) over ranks: cumulative weights, sampled by binary search.
const cumulative = new Float64Array(VOCAB);
let total = 0;
for (let r = 0; r < VOCAB; r++) cumulative[r] = total += 1 / (r + 1);
function zipfWord(): string {
  const x = rand() * total;
  let lo = 0;
  let hi = VOCAB - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return words[lo];
}
const sentence = (n: number) => Array.from({ length: n }, zipfWord).join(' ');
const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo));

interface Page {
  k: string;
  u: string;
  h: string;
  t: string;
  s: string;
  m: string;
}
function page(i: number): Page {
  const host = `site${i % 500}.example`;
  const url = `https://${host}/${zipfWord()}/${zipfWord()}-${i}`;
  const paragraphs = Array.from({ length: 5 }, () => sentence(between(35, 65)));
  return {
    k: url,
    u: url,
    h: host,
    t: sentence(between(4, 9)),
    s: sentence(between(15, 25)),
    m: `# ${sentence(5)}\n\n${paragraphs.join('\n\n')}\n\n## ${sentence(4)}\n\n- ${sentence(6)}\n- ${sentence(6)}\n`,
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
const ms = (x: number) => x.toFixed(x < 10 ? 2 : 1);

// ---- Index build and queries
const dir = await mkdtemp(join(tmpdir(), 'gleaner-search-bench-'));
const db = await openDb({ dataDir: dir });
await migrate(db);
const team = await ensureTeam(db, 'bench');
const job = await createJob(db, { teamId: team.id, apiKeyId: null, endpoint: 'crawl', status: 'completed' });
await db.query(
  `INSERT INTO crawls (id, team_id, kind, url, options, page_limit, public_url, status, expires_at)
   VALUES ($1, $2, 'crawl', 'https://bench.example/', '{}', $3, 'http://127.0.0.1', 'completed', clock_timestamp() + interval '1 day')`,
  [job.id, team.id, PAGES],
);
await db.exec(
  `CREATE TABLE bench_plain (team_id uuid NOT NULL, url text NOT NULL, title text NOT NULL, markdown text NOT NULL)`,
);

const vectors = vectorsSql({ config: "'english'", title: 'r.t', url: 'r.u', description: 'r.s', markdown: 'r.m' });
const indexSql = `INSERT INTO search_pages (team_id, url_key, url, host, title, description, config, head, doc, scraped_at, crawl_id)
  SELECT $2, r.k, r.u, r.h, r.t, r.s, ${vectors.columns}, clock_timestamp(), $3
  FROM jsonb_to_recordset($1::jsonb) AS r(k text, u text, h text, t text, s text, m text) ${vectors.from}
  ${UPSERT_SQL}`;

console.log(`generating and indexing ${PAGES} pages…`);
let indexMs = 0;
let bytes = 0;
const buildStart = performance.now();
for (let i = 0; i < PAGES; i += BATCH) {
  const batch = Array.from({ length: Math.min(BATCH, PAGES - i) }, (_, j) => page(i + j));
  const json = JSON.stringify(batch);
  bytes += batch.reduce((n, p) => n + p.m.length, 0);
  const t = performance.now();
  await db.query(indexSql, [json, team.id, job.id]);
  indexMs += performance.now() - t;
  await db.query(
    `INSERT INTO bench_plain (team_id, url, title, markdown) SELECT $2, r.u, r.t, r.m FROM jsonb_to_recordset($1::jsonb) AS r(u text, t text, m text)`,
    [json, team.id],
  );
  if ((i / BATCH) % 200 === 0 && i > 0) console.log(`  ${i} pages, ${Math.round((i / indexMs) * 1000)} pages/s so far`);
}
const buildRate = (PAGES / indexMs) * 1000;
console.log(
  `RESULT search-index-build: ${PAGES} pages (${(bytes / PAGES / 1024).toFixed(1)} KB markdown each) indexed at ` +
    `${Math.round(buildRate)} pages/s (index statements only; ${((performance.now() - buildStart) / 1000).toFixed(0)} s with generation and the plain table)`,
);
await db.exec('VACUUM (ANALYZE)');

// Queries: words by frequency rank (words[] is in rank order).
const at = (lo: number, hi: number) => words[between(lo, hi)];
const queries = Array.from({ length: QUERIES + 20 }, () => {
  const x = rand();
  if (x < 0.6) return [at(200, 20_000)];
  if (x < 0.9) return [at(50, 5000), at(50, 5000)];
  return [at(10, 200)];
});
const indexTimes: number[] = [];
for (const [i, q] of queries.entries()) {
  const t = performance.now();
  await searchIndex(db, { teamId: team.id, text: q.join(' '), limit: 10 });
  if (i >= 20) indexTimes.push(performance.now() - t);
}
const iliketimes: number[] = [];
for (const q of queries.slice(20, 20 + ILIKE_QUERIES)) {
  const where = q.map((_, j) => `(title ILIKE $${j + 2} OR markdown ILIKE $${j + 2})`).join(' AND ');
  const t = performance.now();
  // Ranked as plainly as ILIKE allows (title matches first): every row is read, as ranking needs.
  await db.query(
    `SELECT url, title FROM bench_plain WHERE team_id = $1 AND ${where} ORDER BY (title ILIKE $2) DESC, url LIMIT 10`,
    [team.id, ...q.map((w) => `%${w}%`)],
  );
  iliketimes.push(performance.now() - t);
}
const idxSorted = [...indexTimes].sort((a, b) => a - b);
const ilSorted = [...iliketimes].sort((a, b) => a - b);
const sameQueries = [...indexTimes.slice(0, ILIKE_QUERIES)].sort((a, b) => a - b);
const p50 = percentile(idxSorted, 50);
const p99 = percentile(idxSorted, 99);
const ilikeP50 = percentile(ilSorted, 50);
const ratio = ilikeP50 / percentile(sameQueries, 50);
console.log(
  `RESULT search-query: ${PAGES} pages, ${QUERIES} queries: p50 ${ms(p50)} ms, p90 ${ms(percentile(idxSorted, 90))} ms, ` +
    `p99 ${ms(p99)} ms, max ${ms(idxSorted.at(-1) ?? 0)} ms; ILIKE scan (${ILIKE_QUERIES} of the same queries) p50 ${ms(ilikeP50)} ms, ` +
    `max ${ms(ilSorted.at(-1) ?? 0)} ms: ${ratio.toFixed(0)}x faster at the median ` +
    `(goal >= 50x: ${ratio >= 50 ? 'met' : 'NOT met'}; p99 <= 50 ms: ${p99 <= 50 ? 'met' : 'NOT met'})`,
);
await db.close();
await rm(dir, { recursive: true, force: true });

// ---- Crawl with and without indexing
const CRAWL_PAGES = 2000;
const site = await startFixtureSite({ generatedTotal: CRAWL_PAGES });
const services = {
  indexed: await startTestService({ env: { GLEANER_MAX_CRAWL_DELAY: '0' } }),
  unindexed: await startTestService({ env: { GLEANER_MAX_CRAWL_DELAY: '0', GLEANER_SEARCH_INDEX: 'false' } }),
};
async function crawl(kind: keyof typeof services): Promise<number> {
  const api = apiClient(services[kind]);
  const t = performance.now();
  const res = await api.crawl({
    url: site.url('/generated/1'),
    limit: CRAWL_PAGES,
    sitemap: 'skip',
    crawlEntireDomain: true,
    ignoreRobotsTxt: true,
    scrapeOptions: { formats: ['markdown'], maxAge: 0 },
  });
  if (res.status !== 200) throw new Error(res.text);
  for (;;) {
    const s = await api.crawlStatus(res.json.id, '?limit=1');
    if (s.json.status !== 'scraping') {
      if (s.json.completed !== CRAWL_PAGES) throw new Error(`${kind} crawl: ${s.json.completed} pages`);
      return (CRAWL_PAGES / (performance.now() - t)) * 1000;
    }
    await sleep(50);
  }
}
const rates: Record<keyof typeof services, number[]> = { indexed: [], unindexed: [] };
await crawl('indexed'); // warm-up (JIT, first migrations' caches)
await crawl('unindexed');
for (let r = 0; r < CRAWL_ROUNDS; r++) {
  const order: (keyof typeof services)[] = r % 2 ? ['indexed', 'unindexed'] : ['unindexed', 'indexed'];
  for (const kind of order) rates[kind].push(await crawl(kind));
}
const { rows } = await services.indexed.db.query<{ n: number }>('SELECT count(*)::int AS n FROM search_pages');
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const cost = 1 - mean(rates.indexed) / mean(rates.unindexed);
console.log(
  `RESULT search-crawl-cost: ${CRAWL_PAGES}-page crawl (maxAge 0, markdown), PGlite, in-process: indexed ` +
    `${rates.indexed.map(Math.round).join(', ')} pages/s vs GLEANER_SEARCH_INDEX=false ${rates.unindexed.map(Math.round).join(', ')}: ` +
    `${(cost * 100).toFixed(1)}% slower (${rows[0].n} pages in the index; goal <= 10%: ${cost <= 0.1 ? 'met' : 'NOT met'})`,
);
await services.indexed.destroy();
await services.unindexed.destroy();
await site.close();
