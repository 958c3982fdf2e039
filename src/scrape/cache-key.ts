// The page cache key: the URL (normalised) and every request field that changes what the target
// sends back. Fields that only change our transform (formats, onlyMainContent...) are left out,
// because the cache holds raw responses and transforms run again on a hit.
import { createHash } from 'node:crypto';

export interface CacheVariant {
  url: string;
  mobile: boolean;
  country?: string;
  languages?: string[];
}

/** Lower-case scheme and host, no default port, no fragment; path and query kept as sent. */
export function normaliseUrl(input: string): string {
  const u = new URL(input);
  // "#" shows in a serialised URL only as the fragment's mark (assigning re-serialises: skipped when there is none).
  if (u.href.includes('#')) u.hash = '';
  return u.href;
}

export function cacheKey(v: CacheVariant): string {
  const parts = [
    normaliseUrl(v.url),
    v.mobile ? 'mobile' : 'desktop',
    (v.country ?? 'US').toUpperCase(),
    (v.languages ?? []).join(','),
  ];
  return createHash('sha256').update(parts.join('\n')).digest('hex');
}
