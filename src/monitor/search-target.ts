// Search targets of monitors: each check runs the target's queries on the search backends that the
// composition root hands in (MonitorSearch; src/monitor-search.ts wires src/search/'s, which this layer
// may not import), merges the results rank by rank across the queries, deduplicates them by canonical
// URL and keeps maxResults of them (a combined cap, as Firecrawl's); searchWindow becomes the search's
// tbs. A result is compared by its title and description.
import type { MonitorSearchWindow } from '../contract/monitor.ts';
import { MONITOR_SEARCH_DEFAULT_MAX_RESULTS, MONITOR_SEARCH_DEFAULT_WINDOW } from '../contract/monitor.ts';
import type { StoredTarget } from '../store/monitors.ts';
import { canonicalHitUrl, jsonDiff, markdownDiff, normalizeForCompare } from './compare.ts';

/** One query as a search target sends it (the fields of POST /v2/search it uses). */
export interface MonitorSearchQuery {
  teamId: string;
  query: string;
  /** Results wanted at most. */
  limit: number;
  includeDomains?: string[];
  excludeDomains?: string[];
  /** The time filter in POST /v2/search's tbs syntax (qdr:…). */
  tbs?: string;
  signal: AbortSignal;
}

export interface MonitorSearchHit {
  url: string;
  title: string;
  description: string;
  date?: string;
}

/** The web search of this process (the own index or SearXNG, as POST /v2/search's `web` source). */
export interface MonitorSearch {
  /** The backend's name, for target results. */
  readonly name: string;
  search(q: MonitorSearchQuery): Promise<MonitorSearchHit[]>;
  /** What `results` results cost, as POST /v2/search charges them. */
  credits(results: number): number;
}

/**
 * searchWindow as tbs: Google's qdr units (n minutes, h hours, d days, w weeks), which the own index reads
 * as "scraped within" and SearXNG as the narrowest time_range covering it, dated results outside dropped.
 */
export const SEARCH_WINDOW_TBS: Record<MonitorSearchWindow, string> = {
  '5m': 'qdr:n5',
  '15m': 'qdr:n15',
  '1h': 'qdr:h',
  '6h': 'qdr:h6',
  '24h': 'qdr:d',
  '7d': 'qdr:w',
};

/** Queries of one target sent at once. */
const QUERY_CONCURRENCY = 4;
/** Time one query may take (POST /v2/search's default timeout). */
const QUERY_TIMEOUT_MS = 60_000;

/** A result of the target, after merging: the queries that found it and its best rank among them. */
export interface TargetHit {
  url: string;
  title: string;
  description: string;
  queries: string[];
  position: number;
  date?: string;
}

export interface SearchTargetRun {
  hits: TargetHit[];
  /** Each query's own count of results (before merging), or its error. */
  queries: { query: string; results: number; error?: string }[];
  /** Queries that failed. */
  failed: number;
}

/** The target's search settings with Firecrawl's defaults. */
export function searchSettings(t: StoredTarget): {
  queries: string[];
  window: MonitorSearchWindow;
  maxResults: number;
  includeDomains?: string[];
  excludeDomains?: string[];
} {
  return {
    queries: t.queries as string[],
    window: (t.searchWindow as MonitorSearchWindow | undefined) ?? MONITOR_SEARCH_DEFAULT_WINDOW,
    maxResults: (t.maxResults as number | undefined) ?? MONITOR_SEARCH_DEFAULT_MAX_RESULTS,
    includeDomains: (t.includeDomains as string[] | undefined)?.length ? (t.includeDomains as string[]) : undefined,
    excludeDomains: (t.excludeDomains as string[] | undefined)?.length ? (t.excludeDomains as string[]) : undefined,
  };
}

/**
 * Runs the target's queries (a few at a time, each bounded by QUERY_TIMEOUT_MS and the check's signal)
 * and merges their results: the first of every query, then the second of every query…, a URL seen before
 * (canonically) only adding its query, until maxResults results are kept.
 */
export async function runSearchTarget(
  search: MonitorSearch,
  target: StoredTarget,
  teamId: string,
  signal: AbortSignal,
): Promise<SearchTargetRun> {
  const s = searchSettings(target);
  const answers: ({ hits: MonitorSearchHit[] } | { error: string })[] = new Array(s.queries.length);
  let next = 0;
  const worker = async () => {
    while (next < s.queries.length) {
      const i = next++;
      try {
        const hits = await search.search({
          teamId,
          query: s.queries[i],
          limit: s.maxResults,
          includeDomains: s.includeDomains,
          excludeDomains: s.excludeDomains,
          tbs: SEARCH_WINDOW_TBS[s.window],
          signal: AbortSignal.any([signal, AbortSignal.timeout(QUERY_TIMEOUT_MS)]),
        });
        answers[i] = { hits };
      } catch (err) {
        if (signal.aborted) throw err;
        const code = (err as { code?: unknown }).code;
        const message = err instanceof Error ? err.message : String(err);
        answers[i] = { error: typeof code === 'string' ? `${code}: ${message}` : message };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(QUERY_CONCURRENCY, s.queries.length) }, worker));

  const merged = new Map<string, TargetHit>();
  const lists = answers.map((a) => ('hits' in a ? a.hits : []));
  for (let rank = 0; merged.size < s.maxResults; rank++) {
    let more = false;
    for (let q = 0; q < lists.length; q++) {
      const h = lists[q][rank];
      if (!h) continue;
      more = true;
      const url = canonicalHitUrl(h.url);
      const known = merged.get(url);
      if (known) {
        if (!known.queries.includes(s.queries[q])) known.queries.push(s.queries[q]);
        continue;
      }
      if (merged.size >= s.maxResults) continue;
      merged.set(url, {
        url,
        title: h.title,
        description: h.description,
        queries: [s.queries[q]],
        position: rank + 1,
        ...(h.date ? { date: h.date } : {}),
      });
    }
    if (!more) break;
  }
  return {
    hits: [...merged.values()],
    queries: s.queries.map((query, i) => {
      const a = answers[i];
      return 'hits' in a ? { query, results: a.hits.length } : { query, results: 0, error: a.error };
    }),
    failed: answers.filter((a) => 'error' in a).length,
  };
}

/** A result's title and description as compared and stored: normalised, in a fixed order. */
export function hitContent(h: { title: string; description: string }): string {
  return JSON.stringify({ title: normalizeForCompare(h.title), description: normalizeForCompare(h.description) });
}

/** A stored result content read back; a page's content (the target was a scrape target under this id) reads as empty. */
export function parseHitContent(content: string): { title: string; description: string } {
  const v = parsed(content) as { title?: unknown; description?: unknown } | null;
  const text = (x: unknown) => (typeof x === 'string' ? x : '');
  return { title: text(v?.title), description: text(v?.description) };
}

function parsed(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return null;
  }
}

/**
 * A changed result's diff, in the shape of mixed (JSON plus markdown) monitors: `text`, a git-style diff of
 * the title and description as two paragraphs, and `json`, the fields that changed ({previous, current}).
 */
export function hitDiff(previous: string, current: string, url: string): { text: string; json: unknown } {
  const a = parseHitContent(previous);
  const b = parseHitContent(current);
  const render = (h: { title: string; description: string }) => `${h.title}\n\n${h.description}`;
  return { text: markdownDiff(render(a), render(b), url).text, json: jsonDiff(a, b) };
}
