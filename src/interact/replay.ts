// Brings a new session's browser to the page state of the scrape it is bound to: the profile's
// storage, the caller's cookies and headers, ad blocking, then the URL, the same smart wait and
// `waitFor`, and the scrape's actions, in order. A standalone session gets only the profile.
import type { ScrapeReplay } from '../scrape/replay.ts';
import type { StorageState } from '../scrape/engines/browser.ts';
import { emptyOutputs, runActions } from '../scrape/engines/browser/actions.ts';
import type { AdBlocker } from '../scrape/engines/browser/adblock.ts';
import { prepareContext } from '../scrape/engines/browser/prepare-context.ts';
import { NetworkTracker, settle, sleep } from '../scrape/engines/browser/settle.ts';
import { ApiError } from '../errors.ts';
import { type SessionBrowser, type SessionDevice, deviceEmulation } from './session-browser.ts';

export interface ReplayOptions {
  device: SessionDevice;
  /** The profile's storage (cookies, localStorage, IndexedDB), when the session names one. */
  storageState?: StorageState;
  blocker?: AdBlocker;
  /** Longest replay, navigation and actions together. Default 60 s. */
  timeoutMs?: number;
}

export async function openAtReplay(
  browser: SessionBrowser,
  replay: ScrapeReplay | undefined,
  opts: ReplayOptions,
): Promise<void> {
  if (opts.storageState) await browser.context.setStorageState(opts.storageState);
  if (!replay) return;
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  const remaining = () => Math.max(1, deadline - Date.now());
  const emu = deviceEmulation(opts.device, browser.version);
  await prepareContext(browser.context, replay.url, emu, opts.blocker);
  const page = await browser.page();
  const tracker = new NetworkTracker(page);
  try {
    await page.goto(replay.url, { waitUntil: 'domcontentloaded', timeout: remaining() });
    await settle(page, tracker, { quietMs: 250, maxMs: 5000 }, deadline);
    if (replay.waitFor) await sleep(Math.min(replay.waitFor, remaining()));
    if (replay.actions?.length) {
      const timeout = () =>
        new ApiError('INTERACT_EXECUTION_FAILED', "Replaying the scrape's actions took longer than 60 s.");
      await runActions(
        replay.actions,
        {
          page,
          tracker,
          deadline,
          selectorTimeoutMs: 10_000,
          settle: { quietMs: 150, maxMs: 3000 },
          onTimeout: timeout,
        },
        emptyOutputs(),
      );
    }
  } catch (err) {
    if (err instanceof ApiError && err.code === 'INTERACT_EXECUTION_FAILED') throw err;
    throw new ApiError(
      'INTERACT_EXECUTION_FAILED',
      `The scrape could not be replayed in the session's browser: ${(err as Error).message}`,
    );
  } finally {
    tracker.dispose();
  }
}
