// Diffs of two markdown texts and of two JSON extractions, shared by the changeTracking scrape format and monitors:
// a git-style unified line diff (edit script by jsdiff, bounded) with its parse-diff-shaped parse (Firecrawl's
// shape), and a per-field {previous, current} map. Conventions and bounds: docs/design/diff.md.
import { FILE_HEADERS_ONLY, type StructuredPatch, diffArrays, formatPatch } from 'diff';

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

/** One file of a parsed diff, in the shape of the parse-diff package. */
export interface DiffFile {
  from: string;
  to: string;
  chunks: DiffChunk[];
  additions: number;
  deletions: number;
}

export interface LineDiff {
  /** Git-style unified diff ('' when the texts are equal). */
  text: string;
  /** The same diff parsed: files → chunks (hunks) → changes (no files when equal). */
  json: { files: DiffFile[] };
}

export type JsonFieldChanges = Record<string, { previous: unknown; current: unknown }>;

/** Lines in the differing middle of either side beyond which no edit script is searched. */
export const MAX_DIFF_LINES = 20_000;
/** Inserted plus deleted lines beyond which the search for an edit script stops. */
export const MAX_EDIT_DISTANCE = 2_000;
const CONTEXT = 3;

/** One step of an edit script: 0 keeps a line of both sides, 1 deletes one of the previous, 2 inserts one of the current. */
export type Op = 0 | 1 | 2;
const EQUAL: Op = 0;
const DELETE: Op = 1;
const INSERT: Op = 2;

/** The lines of a text: line endings normalised, a final newline (or its absence) ignored. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/**
 * The edit script of two line arrays: common prefix and suffix, then jsdiff's minimal one in between. Past the
 * bounds (MAX_DIFF_LINES, MAX_EDIT_DISTANCE) the middle is deleted and inserted whole and `exact` is false.
 */
export function diffLines(a: readonly string[], b: readonly string[]): { ops: Op[]; exact: boolean } {
  let pre = 0;
  while (pre < a.length && pre < b.length && a[pre] === b[pre]) pre++;
  let suf = 0;
  while (suf < a.length - pre && suf < b.length - pre && a[a.length - 1 - suf] === b[b.length - 1 - suf]) suf++;
  const midA = a.length - pre - suf;
  const midB = b.length - pre - suf;
  let middle: Op[] | undefined;
  if (midA <= MAX_DIFF_LINES && midB <= MAX_DIFF_LINES) {
    // Lines as small integers: jsdiff compares tokens with ===, cheaper on numbers than on long strings.
    const ids = new Map<string, number>();
    const intern = (lines: readonly string[]) =>
      lines.slice(pre, lines.length - suf).map((line) => {
        let id = ids.get(line);
        if (id === undefined) ids.set(line, (id = ids.size));
        return id;
      });
    const changes = diffArrays(intern(a), intern(b), { maxEditLength: MAX_EDIT_DISTANCE });
    if (changes) {
      middle = [];
      for (const c of changes) middle.push(...Array<Op>(c.count).fill(c.added ? INSERT : c.removed ? DELETE : EQUAL));
    }
  }
  const exact = middle !== undefined;
  middle ??= [...Array<Op>(midA).fill(DELETE), ...Array<Op>(midB).fill(INSERT)];
  return { ops: [...Array<Op>(pre).fill(EQUAL), ...middle, ...Array<Op>(suf).fill(EQUAL)], exact };
}

/** A hunk range as git writes it: a count of 1 left out. */
const range = (start: number, count: number): string => (count === 1 ? `${start}` : `${start},${count}`);

export interface UnifiedDiffOptions {
  /** The previous side's name (default 'previous'). */
  from?: string;
  /** The current side's name (default 'current'). */
  to?: string;
  /** A git diff: a `diff --git a/FROM b/TO` line and `--- a/FROM`, `+++ b/TO` (the parse keeps the bare names). */
  git?: boolean;
}

/**
 * Git-style unified diff of two texts (3 lines of context, changes at most 6 equal lines apart in one hunk, a
 * count of 1 left out as git does, line endings and the final newline ignored) and its parse-diff-shaped parse.
 */
export function unifiedDiff(previous: string, current: string, options: UnifiedDiffOptions = {}): LineDiff {
  const { from = 'previous', to = 'current', git = false } = options;
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
  const text: string[] = [];
  let additions = 0;
  let deletions = 0;
  for (const [f, l] of groups) {
    const s = Math.max(0, f - CONTEXT);
    const e = Math.min(ops.length, l + CONTEXT + 1);
    const oldLines = posA[e] - posA[s];
    const newLines = posB[e] - posB[s];
    // An empty side starts at the line before (git's and parse-diff's "-0,0").
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
  return {
    text: `${fileHeader(from, to, git)}${text.join('\n')}\n`,
    json: { files: [{ from, to, chunks, additions, deletions }] },
  };
}

/** The file header lines as jsdiff writes them (git quoting of odd names included), before the hunks. */
function fileHeader(from: string, to: string, git: boolean): string {
  const patch: StructuredPatch & { isGit?: boolean } = {
    oldFileName: git ? `a/${from}` : from,
    newFileName: git ? `b/${to}` : to,
    oldHeader: undefined,
    newHeader: undefined,
    // One empty hunk so that a git patch writes its ---/+++ lines; its "@@" line is cut below.
    hunks: [{ oldStart: 1, oldLines: 0, newStart: 1, newLines: 0, lines: [] }],
    isGit: git,
  };
  const formatted = formatPatch(patch, FILE_HEADERS_ONLY);
  return formatted.slice(0, formatted.lastIndexOf('@@ -'));
}

// --- JSON ---

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Structural equality of JSON values: object key order and undefined-valued keys do not count, array order does. */
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

export interface JsonFieldChangesOptions {
  /**
   * 'top-level' (change tracking): one entry per top-level field, the current side's fields first; a side that
   * is not an object counts as no fields when the other is one. 'nested' (monitors): dotted paths into objects
   * both sides hold ("price.amount"), the previous side's fields first; an object against a value that is neither
   * an object nor null compares as `value`.
   */
  paths: 'top-level' | 'nested';
}

/**
 * The fields whose value differs (deep equality; arrays compare as whole values), as {field: {previous, current}};
 * a side that lacks the field is null. When neither side is an object, the values compare as the field `value`.
 */
export function jsonFieldChanges(
  previous: unknown,
  current: unknown,
  { paths }: JsonFieldChangesOptions,
): JsonFieldChanges {
  const out: JsonFieldChanges = {};
  const nested = paths === 'nested';
  const asFields = (v: unknown) => (isPlainObject(v) ? v : nested && v !== null && v !== undefined ? undefined : {});
  const p = asFields(previous);
  const c = asFields(current);
  if (!p || !c || (!isPlainObject(previous) && !isPlainObject(current))) {
    if (!deepEqual(previous ?? null, current ?? null))
      out.value = { previous: previous ?? null, current: current ?? null };
    return out;
  }
  if (nested) walk(p, c, '', out);
  else {
    const keys = [...Object.keys(c), ...Object.keys(p).filter((k) => !Object.hasOwn(c, k))];
    for (const k of keys) {
      const pv = p[k] ?? null;
      const cv = c[k] ?? null;
      if (!deepEqual(pv, cv)) out[k] = { previous: pv, current: cv };
    }
  }
  return out;
}

function walk(p: Record<string, unknown>, c: Record<string, unknown>, prefix: string, out: JsonFieldChanges): void {
  const keys = [...Object.keys(p), ...Object.keys(c).filter((k) => !Object.hasOwn(p, k))];
  for (const key of keys) {
    const path = prefix ? `${prefix}.${key}` : key;
    const pv = p[key] ?? null;
    const cv = c[key] ?? null;
    if (isPlainObject(pv) && isPlainObject(cv)) walk(pv, cv, path, out);
    else if (!deepEqual(pv, cv)) out[path] = { previous: pv, current: cv };
  }
}
