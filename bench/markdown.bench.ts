// Throughput of our HTML→Markdown converter (htmlToMarkdown: parsing included) against turndown with the GFM
// plugin (atx headings, fenced code; it parses the same string with domino), on the same pages in the same run.
// Corpus: real pages, a deterministic sample of the WCXB dev split (every STRIDE-th page, ../shared/corpora/
// wcxb-dev or WCXB_DIR), less the pages turndown throws on (its GFM plugin fails on some tables); without the
// corpus, ~20 generated pages of 50–500 KB (bench/corpus) plus real .html files from /usr/share/doc.
// Each round runs both converters over the whole corpus, alternating which goes first, so the host's drift (these
// machines are shared) hits both alike; the figure is the ratio of the median rounds' MB/s, with the ratio of the
// total times and each round's ratio beside it. (Interleaving the two page by page instead costs ours ~15%: each evicts the other's caches.)
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import TurndownService from 'turndown';
import { htmlToMarkdown } from '../src/markdown/markdown.ts';
import { findWcxbDev, readHtml, readPages } from '../test/helpers/wcxb-corpus.ts';
import { type CorpusPage, generateCorpus } from './corpus/html-pages.ts';

const require = createRequire(import.meta.url);
const { gfm } = require('turndown-plugin-gfm') as { gfm: TurndownService.Plugin };

const STRIDE = Number(process.env.MARKDOWN_BENCH_STRIDE ?? 15);
const MIN_ROUNDS = 3;
const MAX_ROUNDS = 9;
const BUDGET_MS = 60_000;

/** Real pages under dir (bounded walk), sizes within 50–500 KB, a deterministic spread of them. */
function docPages(dir: string, max: number): CorpusPage[] {
  const found: string[] = [];
  const stack = [dir];
  let visited = 0;
  while (stack.length > 0 && visited < 20_000) {
    const d = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      visited++;
      const p = join(d, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile() && /\.html?$/i.test(e.name)) {
        const size = statSync(p).size;
        if (size >= 50_000 && size <= 500_000) found.push(p);
      }
    }
  }
  found.sort();
  const step = Math.max(1, found.length / max);
  const chosen: CorpusPage[] = [];
  for (let i = 0; i < found.length && chosen.length < max; i += step) {
    const p = found[Math.floor(i)];
    chosen.push({ name: p, html: readFileSync(p, 'utf8') });
  }
  return chosen;
}

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
turndown.use(gfm);
const ours = (html: string) => htmlToMarkdown(html, { baseUrl: 'https://example.com/docs/page.html' });
const theirs = (html: string) => turndown.turndown(html);

const wcxb = findWcxbDev(new URL('..', import.meta.url).pathname);
let pages: CorpusPage[];
let source: string;
if (wcxb !== null) {
  const all = readPages(wcxb);
  const sample = all.filter((_, i) => i % STRIDE === 0);
  const read = sample.map((p) => ({ name: p.id, html: readHtml(wcxb, p.id).toString('utf8') }));
  pages = read.filter((p) => {
    try {
      theirs(p.html);
      return true;
    } catch {
      return false;
    }
  });
  source = `${pages.length} real pages of the WCXB dev split (every ${STRIDE}th of ${all.length}; ${read.length - pages.length} left out: turndown throws on them)`;
} else {
  const generated = generateCorpus();
  const docs = docPages('/usr/share/doc', 12);
  pages = generated.concat(docs);
  source = `${generated.length} generated pages + ${docs.length} from /usr/share/doc (no WCXB corpus found: set WCXB_DIR)`;
}
const bytes = pages.reduce((n, p) => n + Buffer.byteLength(p.html), 0);
console.log(`corpus: ${source}, ${(bytes / 1e6).toFixed(2)} MB`);

let sink = 0;
// Warm-up: one pass each.
for (const p of pages) sink += ours(p.html).length + theirs(p.html).length;

const rounds: { ours: number; theirs: number }[] = [];
const started = performance.now();
/** One converter over the whole corpus: its time in ms. */
function pass(convert: (html: string) => string): number {
  const t0 = performance.now();
  for (const p of pages) sink += convert(p.html).length;
  return performance.now() - t0;
}
while (rounds.length < MIN_ROUNDS || (rounds.length < MAX_ROUNDS && performance.now() - started < BUDGET_MS)) {
  // Alternate which goes first, so drift on a shared machine hits both alike.
  if (rounds.length % 2 === 0) {
    const o = pass(ours);
    rounds.push({ ours: o, theirs: pass(theirs) });
  } else {
    const t = pass(theirs);
    rounds.push({ ours: pass(ours), theirs: t });
  }
}
const mbs = (ms: number) => bytes / 1e6 / (ms / 1000);
const sum = (k: 'ours' | 'theirs') => rounds.reduce((n, r) => n + r[k], 0);
const ratios = rounds.map((r) => r.theirs / r.ours);
console.log(
  `rounds: ${rounds.length}; ours ${rounds.map((r) => mbs(r.ours).toFixed(0)).join(' ')} MB/s; turndown ${rounds.map((r) => mbs(r.theirs).toFixed(1)).join(' ')} MB/s; per-round ratio ${ratios.map((x) => x.toFixed(1)).join(' ')} (checksum ${sink})`,
);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
// The figure: the ratio of the median rounds (as the figures were measured); the ratio of the totals beside
// it (a round of ours lasts a tenth of turndown's, so a major GC or a busy neighbour moves it more).
const o = median(rounds.map((r) => mbs(r.ours)));
const t = median(rounds.map((r) => mbs(r.theirs)));
const total = sum('theirs') / sum('ours');
console.log(
  `RESULT markdown: ${(o / t).toFixed(2)}x turndown throughput (median rounds: ours ${o.toFixed(1)} MB/s, turndown ${t.toFixed(1)} MB/s; ratio of total times ${total.toFixed(2)}x; rounds ${Math.min(...ratios).toFixed(1)}–${Math.max(...ratios).toFixed(1)}x)`,
);
