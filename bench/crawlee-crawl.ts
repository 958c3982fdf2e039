// The baseline of bench/crawl.bench.ts, run as a child process of its own:
// `node bench/crawlee-crawl.ts <start-url> <max-pages>`.
//
// Crawlee's CheerioCrawler (3.x) crawls the site from the start URL, following links on the same
// hostname (enqueueLinks, strategy same-hostname), at most <max-pages> requests, and converts
// each page's HTML to Markdown with turndown + turndown-plugin-gfm (atx headings, fenced code),
// pushing {url, markdown} to its default dataset. Storage stays in memory (persistStorage false;
// CRAWLEE_STORAGE_DIR points at a temporary directory in case anything is written).
//
// Concurrency: Crawlee's autoscaled pool (scales between minConcurrency 1 and maxConcurrency 200
// by CPU, memory and event-loop load), started at desiredConcurrency CRAWLEE_BENCH_CONCURRENCY
// (default here 50; HttpCrawler's own default is 10). Measured on this site, 2 CPUs: the
// default (10) takes 30–50 s for 2,000 pages with 4–7 requests actually in flight (the request
// queue's head, not the CPU, is the limit); 50 takes 9–13 s, the fastest setting tried (20: 18 s;
// 50 with maybeRunIntervalSecs 0.05 instead of 0.5: 16 s). So the baseline gets 50.
//
// Prints one JSON line on stdout: {pages, markdownEmpty, wallMs, failed}. Wall time covers
// crawler.run() only (the crawler is built before the clock starts).
import { createRequire } from 'node:module';
import { CheerioCrawler, Configuration, log } from '@crawlee/cheerio';
import TurndownService from 'turndown';

const require = createRequire(import.meta.url);
const { gfm } = require('turndown-plugin-gfm') as { gfm: TurndownService.Plugin };

const [startUrl, maxArg] = process.argv.slice(2);
if (!startUrl) throw new Error('usage: crawlee-crawl.ts <start-url> <max-pages>');
const maxPages = Number(maxArg ?? 2000);
const desiredConcurrency = Number(process.env.CRAWLEE_BENCH_CONCURRENCY || 50);

log.setLevel(log.LEVELS.WARNING);
const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' });
turndown.use(gfm);

let pages = 0;
let markdownEmpty = 0;
const config = new Configuration({ persistStorage: false, purgeOnStart: true });
const crawler = new CheerioCrawler(
  {
    maxRequestsPerCrawl: maxPages,
    autoscaledPoolOptions: { desiredConcurrency },
    async requestHandler({ request, body, enqueueLinks, pushData }) {
      const markdown = turndown.turndown(typeof body === 'string' ? body : body.toString('utf8'));
      pages++;
      if (!markdown.trim()) markdownEmpty++;
      await pushData({ url: request.loadedUrl ?? request.url, markdown });
      await enqueueLinks({ strategy: 'same-hostname' });
    },
  },
  config,
);

const started = performance.now();
const stats = await crawler.run([startUrl]);
const wallMs = performance.now() - started;
process.stdout.write(`${JSON.stringify({ pages, markdownEmpty, wallMs, failed: stats.requestsFailed })}\n`);
