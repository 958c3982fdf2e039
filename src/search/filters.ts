// Domain and category filters, the same for every backend: the own index applies them in its
// query, and the search service applies them again to every backend's hits (SearXNG cannot).
import type { SearchCategory } from '../contract/search.ts';

/** Sites of the research category (as Firecrawl's: academic publishers and preprint servers). */
export const RESEARCH_DOMAINS = [
  'arxiv.org',
  'pubmed.ncbi.nlm.nih.gov',
  'ncbi.nlm.nih.gov',
  'nature.com',
  'science.org',
  'ieee.org',
  'acm.org',
  'sciencedirect.com',
  'springer.com',
  'biorxiv.org',
  'medrxiv.org',
  'researchgate.net',
  'semanticscholar.org',
  'scholar.google.com',
];

const CATEGORY_DOMAINS: Partial<Record<SearchCategory, string[]>> = {
  github: ['github.com'],
  research: RESEARCH_DOMAINS,
};

/** "https://www.Example.com/x" or "example.com" → "example.com". */
export function normalizeDomain(input: string): string {
  const s = input.trim().toLowerCase();
  const host = /^[a-z][a-z0-9+.-]*:\/\//.test(s) && URL.canParse(s) ? new URL(s).hostname : s.split(/[/?#:]/)[0];
  return host.replace(/^www\./, '').replace(/\.$/, '');
}

/** The URL's host as the index keeps it (lower-case, without www.); undefined for a non-http(s) URL. */
export function hostOf(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  return u.hostname.replace(/^www\./, '');
}

export function onDomains(host: string, domains: string[]): boolean {
  return domains.some((d) => host === d || host.endsWith(`.${d}`));
}

export function isPdfUrl(url: string): boolean {
  return /\.pdf$/i.test(URL.canParse(url) ? new URL(url).pathname : url);
}

/** Domains and the PDF flag the categories stand for (any of them matches). */
export function categoryScope(categories: SearchCategory[]): { domains: string[]; pdf: boolean } {
  return {
    domains: categories.flatMap((c) => CATEGORY_DOMAINS[c] ?? []),
    pdf: categories.includes('pdf'),
  };
}

/** The first of the categories the URL belongs to. */
export function categoryOf(url: string, categories: SearchCategory[]): SearchCategory | undefined {
  const host = hostOf(url);
  return categories.find((c) =>
    c === 'pdf' ? isPdfUrl(url) : host !== undefined && onDomains(host, CATEGORY_DOMAINS[c] ?? []),
  );
}
