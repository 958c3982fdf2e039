// Comparing two checks of a monitored page: what is not content is normalised away before hashing (whitespace
// runs, tracking query strings, cache-busters, nonces and signed-URL tokens), a page's status follows from the
// two hashes; markdown and JSON changes are diffed by src/markdown/diff.ts (shared with change tracking).
import { createHash } from 'node:crypto';
import { type JsonFieldChanges, type LineDiff, jsonFieldChanges, unifiedDiff } from '../markdown/diff.ts';

export type PageChangeStatus = 'same' | 'new' | 'changed' | 'removed' | 'error';

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

/**
 * A search result's identity: its URL without the fragment and without tracking query parameters (the
 * rest of the query, the path and the host's case as URL parsing leaves them).
 */
export function canonicalHitUrl(url: string): string {
  if (!URL.canParse(url)) return url;
  const u = new URL(url);
  u.hash = '';
  const tracking = [...u.searchParams.keys()].filter((k) => TRACKING_PARAM.test(k));
  for (const k of tracking) u.searchParams.delete(k);
  return u.href;
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

/** Git-style unified diff of two markdown texts (`diff --git a/URL b/URL`) and its parsed form (files named URL). */
export function markdownDiff(previous: string, current: string, url: string): LineDiff {
  return unifiedDiff(previous, current, { from: url, to: url, git: true });
}

/** The fields whose value differs, by dotted path into nested objects ("price.amount"); see jsonFieldChanges. */
export function jsonDiff(previous: unknown, current: unknown): JsonFieldChanges {
  return jsonFieldChanges(previous, current, { paths: 'nested' });
}
