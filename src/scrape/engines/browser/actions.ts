// The runner of page actions (their wire schema: src/contract/actions.ts). Each action runs in
// order on the fetch's page; outputs are collected by kind. A failing action stops the fetch with ScrapeActionError (400 SCRAPE_ACTION_ERROR) naming its
// index and reason; running out of the fetch's time is a timeout (408), not an action error.
import type { Page } from 'playwright-core';
import type { BrowserAction } from '../../../contract/actions.ts';
import { type NetworkTracker, type SettleOptions, settle } from './settle.ts';
import { ScrapeActionError } from '../../../errors.ts';

export interface Screenshot {
  data: Buffer;
  /** jpeg when a quality was given, png otherwise. */
  type: 'png' | 'jpeg';
}

export interface ScreenshotOptions {
  fullPage?: boolean;
  /** JPEG quality 0–100; absent: PNG. */
  quality?: number;
  /** CSS pixels; the image has exactly this size unless fullPage. */
  viewport?: { width: number; height: number };
}

export interface JavascriptReturn {
  /** typeof the returned value ('string', 'number', 'boolean', 'object', 'undefined', ...); 'null' for null. */
  type: string;
  /** The value, JSON-safe (undefined → null, Date → ISO string, bigint → string). */
  value: unknown;
}

export interface ActionOutputs {
  screenshots: Screenshot[];
  scrapes: { url: string; html: string }[];
  javascriptReturns: JavascriptReturn[];
  pdfs: Buffer[];
}

export interface ActionContext {
  page: Page;
  tracker: NetworkTracker;
  /** Epoch ms by which the whole fetch must be done. */
  deadline: number;
  /** Longest wait for a selector to match, deadline permitting. */
  selectorTimeoutMs: number;
  /** The settle applied after click, press, scroll and executeJavascript. */
  settle: SettleOptions;
  /** Thrown when the deadline has passed (the engine's timeout error). */
  onTimeout: () => Error;
}

const CLOSED = /Target .*closed|has been closed|Browser closed|has disconnected/i;

export function emptyOutputs(): ActionOutputs {
  return { screenshots: [], scrapes: [], javascriptReturns: [], pdfs: [] };
}

export async function runActions(
  actions: readonly BrowserAction[],
  ctx: ActionContext,
  out: ActionOutputs,
): Promise<void> {
  for (let i = 0; i < actions.length; i++) {
    const action = actions[i];
    if (Date.now() >= ctx.deadline) throw ctx.onTimeout();
    try {
      await runAction(action, ctx, out);
    } catch (err) {
      if (err instanceof ScrapeActionError) throw err;
      if (ctx.page.isClosed() || Date.now() >= ctx.deadline || CLOSED.test(String((err as Error)?.message))) throw err; // crash or timeout: the engine decides
      throw new ScrapeActionError(i, action.type, reason(err));
    }
  }
}

async function runAction(action: BrowserAction, ctx: ActionContext, out: ActionOutputs): Promise<void> {
  const { page } = ctx;
  const selectorTimeout = () => Math.max(1, Math.min(ctx.selectorTimeoutMs, ctx.deadline - Date.now()));
  switch (action.type) {
    case 'wait':
      if (action.selector !== undefined) {
        await appear(page, action.selector, selectorTimeout());
      } else {
        const ms = action.milliseconds ?? 0;
        if (Date.now() + ms > ctx.deadline) {
          await page.waitForTimeout(Math.max(0, ctx.deadline - Date.now()));
          throw ctx.onTimeout();
        }
        await page.waitForTimeout(ms);
      }
      return;
    case 'click': {
      const locator = page.locator(action.selector);
      await appear(page, action.selector, selectorTimeout());
      const targets = action.all ? await locator.all() : [locator.first()];
      for (const element of targets) {
        const ms = selectorTimeout();
        await element.click({ timeout: ms }).catch((err: Error) => {
          if (!isTimeout(err)) throw err;
          throw new Error(
            `the element matching "${action.selector}" could not be clicked within ${ms} ms (hidden, disabled or covered)`,
          );
        });
      }
      await settle(page, ctx.tracker, ctx.settle, ctx.deadline);
      return;
    }
    case 'write':
      await page.keyboard.type(action.text);
      return;
    case 'press':
      await page.keyboard.press(action.key);
      await settle(page, ctx.tracker, ctx.settle, ctx.deadline);
      return;
    case 'scroll': {
      const sign = action.direction === 'up' ? -1 : 1;
      if (action.selector !== undefined) {
        const element = page.locator(action.selector).first();
        await appear(page, action.selector, selectorTimeout());
        await element.evaluate(
          (el, s) => el.scrollBy({ top: s * Math.max(el.clientHeight, 100), behavior: 'instant' }),
          sign,
        );
      } else {
        // One viewport, as Page Down would (the page's own scroll listeners fire).
        await page.evaluate(`window.scrollBy({ top: ${sign} * window.innerHeight, behavior: 'instant' })`);
      }
      await settle(page, ctx.tracker, ctx.settle, ctx.deadline);
      return;
    }
    case 'scrape':
      out.scrapes.push({ url: page.url(), html: await page.content() });
      return;
    case 'executeJavascript':
      out.javascriptReturns.push(await executeJavascript(page, action.script));
      await settle(page, ctx.tracker, ctx.settle, ctx.deadline);
      return;
    case 'pdf':
      out.pdfs.push(
        await page.pdf({
          format: action.format ?? 'Letter',
          landscape: action.landscape ?? false,
          scale: action.scale ?? 1,
          printBackground: true,
        }),
      );
      return;
    case 'screenshot':
      out.screenshots.push(await takeScreenshot(page, action, ctx.deadline));
      return;
  }
}

// Waits until an element matches the selector (attached to the DOM; visibility not required).
async function appear(page: Page, selector: string, timeoutMs: number): Promise<void> {
  try {
    await page.locator(selector).first().waitFor({ state: 'attached', timeout: timeoutMs });
  } catch (err) {
    if (!isTimeout(err)) throw err;
    throw new Error(`no element matches "${selector}" within ${timeoutMs} ms`);
  }
}

function isTimeout(err: unknown): boolean {
  return (err as Error)?.name === 'TimeoutError' || /Timeout \d+ms exceeded/.test(String((err as Error)?.message));
}

/**
 * Runs a script in the page. It may be an expression or statements (the last expression's value
 * is returned, as in a console), or a function body using `return` and `await`.
 */
export async function executeJavascript(page: Page, script: string): Promise<JavascriptReturn> {
  let value: unknown;
  try {
    value = await page.evaluate(script);
  } catch (err) {
    if (!/SyntaxError/.test((err as Error).message)) throw err;
    value = await page.evaluate(`(async () => {\n${script}\n})()`);
  }
  return { type: value === null ? 'null' : typeof value, value: jsonSafe(value) };
}

function jsonSafe(value: unknown): unknown {
  if (value === undefined) return null;
  try {
    return JSON.parse(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v)) ?? 'null');
  } catch {
    return String(value);
  }
}

/** A screenshot of the page; with a viewport, the page is resized for the shot and restored after. */
export async function takeScreenshot(page: Page, opts: ScreenshotOptions, deadline: number): Promise<Screenshot> {
  const previous = page.viewportSize();
  const resize =
    opts.viewport && (opts.viewport.width !== previous?.width || opts.viewport.height !== previous?.height);
  if (resize) await page.setViewportSize(opts.viewport!);
  try {
    const jpeg = opts.quality !== undefined;
    const data = await page.screenshot({
      type: jpeg ? 'jpeg' : 'png',
      quality: jpeg ? opts.quality : undefined,
      fullPage: opts.fullPage ?? false,
      scale: 'css',
      animations: 'disabled',
      timeout: Math.max(1, deadline - Date.now()),
    });
    return { data, type: jpeg ? 'jpeg' : 'png' };
  } finally {
    if (resize && previous && !page.isClosed()) await page.setViewportSize(previous).catch(() => {});
  }
}

function reason(err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  // Playwright's messages carry a call log after the first line; the first line says it.
  return message.split('\n')[0].replace(/^(locator|page|elementHandle|keyboard|frame)\.\w+: /, '');
}
