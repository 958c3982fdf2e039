// Throughput of our HTML→Markdown converter (htmlToMarkdown, including htmlparser2's parse) against
// turndown with the GFM plugin (atx headings, fenced code; it parses the same string with domino),
// on the same pages in the same run. Corpus: ~20 generated pages of 50–500 KB (bench/corpus), plus
// real .html files of that size from /usr/share/doc when the machine has some. Warm-up, then rounds
// alternating the two converters over the whole corpus; the figure is the ratio of median MB/s.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import TurndownService from 'turndown';
import { htmlToMarkdown } from '../src/markdown/markdown.ts';
import { type CorpusPage, generateCorpus } from './corpus/html-pages.ts';

const require = createRequire(import.meta.url);
const { gfm } = require('turndown-plugin-gfm') as { gfm: TurndownService.Plugin };

const MIN = 50_000;
const MAX = 500_000;
const MAX_REAL = 12;
const ROUNDS = 7;
const BUDGET_MS = 45_000;

/** Real pages under dir (bounded walk), sizes within 50–500 KB, a deterministic spread of them. */
function realPages(dir: string): CorpusPage[] {
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
        if (size >= MIN && size <= MAX) found.push(p);
      }
    }
  }
  found.sort();
  const step = Math.max(1, found.length / MAX_REAL);
  const chosen: CorpusPage[] = [];
  for (let i = 0; i < found.length && chosen.length < MAX_REAL; i += step) {
    const p = found[Math.floor(i)];
    chosen.push({ name: p, html: readFileSync(p, 'utf8') });
  }
  return chosen;
}

const corpus = generateCorpus();
const real = realPages('/usr/share/doc');
const pages = corpus.concat(real);
const bytes = pages.reduce((n, p) => n + Buffer.byteLength(p.html), 0);
const sizes = pages.map((p) => Buffer.byteLength(p.html)).sort((a, b) => a - b);
console.log(
  `corpus: ${corpus.length} generated pages` +
    (real.length > 0
      ? ` + ${real.length} real pages from /usr/share/doc`
      : ' (no real .html files of 50–500 KB in /usr/share/doc)') +
    `, ${(bytes / 1e6).toFixed(2)} MB, ${(sizes[0] / 1000).toFixed(0)}–${(sizes[sizes.length - 1] / 1000).toFixed(0)} KB per page`,
);

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
turndown.use(gfm);

const ours = (html: string) => htmlToMarkdown(html, { baseUrl: 'https://example.com/docs/page.html' });
const theirs = (html: string) => turndown.turndown(html);

let sink = 0;
function pass(convert: (html: string) => string): number {
  const t = performance.now();
  for (const p of pages) sink += convert(p.html).length;
  return bytes / 1e6 / ((performance.now() - t) / 1000);
}

const started = performance.now();
pass(ours);
pass(theirs);
const runs = { ours: [] as number[], theirs: [] as number[] };
for (let i = 0; i < ROUNDS && (i < 3 || performance.now() - started < BUDGET_MS); i++) {
  // Alternate which goes first, so drift on a shared machine hits both alike.
  if (i % 2 === 0) {
    runs.ours.push(pass(ours));
    runs.theirs.push(pass(theirs));
  } else {
    runs.theirs.push(pass(theirs));
    runs.ours.push(pass(ours));
  }
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const o = median(runs.ours);
const t = median(runs.theirs);
console.log(
  `rounds: ${runs.ours.length}; ours ${runs.ours.map((x) => x.toFixed(1)).join(' ')} MB/s; turndown ${runs.theirs.map((x) => x.toFixed(1)).join(' ')} MB/s (checksum ${sink})`,
);
console.log(
  `RESULT markdown: ${(o / t).toFixed(2)}x turndown throughput (ours ${o.toFixed(1)} MB/s, turndown ${t.toFixed(1)} MB/s)`,
);
