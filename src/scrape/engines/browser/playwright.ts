// playwright-core, loaded the first time a browser is needed: its JavaScript is ~30 MB of heap
// (a third of the service's at start-up) that a process crawling plain HTML never uses.
import { createRequire } from 'node:module';
import type * as Playwright from 'playwright-core';

const require = createRequire(import.meta.url);
let loaded: typeof Playwright | undefined;

export function playwright(): typeof Playwright {
  return (loaded ??= require('playwright-core') as typeof Playwright);
}
