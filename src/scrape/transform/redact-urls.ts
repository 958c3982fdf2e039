// Markdown-aware redaction: the URL ranges of a Markdown text (link destinations, reference
// definitions, autolinks, bare URLs) that detectors leave intact, and the sensitive parts inside them
// that are redacted all the same (mailto address, tel number, password, secret query values).
import { EMAIL_ENC_RE, findEmails } from './redact-contact.ts';
import { findTokens, PLACEHOLDER } from './redact-secrets.ts';
import { ACCURATE, digitsOf, type PiiEntity, PRIO, scan, type Span, span } from './redact-spans.ts';

// Markdown: URL ranges that are kept intact (apart from their sensitive parts)

interface Range {
  start: number;
  end: number;
  /** Enclosed in `<...>`: an autolink or an angle-bracketed link destination. */
  angle: boolean;
}

const REF_DEF_RE = /^ {0,3}\[[^\]\n]+\]:[ \t]*(?:<([^>\n]*)>|(\S+))/dgm;
const AUTOLINK_RE = /<((?:mailto|tel|sms):[^\s<>]+)>/dgi;
const BARE_URL_RE = /(?<![\w/@.-])(?:(?:https?|ftps?|wss?):\/\/|www\.)[^\s<>"'`[\]]+/gi;

function indexOrEnd(text: string, ch: string, from: number): number {
  const i = text.indexOf(ch, from);
  return i < 0 ? text.length : i;
}

export function findUrlRanges(text: string): Range[] {
  const ranges: Range[] = [];
  let nextGt = -1;
  let nextNl = -1;
  // Inline link and image destinations: ](dest "title")
  for (let p = text.indexOf(']('); p >= 0; p = text.indexOf('](', p + 2)) {
    let j = p + 2;
    while (j < text.length && (text[j] === ' ' || text[j] === '\t')) j++;
    if (text[j] === '\n') j++;
    while (j < text.length && (text[j] === ' ' || text[j] === '\t')) j++;
    if (text[j] === '<') {
      // Cached look-ups keep a run of `](<` without `>` linear.
      if (nextGt <= j) nextGt = indexOrEnd(text, '>', j + 1);
      if (nextNl <= j) nextNl = indexOrEnd(text, '\n', j + 1);
      if (nextGt > j + 1 && nextGt < nextNl && nextGt < text.length)
        ranges.push({ start: j + 1, end: nextGt, angle: true });
      continue;
    }
    const s = j;
    let depth = 0;
    for (; j < text.length; j++) {
      const c = text[j];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r') break;
      if (c === '\\') {
        j++;
        continue;
      }
      if (c === '(') depth++;
      else if (c === ')') {
        if (depth === 0) break;
        depth--;
      }
    }
    // Unbalanced parentheses: not a destination (CommonMark). Either way, resume after the scanned
    // run (it has no whitespace, so a `](` inside it would only yield a suffix of it): linear time.
    if (j > s && depth === 0) ranges.push({ start: s, end: Math.min(j, text.length), angle: false });
    p = Math.max(p, j - 2);
  }
  for (const m of text.matchAll(REF_DEF_RE)) {
    const idx = m.indices![1] ?? m.indices![2];
    if (idx && idx[1] > idx[0]) ranges.push({ start: idx[0], end: idx[1], angle: m.indices![1] !== undefined });
  }
  for (const m of text.matchAll(AUTOLINK_RE))
    ranges.push({ start: m.indices![1][0], end: m.indices![1][1], angle: true });
  for (const m of text.matchAll(BARE_URL_RE)) {
    const url = m[0];
    // Trailing punctuation belongs to the sentence; a closing paren only when unbalanced.
    let opens = 0;
    let closes = 0;
    for (const c of url) {
      if (c === '(') opens++;
      else if (c === ')') closes++;
    }
    let len = url.length;
    while (len > 0) {
      const c = url[len - 1];
      if ('.,;:!?*_~\'"'.includes(c)) len--;
      else if (c === ')' && closes > opens) {
        len--;
        closes--;
      } else break;
    }
    const end = m.index + len;
    if (len > 0) ranges.push({ start: m.index, end, angle: text[m.index - 1] === '<' && text[end] === '>' });
  }
  // Sort and merge (a bare URL inside a link destination is found twice).
  ranges.sort((a, b) => a.start - b.start || b.end - a.end);
  const merged: Range[] = [];
  for (const r of ranges) {
    const last = merged[merged.length - 1];
    if (last && r.start < last.end) {
      last.end = Math.max(last.end, r.end);
      last.angle ||= r.angle;
    } else merged.push({ ...r });
  }
  return merged;
}

export function overlapsAny(ranges: Range[], s: Span): boolean {
  let lo = 0;
  let hi = ranges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ranges[mid].end <= s.start) lo = mid + 1;
    else hi = mid;
  }
  return lo < ranges.length && ranges[lo].start < s.end;
}

const SECRET_PARAM =
  /^(?:[\w.-]*[_.-])?(?:api[_-]?key|apikey|key|token|access[_-]?token|refresh[_-]?token|id[_-]?token|auth[_-]?token|auth|secret|client[_-]?secret|password|passwd|pwd|sig|signature|credential|security[_-]?token|session[_-]?token)$/i;

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

/** The sensitive parts of one URL (absolute offsets). */
export function urlSpans(text: string, r: Range, enabled: Set<PiiEntity>, level: number): Span[] {
  const url = text.slice(r.start, r.end);
  const out: Span[] = [];
  const add = (s: Span) => {
    s.start += r.start;
    s.end += r.start;
    s.bare = r.angle;
    out.push(s);
  };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1].toLowerCase();
  if (scheme === 'mailto') {
    if (enabled.has('EMAIL')) {
      for (const s of findEmails(url)) add(s);
      for (const s of scan(EMAIL_ENC_RE, url, (m) => span(m.index, m.index + m[0].length, 'EMAIL', PRIO.email))) add(s);
    }
    return out;
  }
  if (scheme === 'tel' || scheme === 'sms') {
    if (enabled.has('PHONE') && level >= ACCURATE) {
      const num = /^[a-z]+:([+\d().\- %20]+)/i.exec(url);
      if (num) {
        const raw = num[1].replace(/[.\- ]+$/, '');
        const n = digitsOf(safeDecode(raw)).length;
        if (n >= 7 && n <= 15) add(span(scheme.length + 1, scheme.length + 1 + raw.length, 'PHONE', PRIO.phone));
      }
    }
    return out;
  }
  if (enabled.has('SECRET')) {
    const ui = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@\s:]*:([^/?#@\s]+)@/di.exec(url);
    if (ui) add(span(ui.indices![1][0], ui.indices![1][1], 'SECRET', PRIO.secret));
  }
  const q = url.search(/[?#]/);
  if (q < 0) return out;
  for (const m of url.slice(q + 1).matchAll(/([^&;#=?]+)=([^&;#]*)/g)) {
    const vs = q + 1 + m.index + m[1].length + 1;
    const value = m[2];
    if (!value) continue;
    const key = safeDecode(m[1]);
    let secretParam = false;
    if (enabled.has('SECRET')) {
      if (SECRET_PARAM.test(key) && !PLACEHOLDER.test(safeDecode(value))) {
        add(span(vs, vs + value.length, 'SECRET', PRIO.secret));
        secretParam = true;
      } else {
        for (const s of findTokens(value, vs)) add(s);
      }
    }
    if (!secretParam && enabled.has('EMAIL')) {
      for (const s of findEmails(value)) add(span(s.start + vs, s.end + vs, 'EMAIL', PRIO.email));
      for (const s of scan(EMAIL_ENC_RE, value, (mm) => span(mm.index, mm.index + mm[0].length, 'EMAIL', PRIO.email))) {
        add(span(s.start + vs, s.end + vs, 'EMAIL', PRIO.email));
      }
    }
  }
  return out;
}
