// The Searcher of the configuration, for the API's POST /v2/search and the agent jobs alike: web
// from the own index or SearXNG (SEARCH_WEB_BACKEND), news and images from SearXNG when it is set.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import type { ScrapeStack } from './scrape/stack.ts';
import type { SearchBackend } from './search/backend.ts';
import { OwnIndexBackend } from './search/own-index.ts';
import { Searcher } from './search/search.ts';
import { SearxngBackend } from './search/searxng.ts';
import type { Db } from './store/db-types.ts';

/** The configured backends: web from the own index or SearXNG, news and images from SearXNG when it is set. */
export function searchBackends(
  config: Config,
  db: Db,
): { web: SearchBackend | undefined; searxng: SearxngBackend | undefined; close: () => Promise<void> } {
  const { searxngUrl, searxngTimeoutMs, webBackend } = config.search;
  const searxng = searxngUrl ? new SearxngBackend({ baseUrl: searxngUrl, timeoutMs: searxngTimeoutMs }) : undefined;
  const web: SearchBackend | undefined = webBackend === 'searxng' ? searxng : new OwnIndexBackend(db);
  return { web, searxng, close: async () => searxng?.close() };
}

/** The searcher and the clean-up of its backends (SearXNG's connection pool). */
export function createSearcher(
  config: Config,
  db: Db,
  stack: ScrapeStack,
  log: FastifyBaseLogger,
): { searcher: Searcher; close: () => Promise<void> } {
  const { web, searxng, close } = searchBackends(config, db);
  return {
    searcher: new Searcher({ db, scraper: stack.scraper, backends: { web, news: searxng, images: searxng }, log }),
    close,
  };
}
