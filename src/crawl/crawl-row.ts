// What a crawl (or batch scrape) is in the database: its row and the options it keeps, and what
// follows from them: the dedup key of its URLs and the scope its links keep to.
import type { CrawlRequest } from '../contract/crawl.ts';
import type { WebhookSpec } from '../jobs/webhooks.ts';
import { urlKey } from '../net/url-key.ts';
import { UrlScope } from './url.ts';

/** How long crawl results stay readable. */
export const CRAWL_TTL_MS = 24 * 60 * 60 * 1000;

/** What a crawl row keeps of the request (the URL is a column). */
export type CrawlOptions = Omit<CrawlRequest, 'url' | 'origin' | 'integration' | 'webhook' | 'prompt'>;

export type CrawlKind = 'crawl' | 'batch_scrape';

export interface CrawlRow {
  id: string;
  kind: CrawlKind;
  teamId: string;
  apiKeyId: string | null;
  url: string;
  options: CrawlOptions;
  pageLimit: number;
  publicUrl: string;
  status: 'scraping' | 'completed' | 'failed' | 'cancelled';
  total: number;
  completed: number;
  creditsUsed: number;
  createdAt: Date;
  completedAt: Date | null;
  expiresAt: Date;
  webhook: WebhookSpec | null;
}

export const crawlColumns = `id, kind, team_id AS "teamId", api_key_id AS "apiKeyId", url, options, page_limit AS "pageLimit",
  public_url AS "publicUrl", status, total, completed, credits_used AS "creditsUsed", created_at AS "createdAt",
  completed_at AS "completedAt", expires_at AS "expiresAt", webhook`;

/**
 * The dedup key of a URL in a crawl: urlKey (fragment, default port, one trailing slash; the
 * query dropped with ignoreQueryParameters), and with deduplicateSimilarURLs (default) also the
 * scheme and a leading "www." ignored.
 */
export function crawlKey(
  url: string,
  o: Pick<CrawlOptions, 'ignoreQueryParameters' | 'deduplicateSimilarURLs'>,
): string | undefined {
  const k = urlKey(url, { ignoreQueryParameters: o.ignoreQueryParameters });
  if (!k || !o.deduplicateSimilarURLs) return k;
  const u = new URL(k);
  return `${u.host.replace(/^www\./, '')}${u.pathname}${u.search}`;
}

/** The scope a crawl's links keep to (its regexes compiled: a 400 when one is invalid). */
export function scopeOf(crawl: Pick<CrawlRow, 'url' | 'options'>): UrlScope {
  const o = crawl.options;
  return new UrlScope(crawl.url, {
    allowSubdomains: o.allowSubdomains,
    allowExternalLinks: o.allowExternalLinks,
    restrictToStartPath: !o.crawlEntireDomain,
    includePaths: o.includePaths,
    excludePaths: o.excludePaths,
    regexOnFullURL: o.regexOnFullURL,
  });
}
