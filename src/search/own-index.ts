// The embedded default backend: the team's own scraped and crawled pages in Postgres full-text
// search (src/store/search-index.ts). Web results only; country and location do not apply. With
// highlights, a hit's description is the passage of its stored page that best matches the query
// (src/search/highlight.ts), else its meta description.
import type { Db } from '../store/db-types.ts';
import { catchUpTeam, searchIndex } from '../store/search-index.ts';
import type { SearchBackend, SearchHit, SearchParams } from './backend.ts';
import { categoryScope } from './filters.ts';
import { firstPassage, highlightOf } from './highlight.ts';

/** Longest a search spends indexing the team's queued pages before it searches. */
const CATCH_UP_BUDGET_MS = 10_000;

export class OwnIndexBackend implements SearchBackend {
  readonly name = 'own index';
  readonly sources = ['web'] as const;
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async search(p: SearchParams): Promise<SearchHit[]> {
    // Crawl pages and stored scrapes still queued for the index go in first (src/store/search-indexer.ts).
    await catchUpTeam(this.#db, p.teamId, CATCH_UP_BUDGET_MS);
    const scope = p.categories?.length ? categoryScope(p.categories) : undefined;
    const hits = await searchIndex(this.#db, {
      teamId: p.teamId,
      text: p.query,
      limit: p.limit,
      includeHosts: p.includeDomains,
      excludeHosts: p.excludeDomains,
      since: p.time?.since,
      until: p.time?.until,
      ...(scope ? { categoryHosts: scope.domains, categoryPdf: scope.pdf } : {}),
      withText: p.highlights === true,
    });
    return hits.map((h, i) => ({
      source: 'web',
      url: h.url,
      title: h.title,
      // No passage holds a word of the query (a title or URL match): the meta description, or
      // without one the start of the page.
      description: p.highlights
        ? (highlightOf(h.markdown, p.query) ?? (h.description || firstPassage(h.markdown)))
        : h.description,
      position: i + 1,
    }));
  }
}
