// The tools a prompt's agent uses on a live browser: their OpenAI function definitions and what
// running one does. Elements are targeted by the refs of the AI-mode accessibility snapshot
// (`[ref=e5]`, Playwright's getByRef), or by CSS selector, role and name, or visible text. A
// failing action (no such element, a timeout, a refused navigation) is a result the model reads,
// never a throw; only the agent's own abort (deadline, caller) escapes.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Locator, Page } from 'playwright-core';
import type { ChatCompletionFunctionTool } from 'openai/resources/chat/completions';
import { htmlToMarkdown } from '../markdown/markdown.ts';
import { NetworkTracker, type SettleOptions, settle } from '../scrape/engines/browser/settle.ts';
import type { LiveBrowser } from './live-browser.ts';

/** Characters of a snapshot in one tool result; `offset` pages through the rest. */
export const SNAPSHOT_CHARS = 16_000;
/** Characters of extracted page content in one tool result. */
export const EXTRACT_CHARS = 24_000;
/** Longest single action (click, fill, navigation…), within the agent's deadline. */
export const ACTION_TIMEOUT_MS = 10_000;
/** Longest `wait`. */
export const MAX_WAIT_MS = 10_000;

/** The settle wait after an action: as a scrape's after its actions. */
const ACTION_SETTLE: SettleOptions = { quietMs: 150, maxMs: 3000 };
const ERROR_CHARS = 600;

export interface ToolContext {
  browser: LiveBrowser;
  /** Epoch ms the whole prompt must be done by. */
  deadline: number;
  /** Aborted at the deadline or by the caller: its reason is rethrown. */
  signal: AbortSignal;
}

export type ToolOutcome =
  /** `status`: what happened; `snapshot`: the page after it, when the tool shows one. */
  { kind: 'result'; ok: boolean; status: string; snapshot?: string } | { kind: 'finish'; answer: string };

/** A mistake of the model's call (bad arguments, nothing to target): reported back to it. */
class ToolCallError extends Error {}

const target = {
  ref: { type: 'string', description: 'Element ref from the latest snapshot, e.g. "e5" (preferred).' },
  selector: { type: 'string', description: 'CSS selector, when there is no ref.' },
  role: { type: 'string', description: 'ARIA role (button, link, textbox…), with name.' },
  name: { type: 'string', description: 'Accessible name for role.' },
  text: { type: 'string', description: 'Visible text of the element.' },
} as const;

function tool(name: string, description: string, properties: object, required: string[] = []) {
  return {
    type: 'function' as const,
    function: { name, description, parameters: { type: 'object', properties, required } },
  } satisfies ChatCompletionFunctionTool;
}

export const BROWSER_TOOLS: ChatCompletionFunctionTool[] = [
  tool(
    'snapshot',
    'The current page as an accessibility tree; each element has a ref like [ref=e5] for the other tools.',
    { offset: { type: 'integer', description: 'Character offset, to read past a truncated snapshot.' } },
  ),
  tool('click', 'Click an element. Answers with the page snapshot after the click.', target),
  tool(
    'type',
    'Fill a text field (replacing its value), optionally pressing Enter after. Answers with the new snapshot.',
    {
      ...target,
      value: { type: 'string', description: 'The text to put in the field.' },
      submit: { type: 'boolean', description: 'Press Enter after filling.' },
    },
    ['value'],
  ),
  tool(
    'select',
    'Choose options of a <select> by value or label. Answers with the new snapshot.',
    { ...target, values: { type: 'array', items: { type: 'string' } } },
    ['values'],
  ),
  tool('press', 'Press a key (Enter, Escape, Tab, ArrowDown…) on an element or the page.', {
    ...target,
    key: { type: 'string' },
  }),
  tool(
    'navigate',
    'Open an http(s) URL in the current tab. Answers with the new snapshot.',
    { url: { type: 'string' } },
    ['url'],
  ),
  tool('go_back', 'Go back one page in the tab history. Answers with the new snapshot.', {}),
  tool('scroll', 'Scroll the page, or scroll an element into view (for lazy-loaded content).', {
    ...target,
    direction: { type: 'string', enum: ['down', 'up'] },
    pixels: { type: 'integer', description: 'Default: one screen.' },
  }),
  tool(
    'wait',
    `Wait for text or a CSS selector to appear, or for a time (at most ${MAX_WAIT_MS} ms). Answers with the new snapshot.`,
    { text: { type: 'string' }, selector: { type: 'string' }, ms: { type: 'integer' } },
  ),
  tool('extract', "The page's content as markdown (default) or plain text, to read it in full.", {
    format: { type: 'string', enum: ['markdown', 'text'] },
    offset: { type: 'integer', description: 'Character offset, to read past a truncated extract.' },
  }),
  tool(
    'finish',
    'End the task with the answer for the user: what was asked for, or what was done, or why it cannot be done.',
    { answer: { type: 'string' } },
    ['answer'],
  ),
];

/** Runs one tool call. `rawArgs` is the model's JSON arguments text. */
export async function runBrowserTool(name: string, rawArgs: string, ctx: ToolContext): Promise<ToolOutcome> {
  try {
    const args = parseArgs(rawArgs);
    if (name === 'finish') return { kind: 'finish', answer: str(args, 'answer') ?? '' };
    return await runPageTool(name, args, ctx);
  } catch (err) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const message = err instanceof Error ? err.message : String(err);
    return { kind: 'result', ok: false, status: `Error: ${shortError(message)}` };
  }
}

async function runPageTool(name: string, args: Record<string, unknown>, ctx: ToolContext): Promise<ToolOutcome> {
  const page = await ctx.browser.page();
  const timeout = actionTimeout(ctx);
  const after = (act: () => Promise<string>) => acting(page, act, ctx);
  switch (name) {
    case 'snapshot': {
      const text = await aiSnapshot(page, ctx);
      return {
        kind: 'result',
        ok: true,
        status: pageLine(page, await titleOf(page)),
        snapshot: textWindow(text, args, SNAPSHOT_CHARS),
      };
    }
    case 'click':
      return after(async () => {
        await (await find(page, args)).click({ timeout });
        return 'Clicked.';
      });
    case 'type': {
      const value = str(args, 'value');
      if (value === undefined) throw new ToolCallError('`value` is required.');
      return after(async () => {
        const field = await find(page, args);
        await field.fill(value, { timeout });
        if (args.submit !== true) return 'Filled.';
        await field.press('Enter', { timeout });
        return 'Filled and pressed Enter.';
      });
    }
    case 'select': {
      const values = Array.isArray(args.values) ? args.values.map(String) : undefined;
      if (!values?.length) throw new ToolCallError('`values` is required: the option values or labels.');
      return after(async () => {
        const chosen = await (await find(page, args)).selectOption(values, { timeout });
        return `Selected ${JSON.stringify(chosen)}.`;
      });
    }
    case 'press': {
      const key = str(args, 'key');
      if (!key) throw new ToolCallError('`key` is required.');
      return after(async () => {
        if (hasTarget(args)) await (await find(page, args)).press(key, { timeout });
        else await page.keyboard.press(key);
        return `Pressed ${key}.`;
      });
    }
    case 'navigate': {
      const url = URL.parse(str(args, 'url') ?? '');
      if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
        throw new ToolCallError('`url` must be an absolute http(s) URL.');
      }
      return after(async () => {
        const response = await page.goto(url.href, { waitUntil: 'domcontentloaded', timeout });
        return `Navigated${response ? ` (HTTP ${response.status()})` : ''}.`;
      });
    }
    case 'go_back':
      return after(async () => {
        const from = page.url();
        // null also for a back within the document (#fragment): only an unchanged URL is an error.
        const response = await page.goBack({ waitUntil: 'domcontentloaded', timeout });
        if (!response && page.url() === from) throw new ToolCallError('There is no page to go back to.');
        return 'Went back.';
      });
    case 'scroll':
      return { kind: 'result', ok: true, status: await scroll(page, args, timeout) };
    case 'wait':
      await waitFor(page, args, ctx);
      return {
        kind: 'result',
        ok: true,
        status: `Waited.\n${pageLine(page, await titleOf(page))}`,
        snapshot: await snapshotAfter(page, ctx),
      };
    case 'extract':
      return { kind: 'result', ok: true, status: await extract(page, args) };
    default:
      throw new ToolCallError(
        `There is no tool "${name}". Tools: ${BROWSER_TOOLS.map((t) => t.function.name).join(', ')}.`,
      );
  }
}

/**
 * Runs a page-changing action, lets the page settle (requests and DOM quiet, as after a scrape's
 * actions), and answers with the page it leaves the agent on: a tab the action opened, if any.
 */
async function acting(page: Page, act: () => Promise<string>, ctx: ToolContext): Promise<ToolOutcome> {
  const tracker = new NetworkTracker(page);
  let opened: Page | undefined;
  const onPage = (p: Page) => void (opened = p);
  ctx.browser.context.on('page', onPage);
  let status: string;
  try {
    status = await act();
    await settle(page, tracker, ACTION_SETTLE, ctx.deadline).catch(() => undefined); // A closed page settles at once.
  } finally {
    tracker.dispose();
    ctx.browser.context.off('page', onPage);
  }
  const now = opened && !opened.isClosed() ? opened : await ctx.browser.page();
  if (now !== page)
    await now.waitForLoadState('domcontentloaded', { timeout: actionTimeout(ctx) }).catch(() => undefined);
  const snapshot = await snapshotAfter(now, ctx);
  return { kind: 'result', ok: true, status: `${status}\n${pageLine(now, await titleOf(now))}`, snapshot };
}

/** The snapshot after an action, which is done whatever this does: a failure must not read as a failed action. */
async function snapshotAfter(page: Page, ctx: ToolContext): Promise<string> {
  const snapshot = await aiSnapshot(page, ctx).then(
    (text) => textWindow(text, {}, SNAPSHOT_CHARS),
    (err: Error) => `(no snapshot: ${shortError(err.message)}; call snapshot)`,
  );
  ctx.signal.throwIfAborted();
  return snapshot;
}

/** The page with refs, for the model. */
async function aiSnapshot(page: Page, ctx: ToolContext): Promise<string> {
  return page.ariaSnapshot({ mode: 'ai', timeout: actionTimeout(ctx) });
}

/** The page as callers get it at the end: the accessibility tree without refs (they mean nothing outside the loop). */
export async function finalSnapshot(page: Page, timeoutMs: number): Promise<string> {
  return page.ariaSnapshot({ timeout: timeoutMs });
}

/** The title, or none while the page is between documents. */
export async function titleOf(page: Page): Promise<string> {
  return page.title().catch(() => '');
}

export function pageLine(page: Page, title: string): string {
  return `Page: ${page.url()}${title ? ` (title: ${JSON.stringify(title)})` : ''}`;
}

/**
 * The element the arguments name, which must exist now: a missing one is reported at once rather
 * than waited for (a stale ref or a wrong selector would otherwise cost the whole action timeout).
 */
async function find(page: Page, args: Record<string, unknown>): Promise<Locator> {
  const locator = locate(page, args);
  if ((await locator.count()) === 0) {
    const named = ['ref', 'selector', 'role', 'name', 'text']
      .filter((k) => str(args, k))
      .map((k) => `${k} ${JSON.stringify(str(args, k))}`)
      .join(', ');
    throw new ToolCallError(`No element matches ${named}. Take a new snapshot: the page may have changed.`);
  }
  return locator;
}

function locate(page: Page, args: Record<string, unknown>): Locator {
  const ref = str(args, 'ref');
  if (ref) {
    const id = /\b(?:f\d+)?e\d+\b/.exec(ref)?.[0];
    if (!id) throw new ToolCallError(`"${ref}" is not a ref; refs look like e5 (from the latest snapshot).`);
    return page.getByRef(id);
  }
  const selector = str(args, 'selector');
  if (selector) return page.locator(selector);
  const role = str(args, 'role');
  if (role) {
    const name = str(args, 'name');
    return page.getByRole(role as Parameters<Page['getByRole']>[0], name ? { name } : {});
  }
  const text = str(args, 'text');
  if (text) return page.getByText(text);
  throw new ToolCallError('Name the element: ref (from the snapshot), selector, role with name, or text.');
}

function hasTarget(args: Record<string, unknown>): boolean {
  return ['ref', 'selector', 'role', 'text'].some((k) => str(args, k));
}

async function scroll(page: Page, args: Record<string, unknown>, timeout: number): Promise<string> {
  if (hasTarget(args)) {
    await (await find(page, args)).scrollIntoViewIfNeeded({ timeout });
    return 'Scrolled the element into view.';
  }
  const pixels = typeof args.pixels === 'number' && args.pixels > 0 ? args.pixels : undefined;
  const up = args.direction === 'up';
  const dy = (up ? -1 : 1) * (pixels ?? 0);
  // A string: the project compiles without the DOM types. 0 pixels: one screen.
  const [y, height, total] = (await page.evaluate(
    `(() => { window.scrollBy(0, ${dy} || ${up ? -1 : 1} * window.innerHeight); return [window.scrollY, window.innerHeight, document.documentElement.scrollHeight]; })()`,
  )) as [number, number, number];
  return `Scrolled ${up ? 'up' : 'down'}: now at ${Math.round(y)} of ${total} px (screen ${height} px).`;
}

async function waitFor(page: Page, args: Record<string, unknown>, ctx: ToolContext): Promise<void> {
  const timeout = Math.min(MAX_WAIT_MS, actionTimeout(ctx));
  const text = str(args, 'text');
  const selector = str(args, 'selector');
  if (text) return page.getByText(text).first().waitFor({ state: 'visible', timeout });
  if (selector) return page.locator(selector).first().waitFor({ state: 'visible', timeout });
  const ms = typeof args.ms === 'number' && args.ms > 0 ? Math.min(args.ms, timeout) : undefined;
  if (ms === undefined) throw new ToolCallError('Give text, selector or ms.');
  await sleep(ms, undefined, { signal: ctx.signal });
}

async function extract(page: Page, args: Record<string, unknown>): Promise<string> {
  const format = args.format === 'text' ? 'text' : 'markdown';
  const content =
    format === 'text'
      ? await page.locator('body').innerText({ timeout: ACTION_TIMEOUT_MS })
      : htmlToMarkdown(await page.content(), { baseUrl: page.url() });
  return `${pageLine(page, await titleOf(page))}\n${textWindow(content, args, EXTRACT_CHARS)}`;
}

/** `limit` characters from the `offset` argument on, saying what was left out. */
function textWindow(text: string, args: Record<string, unknown>, limit: number): string {
  const offset = typeof args.offset === 'number' && args.offset > 0 ? Math.floor(args.offset) : 0;
  const part = text.slice(offset, offset + limit);
  const rest = text.length - offset - part.length;
  const before = offset > 0 ? `(from character ${offset} of ${text.length})\n` : '';
  const more = rest > 0 ? `\n… (${rest} more characters: call again with offset ${offset + part.length})` : '';
  return before + part + more;
}

function parseArgs(raw: string): Record<string, unknown> {
  if (!raw.trim()) return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ToolCallError('The arguments are not valid JSON.');
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    throw new ToolCallError('The arguments must be a JSON object.');
  }
  return value as Record<string, unknown>;
}

function str(args: Record<string, unknown>, key: string): string | undefined {
  const v = args[key];
  return typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;
}

function actionTimeout(ctx: ToolContext): number {
  return Math.max(1, Math.min(ACTION_TIMEOUT_MS, ctx.deadline - Date.now()));
}

/** Playwright's first lines (the call log after them is noise to a model). */
function shortError(message: string): string {
  const lines = message.split('\n').filter((l) => l.trim() && !/^={3,}/.test(l.trim()));
  const text = lines.slice(0, 4).join('\n');
  return text.length > ERROR_CHARS ? `${text.slice(0, ERROR_CHARS)}…` : text;
}
