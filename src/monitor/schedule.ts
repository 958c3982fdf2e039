// Stand-in until h-mon-pure merges (engineer B's module replaces this file): monitor schedules,
// cron or a few text forms normalised to cron in an IANA timezone, with a 5-minute minimum.
import { Cron } from 'croner';
import { BadRequestError } from '../errors.ts';

const MIN_INTERVAL_MS = 5 * 60_000;

function refuse(field: string, message: string): never {
  throw new BadRequestError(`Invalid request: body.${field}: ${message}`, [{ path: `body.${field}`, message }]);
}

const DAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];

function clock(h: string, m: string | undefined, ampm: string | undefined): [number, number] | undefined {
  let hour = Number(h);
  const minute = Number(m ?? 0);
  if (ampm === 'pm' && hour < 12) hour += 12;
  if (ampm === 'am' && hour === 12) hour = 0;
  return hour < 24 && minute < 60 ? [hour, minute] : undefined;
}

function textToCron(text: string): string | undefined {
  const t = text.trim().toLowerCase().replace(/\s+/g, ' ');
  if (t === 'hourly' || t === 'every hour') return '0 * * * *';
  if (t === 'daily' || t === 'every day') return '0 0 * * *';
  if (t === 'every minute') return '* * * * *';
  let m = t.match(/^every (\d+) (minute|minutes|min|mins|hour|hours)$/);
  if (m) {
    const n = Number(m[1]);
    if (m[2].startsWith('min')) return n >= 60 && n % 60 === 0 ? `0 */${n / 60} * * *` : `*/${n} * * * *`;
    return `0 */${n} * * *`;
  }
  const at = '(\\d{1,2})(?::(\\d{2}))? ?(am|pm)?';
  m = t.match(new RegExp(`^(daily|every day|weekdays|every weekday) at ${at}$`));
  if (m) {
    const c = clock(m[2], m[3], m[4]);
    return c && `${c[1]} ${c[0]} * * ${m[1].includes('day') && !m[1].includes('week') ? '*' : '1-5'}`;
  }
  m = t.match(new RegExp(`^(?:weekly on|every) (${DAYS.join('|')}) at ${at}$`));
  if (m) {
    const c = clock(m[2], m[3], m[4]);
    return c && `${c[1]} ${c[0]} * * ${DAYS.indexOf(m[1])}`;
  }
  return undefined;
}

export function normalizeSchedule(input: { cron?: string; text?: string; timezone?: string }): {
  cron: string;
  timezone: string;
  text?: string;
} {
  const timezone = input.timezone ?? 'UTC';
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
  } catch {
    refuse('schedule.timezone', `"${timezone}" is not an IANA timezone`);
  }
  if ((input.cron === undefined) === (input.text === undefined))
    refuse(input.cron === undefined ? 'schedule.cron' : 'schedule.text', 'give exactly one of cron or text');
  const field = input.cron !== undefined ? 'schedule.cron' : 'schedule.text';
  const cron = input.cron ?? textToCron(input.text!);
  if (!cron) refuse('schedule.text', `"${input.text}" is not a schedule this server understands`);
  let runs: Date[];
  try {
    runs = new Cron(cron, { timezone, paused: true }).nextRuns(50, new Date());
  } catch (err) {
    refuse('schedule.cron', `invalid cron expression: ${(err as Error).message}`);
  }
  for (let i = 1; i < runs.length; i++)
    if (runs[i].getTime() - runs[i - 1].getTime() < MIN_INTERVAL_MS)
      refuse(field, 'runs more often than the minimum interval of 5 minutes');
  return { cron, timezone, ...(input.text !== undefined ? { text: input.text } : {}) };
}

export function nextRunAt(cron: string, timezone: string, after: Date): Date {
  const next = new Cron(cron, { timezone, paused: true }).nextRun(after);
  if (!next) throw new Error(`cron ${cron} has no next run`);
  return next;
}
