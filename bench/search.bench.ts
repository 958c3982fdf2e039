// Search: the own index (src/store/search-index.ts) on embedded PGlite, against a plain ILIKE scan of
// the same rows in the same run, and what indexing costs a crawl.
//
// - Index: SEARCH_BENCH_PAGES (default 100,000) generated pages (a 30,000-word pseudo-vocabulary,
//   Zipf-distributed; title 4–8 words, description ~20, markdown ~250 words ≈ 2 KB) stored as a
//   crawl's record flush leaves them (the document in crawl_pages, the entry in search_queue) and
//   indexed by the background step's statement (indexQueued, 32 pages a statement: to_tsvector of
//   title, URL words, description and the stored markdown, GIN inserts, upsert): index build rate
//   in pages/s, those statements only. The same rows (url, title, markdown) go into a plain table
//   for the baseline. Then VACUUM (ANALYZE), as the hourly maintenance does on PGlite.
// - Queries: SEARCH_BENCH_QUERIES (default 200) queries, after 20 warm-up ones: 60% one mid-frequency
//   word (rank 200–20,000), 30% two words (rank 50–5,000), 10% one common word (rank 10–200);
//   searchIndex with limit 10 (ranked: ts_rank_cd plus title/URL boosts): p50 and p99 latency; then
//   the same through the own index backend with highlights (the hits' stored pages read, a passage
//   picked for each). The baseline, `WHERE (title ILIKE '%w%' OR markdown ILIKE '%w%') [AND …]
//   ORDER BY (title ILIKE '%w%') DESC, url LIMIT 10` (the plainest ranking: title matches first;
//   like any ranking it reads every row), runs the first SEARCH_BENCH_ILIKE (default 20) of them.
//   SEARCH_BENCH_CANDIDATES ("500/500,350/200"…) compares candidate caps: latency, and how much of
//   each query's top 10 agrees with ranking every match.
// - Crawl: the fixture site's 2,000 generated pages crawled (maxAge 0, markdown) by a service with
//   the index on and one with GLEANER_SEARCH_INDEX=false, in this process, SEARCH_BENCH_CRAWL_ROUNDS
//   (default 7) alternating rounds: pages/s of each, each round's cost (its two crawls compared) and
//   their median (goal: indexing costs ≤ 10%). The pages the background step has not indexed when
//   the indexed crawl ends are timed until indexed; the next crawl starts after that.
// SEARCH_BENCH_PARTS (default "index,crawl") picks the parts.
//
// Goals: ≥ 50× faster than ILIKE at the median, p99 ≤ 50 ms. RESULT lines; a missed goal is printed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { openDb } from '../src/store/db.ts';
import { createJob } from '../src/store/jobs.ts';
import { migrate } from '../src/store/migrations.ts';
import { INDEX_BATCH } from '../src/store/search-indexer.ts';
import { OwnIndexBackend } from '../src/search/own-index.ts';
import { indexQueued, searchIndex } from '../src/store/search-index.ts';
import { ensureTeam } from '../src/store/teams.ts';
import { startFixtureSite } from '../test/fixtures/site/index.ts';
import { apiClient } from '../test/helpers/api.ts';
import { startTestService } from '../test/helpers/service.ts';

const PAGES = Number(process.env.SEARCH_BENCH_PAGES || 100_000);
const QUERIES = Number(process.env.SEARCH_BENCH_QUERIES || 200);
const ILIKE_QUERIES = Number(process.env.SEARCH_BENCH_ILIKE || 20);
const CRAWL_ROUNDS = Number(process.env.SEARCH_BENCH_CRAWL_ROUNDS || 7);
/** Parts to run: index (build and queries), crawl; both by default. */
const PARTS = new Set((process.env.SEARCH_BENCH_PARTS || 'index,crawl').split(','));
/**
 * Candidate caps to compare (latency, and the top 10 against ranking every match): "head/text" pairs,
 * title/URL matches and text matches ranked at most, e.g. "500/500,250/250,300/150".
 */
const CANDIDATE_STUDY = (process.env.SEARCH_BENCH_CANDIDATES || '')
  .split(',')
  .filter(Boolean)
  .map((c) => {
    const [head, text = head] = c.split('/').map(Number);
    return { head, text };
  });
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

if (PARTS.has('index')) await indexAndQueries();
if (PARTS.has('crawl')) await crawlCost();

async function indexAndQueries(): Promise<void> {
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

  // As a crawl's record flush leaves them: the page's document in crawl_pages, its entry queued.
  const storeSql = `WITH r AS (
      SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(k text, u text, h text, t text, s text, m text)
    ), page AS (
      INSERT INTO crawl_pages (crawl_id, url_key, url, depth, status, document)
      SELECT $3, r.k, r.u, 1, 'done', jsonb_build_object('markdown', r.m, 'metadata', jsonb_build_object('title', r.t, 'description', r.s))
      FROM r
    ), queued AS (
      INSERT INTO search_queue (crawl_id, page_key, team_id, entry)
      SELECT $3, r.k, $2, jsonb_build_object('key', r.k, 'url', r.u, 'host', r.h, 'title', r.t, 'description', r.s, 'config', 'english')
      FROM r
    )
    INSERT INTO bench_plain (team_id, url, title, markdown) SELECT $2, r.u, r.t, r.m FROM r`;

  console.log(`generating and indexing ${PAGES} pages…`);
  let indexMs = 0;
  let bytes = 0;
  const buildStart = performance.now();
  for (let i = 0; i < PAGES; i += BATCH) {
    const batch = Array.from({ length: Math.min(BATCH, PAGES - i) }, (_, j) => page(i + j));
    bytes += batch.reduce((n, p) => n + p.m.length, 0);
    await db.query(storeSql, [JSON.stringify(batch), team.id, job.id]);
    // The background step's statement (src/store/search-indexer.ts), a batch at a time.
    for (let left = batch.length; left > 0; left -= INDEX_BATCH) {
      const t = performance.now();
      await indexQueued(db, { limit: INDEX_BATCH });
      indexMs += performance.now() - t;
    }
    if ((i / BATCH) % 200 === 0 && i > 0)
      console.log(`  ${i} pages, ${Math.round((i / indexMs) * 1000)} pages/s so far`);
  }
  const { rows: left } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM search_queue');
  if (left[0].n !== 0) throw new Error(`${left[0].n} pages left in the queue`);
  const buildRate = (PAGES / indexMs) * 1000;
  console.log(
    `RESULT search-index-build: ${PAGES} pages (${(bytes / PAGES / 1024).toFixed(1)} KB markdown each) indexed at ` +
      `${Math.round(buildRate)} pages/s (the queue's indexing statements only, ${INDEX_BATCH} pages each; ` +
      `${((performance.now() - buildStart) / 1000).toFixed(0)} s with generation, storing and the plain table)`,
  );
  await db.exec('VACUUM (ANALYZE)');

  // Queries: words by frequency rank (words[] is in rank order).
  const at = (lo: number, hi: number) => words[between(lo, hi)];
  const kinds: ('mid' | 'two' | 'common')[] = [];
  const queries = Array.from({ length: QUERIES + 20 }, () => {
    const x = rand();
    if (x < 0.6) return (kinds.push('mid'), [at(200, 20_000)]);
    if (x < 0.9) return (kinds.push('two'), [at(50, 5000), at(50, 5000)]);
    return (kinds.push('common'), [at(10, 200)]);
  });
  const timed = async (run: (text: string) => Promise<unknown>): Promise<number[]> => {
    const times: number[] = [];
    for (const [i, q] of queries.entries()) {
      const t = performance.now();
      await run(q.join(' '));
      if (i >= 20) times.push(performance.now() - t);
    }
    return times;
  };
  const indexTimes = await timed((text) => searchIndex(db, { teamId: team.id, text, limit: 10 }));
  // The whole backend, as POST /v2/search runs it: highlights (the default) read each hit's stored page.
  const backend = new OwnIndexBackend(db);
  const signal = new AbortController().signal;
  const highlightTimes = await timed((text) =>
    backend.search({ teamId: team.id, query: text, source: 'web', limit: 10, highlights: true, signal }),
  );
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
  const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
  const idxSorted = sorted(indexTimes);
  const hlSorted = sorted(highlightTimes);
  const ilSorted = sorted(iliketimes);
  const sameQueries = sorted(indexTimes.slice(0, ILIKE_QUERIES));
  const p50 = percentile(idxSorted, 50);
  const p99 = percentile(idxSorted, 99);
  const hlP99 = percentile(hlSorted, 99);
  const ilikeP50 = percentile(ilSorted, 50);
  const ratio = ilikeP50 / percentile(sameQueries, 50);
  console.log(
    `RESULT search-query: ${PAGES} pages, ${QUERIES} queries: p50 ${ms(p50)} ms, p90 ${ms(percentile(idxSorted, 90))} ms, ` +
      `p99 ${ms(p99)} ms, max ${ms(idxSorted.at(-1) ?? 0)} ms; with highlights (the backend) p50 ${ms(percentile(hlSorted, 50))} ms, ` +
      `p99 ${ms(hlP99)} ms; ILIKE scan (${ILIKE_QUERIES} of the same queries) p50 ${ms(ilikeP50)} ms, ` +
      `max ${ms(ilSorted.at(-1) ?? 0)} ms: ${ratio.toFixed(0)}x faster at the median ` +
      `(goal >= 50x: ${ratio >= 50 ? 'met' : 'NOT met'}; p99 <= 50 ms: ${p99 <= 50 && hlP99 <= 50 ? 'met' : 'NOT met'})`,
  );

  // The candidate cap's trade-off: latency and agreement of the top 10 with ranking every match.
  if (CANDIDATE_STUDY.length) {
    const exact: string[][] = [];
    for (const q of queries.slice(20)) {
      const hits = await searchIndex(db, {
        teamId: team.id,
        text: q.join(' '),
        limit: 10,
        candidates: { head: 1e9, text: 1e9 },
      });
      exact.push(hits.map((h) => h.url));
    }
    for (const cap of CANDIDATE_STUDY) {
      const times: number[] = [];
      const overlap: Record<string, number[]> = { mid: [], two: [], common: [] };
      for (const [i, q] of queries.entries()) {
        const t = performance.now();
        const hits = await searchIndex(db, { teamId: team.id, text: q.join(' '), limit: 10, candidates: cap });
        if (i < 20) continue;
        times.push(performance.now() - t);
        const want = exact[i - 20];
        if (want.length) overlap[kinds[i]].push(hits.filter((h) => want.includes(h.url)).length / want.length);
      }
      const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 1);
      const st = sorted(times);
      console.log(
        `RESULT search-candidates: cap ${cap.head} title/URL + ${cap.text} text matches: p50 ${ms(percentile(st, 50))} ms, p99 ${ms(percentile(st, 99))} ms, ` +
          `max ${ms(st.at(-1) ?? 0)} ms; top-10 agreement with ranking every match: ` +
          Object.entries(overlap)
            .map(([k, xs]) => `${k} ${(mean(xs) * 100).toFixed(0)}%`)
            .join(', '),
      );
    }
  }
  await db.close();
  await rm(dir, { recursive: true, force: true });
}

// ---- Crawl with and without indexing
async function crawlCost(): Promise<void> {
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
        const done = performance.now();
        const rate = (CRAWL_PAGES / (done - t)) * 1000;
        if (s.json.completed !== CRAWL_PAGES) throw new Error(`${kind} crawl: ${s.json.completed} pages`);
        // The pages the background step has not indexed yet: it catches up once the crawl is over
        // (timed, not counted in the crawl's rate); the next crawl starts after it.
        const queued = async () =>
          (await services[kind].db.query<{ n: number }>('SELECT count(*)::int AS n FROM search_queue')).rows[0].n;
        const left = await queued();
        if (kind === 'indexed') backlog.push(left);
        while ((await queued()) > 0) await sleep(10);
        if (kind === 'indexed') catchUp.push(performance.now() - done);
        return rate;
      }
      await sleep(50);
    }
  }
  const rates: Record<keyof typeof services, number[]> = { indexed: [], unindexed: [] };
  const costs: number[] = [];
  const backlog: number[] = [];
  const catchUp: number[] = [];
  await crawl('indexed'); // warm-up (JIT, first migrations' caches)
  await crawl('unindexed');
  backlog.length = catchUp.length = 0;
  for (let r = 0; r < CRAWL_ROUNDS; r++) {
    // Alternating which goes first; each round's cost compares the two crawls run back to back.
    const order: (keyof typeof services)[] = r % 2 ? ['indexed', 'unindexed'] : ['unindexed', 'indexed'];
    for (const kind of order) rates[kind].push(await crawl(kind));
    costs.push(1 - rates.indexed[r] / rates.unindexed[r]);
  }
  const { rows } = await services.indexed.db.query<{ n: number }>('SELECT count(*)::int AS n FROM search_pages');
  const median = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const cost = median(costs);
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  console.log(
    `RESULT search-crawl-cost: ${CRAWL_PAGES}-page crawl (maxAge 0, markdown), PGlite, in-process, ${CRAWL_ROUNDS} alternating rounds: ` +
      `indexed ${rates.indexed.map(Math.round).join(', ')} pages/s (median ${Math.round(median(rates.indexed))}) vs ` +
      `GLEANER_SEARCH_INDEX=false ${rates.unindexed.map(Math.round).join(', ')} (median ${Math.round(median(rates.unindexed))}); ` +
      `per-round cost ${costs.map(pct).join(', ')}: median ${pct(cost)} slower ` +
      `(${rows[0].n} pages in the index; goal <= 10%: ${cost <= 0.1 ? 'met' : 'NOT met'}); ` +
      `at each indexed crawl's end ${backlog.join(', ')} pages still queued, indexed within ` +
      `${catchUp.map((x) => Math.round(x)).join(', ')} ms (median ${Math.round(median(catchUp))})`,
  );
  await services.indexed.destroy();
  await services.unindexed.destroy();
  await site.close();
}
