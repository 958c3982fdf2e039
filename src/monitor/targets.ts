// What a monitor's targets, webhook and notification are once accepted: ids assigned, a goal required
// beside search targets (unless judging is off, as Firecrawl's), the formats a check scrapes with
// (markdown, JSON or both), and the credits a check and a month of checks are expected to cost.
import { randomUUID } from 'node:crypto';
import type { MonitorCreateRequest, MonitorTargetInput } from '../contract/monitor.ts';
import { MONITOR_SEARCH_DEFAULT_MAX_RESULTS, monitorWebhookEvents } from '../contract/monitor.ts';
import type { ScrapeFormatInput } from '../contract/scrape.ts';
import { BadRequestError } from '../errors.ts';
import { assertUrlAllowed, refuseBlockedTarget, type SsrfOptions } from '../net/ssrf.ts';
import type { StoredTarget, StoredWebhook } from '../store/monitors.ts';
import { nextRunAt } from './schedule.ts';

function refuse(path: string, message: string): never {
  throw new BadRequestError(`Invalid request: body.${path}: ${message}`, [{ path: `body.${path}`, message }]);
}

/** The targets as stored: ids kept or assigned (unique); a blocked address among their URLs is a 403. */
export function storedTargets(targets: MonitorTargetInput[], policy: SsrfOptions): StoredTarget[] {
  const ids = new Set<string>();
  return targets.map((t, i) => {
    if (t.type === 'scrape') t.urls.forEach((u, j) => refuseBlockedTarget(u, `targets.${i}.urls.${j}`, policy));
    if (t.type === 'crawl') refuseBlockedTarget(t.url, `targets.${i}.url`, policy);
    const id = t.id ?? randomUUID();
    if (ids.has(id)) refuse(`targets.${i}.id`, `duplicate target id "${id}"`);
    ids.add(id);
    return { ...t, id } as StoredTarget;
  });
}

/**
 * Search targets judge their results against the goal: a monitor with one needs a goal unless judging is
 * turned off (Firecrawl refuses it too): `judgeOff` when the request says judgeEnabled: false, or (an
 * update) leaves judging off as it was without touching the goal.
 */
export function requireGoalForSearch(targets: StoredTarget[], goal: string | null, judgeOff: boolean): void {
  if (judgeOff || goal?.trim() || !targets.some((t) => t.type === 'search')) return;
  refuse('goal', 'a monitor with search targets needs a goal (what results matter), unless judgeEnabled is false');
}

export function storedWebhook(
  w: MonitorCreateRequest['webhook'] | null | undefined,
  policy: SsrfOptions,
): StoredWebhook | null {
  if (!w) return null;
  // As a crawl's or an agent's webhook: a 400 naming the field (delivery is guarded again at connect time).
  try {
    assertUrlAllowed(w.url, policy);
  } catch (err) {
    refuse('webhook.url', `must be an http(s) URL of a public host: ${(err as Error).message}`);
  }
  return {
    url: w.url,
    headers: w.headers ?? {},
    metadata: w.metadata ?? {},
    events: w.events ? [...new Set(w.events)] : [...monitorWebhookEvents],
  };
}

/** How a check compares a page: its markdown, its JSON extraction, or both; a search result: its title and description. */
export type CompareMode = 'markdown' | 'json' | 'mixed' | 'search';

/**
 * The formats a target's pages are scraped with and how they are compared: JSON when the target asks
 * for a json format or changeTracking with mode json (its schema and prompt), markdown otherwise,
 * both when it asks for both. Other formats are not scraped: a check keeps only what it compares.
 */
export function checkFormats(formats: ScrapeFormatInput[] | undefined): {
  formats: ScrapeFormatInput[];
  mode: CompareMode;
} {
  let json: ScrapeFormatInput | undefined;
  let markdown = false;
  for (const f of formats ?? []) {
    if (f === 'markdown' || (typeof f === 'object' && f.type === 'markdown')) markdown = true;
    else if (f === 'json') json = 'json';
    else if (typeof f === 'object' && f.type === 'json') json = f;
    else if (typeof f === 'object' && f.type === 'changeTracking') {
      const modes = f.modes ?? ['git-diff'];
      if (modes.includes('json')) json = { type: 'json', schema: f.schema, prompt: f.prompt };
      if (modes.includes('git-diff')) markdown = true;
    }
  }
  if (!json) return { formats: ['markdown'], mode: 'markdown' };
  return markdown ? { formats: ['markdown', json], mode: 'mixed' } : { formats: [json], mode: 'json' };
}

/** How a target's pages are compared: search results by title and description, pages by their formats. */
export function compareModeOf(target: StoredTarget): CompareMode {
  if (target.type === 'search') return 'search';
  return checkFormats((target.scrapeOptions as { formats?: never } | undefined)?.formats).mode;
}

/** Search credits of a number of results, as POST /v2/search charges them (src/search/search.ts: 2 per started 10). */
const searchResultCredits = (results: number) => Math.ceil(results / 10) * 2;

/**
 * Credits one check is expected to cost: a credit per URL of scrape targets and per page of a crawl's limit
 * (at most 100), a search target's maxResults (default 10) as search charges results.
 */
export function creditsPerCheck(targets: StoredTarget[]): number {
  let n = 0;
  for (const t of targets) {
    if (t.type === 'scrape') n += (t.urls as string[]).length;
    else if (t.type === 'search')
      n += searchResultCredits((t.maxResults as number | undefined) ?? MONITOR_SEARCH_DEFAULT_MAX_RESULTS);
    else n += Math.min(((t.crawlOptions as { limit?: number } | undefined)?.limit ?? 100) as number, 100);
  }
  return n;
}

/** Checks a month (30 days) of this schedule runs, from the average gap of its next runs. */
export function checksPerMonth(cron: string, timezone: string, from = new Date()): number {
  let at = from;
  const first = nextRunAt(cron, timezone, at);
  at = first;
  for (let i = 0; i < 20; i++) at = nextRunAt(cron, timezone, at);
  const gap = (at.getTime() - first.getTime()) / 20;
  return gap > 0 ? Math.round((30 * 24 * 3600_000) / gap) : 0;
}
