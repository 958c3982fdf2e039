// The one interface every search backend implements (the own index, SearXNG): a query in, ranked
// hits of the kinds it serves out. Filtering by domain and category, positions across backends,
// scraping and billing are src/search/search.ts's.
import type { SearchCategory, SearchSource } from '../contract/search.ts';

export interface SearchParams {
  teamId: string;
  query: string;
  /** The kind asked for (one of the backend's `sources`). */
  source: SearchSource;
  /** Hits wanted (after the caller's filters: a backend may return more, never needs to). */
  limit: number;
  /** Domains (lower-case, without www.): only these, or none of these; subdomains included. */
  includeDomains?: string[];
  excludeDomains?: string[];
  categories?: SearchCategory[];
  time?: TimeFilter;
  /** ISO 3166-1 alpha-2, upper-case, from `country` or `location`. */
  country?: string;
  /**
   * Descriptions as query-relevant passages of the pages (the request's `highlights`); false or
   * absent: the page's own meta description where the backend has it.
   */
  highlights?: boolean;
  signal: AbortSignal;
}

/** The request's tbs, read (src/search/tbs.ts). */
export interface TimeFilter {
  since?: Date;
  until?: Date;
  /** The coarse range a web engine understands, covering since..now. */
  range?: 'day' | 'week' | 'month' | 'year';
}

export interface SearchHit {
  source: SearchSource;
  url: string;
  title: string;
  /** The snippet: a highlight or the meta description (news results answer it as `snippet`). */
  description: string;
  /** 1-based rank in the backend's answer. */
  position: number;
  date?: string;
  imageUrl?: string;
  imageWidth?: number;
  imageHeight?: number;
}

export interface SearchBackend {
  /** For warnings and logs. */
  readonly name: string;
  readonly sources: readonly SearchSource[];
  search(params: SearchParams): Promise<SearchHit[]>;
}
