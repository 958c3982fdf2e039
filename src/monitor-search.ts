// The web search that monitors' search targets run on (src/monitor/search-target.ts): the configured
// `web` backend of POST /v2/search, the own index or SearXNG (SEARCH_WEB_BACKEND: src/searcher.ts
// chooses it for both), with its domain filters, tbs and credits. Wired at the composition root because
// src/monitor/ and src/search/ share a layer and do not import each other. The queries are parts of a
// monitor check (no search job of their own): the check's job is charged for their results.
import type { JobContext } from './jobs/job-context.ts';
import type { MonitorSearch, MonitorSearchHit } from './monitor/search-target.ts';
import { hostOf, normalizeDomain, onDomains } from './search/filters.ts';
import { OwnIndexBackend } from './search/own-index.ts';
import { searchCredits } from './search/search.ts';
import { parseTbs } from './search/tbs.ts';
import { searchBackends } from './searcher.ts';

/** This process's monitor search; SearXNG's connections close when the process stops. */
export function monitorSearch(ctx: JobContext): MonitorSearch {
  const backends = searchBackends(ctx.config, ctx.db);
  ctx.onStop?.(backends.close);
  // SEARCH_WEB_BACKEND=searxng without SEARXNG_URL leaves POST /v2/search without web; monitors keep the own index.
  const web = backends.web ?? new OwnIndexBackend(ctx.db);
  return {
    name: web.name,
    credits: searchCredits,
    async search(q): Promise<MonitorSearchHit[]> {
      const include = q.includeDomains?.map(normalizeDomain);
      const exclude = q.excludeDomains?.map(normalizeDomain);
      const hits = await web.search({
        teamId: q.teamId,
        query: q.query,
        source: 'web',
        limit: q.limit,
        includeDomains: include,
        excludeDomains: exclude,
        time: parseTbs(q.tbs),
        signal: q.signal,
      });
      // Filtered again as POST /v2/search does; a result that is not an http(s) page is left out.
      const out: MonitorSearchHit[] = [];
      for (const h of hits) {
        const host = hostOf(h.url);
        if (!host) continue;
        if (include?.length && !onDomains(host, include)) continue;
        if (exclude?.length && onDomains(host, exclude)) continue;
        out.push({ url: h.url, title: h.title, description: h.description, ...(h.date ? { date: h.date } : {}) });
        if (out.length >= q.limit) break;
      }
      return out;
    },
  };
}
