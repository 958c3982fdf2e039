// What a scrape keeps so that POST /v2/scrape/{id}/interact can open a browser at the same page
// state: the request's URL and everything that shapes the page (headers and cookies, device,
// location, ad blocking, waits, actions, profile). Kept with the finished scrape unless zero data
// retention or lockdown; src/interact/ replays it.
import type { BrowserAction } from '../contract/actions.ts';
import type { ScrapeRequest } from '../contract/scrape.ts';

export interface ScrapeReplay {
  url: string;
  headers?: Record<string, string>;
  mobile: boolean;
  location?: { country: string; languages?: string[] };
  blockAds: boolean;
  skipTlsVerification: boolean;
  waitFor: number;
  actions?: BrowserAction[];
  profile?: { name: string; saveChanges?: boolean };
}

export function scrapeReplay(req: ScrapeRequest): ScrapeReplay {
  return {
    url: req.url,
    ...(req.headers && { headers: req.headers }),
    mobile: req.mobile,
    ...(req.location && { location: req.location }),
    blockAds: req.blockAds,
    skipTlsVerification: req.skipTlsVerification,
    waitFor: req.waitFor,
    ...(req.actions?.length && { actions: req.actions }),
    ...(req.profile && { profile: req.profile }),
  };
}
