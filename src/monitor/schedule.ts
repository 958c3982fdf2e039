// Monitor schedules: a 5-field cron or a short English text ("every 15 minutes", "daily at 9:00") normalised to
// cron, in an IANA timezone, at most one run per 5 minutes; and the next run after a moment (croner, which
// handles DST: a fixed-time run in a skipped hour runs right after the gap, and runs once in a repeated hour).
import { Cron } from 'croner';
import { BadRequestError } from '../errors.ts';

export interface ScheduleInput {
  cron?: string;
  text?: string;
  timezone?: string;
}

export interface Schedule {
  /** Always filled: the cron given, or the one the text means. */
  cron: string;
  /** Canonical IANA name; default UTC. */
  timezone: string;
  /** The text as given (trimmed), when the schedule came from one. */
  text?: string;
}

export const MIN_INTERVAL_MINUTES = 5;
/** Consecutive runs whose gaps are checked against the minimum. */
const RUNS_CHECKED = 50;
// A fixed start keeps validation the same whatever day it runs (runs from now are checked too).
const REFERENCE_START = new Date('2025-01-01T00:00:00Z');

/**
 * The text forms normalizeSchedule understands (case-insensitive; error messages list them). Without "at TIME" a
 * form runs at midnight; "weekly" alone is Sunday, "monthly" alone the 1st. DAY: monday…sunday, mon…sun, plurals
 * ("mondays"). N minutes must divide 60 (or be whole hours), N hours divide 24: other intervals are not cron.
 */
export const SCHEDULE_TEXT_FORMS = [
  'every minute',
  'every N minutes',
  'hourly / every hour',
  'every N hours',
  'hourly at :MM',
  'twice a day',
  'daily / every day [at TIME]',
  'weekdays / every weekday [at TIME]',
  'weekends [at TIME]',
  'weekly [on DAY] [at TIME]',
  'every DAY[, DAY and DAY] [at TIME]',
  'monthly [on the Nth] [at TIME]',
] as const;

const NICKNAMES: Record<string, string> = {
  '@hourly': '0 * * * *',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@weekly': '0 0 * * 0',
  '@monthly': '0 0 1 * *',
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
};

const DAYS: Record<string, number> = {
  sunday: 0,
  sun: 0,
  monday: 1,
  mon: 1,
  tuesday: 2,
  tue: 2,
  tues: 2,
  wednesday: 3,
  wed: 3,
  thursday: 4,
  thu: 4,
  thur: 4,
  thurs: 4,
  friday: 5,
  fri: 5,
  saturday: 6,
  sat: 6,
};

function invalid(field: 'cron' | 'text' | 'timezone', message: string): BadRequestError {
  const path = `body.schedule.${field}`;
  return new BadRequestError(`Invalid request: ${path}: ${message}`, [{ path, message }]);
}

/** Validates and normalises a schedule; every problem is a BadRequestError naming its field. */
export function normalizeSchedule(input: ScheduleInput): Schedule {
  const cronGiven = input.cron !== undefined && input.cron.trim() !== '';
  const textGiven = input.text !== undefined && input.text.trim() !== '';
  if (cronGiven === textGiven) {
    throw invalid(cronGiven ? 'text' : 'cron', 'give exactly one of schedule.cron and schedule.text');
  }
  const timezone = canonicalTimezone(input.timezone);
  if (cronGiven) {
    const cron = normalizeCron(input.cron as string);
    checkCron(cron, timezone, 'cron');
    return { cron, timezone };
  }
  const text = (input.text as string).trim();
  const cron = textToCron(text);
  checkCron(cron, timezone, 'text');
  return { cron, timezone, text };
}

/** The first run strictly after `after`. */
export function nextRunAt(cron: string, timezone: string, after: Date): Date {
  const next = new Cron(cron, { timezone, mode: '5-part' }).nextRun(after);
  if (!next) throw new Error(`the schedule "${cron}" (${timezone}) has no run after ${after.toISOString()}`);
  return next;
}

function canonicalTimezone(timezone: string | undefined): string {
  const tz = timezone?.trim();
  if (!tz) return 'UTC';
  // IANA names only: Intl also takes UTC offsets ("+05:00"), which are not zones (no DST rules).
  if (/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(tz)) {
    try {
      return new Intl.DateTimeFormat('en-US', { timeZone: tz }).resolvedOptions().timeZone;
    } catch {
      // Falls through to the error below.
    }
  }
  throw invalid('timezone', `${JSON.stringify(tz)} is not an IANA timezone (e.g. "UTC", "Europe/Paris")`);
}

function normalizeCron(raw: string): string {
  const cron = raw.trim().replace(/\s+/g, ' ');
  const nick = NICKNAMES[cron.toLowerCase()];
  if (nick) return nick;
  if (cron.split(' ').length !== 5) {
    throw invalid('cron', `${JSON.stringify(raw)} is not a 5-field cron expression (minute hour day month weekday)`);
  }
  return cron;
}

/** The cron parses, runs at all, and never runs twice within MIN_INTERVAL_MINUTES. */
function checkCron(cron: string, timezone: string, field: 'cron' | 'text'): void {
  let job: Cron;
  try {
    job = new Cron(cron, { timezone, mode: '5-part' });
  } catch (err) {
    const why = (err as Error).message.replace(/^CronPattern:\s*/, '');
    throw invalid(field, `${JSON.stringify(cron)} is not a valid cron expression: ${why}`);
  }
  let smallest = Infinity;
  let runs = 0;
  for (const start of [REFERENCE_START, new Date()]) {
    const next = job.nextRuns(RUNS_CHECKED, start);
    runs += next.length;
    for (let i = 1; i < next.length; i++) smallest = Math.min(smallest, next[i].getTime() - next[i - 1].getTime());
  }
  if (runs === 0) throw invalid(field, `${JSON.stringify(cron)} never runs`);
  if (smallest < MIN_INTERVAL_MINUTES * 60_000) {
    const gap = Math.round(smallest / 60_000);
    throw invalid(
      field,
      `runs ${gap} minute${gap === 1 ? '' : 's'} apart (${JSON.stringify(cron)}): the minimum interval is ${MIN_INTERVAL_MINUTES} minutes`,
    );
  }
}

/** "9", "9:30", "9am", "9:30 pm", "18:30", "noon", "midnight" → [hour, minute]. */
function parseTime(text: string): [number, number] | undefined {
  const t = text.trim();
  if (t === 'noon' || t === 'midday') return [12, 0];
  if (t === 'midnight') return [0, 0];
  const m = /^(\d{1,2})(?:[:.h](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.)?$/.exec(t);
  if (!m) return undefined;
  let hour = Number(m[1]);
  const minute = m[2] === undefined ? 0 : Number(m[2]);
  const half = m[3]?.[0];
  if (half) {
    if (hour < 1 || hour > 12) return undefined;
    hour = (hour % 12) + (half === 'p' ? 12 : 0);
  }
  if (hour > 23 || minute > 59) return undefined;
  return [hour, minute];
}

function parseDays(text: string): number[] | undefined {
  const names = text
    .split(/\s*(?:,|\band\b|&|\/)\s*/)
    .map((d) => d.trim().replace(/s$/, ''))
    .filter(Boolean);
  const days = names.map((d) => DAYS[d] ?? DAYS[`${d}s`]);
  if (!days.length || days.some((d) => d === undefined)) return undefined;
  return [...new Set(days)].sort((a, b) => a - b);
}

/** Splits "X at TIME" into X and [hour, minute] (midnight without "at"). */
function splitAt(text: string): { head: string; time: [number, number] } | undefined {
  const m = /^(.*?)(?:\s+at\s+(.+))?$/.exec(text) as RegExpExecArray;
  if (m[2] === undefined) return { head: m[1], time: [0, 0] };
  const time = parseTime(m[2]);
  return time ? { head: m[1], time } : undefined;
}

function textToCron(raw: string): string {
  const text = raw.toLowerCase().replace(/\s+/g, ' ').trim();
  const cron = textForms(text);
  if (cron) return cron;
  throw invalid(
    'text',
    `${JSON.stringify(raw)} is not a schedule this server understands; use one of: ${SCHEDULE_TEXT_FORMS.join('; ')} (TIME like 9:00, 9am or 18:30), or give schedule.cron`,
  );
}

function textForms(text: string): string | undefined {
  if (text === 'every minute') return '* * * * *';
  let m = /^every (\d+) ?(?:minutes?|mins?|m)$/.exec(text);
  if (m) {
    const n = Number(m[1]);
    if (n < 1) return undefined;
    if (n < 60) {
      if (60 % n !== 0) {
        throw invalid(
          'text',
          `every ${n} minutes cannot be a cron schedule: use a number that divides 60 (5, 10, 15, 20, 30) or whole hours`,
        );
      }
      return `*/${n} * * * *`;
    }
    if (n % 60 === 0) return hours(n / 60);
    throw invalid('text', `every ${n} minutes cannot be a cron schedule: use a number that divides 60 or whole hours`);
  }
  if (text === 'hourly' || text === 'every hour') return '0 * * * *';
  m = /^(?:hourly|every hour) at (?::|minute )?(\d{1,2})$/.exec(text);
  if (m && Number(m[1]) < 60) return `${Number(m[1])} * * * *`;
  m = /^every (\d+) ?(?:hours?|hrs?|h)$/.exec(text);
  if (m) return hours(Number(m[1]));
  if (text === 'twice a day' || text === 'twice daily') return '0 0,12 * * *';

  const at = splitAt(text);
  if (!at) return undefined;
  const { head } = at;
  const [hour, minute] = at.time;
  const time = `${minute} ${hour}`;
  if (head === 'daily' || head === 'every day' || head === 'each day') return `${time} * * *`;
  if (/^(?:on )?(?:every )?weekdays?$/.test(head)) return `${time} * * 1-5`;
  if (/^(?:on )?(?:every )?weekends?$/.test(head)) return `${time} * * 0,6`;
  m = /^(?:weekly|every week)(?: on (.+))?$/.exec(head);
  if (m) {
    const days = m[1] === undefined ? [0] : parseDays(m[1]);
    return days ? `${time} * * ${days.join(',')}` : undefined;
  }
  m = /^(?:on )?(?:every )?(.+)$/.exec(head);
  const days = m ? parseDays(m[1]) : undefined;
  if (days) return `${time} * * ${days.join(',')}`;
  m = /^(?:monthly|every month)(?: on (?:the )?(\d{1,2})(?:st|nd|rd|th)?)?$/.exec(head);
  if (m) {
    const day = m[1] === undefined ? 1 : Number(m[1]);
    return day >= 1 && day <= 31 ? `${time} ${day} * *` : undefined;
  }
  return undefined;
}

function hours(n: number): string {
  if (n === 1) return '0 * * * *';
  if (n === 24) return '0 0 * * *';
  if (n >= 1 && n < 24 && 24 % n === 0) return `0 */${n} * * *`;
  throw invalid('text', `every ${n} hours cannot be a cron schedule: use a number that divides 24 (2, 3, 4, 6, 8, 12)`);
}
