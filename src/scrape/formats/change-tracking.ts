// The changeTracking format: compares a scrape with the previous scrape of the same URL by the
// same team (and tag), from the snapshots of src/store/changes.ts.
//
// Definitions:
// - key: the team, the requested URL normalised by urlKey (src/crawl/url.ts: lower-case scheme
//   and host, no default port, no fragment, sorted query, one trailing slash ignored) and the tag
//   ('' by default: each tag is a history of its own).
// - gone: a page answered 404 or 410, or whose markdown is empty (whitespace only).
// - changeStatus: `new` when there is no previous snapshot, or the previous one was gone and this
//   one is not (the page (re)appeared); `removed` when this one is gone and the previous one was
//   not; `same` when both are gone (whatever their error pages say); otherwise `same` when the markdown is identical (line endings and trailing whitespace
//   at the end ignored) and `changed` when not. The status looks at the markdown only: the json
//   mode's extraction reports its field changes but does not make a page `changed` by itself (an
//   LLM may phrase the same page differently).
// - visibility: `visible` unless the caller says `hidden` (a crawl page found only in the
//   previous crawl's memory, not by links or sitemap this time); a scrape is always `visible`.
// - previousScrapeAt: when the previous snapshot was fetched (ISO), null without one.
// - git-diff mode: `diff: {text, json: {files}}` whenever there is a previous snapshot: `text` is a
//   git-style unified diff (`--- previous`, `+++ current`, `@@ -a,b +c,d @@` hunks, 3 lines of
//   context, a count of 1 written as git does: `-3` not `-3,1`), '' when identical; `json` is the
//   same diff parsed as the parse-diff package does (Firecrawl's shape): files [{from, to,
//   chunks: [{content, changes, oldStart, oldLines, newStart, newLines}], additions, deletions}],
//   a change being {type: 'normal', normal: true, ln1, ln2, content} | {type: 'add', add: true,
//   ln, content} | {type: 'del', del: true, ln, content}; no files when identical.
// - json mode: `json: {field: {previous, current}}` for each top-level field whose value differs
//   (deep equality; keys of both sides; a non-object extraction is the field `value`); a first
//   scrape reports every field with previous null. The current extraction is stored for next time.
//
// The line diff is Myers' O((N+M)D) algorithm after stripping the common prefix and suffix,
// bounded: more than MAX_DIFF_LINES lines in the differing middle of either side, or more than
// MAX_EDIT_DISTANCE inserted plus deleted lines, and the middle is reported as replaced whole (a
// valid diff, only not minimal).
import { type ChangeSnapshot, recordSnapshot } from '../../store/changes.ts';
import { normaliseUrl } from '../cache-key.ts';
import { urlKey } from '../../net/url-key.ts';
import type { Queryable } from '../../store/db-types.ts';

export type ChangeTrackingMode = 'git-diff' | 'json';
export type ChangeStatus = 'new' | 'same' | 'changed' | 'removed';
export type Visibility = 'visible' | 'hidden';

export type DiffChange =
  | { type: 'normal'; normal: true; ln1: number; ln2: number; content: string }
  | { type: 'add'; add: true; ln: number; content: string }
  | { type: 'del'; del: true; ln: number; content: string };

export interface DiffChunk {
  /** The hunk header, e.g. "@@ -1,4 +1,5 @@". */
  content: string;
  changes: DiffChange[];
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
}

export interface DiffFile {
  from: string;
  to: string;
  chunks: DiffChunk[];
  additions: number;
  deletions: number;
}

export interface ChangeDiff {
  text: string;
  json: { files: DiffFile[] };
}

export type JsonChanges = Record<string, { previous: unknown; current: unknown }>;

export interface ChangeTracking {
  previousScrapeAt: string | null;
  changeStatus: ChangeStatus;
  visibility: Visibility;
  /** git-diff mode, when there is a previous snapshot. */
  diff?: ChangeDiff;
  /** json mode. */
  json?: JsonChanges;
}

export interface TrackChangesInput {
  db: Queryable;
  teamId: string;
  /** The URL as requested (normalised here). */
  url: string;
  /** '' or undefined: the default history. */
  tag?: string;
  /** The markdown of this scrape (the same the response's `markdown` has). */
  markdown: string;
  /** The target's status code. */
  statusCode: number;
  /** Default none: only previousScrapeAt, changeStatus, visibility. */
  modes?: readonly ChangeTrackingMode[];
  /** json mode: this scrape's extraction (LLM extractJson or fillJsonSchema), stored for next time. */
  json?: unknown;
  /** When the content was fetched (a cached document's fetch time); default now. */
  scrapedAt?: Date;
  /** Default 'visible' (see above). */
  visibility?: Visibility;
}

export const MAX_DIFF_LINES = 20_000;
export const MAX_EDIT_DISTANCE = 2_000;
const CONTEXT = 3;

/** The history key of a URL: urlKey, or the URL with only its fragment dropped when urlKey refuses it. */
export function urlKeyForChanges(url: string): string {
  const key = urlKey(url);
  if (key) return key;
  try {
    return normaliseUrl(url);
  } catch {
    return url;
  }
}

export function isGone(statusCode: number, markdown: string): boolean {
  return statusCode === 404 || statusCode === 410 || markdown.trim() === '';
}

/** Records this scrape and compares it with the previous one of its key. */
export async function trackChanges(input: TrackChangesInput): Promise<ChangeTracking> {
  const modes = new Set(input.modes ?? []);
  const { previous } = await recordSnapshot(input.db, {
    teamId: input.teamId,
    urlKey: urlKeyForChanges(input.url),
    tag: input.tag ?? '',
    markdown: input.markdown,
    json: modes.has('json') ? input.json : undefined,
    statusCode: input.statusCode,
    scrapedAt: input.scrapedAt,
  });
  return compareSnapshots(
    previous,
    { markdown: input.markdown, statusCode: input.statusCode, json: input.json },
    modes,
    input.visibility ?? 'visible',
  );
}

/** The comparison alone (no storage): previous snapshot (or none) against this scrape. */
export function compareSnapshots(
  previous: ChangeSnapshot | undefined,
  current: { markdown: string; statusCode: number; json?: unknown },
  modes: ReadonlySet<ChangeTrackingMode>,
  visibility: Visibility = 'visible',
): ChangeTracking {
  const out: ChangeTracking = {
    previousScrapeAt: previous ? previous.scrapedAt.toISOString() : null,
    changeStatus: changeStatus(previous, current),
    visibility,
  };
  if (modes.has('git-diff') && previous) out.diff = unifiedDiff(previous.markdown, current.markdown);
  if (modes.has('json')) out.json = jsonChanges(previous?.json ?? null, current.json ?? null);
  return out;
}

function changeStatus(
  previous: ChangeSnapshot | undefined,
  current: { markdown: string; statusCode: number },
): ChangeStatus {
  if (!previous) return 'new';
  const wasGone = isGone(previous.statusCode, previous.markdown);
  const nowGone = isGone(current.statusCode, current.markdown);
  if (wasGone && !nowGone) return 'new';
  if (nowGone) return wasGone ? 'same' : 'removed';
  return comparable(previous.markdown) === comparable(current.markdown) ? 'same' : 'changed';
}

const comparable = (s: string): string => s.replace(/\r\n?/g, '\n').trimEnd();

// --- JSON mode ---

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => deepEqual(x, bb[i]));
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const ak = Object.keys(ao).filter((k) => ao[k] !== undefined);
  const bk = Object.keys(bo).filter((k) => bo[k] !== undefined);
  return ak.length === bk.length && ak.every((k) => Object.hasOwn(bo, k) && deepEqual(ao[k], bo[k]));
}

/** Top-level fields whose value differs: {field: {previous, current}} (a missing side is null). */
export function jsonChanges(previous: unknown, current: unknown): JsonChanges {
  const out: JsonChanges = {};
  if (!isPlainObject(previous) && !isPlainObject(current)) {
    if (!deepEqual(previous ?? null, current ?? null))
      out.value = { previous: previous ?? null, current: current ?? null };
    return out;
  }
  const p = isPlainObject(previous) ? previous : {};
  const c = isPlainObject(current) ? current : {};
  const keys = [...Object.keys(c), ...Object.keys(p).filter((k) => !Object.hasOwn(c, k))];
  for (const k of keys) {
    const pv = p[k] ?? null;
    const cv = c[k] ?? null;
    if (!deepEqual(pv, cv)) out[k] = { previous: pv, current: cv };
  }
  return out;
}

// --- Line diff ---

/** One step of an edit script: 0 keeps a line of both sides, 1 deletes one of the previous, 2 inserts one of the current. */
export type Op = 0 | 1 | 2;
const EQUAL: Op = 0;
const DELETE: Op = 1;
const INSERT: Op = 2;

export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * Myers' shortest edit script of a → b, or undefined when it needs more than maxD edits. Ops in
 * order: Equal consumes one line of each side, Delete one of a, Insert one of b.
 */
function myers(a: Int32Array, b: Int32Array, maxD: number): Op[] | undefined {
  const n = a.length;
  const m = b.length;
  const max = Math.min(n + m, maxD);
  const off = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  for (let d = 0; d <= max; d++) {
    // v before step d, for k in [-d-1, d+1] (index k + d + 1).
    trace.push(v.slice(off - d - 1, off + d + 2));
    for (let k = -d; k <= d; k += 2) {
      let x = k === -d || (k !== d && v[off + k - 1] < v[off + k + 1]) ? v[off + k + 1] : v[off + k - 1] + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[off + k] = x;
      if (x >= n && y >= m) return backtrack(trace, n, m);
    }
  }
  return undefined;
}

function backtrack(trace: Int32Array[], n: number, m: number): Op[] {
  const ops: Op[] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0; d--) {
    const t = trace[d];
    const at = (k: number) => t[k + d + 1];
    const k = x - y;
    const prevK = k === -d || (k !== d && at(k - 1) < at(k + 1)) ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : at(prevK);
    const prevY = d === 0 ? 0 : prevX - prevK;
    while (x > prevX && y > prevY) {
      ops.push(EQUAL);
      x--;
      y--;
    }
    if (d > 0) {
      ops.push(x === prevX ? INSERT : DELETE);
      x = prevX;
      y = prevY;
    }
  }
  return ops.reverse();
}

/** The edit script of two line arrays: common prefix and suffix, then Myers (bounded) in between. */
export function diffLines(a: readonly string[], b: readonly string[]): { ops: Op[]; exact: boolean } {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const ids = new Map<string, number>();
  const intern = (lines: readonly string[]) => {
    const out = new Int32Array(lines.length - pre - suf);
    for (let i = 0; i < out.length; i++) {
      const line = lines[pre + i];
      let id = ids.get(line);
      if (id === undefined) ids.set(line, (id = ids.size));
      out[i] = id;
    }
    return out;
  };
  const midA = a.length - pre - suf;
  const midB = b.length - pre - suf;
  let middle: Op[] | undefined;
  if (midA <= MAX_DIFF_LINES && midB <= MAX_DIFF_LINES) middle = myers(intern(a), intern(b), MAX_EDIT_DISTANCE);
  const exact = middle !== undefined;
  middle ??= [...Array<Op>(midA).fill(DELETE), ...Array<Op>(midB).fill(INSERT)];
  return { ops: [...Array<Op>(pre).fill(EQUAL), ...middle, ...Array<Op>(suf).fill(EQUAL)], exact };
}

const range = (start: number, count: number): string => (count === 1 ? `${start}` : `${start},${count}`);

/** Git-style unified diff of two texts, with its parsed form. */
export function unifiedDiff(previous: string, current: string, from = 'previous', to = 'current'): ChangeDiff {
  const a = splitLines(previous);
  const b = splitLines(current);
  const { ops } = diffLines(a, b);
  // Lines of each side consumed before each op.
  const posA = new Int32Array(ops.length + 1);
  const posB = new Int32Array(ops.length + 1);
  for (let i = 0; i < ops.length; i++) {
    posA[i + 1] = posA[i] + (ops[i] === INSERT ? 0 : 1);
    posB[i + 1] = posB[i] + (ops[i] === DELETE ? 0 : 1);
  }
  const changed: number[] = [];
  for (let i = 0; i < ops.length; i++) if (ops[i] !== EQUAL) changed.push(i);
  if (changed.length === 0) return { text: '', json: { files: [] } };

  // Group changes closer than 2×CONTEXT equal lines into one hunk.
  const groups: [number, number][] = [];
  let first = changed[0];
  let last = changed[0];
  for (const i of changed.slice(1)) {
    if (i - last - 1 > 2 * CONTEXT) {
      groups.push([first, last]);
      first = i;
    }
    last = i;
  }
  groups.push([first, last]);

  const chunks: DiffChunk[] = [];
  const text: string[] = [`--- ${from}`, `+++ ${to}`];
  let additions = 0;
  let deletions = 0;
  for (const [f, l] of groups) {
    const s = Math.max(0, f - CONTEXT);
    const e = Math.min(ops.length, l + CONTEXT + 1);
    const oldLines = posA[e] - posA[s];
    const newLines = posB[e] - posB[s];
    const oldStart = oldLines === 0 ? posA[s] : posA[s] + 1;
    const newStart = newLines === 0 ? posB[s] : posB[s] + 1;
    const header = `@@ -${range(oldStart, oldLines)} +${range(newStart, newLines)} @@`;
    text.push(header);
    const changes: DiffChange[] = [];
    for (let i = s; i < e; i++) {
      if (ops[i] === EQUAL) {
        const content = ` ${a[posA[i]]}`;
        changes.push({ type: 'normal', normal: true, ln1: posA[i] + 1, ln2: posB[i] + 1, content });
        text.push(content);
      } else if (ops[i] === DELETE) {
        const content = `-${a[posA[i]]}`;
        changes.push({ type: 'del', del: true, ln: posA[i] + 1, content });
        text.push(content);
        deletions++;
      } else {
        const content = `+${b[posB[i]]}`;
        changes.push({ type: 'add', add: true, ln: posB[i] + 1, content });
        text.push(content);
        additions++;
      }
    }
    chunks.push({ content: header, changes, oldStart, oldLines, newStart, newLines });
  }
  return { text: `${text.join('\n')}\n`, json: { files: [{ from, to, chunks, additions, deletions }] } };
}
