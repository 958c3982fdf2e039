// Comparing two checks of a monitored page: what is not content is normalised away before hashing (whitespace
// runs, tracking query strings, cache-busters, nonces and signed-URL tokens), a page's status follows from the
// two hashes, markdown changes become a git-style unified diff (jsdiff) with its parse-diff-shaped parse, and
// JSON extractions a per-field {previous, current} map.
import { createHash } from 'node:crypto';
import { type StructuredPatch, formatPatch, parsePatch, structuredPatch } from 'diff';
import { type DiffChange, type DiffChunk, type DiffFile, deepEqual } from '../scrape/formats/change-tracking.ts';

/** One file of a parsed diff, in the shape of the parse-diff package that Firecrawl clients read. */
export type ParsedDiffFile = DiffFile;

export interface MarkdownDiff {
  /** Git-style unified diff ('' when the texts are equal). */
  text: string;
  /** The same diff parsed: files → chunks (hunks) → changes (no files when equal). */
  json: { files: ParsedDiffFile[] };
}

export type PageChangeStatus = 'same' | 'new' | 'changed' | 'removed' | 'error';

export type JsonFieldDiff = Record<string, { previous: unknown; current: unknown }>;

/** Query parameters that track the visit, not choose the content. */
const TRACKING_PARAM = new RegExp(
  '^(?:utm_.*|gclid|gclsrc|dclid|gbraid|wbraid|fbclid|msclkid|yclid|twclid|ttclid|li_fat_id|igshid|mc_cid|mc_eid|' +
    '_hsenc|_hsmi|__hssc|__hstc|__hsfp|hsctatracking|mkt_tok|oly_anon_id|oly_enc_id|vero_id|wickedid|rb_clickid|' +
    's_cid|cmpid|ref|ref_src|ref_url|referrer|spm|scm|trk|trkcampaign|si|_ga|_gl|sc_cid|ncid|zanpid|srsltid)$',
  'i',
);
/** Parameters that bust caches or carry per-request secrets: never content. */
const NONCE_PARAM = new RegExp(
  '^(?:_|cb|cachebuster|cache_buster|nocache|rnd|rand|random|timestamp|ts|t|nonce|csrf|csrf_token|csrfmiddlewaretoken|' +
    'xsrf|_token|authenticity_token|sid|sessionid|session_id|phpsessid|jsessionid|cfid|cftoken|expires|signature|' +
    'key-pair-id|policy|x-amz-.*|x-goog-.*|sig|se|st|sp|sv|sr|skoid|sktid|skt|ske|sks|skv|hmac|token|auth)$',
  'i',
);
/** Version parameters are cache-busters when their value is a hash or a timestamp, not a word. */
const VERSION_PARAM = /^(?:v|ver|version|rev|hash|build)$/i;
const TOKENISH = /^(?:[0-9a-f]{8,}|\d{9,}|[A-Za-z0-9_-]{20,}={0,2})$/;
/** Runs of URL-safe characters long enough to hold a token (matched whole: linear time on any input). */
const LONG_RUN = /[A-Za-z0-9_-]{16,}/g;
const HEX_PART = /(?<![A-Za-z0-9])(?:[0-9a-f]{16,}|[0-9A-F]{16,})(?![A-Za-z0-9])/g;
const UUID = /(?<![A-Za-z0-9])[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}(?![A-Za-z0-9])/gi;

/**
 * The text with tokens replaced by `mark`: base64-ish runs (20+ characters mixing digits, lower and upper case),
 * hex runs of 16+ with a digit (hashes, session ids) and UUIDs. Words and plain numbers stay.
 */
export function maskTokens(text: string, mark: string): string {
  return text.replace(LONG_RUN, (run) => {
    if (run.length >= 20 && /\d/.test(run) && /[a-z]/.test(run) && /[A-Z]/.test(run)) return mark;
    return run.replace(UUID, mark).replace(HEX_PART, (hex) => (/\d/.test(hex) ? mark : hex));
  });
}

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>()"'`[\]]+|(?<=\]\()\/[^\s)]*/g;
/** "csrf_token: abc…", "nonce=…" written in the page text itself. */
const SECRET_IN_TEXT =
  /\b(csrf[-_]?token|csrf|xsrf[-_]?token|nonce|authenticity_token|__requestverificationtoken|session[-_]?id)(["']?\s*[:=]\s*["']?)([A-Za-z0-9+/_=-]{8,})/gi;

function cleanUrl(url: string): string {
  const hashAt = url.indexOf('#');
  const fragment = hashAt === -1 ? '' : url.slice(hashAt);
  const beforeHash = hashAt === -1 ? url : url.slice(0, hashAt);
  const queryAt = beforeHash.indexOf('?');
  const path = queryAt === -1 ? beforeHash : beforeHash.slice(0, queryAt);
  const kept: string[] = [];
  if (queryAt !== -1) {
    for (const pair of beforeHash.slice(queryAt + 1).split('&')) {
      if (!pair) continue;
      const eq = pair.indexOf('=');
      let name = eq === -1 ? pair : pair.slice(0, eq);
      const value = eq === -1 ? '' : pair.slice(eq + 1);
      try {
        name = decodeURIComponent(name);
      } catch {
        // Keeps the raw name.
      }
      if (TRACKING_PARAM.test(name) || NONCE_PARAM.test(name)) continue;
      if (VERSION_PARAM.test(name) && TOKENISH.test(value)) continue;
      kept.push(TOKENISH.test(value) && /\d/.test(value) && value.length >= 20 ? `${pair.slice(0, eq)}=~` : pair);
    }
  }
  const query = kept.length ? `?${kept.join('&')}` : '';
  // Text fragments (#:~:text=) are added by search engines and share links.
  const frag = fragment.startsWith('#:~:') ? '' : fragment;
  return `${maskTokens(path, '~')}${query}${frag}`;
}

/** The markdown with what is not content removed, so that equal content gives equal text. */
export function normalizeForCompare(markdown: string): string {
  const lines = markdown
    .replace(/\r\n?/g, '\n')
    .replace(URL_IN_TEXT, (url) => {
      // Sentence punctuation right after a bare URL is not part of it.
      const trail = /[.,;:!?]+$/.exec(url)?.[0] ?? '';
      return cleanUrl(url.slice(0, url.length - trail.length)) + trail;
    })
    .replace(SECRET_IN_TEXT, (_m, name: string, sep: string) => `${name}${sep}~`)
    .split('\n')
    .map((line) => line.replace(/[\s\u00a0\u200b\ufeff]+/g, ' ').trim());
  const out: string[] = [];
  for (const line of lines) if (line !== '' || (out.length && out[out.length - 1] !== '')) out.push(line);
  while (out.length && out[out.length - 1] === '') out.pop();
  return out.join('\n');
}

/** A page content's identity: the first 128 bits of its SHA-256, as 32 hex digits (small rows, no collisions in practice). */
export function contentHash(normalized: string): string {
  return createHash('sha256').update(normalized, 'utf8').digest('hex').slice(0, 32);
}

/**
 * A page's status from its previous and current content hashes: `error` when this check failed (whatever the
 * hashes), `new` without a previous, `removed` without a current, else `same` or `changed` (neither: `same`).
 */
export function classify(
  previousHash: string | null | undefined,
  currentHash: string | null | undefined,
  error?: unknown,
): PageChangeStatus {
  if (error !== undefined && error !== null && error !== false && error !== '') return 'error';
  const before = previousHash ?? undefined;
  const now = currentHash ?? undefined;
  if (before === undefined) return now === undefined ? 'same' : 'new';
  if (now === undefined) return 'removed';
  return before === now ? 'same' : 'changed';
}

/** Edit operations beyond which jsdiff stops; the differing middle is then reported as replaced whole. */
export const MAX_EDIT_LENGTH = 2_000;
const CONTEXT = 3;

const withFinalNewline = (s: string) => {
  const t = s.replace(/\r\n?/g, '\n');
  return t === '' || t.endsWith('\n') ? t : `${t}\n`;
};

/** Git-style unified diff of two markdown texts (labelled a/URL and b/URL) and its parsed form. */
export function markdownDiff(previous: string, current: string, url: string): MarkdownDiff {
  const a = withFinalNewline(previous);
  const b = withFinalNewline(current);
  if (a === b) return { text: '', json: { files: [] } };
  const patch =
    structuredPatch(`a/${url}`, `b/${url}`, a, b, undefined, undefined, {
      context: CONTEXT,
      maxEditLength: MAX_EDIT_LENGTH,
    }) ?? replacedWhole(`a/${url}`, `b/${url}`, a, b);
  const text = formatPatch({ ...patch, oldHeader: undefined, newHeader: undefined, isGit: true }).replace(
    /^@@ -(\d+),(\d+) \+(\d+),(\d+) @@/gm,
    (_m, a: string, b: string, c: string, d: string) => `@@ -${range(+a, +b)} +${range(+c, +d)} @@`,
  );
  return { text, json: { files: parsePatch(text).map((p) => parsedFile(p, url)) } };
}

/** The patch when the texts differ too much for an edit script: common lines at both ends, one hunk between. */
function replacedWhole(oldName: string, newName: string, a: string, b: string): StructuredPatch {
  const x = a.split('\n').slice(0, -1);
  const y = b.split('\n').slice(0, -1);
  let pre = 0;
  while (pre < x.length && pre < y.length && x[pre] === y[pre]) pre++;
  let suf = 0;
  while (suf < x.length - pre && suf < y.length - pre && x[x.length - 1 - suf] === y[y.length - 1 - suf]) suf++;
  const lead = Math.max(0, pre - CONTEXT);
  const trail = Math.min(suf, CONTEXT);
  const lines = [
    ...x.slice(lead, pre).map((l) => ` ${l}`),
    ...x.slice(pre, x.length - suf).map((l) => `-${l}`),
    ...y.slice(pre, y.length - suf).map((l) => `+${l}`),
    ...x.slice(x.length - suf, x.length - suf + trail).map((l) => ` ${l}`),
  ];
  const oldLines = x.length - suf + trail - lead;
  const newLines = y.length - suf + trail - lead;
  return {
    oldFileName: oldName,
    newFileName: newName,
    oldHeader: undefined,
    newHeader: undefined,
    hunks: [
      {
        oldStart: oldLines === 0 ? lead : lead + 1,
        oldLines,
        newStart: newLines === 0 ? lead : lead + 1,
        newLines,
        lines,
      },
    ],
  };
}

const range = (start: number, count: number): string => (count === 1 ? `${start}` : `${start},${count}`);

/** jsdiff's parsed patch as parse-diff gives it: chunks with headers, changes with line numbers, counts. */
function parsedFile(patch: StructuredPatch, url: string): ParsedDiffFile {
  let additions = 0;
  let deletions = 0;
  const chunks: DiffChunk[] = patch.hunks.map((h) => {
    let ln1 = h.oldStart;
    let ln2 = h.newStart;
    const changes: DiffChange[] = [];
    for (const line of h.lines) {
      if (line.startsWith('+')) {
        changes.push({ type: 'add', add: true, ln: ln2++, content: line });
        additions++;
      } else if (line.startsWith('-')) {
        changes.push({ type: 'del', del: true, ln: ln1++, content: line });
        deletions++;
      } else if (line.startsWith(' ')) {
        changes.push({ type: 'normal', normal: true, ln1: ln1++, ln2: ln2++, content: line });
      }
    }
    return {
      content: `@@ -${range(h.oldStart, h.oldLines)} +${range(h.newStart, h.newLines)} @@`,
      changes,
      oldStart: h.oldStart,
      oldLines: h.oldLines,
      newStart: h.newStart,
      newLines: h.newLines,
    };
  });
  return { from: url, to: url, chunks, additions, deletions };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The fields whose value differs, by dotted path into nested objects ("price.amount"); arrays are compared as
 * whole values; a side that lacks the field is null. Values that are not objects compare as the field `value`.
 */
export function jsonDiff(previous: unknown, current: unknown): JsonFieldDiff {
  const out: JsonFieldDiff = {};
  if (!isPlainObject(previous) || !isPlainObject(current)) {
    if (isPlainObject(previous) && (current === null || current === undefined)) walk(previous, {}, '', out);
    else if (isPlainObject(current) && (previous === null || previous === undefined)) walk({}, current, '', out);
    else if (!deepEqual(previous ?? null, current ?? null))
      out.value = { previous: previous ?? null, current: current ?? null };
    return out;
  }
  walk(previous, current, '', out);
  return out;
}

function walk(p: Record<string, unknown>, c: Record<string, unknown>, prefix: string, out: JsonFieldDiff): void {
  const keys = [...Object.keys(p), ...Object.keys(c).filter((k) => !Object.hasOwn(p, k))];
  for (const key of keys) {
    const path = prefix ? `${prefix}.${key}` : key;
    const pv = p[key] ?? null;
    const cv = c[key] ?? null;
    if (isPlainObject(pv) && isPlainObject(cv)) walk(pv, cv, path, out);
    else if (!deepEqual(pv, cv)) out[path] = { previous: pv, current: cv };
  }
}
