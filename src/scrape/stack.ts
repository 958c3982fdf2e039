// The scraping machinery of one process, built once from configuration and shared by the API
// routes and the queue's workers: one HTTP engine (one connection pool), one browser engine (one
// Chromium), one per-team concurrency gate. (The robots.txt cache: src/crawl/site-files.ts.)
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.ts';
import { ParsePool } from '../documents/parse-pool.ts';
import { TeamConcurrency } from './team-concurrency.ts';
import { SearchIndexer } from '../store/search-indexer.ts';
import { SharedSlots } from '../store/shared-slots.ts';
import { LlmProvider } from '../llm/provider.ts';
import type { Db } from '../store/db-types.ts';
import { BrowserEngine } from './engines/browser.ts';
import { HttpEngine } from './engines/http.ts';
import { isExecutable } from './media/ffmpeg.ts';
import { Scraper } from './scrape.ts';

export interface ScrapeStack {
  http: HttpEngine;
  browser: BrowserEngine;
  scraper: Scraper;
  /** The AI formats' LLM (`available` false without OPENAI_BASE_URL / OPENAI_API_KEY). */
  llm: LlmProvider;
  /** Worker threads that parse documents off the event loop (started on first use). */
  parsePool: ParsePool;
  /** Slots shared with the other processes of a Postgres deployment (team and host limits); none on PGlite. */
  sharedSlots: SharedSlots | undefined;
  /** Closes the engines (after the server and the queue stopped using them). */
  close(): Promise<void>;
}

export function createScrapeStack(config: Config, db: Db, log: FastifyBaseLogger): ScrapeStack {
  const http = new HttpEngine({
    allowPrivateNetwork: config.allowPrivateNetwork,
    proxyUrl: config.proxyUrl,
    enhancedProxyUrl: config.enhancedProxyUrl,
    maxBytes: config.scrapeMaxBytes,
  });
  // Chromium starts on the first request that needs it; without it the service still runs.
  const browser = new BrowserEngine({
    allowPrivateNetwork: config.allowPrivateNetwork,
    executablePath: config.chromiumPath,
    maxPages: config.browserMaxPages,
    recycleAfterPages: config.browserRecycleAfter,
    recycleAboveMb: config.browserRecycleMb,
    filterLists: config.adblockLists,
    proxyUrl: config.proxyUrl,
    enhancedProxyUrl: config.enhancedProxyUrl,
  });
  if (!browser.available) {
    log.warn(
      `Chromium not found at ${config.chromiumPath}: requests that need a browser get 503 BROWSER_UNAVAILABLE (apt-get install chromium, or set CHROMIUM_PATH)`,
    );
  }
  for (const [name, path, variable] of [
    ['ffmpeg', config.media.ffmpegPath, 'FFMPEG_PATH'],
    ['ffprobe', config.media.ffprobePath, 'FFPROBE_PATH'],
  ]) {
    if (!isExecutable(path))
      log.warn(
        `${name} not found at "${path}": the audio and video formats get 503 MEDIA_FFMPEG_UNAVAILABLE (apt-get install ffmpeg, or set ${variable})`,
      );
  }
  const parsePool = new ParsePool({ size: config.parseWorkers });
  // Processes sharing a Postgres share the team limit; PGlite belongs to one process.
  const shared = db.kind === 'postgres' ? new SharedSlots(db) : undefined;
  const llm = new LlmProvider({ config: config.llm, db, log });
  const searchIndexer = config.search.index ? new SearchIndexer(db, log) : undefined;
  // Pages a stopped process left queued for the index.
  searchIndexer?.poke();
  const scraper = new Scraper({
    db,
    http,
    browser,
    parsePool,
    concurrency: new TeamConcurrency(shared),
    maxConcurrency: config.teamMaxConcurrency,
    log,
    fileTtlMs: config.fileTtlMs,
    media: config.media,
    llm,
    llmMaxOutputTokens: config.llm.maxOutputTokens,
    searchIndexer,
  });
  return {
    http,
    browser,
    scraper,
    llm,
    parsePool,
    sharedSlots: shared,
    async close() {
      await searchIndexer?.stop();
      await Promise.all([http.close(), browser.close(), parsePool.close(), shared?.close()]);
    },
  };
}
