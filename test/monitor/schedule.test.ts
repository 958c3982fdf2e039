// Monitor schedules: text forms, cron validation, the 5-minute minimum, timezones and next runs across DST.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BadRequestError } from '../../src/errors.ts';
import { nextRunAt, normalizeSchedule } from '../../src/monitor/schedule.ts';

/** Asserts a 400 whose details name `body.schedule.<field>` and whose message contains `includes`. */
function rejects(input: Parameters<typeof normalizeSchedule>[0], field: string, includes?: RegExp) {
  assert.throws(
    () => normalizeSchedule(input),
    (err: unknown) => {
      assert.ok(err instanceof BadRequestError, String(err));
      assert.equal(err.statusCode, 400);
      const details = err.details as { path: string; message: string }[];
      assert.equal(details[0].path, `body.schedule.${field}`, JSON.stringify(input));
      assert.match(err.message, new RegExp(`schedule\\.${field}`));
      if (includes) assert.match(err.message, includes);
      return true;
    },
    JSON.stringify(input),
  );
}

test('text forms normalise to cron (case and spacing do not matter); the text is kept', () => {
  const cases: [string, string][] = [
    ['hourly', '0 * * * *'],
    ['Every hour', '0 * * * *'],
    ['every 1 hour', '0 * * * *'],
    ['every 5 minutes', '*/5 * * * *'],
    ['every 15 minutes', '*/15 * * * *'],
    ['every 30 minutes', '*/30 * * * *'],
    ['EVERY   30   MINS', '*/30 * * * *'],
    ['every 60 minutes', '0 * * * *'],
    ['every 120 minutes', '0 */2 * * *'],
    ['every 2 hours', '0 */2 * * *'],
    ['every 6 hours', '0 */6 * * *'],
    ['every 24 hours', '0 0 * * *'],
    ['hourly at :15', '15 * * * *'],
    ['twice a day', '0 0,12 * * *'],
    ['daily', '0 0 * * *'],
    ['daily at 9:00', '0 9 * * *'],
    ['daily at 9am', '0 9 * * *'],
    ['Daily at 9:30 PM', '30 21 * * *'],
    ['every day at 12am', '0 0 * * *'],
    ['every day at noon', '0 12 * * *'],
    ['daily at 18:30', '30 18 * * *'],
    ['weekdays at 18:30', '30 18 * * 1-5'],
    ['every weekday at 9am', '0 9 * * 1-5'],
    ['weekends at 10:00', '0 10 * * 0,6'],
    ['weekly', '0 0 * * 0'],
    ['weekly on monday at 9:00', '0 9 * * 1'],
    ['every monday at 9:00', '0 9 * * 1'],
    ['Mondays at 9', '0 9 * * 1'],
    ['every monday and thursday at 8:15', '15 8 * * 1,4'],
    ['every mon, wed, fri at 7pm', '0 19 * * 1,3,5'],
    ['monthly', '0 0 1 * *'],
    ['monthly on the 15th at 9:00', '0 9 15 * *'],
  ];
  for (const [text, cron] of cases) {
    assert.deepEqual(normalizeSchedule({ text }), { cron, timezone: 'UTC', text: text.trim() }, text);
  }
});

test('text that is not a schedule, or cannot be one in cron, is a 400 naming schedule.text', () => {
  rejects({ text: 'whenever you like' }, 'text', /every N minutes/);
  rejects({ text: 'daily at 25:00' }, 'text');
  rejects({ text: 'every 7 minutes' }, 'text', /divides 60/);
  rejects({ text: 'every 90 minutes' }, 'text');
  rejects({ text: 'every 5 hours' }, 'text', /divides 24/);
  rejects({ text: 'monthly on the 40th' }, 'text');
});

test('the minimum interval is 5 minutes, checked on the actual runs', () => {
  rejects({ text: 'every minute' }, 'text', /1 minute apart.*minimum interval is 5 minutes/);
  rejects({ text: 'every 2 minutes' }, 'text', /minimum interval is 5 minutes/);
  rejects({ cron: '* * * * *' }, 'cron', /minimum interval is 5 minutes/);
  rejects({ cron: '*/3 * * * *' }, 'cron', /3 minutes apart/);
  // Two runs 2 minutes apart once an hour, the rest 58 minutes apart.
  rejects({ cron: '0,2 * * * *' }, 'cron', /2 minutes apart/);
  // */7 is 7 minutes apart except across the hour (:56 → :00, 4 minutes).
  rejects({ cron: '*/7 * * * *' }, 'cron', /4 minutes apart/);
  // Across midnight only: 23:58 → 00:00.
  rejects({ cron: '0,58 0,23 * * *' }, 'cron', /2 minutes apart/);
  for (const cron of ['*/5 * * * *', '0,5 * * * *', '*/10 9-17 * * 1-5', '0 9 * * *', '55 23 * * *']) {
    assert.equal(normalizeSchedule({ cron }).cron, cron);
  }
});

test('cron: 5 fields, valid values, nicknames spelled out, extra spaces folded', () => {
  assert.deepEqual(normalizeSchedule({ cron: ' 0  9 * *  1-5 ' }), { cron: '0 9 * * 1-5', timezone: 'UTC' });
  assert.equal(normalizeSchedule({ cron: '@hourly' }).cron, '0 * * * *');
  assert.equal(normalizeSchedule({ cron: '@daily' }).cron, '0 0 * * *');
  assert.equal(normalizeSchedule({ cron: '0 9 * * MON-FRI' }).cron, '0 9 * * MON-FRI');
  rejects({ cron: '0 9 * *' }, 'cron', /5-field/);
  rejects({ cron: '0 0 9 * * *' }, 'cron', /5-field/);
  rejects({ cron: '60 * * * *' }, 'cron', /not a valid cron/);
  rejects({ cron: '0 25 * * *' }, 'cron', /not a valid cron/);
  rejects({ cron: 'a b c d e' }, 'cron', /not a valid cron/);
  rejects({ cron: '2025-01-01T00:00' }, 'cron');
  rejects({ cron: '0 0 30 2 *' }, 'cron', /never runs/);
});

test('exactly one of cron and text', () => {
  rejects({}, 'cron', /exactly one/);
  rejects({ cron: ' ', text: '' }, 'cron', /exactly one/);
  rejects({ cron: '0 * * * *', text: 'hourly' }, 'text', /exactly one/);
});

test('timezones: IANA names, canonical spelling, default UTC; others name schedule.timezone', () => {
  assert.equal(normalizeSchedule({ text: 'hourly' }).timezone, 'UTC');
  assert.equal(normalizeSchedule({ text: 'hourly', timezone: '' }).timezone, 'UTC');
  assert.equal(normalizeSchedule({ text: 'hourly', timezone: 'Europe/Paris' }).timezone, 'Europe/Paris');
  assert.equal(normalizeSchedule({ text: 'hourly', timezone: 'america/new_york' }).timezone, 'America/New_York');
  rejects({ text: 'hourly', timezone: 'Mars/Olympus_Mons' }, 'timezone', /IANA/);
  rejects({ text: 'hourly', timezone: '+05:00' }, 'timezone', /IANA/);
  rejects({ cron: '0 * * * *', timezone: 'not a zone' }, 'timezone');
});

test('nextRunAt: strictly after the moment, in the timezone', () => {
  const after = new Date('2026-06-01T12:00:00Z');
  assert.equal(nextRunAt('*/15 * * * *', 'UTC', after).toISOString(), '2026-06-01T12:15:00.000Z');
  assert.equal(
    nextRunAt('*/15 * * * *', 'UTC', new Date('2026-06-01T12:07:30Z')).toISOString(),
    '2026-06-01T12:15:00.000Z',
  );
  assert.equal(
    nextRunAt('*/15 * * * *', 'UTC', new Date('2026-06-01T12:15:00Z')).toISOString(),
    '2026-06-01T12:30:00.000Z',
  );
  // 9:00 in New York in June is 13:00 UTC (EDT; 12:00 UTC is 8:00 there); in Tokyo 00:00 UTC.
  assert.equal(nextRunAt('0 9 * * *', 'America/New_York', after).toISOString(), '2026-06-01T13:00:00.000Z');
  assert.equal(nextRunAt('0 9 * * *', 'Asia/Tokyo', after).toISOString(), '2026-06-02T00:00:00.000Z');
  // Weekdays: Friday evening → Monday.
  assert.equal(
    nextRunAt('30 18 * * 1-5', 'UTC', new Date('2026-06-05T19:00:00Z')).toISOString(),
    '2026-06-08T18:30:00.000Z',
  );
});

test('nextRunAt across DST in America/New_York', () => {
  // Spring forward (2026-03-08): 9:00 is 14:00 UTC the day before (EST) and 13:00 UTC that day (EDT).
  const daily = (iso: string) => nextRunAt('0 9 * * *', 'America/New_York', new Date(iso)).toISOString();
  assert.equal(daily('2026-03-07T12:00:00Z'), '2026-03-07T14:00:00.000Z');
  assert.equal(daily('2026-03-07T15:00:00Z'), '2026-03-08T13:00:00.000Z');
  // Fall back (2026-11-01): 13:00 UTC (EDT) the day before, 14:00 UTC (EST) that day.
  assert.equal(daily('2026-10-31T12:00:00Z'), '2026-10-31T13:00:00.000Z');
  assert.equal(daily('2026-10-31T14:00:00Z'), '2026-11-01T14:00:00.000Z');
  // 2:30 does not exist on the spring-forward day: the run is right after the gap (3:00 EDT = 07:00 UTC).
  assert.equal(
    nextRunAt('30 2 * * *', 'America/New_York', new Date('2026-03-07T12:00:00Z')).toISOString(),
    '2026-03-08T07:00:00.000Z',
  );
  // 1:30 happens twice on the fall-back day: a daily run runs once (the first, EDT).
  const first = nextRunAt('30 1 * * *', 'America/New_York', new Date('2026-10-31T12:00:00Z'));
  assert.equal(first.toISOString(), '2026-11-01T05:30:00.000Z');
  assert.equal(nextRunAt('30 1 * * *', 'America/New_York', first).toISOString(), '2026-11-02T06:30:00.000Z');
  // An interval schedule keeps its real-time spacing through the repeated hour.
  let at = new Date('2026-11-01T05:00:00Z');
  const runs: string[] = [];
  for (let i = 0; i < 4; i++) runs.push((at = nextRunAt('*/30 * * * *', 'America/New_York', at)).toISOString());
  assert.deepEqual(runs, [
    '2026-11-01T05:30:00.000Z',
    '2026-11-01T06:00:00.000Z',
    '2026-11-01T06:30:00.000Z',
    '2026-11-01T07:00:00.000Z',
  ]);
});

test('a normalised schedule feeds nextRunAt directly', () => {
  const s = normalizeSchedule({ text: 'weekdays at 18:30', timezone: 'Europe/Berlin' });
  // Saturday 2026-06-06 → Monday 18:30 CEST = 16:30 UTC.
  assert.equal(
    nextRunAt(s.cron, s.timezone, new Date('2026-06-06T10:00:00Z')).toISOString(),
    '2026-06-08T16:30:00.000Z',
  );
});
