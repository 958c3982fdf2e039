// The robots.txt cache and sitemap reader of one process, built once beside its scrape stack and
// shared by the map route, crawls (robots, politeness, sitemap seeding) and extract's globs.
import type { HttpEngine } from '../scrape/engines/http.ts';
import { RobotsCache } from './robots.ts';
import { SitemapReader } from './sitemap.ts';

export interface SiteFiles {
  robots: RobotsCache;
  sitemaps: SitemapReader;
}

export function createSiteFiles(http: HttpEngine): SiteFiles {
  const robots = new RobotsCache({ http });
  return { robots, sitemaps: new SitemapReader({ http, robots }) };
}
