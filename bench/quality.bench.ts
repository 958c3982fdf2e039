// Main-content extraction quality on the WCXB development split (1,497 real pages of 7 page types with human
// ground truth; CC-BY-4.0, WCXB by Murrough Foley 2026), through the real scrape pipeline, beside Mozilla
// Readability on the same HTML in the same run.
//
// - Gleaner: the service runs in this process (startTestService, PGlite); each page is served from loopback at its
//   original path (test/helpers/wcxb-corpus.ts) and scraped with {formats: [markdown], onlyMainContent: true,
//   maxAge: 0, storeInCache: false}, 8 at a time. Chromium is off unless QUALITY_BENCH_BROWSER=1: the ground truth
//   is of the HTML as fetched, and rendering the few shell-like pages would run their scripts against the live web.
// - Readability 0.6 on linkedom (as bench/main-content.bench.ts), its `content` turned into markdown by our
//   renderer (htmlToMarkdown); its title is not prepended, since the ground truth's main_content leaves it out.
// - Score: the markdown reduced to the text a reader sees (markdownText: link targets and images out, else every
//   URL counts as words; the markdown is kept in PRED_DIR/<system>/markdown/), written as PRED_DIR/<system>/<id>.txt,
//   then the corpus's own score.mjs, spawned with this Node on PRED_DIR/gleaner and PRED_DIR/readability (on a
//   subset, on a copy of it beside a metadata.json of that subset, as score.mjs averages over its metadata). The
//   same metric in TypeScript (test/helpers/wcxb-score.ts) writes per-page figures to PRED_DIR/<system>/scores.json
//   and must agree with score.mjs (checked here).
// - Structure: headings, list items, tables and code blocks of the markdown against the ground truth's
//   main_content_markdown (summarizeStructure in test/helpers/wcxb-score.ts), for both systems.
// - Speed, per page, one call each, sequential, after the scrapes: Gleaner's transformHtml (parse, metadata,
//   content filter, markdown: what a scrape does to the HTML) against Readability (linkedom parse, Readability,
//   markdown), on the same decoded HTML; plus the scrape's wall time (8 concurrent).
//
// Knobs: WCXB_DIR (the corpus; default: shared/corpora/wcxb-dev in the nearest ancestor of the repository that has
// it), QUALITY_BENCH_LIMIT (N pages, split between page types in proportion, the first ids of each),
// QUALITY_BENCH_TYPES (comma-separated page types), QUALITY_BENCH_PRED_DIR (default $TMPDIR/gleaner-quality),
// QUALITY_BENCH_COMPARE (an earlier PRED_DIR/gleaner/scores.json: prints the pages whose F1 moved by ≥ 0.05),
// QUALITY_BENCH_ORACLE=1 (also the best single element's F1 per page, chosen with hindsight: a ceiling for
// picking one region; test/helpers/wcxb-oracle.ts; ~3 minutes on the whole split),
// QUALITY_BENCH_BROWSER=1. Runs alone too: `node bench/quality.bench.ts`.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readability } from '@mozilla/readability';
import { DOMParser } from 'linkedom';
import { scrapeRequest } from '../src/contract/scrape.ts';
import { decodeText } from '../src/documents/charset.ts';
import { htmlToMarkdown } from '../src/markdown/markdown.ts';
import { planScrape } from '../src/scrape/plan.ts';
import { transformHtml } from '../src/scrape/transform/index.ts';
import { apiClient } from '../test/helpers/api.ts';
import { startTestService } from '../test/helpers/service.ts';
import { bestSubtreeF1 } from '../test/helpers/wcxb-oracle.ts';
import {
  type WcxbPage,
  contentTypeOf,
  findWcxbDev,
  readHtml,
  readPages,
  readTruth,
  scrapePages,
  servePages,
} from '../test/helpers/wcxb-corpus.ts';
import {
  type PageScore,
  type ScoreSummary,
  markdownText,
  sameSummary,
  scorePage,
  summarize,
  summarizeStructure,
} from '../test/helpers/wcxb-score.ts';

const repo = resolve(new URL('..', import.meta.url).pathname);

function findCorpus(): string {
  const dir = findWcxbDev(repo);
  if (dir === null) throw new Error(`no shared/corpora/wcxb-dev above ${repo}: set WCXB_DIR`);
  return dir;
}

/** The first ids of each type, `limit` in all, split between types in proportion to their size (largest remainder). */
function stratified(pages: WcxbPage[], limit: number): WcxbPage[] {
  if (limit >= pages.length) return pages;
  const byType = new Map<string, WcxbPage[]>();
  for (const p of pages) byType.set(p.type, [...(byType.get(p.type) ?? []), p]);
  const quotas = [...byType].map(([type, ps]) => ({ type, exact: (limit * ps.length) / pages.length }));
  const take = new Map(quotas.map((q) => [q.type, Math.floor(q.exact)]));
  let left = limit - [...take.values()].reduce((a, b) => a + b, 0);
  for (const q of [...quotas].sort((a, b) => (b.exact % 1) - (a.exact % 1))) {
    if (left-- <= 0) break;
    take.set(q.type, take.get(q.type)! + 1);
  }
  const chosen = new Set([...byType].flatMap(([type, ps]) => ps.slice(0, take.get(type)).map((p) => p.id)));
  return pages.filter((p) => chosen.has(p.id));
}

const corpus = findCorpus();
const types = process.env.QUALITY_BENCH_TYPES?.split(',').map((t) => t.trim());
let pages = readPages(corpus).filter((p) => !types || types.includes(p.type));
const full = pages.length;
if (process.env.QUALITY_BENCH_LIMIT) pages = stratified(pages, Number(process.env.QUALITY_BENCH_LIMIT));
if (!pages.length) throw new Error(`no pages of type ${types?.join(', ')} in ${corpus}`);
const predDir = resolve(process.env.QUALITY_BENCH_PRED_DIR ?? join(tmpdir(), 'gleaner-quality'));
const systems = ['gleaner', 'readability'] as const;
type System = (typeof systems)[number];
for (const s of systems) {
  rmSync(join(predDir, s), { recursive: true, force: true });
  mkdirSync(join(predDir, s, 'markdown'), { recursive: true });
}
const markdowns: Record<System, Map<string, string>> = { gleaner: new Map(), readability: new Map() };
/** Keeps the markdown (PRED_DIR/<system>/markdown/<id>.md) and writes its text for score.mjs (<system>/<id>.txt). */
function predict(system: System, id: string, markdown: string): void {
  markdowns[system].set(id, markdown);
  writeFileSync(join(predDir, system, 'markdown', `${id}.md`), markdown);
  writeFileSync(join(predDir, system, `${id}.txt`), markdownText(markdown));
}
console.log(
  `corpus ${corpus}: ${pages.length} pages${pages.length < full ? ` of ${full}` : ''}; predictions in ${predDir}`,
);

// --- Gleaner, through the service ---
const svc = await startTestService({
  env: {
    GLEANER_RATE_LIMITS: 'scrape=0,status=0,account=0',
    GLEANER_TEAM_MAX_CONCURRENCY: '8',
    ...(process.env.QUALITY_BENCH_BROWSER === '1' ? {} : { CHROMIUM_PATH: '/nonexistent/chromium' }),
  },
});
const server = await servePages(corpus, pages);
const scrapeMs = new Map<string, number>();
const failures: string[] = [];
const t0 = performance.now();
try {
  let done = 0;
  await scrapePages(
    apiClient(svc),
    server,
    pages.map((p) => p.id),
    {
      concurrency: 8,
      onPage(p) {
        scrapeMs.set(p.id, p.ms);
        if (p.error) failures.push(`${p.id}: ${p.error}`);
        else predict('gleaner', p.id, p.markdown);
        if (++done % 250 === 0) console.log(`  scraped ${done}/${pages.length}`);
      },
    },
  );
} finally {
  await server.close();
  await svc.destroy();
}
const scrapeWall = performance.now() - t0;
if (failures.length)
  console.log(`${failures.length} scrapes failed (scored 0):\n  ${failures.slice(0, 10).join('\n  ')}`);

// --- Readability, and both extractions timed on the same HTML ---
function readability(html: string): string {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  const article = new Readability(doc as any).parse();
  return article?.content ? htmlToMarkdown(article.content) : '';
}

const plan = planScrape(
  scrapeRequest.parse({ url: 'http://127.0.0.1/', formats: ['markdown'], onlyMainContent: true }),
);
const extractMs: Record<System, Map<string, number>> = { gleaner: new Map(), readability: new Map() };
let mismatched = 0;
for (const [i, p] of pages.entries()) {
  const bytes = readHtml(corpus, p.id);
  const contentType = contentTypeOf(bytes);
  const html = decodeText(bytes, contentType, true).text;
  const url = `http://127.0.0.1${new URL(p.url || `http://x/${p.id}`).pathname}`;
  const gleaner = () =>
    transformHtml({
      html,
      url,
      sourceURL: url,
      statusCode: 200,
      contentType,
      onlyMainContent: true,
      blockAds: true,
      removeBase64Images: true,
      formats: plan.formats,
    }).markdown ?? '';
  let pred = '';
  const timeReadability = () => {
    const t = performance.now();
    try {
      pred = readability(html);
    } catch {
      pred = '';
    }
    extractMs.readability.set(p.id, performance.now() - t);
  };
  const timeGleaner = () => {
    const t = performance.now();
    const md = gleaner();
    extractMs.gleaner.set(p.id, performance.now() - t);
    // Word counts, not bytes: links are absolute to a different origin here than in the scrape.
    const scraped = markdowns.gleaner.get(p.id);
    if (scraped !== undefined && scraped.split(/\s+/).length !== md.split(/\s+/).length) mismatched++;
  };
  // Alternating which goes first spreads any warm-cache advantage evenly.
  if (i % 2) {
    timeGleaner();
    timeReadability();
  } else {
    timeReadability();
    timeGleaner();
  }
  predict('readability', p.id, pred);
}

// --- Scores ---
/** score.mjs on the system's predictions: on the corpus itself, or on a copy beside the metadata of the subset. */
function scoreMjs(system: System): ScoreSummary {
  let dir = corpus;
  if (pages.length < readPages(corpus).length) {
    dir = join(predDir, 'corpus-view');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir);
    copyFileSync(join(corpus, 'score.mjs'), join(dir, 'score.mjs'));
    symlinkSync(join(corpus, 'ground-truth'), join(dir, 'ground-truth'));
    const meta = JSON.parse(readFileSync(join(corpus, 'metadata.json'), 'utf8')) as { files: Record<string, unknown> };
    const chosen = new Set(pages.map((p) => p.id));
    meta.files = Object.fromEntries(Object.entries(meta.files).filter(([id]) => chosen.has(id)));
    writeFileSync(join(dir, 'metadata.json'), JSON.stringify(meta));
  }
  const r = spawnSync(process.execPath, [join(dir, 'score.mjs'), join(predDir, system)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`score.mjs failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as ScoreSummary;
}

const truths = new Map(pages.map((p) => [p.id, readTruth(corpus, p.id)]));
const results = {} as Record<System, { summary: ScoreSummary; perPage: Map<string, PageScore> }>;
for (const s of systems) {
  const perPage = new Map<string, PageScore>();
  for (const p of pages) {
    perPage.set(p.id, scorePage(markdownText(markdowns[s].get(p.id) ?? ''), truths.get(p.id)!));
  }
  const summary = scoreMjs(s);
  const ours = summarize(pages.map((p) => ({ type: p.type, score: perPage.get(p.id)! })));
  if (!sameSummary(ours, summary))
    console.log(
      `WARNING: test/helpers/wcxb-score.ts disagrees with score.mjs on ${s}:\n${JSON.stringify(ours)}\n${JSON.stringify(summary)}`,
    );
  writeFileSync(
    join(predDir, s, 'scores.json'),
    JSON.stringify(
      Object.fromEntries(
        pages.map((p) => {
          const x = perPage.get(p.id)!;
          const r3 = (v: number) => +v.toFixed(4);
          return [
            p.id,
            { type: p.type, F1: r3(x.F1), P: r3(x.P), R: r3(x.R), ms: +extractMs[s].get(p.id)!.toFixed(2) },
          ];
        }),
      ),
      null,
      1,
    ),
  );
  results[s] = { summary, perPage };
}

// --- Report ---
const g = results.gleaner.summary;
const rd = results.readability.summary;
const f3 = (x: number) => x.toFixed(3);
console.log(`\npage type       pages   Gleaner F1 (P / R)        Readability F1 (P / R)`);
// Page types largest first (the corpus README's order).
const typeOrder = Object.entries(g.byType).sort(([, a], [, b]) => b.n - a.n);
for (const [type, row] of [['all', g] as const, ...typeOrder]) {
  const r = type === 'all' ? rd : rd.byType[type];
  console.log(
    `${type.padEnd(15)} ${String(row.n).padStart(5)}   ${f3(row.F1)} (${f3(row.P)} / ${f3(row.R)})   ${f3(r.F1)} (${f3(r.P)} / ${f3(r.R)})`,
  );
}
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const gMs = [...extractMs.gleaner.values()];
const rMs = [...extractMs.readability.values()];
const sMs = [...scrapeMs.values()];
if (mismatched) console.log(`note: ${mismatched} pages' transformHtml output differs in length from their scrape`);
const byType = (s: ScoreSummary) => typeOrder.map(([t]) => `${t} ${f3(s.byType[t].F1)}`).join(', ');
console.log(
  `\nRESULT quality: WCXB dev ${pages.length} pages: Gleaner F1 ${f3(g.F1)} (P ${f3(g.P)}, R ${f3(g.R)}) vs Readability.js F1 ${f3(rd.F1)} (P ${f3(rd.P)}, R ${f3(rd.R)})`,
);
console.log(`RESULT quality-by-type: Gleaner ${byType(g)}`);
console.log(`RESULT quality-by-type-readability: Readability.js ${byType(rd)}`);
console.log(
  `RESULT quality-snippets: 'with' snippets kept: Gleaner ${f3(g.withFound)}, Readability.js ${f3(rd.withFound)}; ` +
    `'without' snippets dropped: Gleaner ${f3(1 - g.withoutKept)}, Readability.js ${f3(1 - rd.withoutKept)}`,
);
// Structure against the reference markdown: does the extraction keep headings, list items, tables and code?
const structure = (s: System) =>
  summarizeStructure(
    pages.map((p) => ({ pred: markdowns[s].get(p.id) ?? '', ref: truths.get(p.id)!.main_content_markdown ?? '' })),
  );
const sg = structure('gleaner');
const sr = structure('readability');
console.log(
  `RESULT quality-structure: vs the reference markdown: heading F1 Gleaner ${f3(sg.headingF1)}, Readability.js ${f3(sr.headingF1)} ` +
    `(${sg.headingPages} pages); list item F1 ${f3(sg.itemF1)} vs ${f3(sr.itemF1)} (${sg.itemPages} pages); ` +
    `tables kept ${f3(sg.tableKept)} vs ${f3(sr.tableKept)} (${sg.tablePages} pages); ` +
    `code blocks kept ${f3(sg.codeKept)} vs ${f3(sr.codeKept)} (${sg.codePages} pages)`,
);
console.log(
  `RESULT quality-speed: extraction per page (HTML → markdown, one call each): Gleaner transformHtml median ${median(gMs).toFixed(2)} ms, ` +
    `mean ${mean(gMs).toFixed(2)} ms; Readability.js (linkedom) median ${median(rMs).toFixed(2)} ms, mean ${mean(rMs).toFixed(2)} ms; ` +
    `Gleaner / Readability ${(median(gMs) / median(rMs)).toFixed(2)}× (medians), ${(mean(gMs) / mean(rMs)).toFixed(2)}× (means); ` +
    `scrape wall time median ${median(sMs).toFixed(1)} ms (8 concurrent; ${((pages.length / scrapeWall) * 1000).toFixed(0)} pages/s)`,
);

if (process.env.QUALITY_BENCH_ORACLE === '1') {
  const oracle = pages.map((p) => {
    const bytes = readHtml(corpus, p.id);
    return {
      type: p.type,
      F1: bestSubtreeF1(decodeText(bytes, contentTypeOf(bytes), true).text, truths.get(p.id)!.main_content),
    };
  });
  const byTypeOracle = typeOrder
    .map(([t]) => `${t} ${f3(mean(oracle.filter((o) => o.type === t).map((o) => o.F1)))}`)
    .join(', ');
  console.log(
    `RESULT quality-oracle: best single element per page (hindsight) F1 ${f3(mean(oracle.map((o) => o.F1)))}; ${byTypeOracle}`,
  );
}

if (process.env.QUALITY_BENCH_COMPARE) {
  const before = JSON.parse(readFileSync(process.env.QUALITY_BENCH_COMPARE, 'utf8')) as Record<
    string,
    { type: string; F1: number }
  >;
  const moved = pages
    .filter((p) => before[p.id])
    .map((p) => ({ p, was: before[p.id].F1, now: results.gleaner.perPage.get(p.id)!.F1 }))
    .filter((m) => Math.abs(m.now - m.was) >= 0.05)
    .sort((a, b) => a.now - a.was - (b.now - b.was));
  const common = pages.filter((p) => before[p.id]);
  const delta = mean(common.map((p) => results.gleaner.perPage.get(p.id)!.F1 - before[p.id].F1));
  console.log(
    `\ncompared with ${process.env.QUALITY_BENCH_COMPARE}: ${common.length} pages, mean F1 change ${delta >= 0 ? '+' : ''}${delta.toFixed(4)}; moved by ≥ 0.05:`,
  );
  for (const m of moved)
    console.log(`  ${m.p.id} ${m.p.type.padEnd(13)} ${m.was.toFixed(3)} → ${m.now.toFixed(3)}  ${m.p.url ?? ''}`);
}
