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
// The line diff and the field diff are src/markdown/diff.ts's, shared with monitors (bounds there: past
// them the differing middle is reported as replaced whole, a valid diff, only not minimal).
import { type ChangeSnapshot, recordSnapshot } from '../../store/changes.ts';
import { normaliseUrl } from '../cache-key.ts';
import { urlKey } from '../../net/url-key.ts';
import type { Queryable } from '../../store/db-types.ts';
import { type JsonFieldChanges, type LineDiff, jsonFieldChanges, unifiedDiff } from '../../markdown/diff.ts';

export type ChangeTrackingMode = 'git-diff' | 'json';
export type ChangeStatus = 'new' | 'same' | 'changed' | 'removed';
export type Visibility = 'visible' | 'hidden';

export interface ChangeTracking {
  previousScrapeAt: string | null;
  changeStatus: ChangeStatus;
  visibility: Visibility;
  /** git-diff mode, when there is a previous snapshot. */
  diff?: LineDiff;
  /** json mode. */
  json?: JsonFieldChanges;
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

/** json mode: the top-level fields whose value differs (see the head comment). */
export function jsonChanges(previous: unknown, current: unknown): JsonFieldChanges {
  return jsonFieldChanges(previous, current, { paths: 'top-level' });
}
