// The robots.txt cache, sitemap reader and per-host politeness of one process, built once beside
// its scrape stack and shared by the map route, crawls (robots, politeness, sitemap seeding) and
// extract's globs.
import type { Config } from '../config.ts';
import type { HttpEngine } from '../scrape/engines/http.ts';
import type { Db } from '../store/db-types.ts';
import type { SharedSlots } from '../store/shared-slots.ts';
import { Politeness } from './politeness.ts';
import { RobotsCache } from './robots.ts';
import { SitemapReader } from './sitemap.ts';

export interface SiteFiles {
  robots: RobotsCache;
  sitemaps: SitemapReader;
  /** Crawl-delay and the host interval, across processes (politeness.ts): crawl pages and map's shallow crawl. */
  politeness: Politeness;
}

export function createSiteFiles(
  http: HttpEngine,
  db: Db,
  config: Pick<Config, 'hostMaxConcurrency' | 'hostMinIntervalMs' | 'maxCrawlDelaySeconds'>,
  shared?: SharedSlots,
): SiteFiles {
  const robots = new RobotsCache({ http });
  const { hostMaxConcurrency, hostMinIntervalMs, maxCrawlDelaySeconds } = config;
  const politeness = new Politeness({
    db,
    robots,
    hostMaxConcurrency,
    hostMinIntervalMs,
    maxCrawlDelaySeconds,
    shared,
  });
  return { robots, sitemaps: new SitemapReader({ http, robots }), politeness };
}
