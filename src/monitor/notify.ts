// A finished check's notifications: webhook events `monitor.page` (one per new, changed or removed
// page, with isMeaningful and judgment) and `monitor.check.completed` (the summary), through the
// signed, retried webhook delivery of src/jobs/webhooks.ts; the email when asked for. The check's
// notificationStatus records what was queued or sent; reads add the webhook deliveries so far.
import type { Config } from '../config.ts';
import { type JobQueue } from '../jobs/queue.ts';
import type { Log } from '../jobs/log.ts';
import { enqueueWebhookPayloads } from '../jobs/webhooks.ts';
import type { Db, Queryable } from '../store/db-types.ts';
import type { CheckPageRow, CheckSummary, MonitorRow } from '../store/monitors.ts';
import { sendCheckEmail } from './email.ts';

/** A page worth telling about (new, changed or removed; a search result that is new or changed and relevant). */
export interface CheckEvent {
  row: CheckPageRow;
  url: string;
  targetId: string;
  /** A search result's title and description (sent as data.metadata). */
  metadata?: { title: string; description: string };
}

export async function notifyCheck(
  d: { db: Db; queue: JobQueue; log: Log; config: Config },
  monitor: MonitorRow,
  check: { id: string; status: string; summary: CheckSummary },
  events: CheckEvent[],
): Promise<Record<string, unknown>> {
  const status: Record<string, unknown> = {};
  const hook = monitor.webhook;
  if (hook) {
    const base = { teamId: monitor.teamId, jobId: check.id, webhook: hook };
    const meta = { monitorId: monitor.id, checkId: check.id };
    const queued: Parameters<typeof enqueueWebhookPayloads>[2] = [];
    if (hook.events.includes('monitor.page'))
      for (const e of events) {
        const j = e.row.judgment as { meaningful?: boolean } | null;
        queued.push({
          key: `page:${e.row.id}`,
          payload: {
            ...base,
            type: 'monitor.page',
            body: {
              success: true,
              type: 'monitor.page',
              id: check.id,
              ...meta,
              data: {
                ...meta,
                pageId: e.row.id,
                targetId: e.targetId,
                url: e.url,
                status: e.row.status,
                isMeaningful: j ? Boolean(j.meaningful) : e.row.status !== 'same',
                judgment: e.row.judgment,
                diff: e.row.diff,
                previousScrapeId: e.row.prevScrapeId,
                currentScrapeId: e.row.scrapeId,
                ...(e.metadata ? { metadata: e.metadata } : {}),
              },
              metadata: hook.metadata,
            },
          },
        });
      }
    if (hook.events.includes('monitor.check.completed'))
      queued.push({
        key: 'completed',
        payload: {
          ...base,
          type: 'monitor.check.completed',
          body: {
            success: check.status !== 'failed',
            type: 'monitor.check.completed',
            id: check.id,
            ...meta,
            data: { ...meta, status: check.status, summary: check.summary },
            metadata: hook.metadata,
          },
        },
      });
    const ok = await enqueueWebhookPayloads(d.queue, d.log, queued);
    status.webhook = { status: ok ? (queued.length ? 'queued' : 'nothing_to_send') : 'failed', events: queued.length };
  } else status.webhook = { status: 'not_configured' };
  const email = (monitor.notification as { email?: { enabled?: boolean; recipients?: string[] } } | null)?.email;
  // What the webhook tells about: every new, changed or removed page; only relevant search results.
  const changes = events.length;
  if (!email?.enabled || !email.recipients?.length) status.email = { status: 'disabled' };
  else if (changes === 0) status.email = { status: 'no_changes' };
  else {
    const s = check.summary;
    const text =
      `Monitor "${monitor.name}": ${s.changed} changed, ${s.new} new, ${s.removed} removed, ${s.error} errors ` +
      `of ${s.totalPages} pages (check ${check.id}).`;
    status.email = await sendCheckEmail(d.config, {
      recipients: email.recipients,
      subject: `Monitor "${monitor.name}": ${changes} page(s) changed`,
      text,
    });
  }
  return status;
}

/** Webhook deliveries of these checks so far: attempts delivered and failed, per check. */
export async function deliveriesOf(
  db: Queryable,
  checkIds: string[],
): Promise<Map<string, { delivered: number; failedAttempts: number }>> {
  if (checkIds.length === 0) return new Map();
  const { rows } = await db.query<{ jobId: string; delivered: number; failed: number }>(
    `SELECT job_id AS "jobId", count(*) FILTER (WHERE delivered_at IS NOT NULL)::int AS delivered,
            count(*) FILTER (WHERE delivered_at IS NULL)::int AS failed
     FROM webhook_deliveries WHERE job_id = ANY($1::uuid[]) GROUP BY job_id`,
    [checkIds],
  );
  return new Map(rows.map((r) => [r.jobId, { delivered: r.delivered, failedAttempts: r.failed }]));
}
