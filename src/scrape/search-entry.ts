// What a scraped page contributes to the own search index (src/store/search-index.ts): its
// canonical URL, host, title, description and language configuration. Shared by single scrapes
// (src/scrape/scrape.ts) and crawl pages (src/crawl/page-record.ts).
import type { ScrapeDocument } from '../contract/scrape.ts';
import { normalizeUrl, urlKey } from '../net/url-key.ts';
import { type SearchEntry, searchConfigFor } from '../store/search-index.ts';

const TITLE_MAX = 500;
const DESCRIPTION_MAX = 1000;

/**
 * The page's entry, or undefined when it is not worth finding: no http(s) URL, or the target
 * answered an error (a 404 page would match its own words).
 */
export function searchEntryOf(document: ScrapeDocument): SearchEntry | undefined {
  const m = document.metadata;
  if (m.statusCode !== undefined && (m.statusCode < 200 || m.statusCode >= 400)) return undefined;
  const url = normalizeUrl(m.url ?? m.sourceURL ?? '');
  if (!url) return undefined;
  const key = urlKey(url);
  if (!key) return undefined;
  const text = (v: unknown, max: number) => (typeof v === 'string' ? v.trim().slice(0, max) : '');
  return {
    key,
    url,
    host: new URL(url).hostname.replace(/^www\./, ''),
    title: text(m.title ?? m.ogTitle, TITLE_MAX),
    description: text(m.description ?? m.ogDescription, DESCRIPTION_MAX),
    config: searchConfigFor(typeof m.language === 'string' ? m.language : undefined),
  };
}
