// Monitors (POST/GET/PATCH/DELETE /v2/monitor, run, checks): the service the routes call. Rows become
// the wire shapes of src/contract/monitor.ts here; checks start in scheduler.ts and run in check.ts.
import { randomUUID } from 'node:crypto';
import type {
  Monitor,
  MonitorCheck,
  MonitorCheckDetail,
  MonitorCheckPage,
  MonitorCreateRequest,
  MonitorUpdateRequest,
} from '../contract/monitor.ts';
import { MONITOR_DEFAULT_RETENTION_DAYS } from '../contract/monitor.ts';
import { NotFoundError } from '../errors.ts';
import type { SsrfOptions } from '../net/ssrf.ts';
import type { Db } from '../store/db-types.ts';
import {
  type CheckRow,
  type MonitorFields,
  type MonitorRow,
  deleteMonitor,
  getCheck,
  getContents,
  getMonitor,
  insertMonitor,
  listCheckPages,
  listChecks,
  listMonitors,
  updateMonitorFields,
} from '../store/monitors.ts';
import type { Caller } from '../store/teams.ts';
import { deliveriesOf } from './notify.ts';
import { nextRunAt, normalizeSchedule } from './schedule.ts';
import type { MonitorScheduler } from './scheduler.ts';
import { parseHitContent } from './search-target.ts';
import {
  checksPerMonth,
  compareModeOf,
  creditsPerCheck,
  requireGoalForSearch,
  storedTargets,
  storedWebhook,
} from './targets.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const iso = (d: Date | null) => (d ? new Date(d).toISOString() : null);

function monitorView(m: MonitorRow): Monitor {
  return {
    id: m.id,
    name: m.name,
    status: m.status,
    schedule: { cron: m.cron, timezone: m.timezone, ...(m.scheduleText ? { text: m.scheduleText } : {}) },
    nextRunAt: m.status === 'active' ? iso(m.nextRunAt) : null,
    lastRunAt: iso(m.lastRunAt),
    currentCheckId: m.currentCheckId,
    targets: m.targets,
    webhook: m.webhook as Record<string, unknown> | null,
    notification: m.notification,
    retentionDays: m.retentionDays,
    estimatedCreditsPerMonth: m.estimatedCreditsPerMonth,
    lastCheckSummary: m.lastCheckSummary,
    goal: m.goal,
    judgeEnabled: m.judgeEnabled,
    createdAt: iso(m.createdAt)!,
    updatedAt: iso(m.updatedAt)!,
  };
}

function checkView(c: CheckRow, deliveries?: { delivered: number; failedAttempts: number }): MonitorCheck {
  const notificationStatus = { ...(c.notificationStatus ?? {}) };
  if (deliveries && notificationStatus.webhook)
    notificationStatus.webhook = { ...(notificationStatus.webhook as object), ...deliveries };
  return {
    id: c.id,
    monitorId: c.monitorId,
    status: c.status as MonitorCheck['status'],
    trigger: c.trigger,
    scheduledFor: iso(c.scheduledFor),
    startedAt: iso(c.startedAt),
    finishedAt: iso(c.finishedAt),
    estimatedCredits: c.estimatedCredits,
    reservedCredits: c.reservedCredits,
    actualCredits: c.actualCredits,
    billingStatus: c.billingStatus,
    summary: c.summary ?? { totalPages: 0, same: 0, changed: 0, new: 0, removed: 0, error: 0 },
    targetResults: c.targetResults ?? [],
    notificationStatus,
    error: c.error,
    createdAt: iso(c.createdAt)!,
    updatedAt: iso(c.updatedAt)!,
  };
}

export class Monitors {
  readonly #db: Db;
  readonly #scheduler: MonitorScheduler;

  /** The SSRF policy targets and webhooks are checked against when a monitor is created or changed. */
  readonly #policy: SsrfOptions;

  constructor(d: { db: Db; scheduler: MonitorScheduler; allowPrivateNetwork: boolean }) {
    this.#db = d.db;
    this.#scheduler = d.scheduler;
    this.#policy = { allowPrivateNetwork: d.allowPrivateNetwork };
  }

  async create(caller: Caller, req: MonitorCreateRequest, publicUrl: string): Promise<Monitor> {
    const schedule = normalizeSchedule(req.schedule);
    const targets = storedTargets(req.targets, this.#policy);
    const judgeEnabled = req.judgeEnabled ?? Boolean(req.goal);
    requireGoalForSearch(targets, req.goal ?? null, req.judgeEnabled === false);
    const fields: MonitorFields = {
      name: req.name,
      status: 'active',
      cron: schedule.cron,
      timezone: schedule.timezone,
      scheduleText: schedule.text ?? null,
      targets,
      webhook: storedWebhook(req.webhook, this.#policy),
      notification: req.notification ?? null,
      retentionDays: req.retentionDays ?? MONITOR_DEFAULT_RETENTION_DAYS,
      goal: req.goal ?? null,
      judgeEnabled,
      estimatedCreditsPerMonth: creditsPerCheck(targets) * checksPerMonth(schedule.cron, schedule.timezone),
      nextRunAt: nextRunAt(schedule.cron, schedule.timezone, new Date()),
    };
    const row = await insertMonitor(this.#db, {
      ...fields,
      id: randomUUID(),
      teamId: caller.teamId,
      apiKeyId: caller.keyId,
      publicUrl,
    });
    return monitorView(row);
  }

  async list(caller: Caller, q: { limit: number; offset: number }): Promise<Monitor[]> {
    return (await listMonitors(this.#db, caller.teamId, q.limit, q.offset)).map(monitorView);
  }

  async get(caller: Caller, id: string): Promise<Monitor> {
    return monitorView(await this.#row(caller, id));
  }

  async update(caller: Caller, id: string, req: MonitorUpdateRequest): Promise<Monitor> {
    const m = await this.#row(caller, id);
    const schedule = req.schedule ? normalizeSchedule(req.schedule) : undefined;
    const targets = req.targets ? storedTargets(req.targets, this.#policy) : m.targets;
    const cron = schedule?.cron ?? m.cron;
    const timezone = schedule?.timezone ?? m.timezone;
    const status = req.status ?? m.status;
    // A new schedule, or a resume, counts from now; otherwise the next run stays.
    const reschedule = schedule !== undefined || (status === 'active' && m.status === 'paused') || !m.nextRunAt;
    const goal = req.goal === undefined ? m.goal : req.goal;
    const judgeEnabled = req.judgeEnabled ?? (req.goal !== undefined ? Boolean(goal) : m.judgeEnabled);
    const judgeOff =
      req.judgeEnabled === false || (req.judgeEnabled === undefined && req.goal === undefined && !m.judgeEnabled);
    requireGoalForSearch(targets, goal, judgeOff);
    const row = await updateMonitorFields(this.#db, m.id, {
      name: req.name ?? m.name,
      status,
      cron,
      timezone,
      scheduleText: schedule ? (schedule.text ?? null) : m.scheduleText,
      targets,
      webhook: req.webhook === undefined ? m.webhook : storedWebhook(req.webhook, this.#policy),
      notification: req.notification === undefined ? m.notification : req.notification,
      retentionDays: req.retentionDays ?? m.retentionDays,
      goal,
      judgeEnabled,
      estimatedCreditsPerMonth: creditsPerCheck(targets) * checksPerMonth(cron, timezone),
      nextRunAt: reschedule ? nextRunAt(cron, timezone, new Date()) : m.nextRunAt,
    });
    return monitorView(row);
  }

  /** Deletes the monitor with its checks, pages and contents: no tick sees it again. */
  async delete(caller: Caller, id: string): Promise<void> {
    if (!UUID.test(id) || !(await deleteMonitor(this.#db, caller.teamId, id))) throw this.#missing(id);
  }

  async run(caller: Caller, id: string): Promise<MonitorCheck> {
    if (!UUID.test(id)) throw this.#missing(id);
    return checkView(await this.#scheduler.run(caller, id));
  }

  async checks(
    caller: Caller,
    id: string,
    q: { limit: number; offset: number; status?: string },
  ): Promise<MonitorCheck[]> {
    const m = await this.#row(caller, id);
    const rows = await listChecks(this.#db, m.id, q);
    const deliveries = await deliveriesOf(
      this.#db,
      rows.map((r) => r.id),
    );
    return rows.map((r) => checkView(r, deliveries.get(r.id)));
  }

  /** One check with a page of its pages; `next` is the URL of the rest (null when none is left). */
  async check(
    caller: Caller,
    id: string,
    checkId: string,
    q: { limit: number; skip: number; status?: string },
    base: string,
  ): Promise<MonitorCheckDetail> {
    const m = await this.#row(caller, id);
    const c = UUID.test(checkId) ? await getCheck(this.#db, m.id, checkId) : undefined;
    if (!c) throw new NotFoundError(`No check ${checkId} of monitor ${id}`, 'MONITOR_CHECK_NOT_FOUND');
    const rows = await listCheckPages(this.#db, c.id, { ...q, limit: q.limit + 1 });
    const more = rows.length > q.limit;
    const page = rows.slice(0, q.limit);
    // JSON monitors' snapshots (the current extraction) and search results' title and description, from
    // the stored contents (a removed result's: the last it had).
    const modes = new Map(m.targets.map((t) => [t.id, compareModeOf(t)]));
    const shown = (p: (typeof page)[number]) =>
      modes.get(p.targetId) === 'search'
        ? (p.hash ?? p.prevHash)
        : modes.get(p.targetId) !== 'markdown'
          ? p.hash
          : null;
    const hashes = page.map(shown).filter((h): h is string => Boolean(h));
    const contents = await getContents(this.#db, m.id, [...new Set(hashes)]);
    const pages: MonitorCheckPage[] = page.map((p) => {
      const mode = modes.get(p.targetId);
      const hash = shown(p);
      const content = hash ? contents.get(hash) : undefined;
      let metadata: Record<string, unknown> | null = p.statusCode === null ? null : { statusCode: p.statusCode };
      let json: unknown;
      if (mode === 'search') {
        const hit = content === undefined ? undefined : parseHitContent(content);
        metadata = hit ?? null;
        json = p.hash ? hit : undefined;
      } else if (content !== undefined) {
        const parsed = JSON.parse(content) as { json?: unknown };
        json = mode === 'json' ? parsed : parsed?.json;
      }
      return {
        id: p.id,
        targetId: p.targetId,
        url: p.url,
        status: p.status as MonitorCheckPage['status'],
        previousScrapeId: p.prevScrapeId,
        currentScrapeId: p.scrapeId,
        statusCode: p.statusCode,
        error: p.error,
        metadata,
        diff: p.diff,
        snapshot: json === undefined ? null : { json },
        judgment: p.judgment,
        createdAt: iso(c.finishedAt ?? c.createdAt)!,
      };
    });
    let next: string | null = null;
    if (more) {
      const params = new URLSearchParams({ skip: String(q.skip + q.limit), limit: String(q.limit) });
      if (q.status) params.set('status', q.status);
      next = `${base}/v2/monitor/${m.id}/checks/${c.id}?${params}`;
    }
    const deliveries = await deliveriesOf(this.#db, [c.id]);
    return { ...checkView(c, deliveries.get(c.id)), pages, next };
  }

  async #row(caller: Caller, id: string): Promise<MonitorRow> {
    const m = UUID.test(id) ? await getMonitor(this.#db, caller.teamId, id) : undefined;
    if (!m) throw this.#missing(id);
    return m;
  }

  #missing(id: string): NotFoundError {
    return new NotFoundError(`No monitor ${id} for this team`, 'MONITOR_NOT_FOUND');
  }
}
