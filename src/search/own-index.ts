// The embedded default backend: the team's own scraped and crawled pages in Postgres full-text
// search (src/store/search-index.ts). Web results only; country and location do not apply.
import type { Db } from '../store/db-types.ts';
import { searchIndex } from '../store/search-index.ts';
import type { SearchBackend, SearchHit, SearchParams } from './backend.ts';
import { categoryScope } from './filters.ts';

export class OwnIndexBackend implements SearchBackend {
  readonly name = 'own index';
  readonly sources = ['web'] as const;
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async search(p: SearchParams): Promise<SearchHit[]> {
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
    });
    return hits.map((h, i) => ({
      source: 'web',
      url: h.url,
      title: h.title,
      description: h.description,
      position: i + 1,
    }));
  }
}
