// The one thing every interact part works on: a live Chromium that belongs to one session.
// session-browser.ts launches it; the sandbox (code), the agent loop (prompt), the CDP proxy and
// the live view each take this interface and nothing more, so they can be tested on any browser.
import type { BrowserContext, Page } from 'playwright-core';

export interface LiveBrowser {
  /** The session's only browser context (a persistent context: its storage is the profile's). */
  readonly context: BrowserContext;
  /**
   * Chromium's own DevTools endpoint, `ws://127.0.0.1:PORT/devtools/browser/ID`, reachable from
   * this process only (never handed to callers: they get the authenticated proxy's URL).
   */
  readonly cdpEndpoint: string;
  /** The page code and prompts act on: the most recently opened page still open (one is made if none is). */
  page(): Promise<Page>;
}
