// Which pages an extract reads: its exact URLs, then the pages its "/*" globs found, each once.
import { EXTRACT_GLOB_MAX_PAGES, EXTRACT_MAX_PAGES } from '../contract/extract.ts';
import { urlKey } from '../net/url-key.ts';

/** A "/*" glob's base URL, or undefined for an exact URL. */
export function globBase(u: string): string | undefined {
  const t = u.trim();
  return t.endsWith('/*') ? t.slice(0, -2) || undefined : undefined;
}

/**
 * The pages an extract reads: the exact URLs in order, then each glob's pages in map order (at
 * most `perGlob` new pages per glob), each page once (urlKey), `total` at most.
 */
export function selectPages(
  exact: string[],
  globs: string[][],
  perGlob = EXTRACT_GLOB_MAX_PAGES,
  total = EXTRACT_MAX_PAGES,
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  const add = (u: string) => {
    const key = urlKey(u) ?? u;
    if (seen.has(key) || out.length >= total) return false;
    seen.add(key);
    out.push(u);
    return true;
  };
  for (const u of exact) add(u);
  for (const pages of globs) {
    let n = 0;
    for (const u of pages) {
      if (n >= perGlob || out.length >= total) break;
      if (add(u)) n++;
    }
  }
  return out;
}
