// Main-content extraction quality and speed: our deterministic filter (cleanDocument with
// onlyMainContent) against Mozilla Readability on linkedom, on the hand-checked corpus in
// test/scrape/main-content/pages. Quality: token-level F1 against each page's expected text.
// Both outputs go through the same text extraction (blockText over the result's DOM); Readability
// gets its article title prepended, since its `content` leaves the title out and the expected
// texts include it. Speed: parse + extract per page for each (htmlparser2 vs linkedom parsing),
// plus our filter alone on a ~200 KB page. Times are medians of BENCH_RUNS (default 30) calls.
import { readFileSync, readdirSync } from 'node:fs';
import { Readability } from '@mozilla/readability';
import { parseDocument } from 'htmlparser2';
import { DOMParser } from 'linkedom';
import { cleanDocument } from '../src/scrape/transform/clean.ts';
import { blockText, tokenF1 } from '../test/scrape/main-content/score.ts';

const dir = new URL('../test/scrape/main-content/pages/', import.meta.url).pathname;
const pages = readdirSync(dir)
  .filter((f) => f.endsWith('.html'))
  .sort()
  .map((f) => ({
    name: f.replace(/\.html$/, ''),
    html: readFileSync(dir + f, 'utf8'),
    expected: readFileSync(dir + f.replace(/\.html$/, '.expected.txt'), 'utf8'),
  }));

function ours(html: string): string {
  return blockText(cleanDocument(parseDocument(html), { onlyMainContent: true }));
}

function readability(html: string): string {
  const doc = new DOMParser().parseFromString(html, 'text/html');
  const article = new Readability(doc as any).parse();
  if (!article) return '';
  return `${article.title ?? ''}\n${blockText(parseDocument(article.content ?? '').children)}`;
}

/** Median ms per call over `runs` calls after `warm` warm-up calls (the median shrugs off GC pauses). */
function time(fn: () => unknown, runs: number, warm = 3): number {
  for (let i = 0; i < warm; i++) fn();
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return ms[ms.length >> 1];
}

const RUNS = Number(process.env.BENCH_RUNS ?? 30);
const rows: { name: string; f1: number; rf1: number; ms: number; rms: number }[] = [];
for (const p of pages) {
  const f1 = tokenF1(ours(p.html), p.expected).f1;
  const rf1 = tokenF1(readability(p.html), p.expected).f1;
  const ms = time(() => ours(p.html), RUNS);
  const rms = time(() => readability(p.html), RUNS);
  rows.push({ name: p.name, f1, rf1, ms, rms });
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log('page                      ours F1  Readability F1   ours ms  Readability ms');
for (const r of rows) {
  console.log(
    `${r.name.padEnd(24)} ${r.f1.toFixed(3).padStart(8)} ${r.rf1.toFixed(3).padStart(15)} ${r.ms.toFixed(2).padStart(9)} ${r.rms.toFixed(2).padStart(15)}`,
  );
}

// A ~200 KB page: the news page with its comment list and sidebar repeated.
const base = pages.find((p) => p.name.startsWith('01-'))!.html;
const comments = base.slice(
  base.indexOf('<li class="comment'),
  base.indexOf('</ol>', base.indexOf('<ol class="comment-list">')),
);
const sidebar = base.slice(
  base.indexOf('<div class="td_block_wrap td_block_popular">'),
  base.indexOf('<div class="td_block_wrap td_block_text_with_title widget">'),
);
let big = base;
while (big.length < 200_000) {
  big = big
    .replace('</ol>', comments + '</ol>')
    .replace(
      '<div class="td_block_wrap td_block_text_with_title widget">',
      sidebar + '<div class="td_block_wrap td_block_text_with_title widget">',
    );
}
const parseMs = time(() => parseDocument(big), RUNS);
const bigMs = time(() => cleanDocument(parseDocument(big), { onlyMainContent: true }), RUNS) - parseMs;
const bigF1 = tokenF1(ours(big), pages[0].expected).f1;
console.log(
  `${(big.length / 1024).toFixed(0)} KB page: htmlparser2 parse ${parseMs.toFixed(2)} ms, cleanDocument ${bigMs.toFixed(2)} ms (F1 ${bigF1.toFixed(3)})`,
);

const f1 = mean(rows.map((r) => r.f1));
const rf1 = mean(rows.map((r) => r.rf1));
console.log(
  `RESULT main-content: mean F1 ours ${f1.toFixed(3)} vs Readability ${rf1.toFixed(3)}; ours ${mean(rows.map((r) => r.ms)).toFixed(2)} ms/page vs Readability ${mean(rows.map((r) => r.rms)).toFixed(2)} ms/page`,
);
