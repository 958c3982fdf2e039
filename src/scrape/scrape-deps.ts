// What a scrape is given: the process's engines, stores and limits (ScrapeDeps), and the route's or
// parent job's per-request context (ScrapeContext).
import type { FastifyBaseLogger } from 'fastify';
import type { MediaConfig } from '../config.ts';
import type { ParsePool } from '../documents/parse-pool.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { PageCacheBatcher } from '../store/pages.ts';
import type { SearchIndexer } from '../store/search-indexer.ts';
import type { BrowserEngine } from './engines/browser.ts';
import type { HttpEngine } from './engines/http.ts';
import type { TeamConcurrency } from './team-concurrency.ts';
import type { Db } from '../store/db-types.ts';

export interface ScrapeDeps {
  db: Db;
  http: HttpEngine;
  concurrency: TeamConcurrency;
  maxConcurrency: number;
  log: FastifyBaseLogger;
  /** Renders pages in Chromium; without it (or without Chromium) browser-only requests get 503. */
  browser?: BrowserEngine;
  /** How long stored screenshots and PDFs stay readable. */
  fileTtlMs: number;
  /** Parses documents (PDF, office, EPUB…) off the event loop; without it a document URL is 415. */
  parsePool?: ParsePool;
  /** The AI formats' LLM; without it (or not configured) they take their deterministic paths. */
  llm?: LlmProvider;
  /** LLM_MAX_OUTPUT_TOKENS (bounds the onlyCleanContent pass). */
  llmMaxOutputTokens?: number;
  /** The audio and video formats' limits and ffmpeg (default: the configuration's defaults). */
  media?: MediaConfig;
  /** Indexes stored pages for POST /v2/search in the background (GLEANER_SEARCH_INDEX); none: not indexed. */
  searchIndexer?: SearchIndexer;
}

/** Per-request context from the route. */
export interface ScrapeContext {
  /** Base of the URLs of stored screenshots and PDFs (PUBLIC_URL, or the request's own origin). */
  publicUrl: string;
  /** Page-cache access gathered with other scrapes' (crawl pages: src/store/pages.ts PageCacheBatcher); default: one statement each. */
  cache?: Pick<PageCacheBatcher, 'read' | 'write'>;
  /** When the parent's results expire (a crawl's or batch's expiresAt): its files go no later. */
  filesExpireAt?: Date;
  /**
   * Called when the target is to be contacted (not for a cache hit), before the team's slot is
   * taken; what it resolves to is called once the fetch is over. A crawl's per-host politeness
   * turn (src/crawl/politeness.ts): it may throw to put the page back instead.
   */
  beforeFetch?: () => Promise<() => void>;
}
