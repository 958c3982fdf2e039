// The request's tbs (Google's time filter syntax, as Firecrawl passes it on) read into a window:
// qdr:h|d|w|m|y[N] (the last N hours, days…), cdr:1,cd_min:M/D/YYYY,cd_max:M/D/YYYY (a date range,
// both ends inclusive, UTC). sbd (sort by date) is accepted and has no effect. The contract
// (src/contract/search.ts) has already checked the syntax.
import type { TimeFilter } from './backend.ts';

const HOUR = 3_600_000;
const UNIT: Record<string, number> = { h: HOUR, d: 24 * HOUR, w: 7 * 24 * HOUR, m: 31 * 24 * HOUR, y: 366 * 24 * HOUR };
// Minutes (Google's qdr:n): sent only by monitors' searchWindow (5m, 15m), not accepted by the contract.
UNIT.n = 60_000;

export function parseTbs(tbs: string | undefined, now = new Date()): TimeFilter | undefined {
  if (!tbs) return undefined;
  const parts = new Map(
    tbs
      .split(',')
      .map((p) => p.trim().split(':'))
      .map(([k, v]) => [k, v ?? ''] as const),
  );
  const qdr = parts.get('qdr');
  let since: Date | undefined;
  let until: Date | undefined;
  if (qdr) {
    const n = Number(qdr.slice(1) || '1') || 1;
    since = new Date(now.getTime() - n * UNIT[qdr[0]]);
  } else if (parts.get('cdr') === '1') {
    const date = (s: string | undefined, endOfDay: boolean) => {
      if (!s) return undefined;
      const [m, d, y] = s.split('/').map(Number);
      const t = Date.UTC(y, m - 1, d) + (endOfDay ? 24 * HOUR - 1 : 0);
      return Number.isFinite(t) ? new Date(t) : undefined;
    };
    since = date(parts.get('cd_min'), false);
    until = date(parts.get('cd_max'), true);
  }
  if (!since && !until) return undefined;
  return { since, until, range: since ? rangeCovering(now.getTime() - since.getTime()) : undefined };
}

/** The narrowest engine range that reaches back `ms`; undefined when even a year is too short. */
function rangeCovering(ms: number): TimeFilter['range'] {
  if (ms <= UNIT.d) return 'day';
  if (ms <= UNIT.w) return 'week';
  if (ms <= UNIT.m) return 'month';
  if (ms <= UNIT.y) return 'year';
  return undefined;
}
