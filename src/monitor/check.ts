// The 'monitor-check' job: one check of a monitor. Each target goes through the normal pipeline,
// always fresh (maxAge 0: never served from the page cache): scrape targets page by page as parts of
// the check (charged to its job), crawl targets as a crawl of their own (targetResults.crawlId),
// search targets as queries on the search backends (search-target.ts; charged to the check's job as
// POST /v2/search charges results). Every page (a search result: by URL) is compared with the same
// target's previous content: same, new, changed, removed or error; a changed page gets its diff and,
// when judging is on, a judgment; new and changed search results are judged for the goal, and only
// those it finds relevant are notified. Contents are stored once per distinct hash; the check's row
// gets the summary, billing and notification status.
import { randomUUID } from 'node:crypto';
import { chargeCredits, ensureCredits } from '../billing/credits.ts';
import type { Config } from '../config.ts';
import { crawlRequest } from '../contract/crawl.ts';
import type { MonitorPageStatus } from '../contract/monitor.ts';
import { type ScrapeDocument, scrapeRequest } from '../contract/scrape.ts';
import type { Crawler } from '../crawl/crawler.ts';
import type { Log } from '../jobs/log.ts';
import type { Job } from '../jobs/job-runner.ts';
import type { LlmProvider } from '../llm/provider.ts';
import type { Scraper } from '../scrape/scrape.ts';
import type { Db } from '../store/db-types.ts';
import { updateJob } from '../store/jobs.ts';
import {
  type CheckPageRow,
  type CheckSummary,
  type MonitorPageRow,
  type MonitorRow,
  type StoredTarget,
  checkPageId,
  getCheckById,
  getContents,
  getMonitorById,
  insertCheckPages,
  monitorPages,
  putContents,
  setMonitorChecked,
  updateCheck,
  upsertMonitorPages,
} from '../store/monitors.ts';
import type { Caller } from '../store/teams.ts';
import { classify, contentHash, jsonDiff, markdownDiff, normalizeForCompare } from './compare.ts';
import { judgeChange, judgeSearchHits } from './judge.ts';
import type { UsageOwner } from '../llm/provider.ts';
import { type CheckEvent, notifyCheck } from './notify.ts';
import { emptySummary } from './scheduler.ts';
import {
  type MonitorSearch,
  type TargetHit,
  hitContent,
  hitDiff,
  parseHitContent,
  runSearchTarget,
} from './search-target.ts';
import { type CompareMode, checkFormats } from './targets.ts';
import type { JobQueue } from '../jobs/queue.ts';

/** Pages of one scrape target fetched at once. */
const SCRAPE_CONCURRENCY = 8;
/** How often a crawl target's crawl is looked at while it runs. */
const CRAWL_POLL_MS = 250;

export interface MonitorCheckDeps {
  db: Db;
  queue: JobQueue;
  scraper: Scraper;
  crawler: Crawler;
  llm?: LlmProvider;
  /** The web search of search targets; without it they fail (the check says why). */
  search?: MonitorSearch;
  config: Config;
  log: Log;
}

/** What one page of a target gave this time. */
interface Fetched {
  url: string;
  statusCode: number | null;
  scrapeId: string | null;
  error: string | null;
  markdown?: string;
  json?: unknown;
  /** A search target's result (its url is the canonical URL). */
  hit?: TargetHit;
}

/** What comparing a target's pages gave: the check's page rows (with their events), new contents, pages' new state. */
interface Compared {
  pages: { row: CheckPageRow; event?: CheckEvent }[];
  contents: { hash: string; content: string }[];
  pageUpdates: MonitorPageRow[];
  /** Search targets: the judging of their new and changed results. */
  searchJudge?: { judged: number; warning?: string };
}

/** Runs `fn` over `items`, `n` at a time, results in order. */
async function mapLimit<T, R>(items: T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

/** JSON text with keys sorted: equal values, equal text. */
function stableJson(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) =>
    val && typeof val === 'object' && !Array.isArray(val)
      ? Object.fromEntries(Object.entries(val as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)))
      : val,
  );
}

/** The comparable content of a page (what is hashed and stored), by the target's mode. */
function comparable(mode: CompareMode, f: Fetched): string {
  if (mode === 'search') return hitContent(f.hit ?? { title: '', description: '' });
  const markdown = normalizeForCompare(f.markdown ?? '');
  if (mode === 'markdown') return markdown;
  if (mode === 'json') return stableJson(f.json ?? null);
  return stableJson({ markdown, json: f.json ?? null });
}

function fromDocument(url: string, doc: ScrapeDocument): Fetched {
  const statusCode = doc.metadata.statusCode ?? null;
  const failed = statusCode !== null && statusCode >= 400;
  return {
    url,
    statusCode,
    scrapeId: doc.metadata.scrapeId ?? null,
    error: failed ? `the page answered HTTP ${statusCode}` : null,
    markdown: doc.markdown,
    json: (doc as { json?: unknown }).json,
  };
}

export class MonitorChecks {
  readonly #d: MonitorCheckDeps;

  constructor(deps: MonitorCheckDeps) {
    this.#d = deps;
  }

  /** The 'monitor-check' handler (idempotent: a finished or vanished check is left alone). */
  async run(job: Job<{ checkId: string }>): Promise<void> {
    const { db, log } = this.#d;
    const check = await getCheckById(db, job.data.checkId);
    if (!check || (check.status !== 'queued' && check.status !== 'running')) return;
    const monitor = await getMonitorById(db, check.monitorId);
    if (!monitor) return;
    const startedAt = check.startedAt ?? new Date();
    await updateCheck(db, check.id, {
      status: 'running',
      startedAt,
      billingStatus: 'reserved',
      reservedCredits: check.estimatedCredits,
    });
    await updateJob(db, check.id, { status: 'active' });
    const caller: Caller = { teamId: monitor.teamId, teamName: '', keyId: monitor.apiKeyId ?? '' };
    try {
      await this.#check(job, monitor, check.id, caller);
    } catch (err) {
      if (job.signal.aborted) throw err;
      const message = err instanceof Error ? err.message : String(err);
      log.warn({ err, checkId: check.id }, 'monitor check failed');
      // The monitor may have been deleted meanwhile (its checks with it).
      if (!(await getMonitorById(db, monitor.id))) return;
      await updateCheck(db, check.id, {
        status: 'failed',
        finishedAt: new Date(),
        error: message,
        billingStatus: 'released',
        summary: emptySummary(),
      });
      await updateJob(db, check.id, { status: 'failed', error: message });
      await setMonitorChecked(db, monitor.id, check.id, emptySummary(), startedAt);
    }
  }

  async #check(job: Job<{ checkId: string }>, monitor: MonitorRow, checkId: string, caller: Caller): Promise<void> {
    const { db } = this.#d;
    const known = await monitorPages(db, monitor.id);
    const summary: CheckSummary = emptySummary();
    const targetResults: Record<string, unknown>[] = [];
    const events: CheckEvent[] = [];
    const rows: CheckPageRow[] = [];
    const contents: { hash: string; content: string }[] = [];
    const pageUpdates: MonitorPageRow[] = [];
    const targetErrors: string[] = [];
    let credits = 0;
    // A crawl target's pages are charged to its crawl's job as they run: counted in the check's credits, not charged again.
    let chargedElsewhere = 0;
    let seq = 0;
    for (const target of monitor.targets) {
      const judgeBy = {
        usage: { teamId: monitor.teamId, apiKeyId: monitor.apiKeyId ?? null, jobId: checkId },
        signal: job.signal,
      };
      let compared: Compared;
      if (target.type === 'search') {
        const r = await this.#searchTarget(job, target, caller);
        credits += r.credits;
        if (r.error) targetErrors.push(`target ${target.id}: ${r.error}`);
        // A failed query may have found results that are missing now: nothing is removed then.
        compared = await this.#compare(monitor, target, 'search', r.pages, known, judgeBy, r.complete);
        targetResults.push({
          ...r.result,
          ...searchSummary(compared.pages, compared.searchJudge, monitor.judgeEnabled),
        });
      } else {
        const { formats, mode } = checkFormats((target.scrapeOptions as { formats?: never } | undefined)?.formats);
        let fetched: Fetched[];
        if (target.type === 'scrape') {
          const r = await this.#scrapeTarget(monitor, target, formats, caller, checkId);
          fetched = r.pages;
          credits += r.credits;
          targetResults.push({ targetId: target.id, type: 'scrape', expectedJobs: [] });
        } else {
          const r = await this.#crawlTarget(job, monitor, target, formats, caller);
          fetched = r.pages;
          credits += r.credits;
          chargedElsewhere += r.credits;
          if (r.error) targetErrors.push(`target ${target.id}: ${r.error}`);
          targetResults.push({
            targetId: target.id,
            type: 'crawl',
            crawlId: r.crawlId,
            ...(r.error ? { error: r.error } : {}),
          });
        }
        compared = await this.#compare(monitor, target, mode, fetched, known, judgeBy, true);
      }
      contents.push(...compared.contents);
      pageUpdates.push(...compared.pageUpdates);
      for (const c of compared.pages) {
        c.row.seq = seq++;
        c.row.id = checkPageId(checkId, c.row.seq);
        rows.push(c.row);
        summary[c.row.status as MonitorPageStatus]++;
        summary.totalPages++;
        if (c.event) events.push(c.event);
      }
    }
    const failures = summary.error + targetErrors.length;
    const ok = summary.totalPages - summary.error;
    const status = failures === 0 ? 'completed' : ok > 0 ? 'partial' : 'failed';
    const error =
      status === 'failed' ? (targetErrors[0] ?? rows.find((r) => r.error)?.error ?? 'every page failed') : null;
    // Everything the check learnt is written at once: a check cut short (process stopped) leaves the
    // monitor's pages as they were, and its retry compares with the same previous contents.
    await db.transaction(async (tx) => {
      await putContents(tx, monitor.id, contents);
      await upsertMonitorPages(tx, monitor.id, pageUpdates);
      await insertCheckPages(tx, checkId, rows);
      if (credits - chargedElsewhere > 0) await chargeCredits(tx, caller, checkId, credits - chargedElsewhere);
      await updateCheck(tx, checkId, {
        status,
        finishedAt: new Date(),
        summary,
        targetResults,
        actualCredits: credits,
        billingStatus: 'confirmed',
        error,
      });
      await updateJob(tx, checkId, status === 'failed' ? { status: 'failed', error } : { status: 'completed' });
      await setMonitorChecked(tx, monitor.id, checkId, summary, new Date());
    });
    const notificationStatus = await notifyCheck(
      { db, queue: this.#d.queue, log: this.#d.log, config: this.#d.config },
      monitor,
      { id: checkId, status, summary },
      events,
    );
    await updateCheck(db, checkId, { notificationStatus });
  }

  /** A scrape target's URLs, fresh, as parts of the check (no job or stored document of their own). */
  async #scrapeTarget(
    monitor: MonitorRow,
    target: StoredTarget,
    formats: unknown[],
    caller: Caller,
    checkId: string,
  ): Promise<{ pages: Fetched[]; credits: number }> {
    const { db, scraper } = this.#d;
    let credits = 0;
    const options = (target.scrapeOptions ?? {}) as Record<string, unknown>;
    const pages = await mapLimit(target.urls as string[], SCRAPE_CONCURRENCY, async (url): Promise<Fetched> => {
      try {
        await ensureCredits(db, caller.teamId, 1);
        const req = scrapeRequest.parse({ ...options, url, formats, maxAge: 0, minAge: undefined, lockdown: false });
        const { document, credits: c } = await scraper.scrapeForParent(
          caller,
          req,
          { publicUrl: monitor.publicUrl },
          checkId,
        );
        credits += c;
        return fromDocument(url, document);
      } catch (err) {
        const code = (err as { code?: string }).code;
        const message = err instanceof Error ? err.message : String(err);
        return { url, statusCode: null, scrapeId: null, error: code ? `${code}: ${message}` : message };
      }
    });
    return { pages, credits };
  }

  /** A crawl target: a crawl through the crawler (fresh pages), waited for, then read. */
  async #crawlTarget(
    job: Job<{ checkId: string }>,
    monitor: MonitorRow,
    target: StoredTarget,
    formats: unknown[],
    caller: Caller,
  ): Promise<{ pages: Fetched[]; credits: number; crawlId?: string; error?: string }> {
    const { crawler } = this.#d;
    const req = crawlRequest.parse({
      ...((target.crawlOptions ?? {}) as object),
      url: target.url,
      scrapeOptions: {
        ...((target.scrapeOptions ?? {}) as object),
        formats,
        maxAge: 0,
        minAge: undefined,
        lockdown: false,
      },
    });
    let crawlId: string;
    try {
      crawlId = (await crawler.start(caller, req, monitor.publicUrl)).id;
    } catch (err) {
      return { pages: [], credits: 0, error: err instanceof Error ? err.message : String(err) };
    }
    let row = await crawler.get(caller.teamId, crawlId);
    while (row.status === 'scraping') {
      if (job.signal.aborted) throw new Error('monitor check aborted');
      await new Promise((r) => setTimeout(r, CRAWL_POLL_MS));
      row = await crawler.get(caller.teamId, crawlId);
    }
    const pages: Fetched[] = [];
    for (let skip = 0; ;) {
      const { data } = await crawler.documents(crawlId, skip, 100);
      for (const doc of data) pages.push(fromDocument(doc.metadata.sourceURL ?? doc.metadata.url ?? '', doc));
      skip += data.length;
      if (data.length === 0) break;
    }
    const { errors } = await crawler.errors(caller.teamId, crawlId);
    const seen = new Set(pages.map((p) => p.url));
    for (const e of errors)
      if (!seen.has(e.url))
        pages.push({ url: e.url, statusCode: null, scrapeId: null, error: e.code ? `${e.code}: ${e.error}` : e.error });
    return { pages, credits: row.creditsUsed, crawlId };
  }

  /**
   * A search target: its queries on the process's web search, merged (search-target.ts), each result a
   * page of the check identified by its canonical URL. `complete` is false when a query failed (or the
   * search could not run): results missing this time are then not taken as removed.
   */
  async #searchTarget(
    job: Job<{ checkId: string }>,
    target: StoredTarget,
    caller: Caller,
  ): Promise<{
    pages: Fetched[];
    credits: number;
    complete: boolean;
    error?: string;
    result: Record<string, unknown>;
  }> {
    const { db, search } = this.#d;
    const result: Record<string, unknown> = { targetId: target.id, type: 'search' };
    const failed = (error: string) => ({
      pages: [],
      credits: 0,
      complete: false,
      error,
      result: { ...result, searchCompleted: false, resultCount: 0, searchCredits: 0, error },
    });
    if (!search) return failed('search is not available in this process');
    try {
      await ensureCredits(db, caller.teamId, search.credits(1));
    } catch (err) {
      return failed(`${(err as { code?: string }).code ?? 'INSUFFICIENT_CREDITS'}: ${(err as Error).message}`);
    }
    const run = await runSearchTarget(search, target, caller.teamId, job.signal);
    const queries = run.queries.length;
    const error =
      run.failed === 0
        ? undefined
        : run.failed === queries
          ? run.queries[0].error!
          : `${run.failed} of ${queries} queries failed: ${run.queries.find((q) => q.error)!.error!}`;
    const credits = run.failed === queries ? 0 : search.credits(run.hits.length);
    return {
      pages: run.hits.map((hit) => ({ url: hit.url, statusCode: null, scrapeId: null, error: null, hit })),
      credits,
      complete: run.failed === 0,
      ...(error ? { error } : {}),
      result: {
        ...result,
        searchCompleted: run.failed === 0,
        resultCount: run.hits.length,
        searchCredits: credits,
        backend: search.name,
        queries: run.queries,
        ...(error ? { error } : {}),
      },
    };
  }

  /** Compares a target's pages with its previous ones: the check's page rows, new contents and the pages' new state. */
  async #compare(
    monitor: MonitorRow,
    target: StoredTarget,
    mode: CompareMode,
    fetched: Fetched[],
    known: MonitorPageRow[],
    judgeBy: { usage: UsageOwner; signal?: AbortSignal },
    removals: boolean,
  ): Promise<Compared> {
    const { db } = this.#d;
    const before = new Map(known.filter((k) => k.targetId === target.id).map((k) => [k.url, k]));
    const contents = new Map<string, string>();
    const out: { row: CheckPageRow; url: string; prevHash?: string; content?: string; hit?: TargetHit }[] = [];
    const pageUpdates: MonitorPageRow[] = [];
    const seen = new Set<string>();
    for (const f of fetched) {
      if (seen.has(f.url)) continue;
      seen.add(f.url);
      const known = before.get(f.url);
      // A page removed before counts as new when it comes back.
      const prev = known?.removed ? { ...known, hash: null } : known;
      const content = f.error ? undefined : comparable(mode, f);
      const hash = content === undefined ? undefined : contentHash(content);
      const status = classify(prev?.hash ?? undefined, hash, f.error ?? undefined);
      const pageId = prev?.id ?? randomUUID();
      if (hash !== undefined && content !== undefined && status !== 'same') contents.set(hash, content);
      // An error leaves the page's last content as it was (the next good fetch compares with it); an
      // unchanged page is not written at all (storage grows with change): its scrape id stays the
      // one whose content later checks compare with.
      if ((hash !== undefined && status !== 'same') || !prev || known?.removed)
        pageUpdates.push({
          id: pageId,
          targetId: target.id,
          url: f.url,
          hash: hash ?? prev?.hash ?? null,
          scrapeId: f.scrapeId,
          removed: false,
        });
      out.push({
        row: {
          id: '',
          seq: 0,
          pageId,
          status,
          // An unchanged page of a markdown monitor keeps no hash (its content is its last change's);
          // JSON monitors keep it for snapshot.json.
          hash: status === 'same' && mode === 'markdown' ? null : (hash ?? null),
          prevHash: status === 'changed' ? (prev?.hash ?? null) : null,
          scrapeId: f.scrapeId,
          prevScrapeId: prev?.scrapeId ?? null,
          statusCode: f.statusCode,
          error: f.error,
          judgment: null,
          diff: null,
        },
        url: f.url,
        prevHash: prev?.hash ?? undefined,
        content,
        hit: f.hit,
      });
    }
    // Pages the target yielded before and not now (and not already removed).
    for (const [url, prev] of before) {
      if (!removals || seen.has(url) || prev.removed) continue;
      pageUpdates.push({ ...prev, hash: null, removed: true });
      out.push({
        row: {
          id: '',
          seq: 0,
          pageId: prev.id,
          status: 'removed',
          hash: null,
          prevHash: prev.hash,
          scrapeId: null,
          prevScrapeId: prev.scrapeId,
          statusCode: null,
          error: null,
          judgment: null,
          diff: null,
        },
        url,
      });
    }
    // Diffs (and judgments) of changed pages, against the stored previous contents.
    const changed = out.filter((o) => o.row.status === 'changed');
    const previous = await getContents(
      db,
      monitor.id,
      changed.map((o) => o.prevHash!),
    );
    if (mode === 'search') return this.#judgeHits(monitor, target, out, previous, judgeBy, contents, pageUpdates);
    for (const o of changed) {
      const prevContent = previous.get(o.prevHash!);
      if (prevContent === undefined || o.content === undefined) continue;
      const url = o.url;
      o.row.diff = diffOf(mode, prevContent, o.content, url);
      if (monitor.judgeEnabled) {
        const text = o.row.diff.text ?? JSON.stringify(o.row.diff.json, null, 2);
        const { judgment, warning } = await judgeChange(
          {
            goal: monitor.goal ?? undefined,
            url,
            previous: prevContent,
            current: o.content,
            diffText: text,
            ...judgeBy,
          },
          this.#d.llm,
        );
        o.row.judgment = { ...judgment, ...(warning ? { warning } : {}) };
      }
    }
    return {
      pages: out.map(({ row, url }) =>
        row.status === 'same' || row.status === 'error' ? { row } : { row, event: { row, url, targetId: target.id } },
      ),
      contents: [...contents].map(([hash, content]) => ({ hash, content })),
      pageUpdates,
    };
  }

  /**
   * A search target's results once classified: changed ones get their diff; with judging on, new and
   * changed ones are judged for the goal together (one LLM request). Only those judged relevant (all of
   * them when judging is off) are notified; a result that left the results is recorded, not notified.
   */
  async #judgeHits(
    monitor: MonitorRow,
    target: StoredTarget,
    out: { row: CheckPageRow; url: string; prevHash?: string; content?: string; hit?: TargetHit }[],
    previous: Map<string, string>,
    judgeBy: { usage: UsageOwner; signal?: AbortSignal },
    contents: Map<string, string>,
    pageUpdates: MonitorPageRow[],
  ): Promise<Compared> {
    const fresh = out.filter((o) => (o.row.status === 'new' || o.row.status === 'changed') && o.content !== undefined);
    for (const o of fresh) {
      const prevContent = o.row.status === 'changed' ? previous.get(o.prevHash!) : undefined;
      if (prevContent !== undefined) o.row.diff = hitDiff(prevContent, o.content!, o.url);
    }
    let searchJudge: Compared['searchJudge'];
    if (monitor.judgeEnabled && fresh.length) {
      const r = await judgeSearchHits(
        {
          goal: monitor.goal ?? undefined,
          hits: fresh.map((o) => {
            const prevContent = o.row.status === 'changed' ? previous.get(o.prevHash!) : undefined;
            return {
              url: o.url,
              status: o.row.status as 'new' | 'changed',
              ...parseHitContent(o.content!),
              ...(prevContent !== undefined ? { previous: parseHitContent(prevContent) } : {}),
              queries: o.hit?.queries ?? [],
            };
          }),
          ...judgeBy,
        },
        this.#d.llm,
      );
      fresh.forEach((o, i) => {
        o.row.judgment = { ...r.judgments[i], ...(r.warning ? { warning: r.warning } : {}) };
      });
      searchJudge = { judged: fresh.length, ...(r.warning ? { warning: r.warning } : {}) };
    }
    return {
      pages: out.map(({ row, url, content }) => {
        const relevant = (row.judgment as { meaningful?: boolean } | null)?.meaningful !== false;
        if ((row.status !== 'new' && row.status !== 'changed') || !relevant) return { row };
        const metadata = content === undefined ? undefined : parseHitContent(content);
        return { row, event: { row, url, targetId: target.id, ...(metadata ? { metadata } : {}) } };
      }),
      contents: [...contents].map(([hash, content]) => ({ hash, content })),
      pageUpdates,
      ...(searchJudge ? { searchJudge } : {}),
    };
  }
}

/**
 * A search target's part of targetResults beyond the search itself (the SDK's MonitorSearchTargetResult):
 * matches (new or changed results judged relevant, or all of them without judging), resultsJudged,
 * judgeDegraded (the deterministic judge decided: no LLM, or it failed) and a one-line summary.
 */
function searchSummary(
  pages: Compared['pages'],
  judge: Compared['searchJudge'],
  judging: boolean,
): Record<string, unknown> {
  const count = (status: string) => pages.filter((p) => p.row.status === status).length;
  const matches = pages.filter((p) => p.event).length;
  const parts = [`${count('new')} new`, `${count('changed')} changed`, `${count('removed')} removed`];
  return {
    matches,
    resultsJudged: judge?.judged ?? 0,
    judgeDegraded: Boolean(judge?.warning),
    degradedReason: judge?.warning ?? null,
    summary:
      `${parts.join(', ')} of ${pages.length - count('removed')} results; ` +
      `${matches} ${judging ? 'relevant to the goal' : 'notified (judging is off)'}`,
  };
}

/** A changed page's diff, by mode: git-style text and its parsed form; per-field JSON; or both. */
function diffOf(mode: CompareMode, previous: string, current: string, url: string): { text?: string; json?: unknown } {
  if (mode === 'markdown') return markdownDiff(previous, current, url);
  const prev = JSON.parse(previous) as { markdown?: string; json?: unknown } | null;
  const curr = JSON.parse(current) as { markdown?: string; json?: unknown } | null;
  if (mode === 'json') return { json: jsonDiff(prev, curr) };
  return {
    text: markdownDiff(prev?.markdown ?? '', curr?.markdown ?? '', url).text,
    json: jsonDiff(prev?.json, curr?.json),
  };
}
