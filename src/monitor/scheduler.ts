// Starting monitor checks: the 'monitor-tick' job (every minute, any number of processes) and manual
// runs. A tick locks the due monitors (FOR UPDATE SKIP LOCKED), records one check per tick (unique
// per monitor and scheduled time), advances nextRunAt, and queues a 'monitor-check' job; a tick that
// finds the previous check still running records `skipped_overlap`, one without credits
// `skipped_no_credits`. "now" is the job's (tests run a tick at a chosen time).
import { randomUUID } from 'node:crypto';
import { createBillableJob, ensureCredits } from '../billing/credits.ts';
import { ConflictError, InsufficientCreditsError, NotFoundError } from '../errors.ts';
import type { JobQueue } from '../jobs/queue.ts';
import type { Log } from '../jobs/log.ts';
import type { Db, Queryable } from '../store/db-types.ts';
import { createJob } from '../store/jobs.ts';
import {
  type CheckRow,
  type CheckSummary,
  type CurrentCheck,
  type MonitorRow,
  failStaleCheck,
  insertCheck,
  lockDueMonitors,
  lockMonitor,
  setMonitorRun,
  staleQueuedChecks,
} from '../store/monitors.ts';
import type { Caller } from '../store/teams.ts';
import { nextRunAt } from './schedule.ts';
import { creditsPerCheck } from './targets.ts';

export const MONITOR_TICK_QUEUE = 'monitor-tick';
export const MONITOR_CHECK_QUEUE = 'monitor-check';
/** Monitors one tick starts at most (the next tick takes the rest). */
const TICK_BATCH = 200;

export const emptySummary = (): CheckSummary => ({ totalPages: 0, same: 0, changed: 0, new: 0, removed: 0, error: 0 });

/**
 * A check not finished this long after its last update was lost (its job ran out of attempts, all
 * cut short): a monitor-check job gets 3 attempts of at most an hour.
 */
const STALE_CHECK_MS = 4 * 3600_000;

/** Whether the monitor's current check still runs; a lost one is failed now and does not count. */
async function stillRunning(tx: Queryable, m: MonitorRow & CurrentCheck, now: Date): Promise<boolean> {
  if (m.currentCheckStatus !== 'queued' && m.currentCheckStatus !== 'running') return false;
  if (now.getTime() - new Date(m.currentCheckUpdatedAt!).getTime() < STALE_CHECK_MS) return true;
  await failStaleCheck(tx, m.currentCheckId!, 'the check did not finish: no worker completed it');
  return false;
}

/**
 * Credits a check of this monitor is expected to cost: its last check's pages, else its targets'; from the
 * targets when one is a search (its results cost a fifth of a page each).
 */
function estimate(m: MonitorRow): number {
  if (m.targets.some((t) => t.type === 'search')) return creditsPerCheck(m.targets);
  return m.lastCheckSummary?.totalPages || creditsPerCheck(m.targets);
}

export class MonitorScheduler {
  readonly #db: Db;
  readonly #queue: JobQueue;
  readonly #log: Log;

  constructor(d: { db: Db; queue: JobQueue; log: Log }) {
    this.#db = d.db;
    this.#queue = d.queue;
    this.#log = d.log;
  }

  /** One tick at `now`: the checks it started (queued), skips included in the count. */
  async tick(now: Date = new Date()): Promise<{ started: number; skipped: number }> {
    const started: string[] = [];
    let skipped = 0;
    await this.#db.transaction(async (tx) => {
      for (const m of await lockDueMonitors(tx, now, TICK_BATCH)) {
        const scheduledFor = m.nextRunAt!;
        await setMonitorRun(tx, m.id, { nextRunAt: nextRunAt(m.cron, m.timezone, now) });
        const skip = async (status: 'skipped_overlap' | 'skipped_no_credits') => {
          skipped++;
          await insertCheck(tx, {
            id: randomUUID(),
            monitorId: m.id,
            teamId: m.teamId,
            status,
            trigger: 'scheduled',
            scheduledFor,
            finishedAt: now,
            summary: emptySummary(),
          });
        };
        if (await stillRunning(tx, m, now)) {
          await skip('skipped_overlap');
          continue;
        }
        try {
          await ensureCredits(tx, m.teamId, 1);
        } catch (err) {
          if (!(err instanceof InsufficientCreditsError)) throw err;
          await skip('skipped_no_credits');
          continue;
        }
        const credits = estimate(m);
        const check = await insertCheck(tx, {
          id: randomUUID(),
          monitorId: m.id,
          teamId: m.teamId,
          status: 'queued',
          trigger: 'scheduled',
          scheduledFor,
          estimatedCredits: credits,
        });
        if (!check) continue;
        await createJob(tx, {
          id: check.id,
          teamId: m.teamId,
          apiKeyId: m.apiKeyId,
          endpoint: 'monitor',
          target: m.name,
        });
        await setMonitorRun(tx, m.id, { currentCheckId: check.id });
        started.push(check.id);
      }
    });
    for (const id of started) await this.#send(id);
    // A check whose job was never sent (the process stopped between the two) is sent now; the job
    // id is the check id, so one that exists is not sent twice.
    for (const id of await staleQueuedChecks(this.#db, new Date(now.getTime() - 60_000))) await this.#send(id);
    if (started.length || skipped) this.#log.info({ started: started.length, skipped }, 'monitor tick');
    return { started: started.length, skipped };
  }

  /** POST /v2/monitor/{id}/run: a manual check, queued (409 paused or still running, 402 without credits). */
  async run(caller: Caller, id: string): Promise<CheckRow> {
    const check = await this.#db.transaction(async (tx) => {
      const m = await lockMonitor(tx, caller.teamId, id);
      if (!m) throw new NotFoundError(`No monitor ${id} for this team`, 'MONITOR_NOT_FOUND');
      if (m.status === 'paused')
        throw new ConflictError('The monitor is paused: resume it (status "active") to run it', 'MONITOR_PAUSED');
      if (await stillRunning(tx, m, new Date()))
        throw new ConflictError(`Check ${m.currentCheckId} of this monitor is still running`, 'MONITOR_CHECK_RUNNING');
      const checkId = randomUUID();
      const credits = estimate(m);
      await createBillableJob(
        tx,
        { id: checkId, teamId: m.teamId, apiKeyId: caller.keyId, endpoint: 'monitor', target: m.name },
        1,
      );
      const created = await insertCheck(tx, {
        id: checkId,
        monitorId: m.id,
        teamId: m.teamId,
        status: 'queued',
        trigger: 'manual',
        scheduledFor: new Date(),
        estimatedCredits: credits,
      });
      await setMonitorRun(tx, m.id, { currentCheckId: checkId });
      return created!;
    });
    await this.#send(check.id);
    return check;
  }

  async #send(checkId: string): Promise<void> {
    await this.#queue.send(MONITOR_CHECK_QUEUE, { checkId }, { id: checkId });
  }
}
