// redactPII: deterministic, rule-based redaction of personal data and secrets in scraped Markdown.
//
// Every detector is a regular expression plus a validator (Luhn for cards, mod-97 for IBANs, octet
// ranges for IPs, SSN area/group/serial rules, digit counts and grouping shapes for phones). There is
// no model, so the detectors trade recall for precision:
//
//   - PERSON is only found from high-precision cues: an honorific before capitalised name(s)
//     (`Dr. Jane Smith` → `Dr. <PERSON>`, the honorific is kept) and, in 'aggressive' mode, cue
//     phrases (`my name is`, `Name:`, `contact`, `Attn:`, `Regards,` ...). Bare names in prose
//     ("Jane Smith said") are NOT detected.
//   - LOCATION covers IPv4/IPv6 addresses (not 0.0.0.0, 127.0.0.0/8 or 255.255.255.255, which
//     identify no one; a dotted quad after "version"/"v"/"build" is a version) and street addresses
//     with a house number and a known street suffix (US/UK style, German `Hauptstraße 5`, French
//     `12 rue de la Paix`), optionally followed by a unit and `, City, ST 12345` / a UK postcode;
//     a lone `City, ST 12345` only in 'aggressive' mode. Place names on their own are not detected,
//     nor is a Title Case headline such as "Top 10 Main Street Eateries".
//   - The IBAN (mod-97) check is strict enough to run in 'fast' mode with the other checksummed
//     identifiers; UK NI numbers, which have no checksum, start at 'accurate'.
//   - National identifiers (US SSN, UK National Insurance number) have their own patterns and
//     validation but are reported under FINANCIAL, as are payment cards and IBANs.
//
// Modes (each includes the previous one):
//   fast       emails, payment cards (Luhn), IBANs (mod-97), SSNs, IP addresses, secrets
//   accurate   + phones with phone-like grouping or a `+`/`00` prefix, street addresses,
//              honorific names, UK NI numbers                                       (default)
//   aggressive + obfuscated emails (`jane [at] example [dot] com`), looser phone groupings and any
//              7–15 digit number after a cue word (tel, phone, call ...), cue-phrase names,
//              `City, ST 12345`, SSNs without dashes after an "SSN" cue
//
// Markdown awareness: link/image destinations (`](...)`), reference definitions, autolinks and bare
// URLs are left intact, except for the parts that are themselves sensitive: the address of a
// `mailto:` link, the number of a `tel:`/`sms:` link, a password in `user:pass@`, and secret-looking
// query/fragment parameters (`?api_key=...`, `&token=...`, known token formats, emails) whose VALUE
// is redacted. Link text, alt text, tables and code (fenced or inline) are ordinary text: every
// detector runs there. Overlapping matches are resolved by priority (SECRET > FINANCIAL > EMAIL >
// IP > PHONE > address > PERSON), then by length.
//
// Replacement styles: 'tag' writes `<EMAIL>` etc. (note a Markdown renderer may treat `<EMAIL>` as
// an inline HTML tag; it is kept literal here as the API promises; inside `<...>` autolinks and
// bracketed destinations the name is written bare, `<jane@x.org>` → `<EMAIL>`), 'mask' writes `*` for every
// character of the match (newlines inside a match are kept, so the length is unchanged), 'remove'
// deletes the match and collapses a resulting double space.

export type PiiEntity = 'PERSON' | 'EMAIL' | 'PHONE' | 'LOCATION' | 'FINANCIAL' | 'SECRET';

export interface RedactOptions {
  mode?: 'accurate' | 'aggressive' | 'fast';
  entities?: PiiEntity[];
  replaceStyle?: 'tag' | 'mask' | 'remove';
}

export interface RedactResult {
  text: string;
  counts: Partial<Record<PiiEntity, number>>;
}

export const PII_ENTITIES: readonly PiiEntity[] = ['PERSON', 'EMAIL', 'PHONE', 'LOCATION', 'FINANCIAL', 'SECRET'];

const FAST = 0;
const ACCURATE = 1;
const AGGRESSIVE = 2;
const LEVELS: Record<string, number> = { fast: FAST, accurate: ACCURATE, aggressive: AGGRESSIVE };

interface Span {
  start: number;
  end: number;
  entity: PiiEntity;
  prio: number;
  /** Inside `<...>` (an autolink or bracketed destination): the tag is written without brackets. */
  bare?: boolean;
}

interface Detector {
  entity: PiiEntity;
  /** Lowest mode level the detector runs at. */
  level: number;
  find(text: string, level: number): Span[];
}

const PRIO = { pem: 95, secret: 90, financial: 80, email: 70, obfEmail: 65, ip: 60, phone: 50, address: 40, zip: 35, person: 30 };

// ---------------------------------------------------------------------------------------------
// Small helpers

function span(start: number, end: number, entity: PiiEntity, prio: number): Span {
  return { start, end, entity, prio };
}

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const WORDISH = /[\p{L}\p{N}_]/u;
const LETTER_DIGIT = /[\p{L}\p{N}]/u;

/**
 * Whether text[i] continues a word. A `_` counts only when a letter or digit follows it, so Markdown
 * emphasis (`_jane@example.com_`) still ends a match.
 */
function wordAt(text: string, i: number): boolean {
  const c = text[i];
  if (c === undefined) return false;
  if (c === '_') return LETTER_DIGIT.test(text[i + 1] ?? '');
  return WORDISH.test(c);
}

function digitsOf(s: string): string {
  return s.replace(/\D/g, '');
}

/** Luhn checksum over a digit string. */
export function luhnValid(digits: string): boolean {
  let sum = 0;
  let dbl = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (dbl) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    dbl = !dbl;
  }
  return digits.length > 0 && sum % 10 === 0;
}

/** ISO 13616 check: move the first four characters to the end, letters → 10..35, mod 97 = 1. */
export function ibanValid(iban: string): boolean {
  const s = iban.replace(/ /g, '').toUpperCase();
  if (!/^[A-Z]{2}\d{2}[A-Z0-9]{11,30}$/.test(s)) return false;
  const r = s.slice(4) + s.slice(0, 4);
  let rem = 0;
  for (const ch of r) {
    const code = ch.charCodeAt(0);
    const v = code >= 65 ? String(code - 55) : ch;
    for (const d of v) rem = (rem * 10 + (d.charCodeAt(0) - 48)) % 97;
  }
  return rem === 1;
}

function isbn13Valid(d: string): boolean {
  if (!/^97[89]\d{10}$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 13; i++) sum += (d.charCodeAt(i) - 48) * (i % 2 === 0 ? 1 : 3);
  return sum % 10 === 0;
}

function isbn10Valid(d: string): boolean {
  if (!/^\d{9}[\dX]$/.test(d)) return false;
  let sum = 0;
  for (let i = 0; i < 10; i++) sum += (d[i] === 'X' ? 10 : d.charCodeAt(i) - 48) * (10 - i);
  return sum % 11 === 0;
}

/** Run a global regex over text, mapping each match to zero or more spans. */
function scan(re: RegExp, text: string, fn: (m: RegExpExecArray) => Span | Span[] | null | undefined): Span[] {
  const out: Span[] = [];
  re.lastIndex = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m[0].length === 0) re.lastIndex++;
    const r = fn(m);
    if (Array.isArray(r)) out.push(...r);
    else if (r) out.push(r);
  }
  return out;
}

/** Span of a capture group (regex compiled with the `d` flag). */
function groupSpan(m: RegExpExecArray, group: number | string, entity: PiiEntity, prio: number): Span | null {
  const idx = typeof group === 'number' ? m.indices?.[group] : m.indices?.groups?.[group];
  return idx ? span(idx[0], idx[1], entity, prio) : null;
}

// ---------------------------------------------------------------------------------------------
// EMAIL

// A leading/trailing `_` is left out (Markdown emphasis) unless it is inside a word.
const EMAIL_RE = /(?<![A-Za-z0-9.%+-]|[A-Za-z0-9]_)[A-Za-z0-9%+-](?:[A-Za-z0-9_%+.-]{0,62}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-]|_[A-Za-z0-9])/g;
/** Same, with the `@` percent-encoded (inside URL query values). */
const EMAIL_ENC_RE = /(?<![A-Za-z0-9.%+-]|[A-Za-z0-9]_)[A-Za-z0-9+-](?:[A-Za-z0-9_+.-]{0,62}[A-Za-z0-9_+-])?%40(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-]|_[A-Za-z0-9])/g;

const OB_AT = String.raw`(?:\s*[[({<]\s*(?:at|@)\s*[\])}>]\s*|\s+at\s+|\s*@\s*)`;
const OB_DOT = String.raw`(?:\s*[[({<]\s*(?:dot|\.)\s*[\])}>]\s*|\s+dot\s+|\.)`;
const OB_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const OB_EMAIL_RE = new RegExp(
  String.raw`(?<![A-Za-z0-9.%+-]|[A-Za-z0-9]_)[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?(${OB_AT})${OB_LABEL}((?:${OB_DOT}${OB_LABEL})*${OB_DOT})[A-Za-z]{2,24}(?![A-Za-z0-9-]|_[A-Za-z0-9])`,
  'gi',
);
const BRACKETED = /[[({<]/;
const WORD_DOT = /\sdot\s/i;

function findEmails(text: string): Span[] {
  return scan(EMAIL_RE, text, (m) => span(m.index, m.index + m[0].length, 'EMAIL', PRIO.email));
}

function findObfuscatedEmails(text: string): Span[] {
  return scan(OB_EMAIL_RE, text, (m) => {
    const at = m[1];
    const dots = m[2];
    const atBracket = BRACKETED.test(at);
    const atWord = !atBracket && /at/i.test(at);
    const dotObf = BRACKETED.test(dots) || WORD_DOT.test(dots);
    if (!atBracket && !atWord && !dotObf) return null; // a plain address: findEmails has it
    // `met at example.com`: a spelled-out "at" needs a spelled-out or bracketed "dot" as well.
    if (atWord && !dotObf) return null;
    return span(m.index, m.index + m[0].length, 'EMAIL', PRIO.obfEmail);
  });
}

// ---------------------------------------------------------------------------------------------
// SECRET

const TOKEN_RES: { re: RegExp; check?: (s: string) => boolean }[] = [
  // AWS access key ids
  { re: /(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}(?![A-Za-z0-9])/g },
  // GitHub tokens
  { re: /(?<![A-Za-z0-9_])gh[pousr]_[A-Za-z0-9]{36,255}(?![A-Za-z0-9_])/g },
  { re: /(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9_]{22,255}(?![A-Za-z0-9_])/g },
  // Slack
  { re: /(?<![A-Za-z0-9_])xox[abeprs]-[A-Za-z0-9-]{10,250}(?![A-Za-z0-9_-])/g },
  // Stripe
  { re: /(?<![A-Za-z0-9_])(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{10,247}(?![A-Za-z0-9_])/g },
  // OpenAI / Anthropic style: sk-, ≥ 20 characters, with at least one digit and one letter
  {
    re: /(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-|ant-)?[A-Za-z0-9_-]{20,}(?![A-Za-z0-9_-])/g,
    check: (s) => /\d/.test(s.slice(3)) && /[A-Za-z]/.test(s.slice(3)),
  },
  // Google API keys
  { re: /(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])/g },
  // JWTs: base64url header starting eyJ, payload, signature (empty signature only for an eyJ payload)
  { re: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.(?:eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*|[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})(?![A-Za-z0-9_-])/g },
];

function findTokens(text: string, offset = 0): Span[] {
  const out: Span[] = [];
  for (const { re, check } of TOKEN_RES) {
    for (const s of scan(re, text, (m) => (check && !check(m[0]) ? null : span(m.index, m.index + m[0].length, 'SECRET', PRIO.secret)))) {
      s.start += offset;
      s.end += offset;
      out.push(s);
    }
  }
  return out;
}

const PEM_BEGIN_RE = /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----/g;

/** The base64 body of a PEM private key block (the BEGIN/END lines stay, for readability). */
function findPem(text: string): Span[] {
  const out: Span[] = [];
  const noEnd = new Set<string>(); // labels without an END after some point: none after any later one
  PEM_BEGIN_RE.lastIndex = 0;
  for (let m = PEM_BEGIN_RE.exec(text); m !== null; m = PEM_BEGIN_RE.exec(text)) {
    if (noEnd.has(m[1])) continue;
    const endMarker = `-----END ${m[1]}-----`;
    const s = m.index + m[0].length;
    const e = text.indexOf(endMarker, s);
    if (e < 0) {
      noEnd.add(m[1]);
      continue;
    }
    const body = text.slice(s, e);
    const lead = body.length - body.trimStart().length;
    const trail = body.length - body.trimEnd().length;
    if (s + lead < e - trail) out.push(span(s + lead, e - trail, 'SECRET', PRIO.pem));
    PEM_BEGIN_RE.lastIndex = e + endMarker.length;
  }
  return out;
}

const SECRET_KEYWORD = String.raw`(?:pass(?:word|wd|phrase)|pwd|secret|api[_-]?key|apikey|access[_-]?key(?:[_-]?id)?|secret[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|id[_-]?token|token|private[_-]?key|client[_-]?secret|credentials?)`;
// Bounded repetition: a long dotted identifier must not make this quadratic.
const SECRET_KEY = String.raw`(?:[A-Za-z0-9]{1,40}(?:\\?[_.-])){0,5}${SECRET_KEYWORD}(?:(?:\\?[_.-])[A-Za-z0-9]{1,40}){0,5}`;
const ASSIGN_RE = new RegExp(
  String.raw`(?<![A-Za-z0-9_\\])(["'\`]?)${SECRET_KEY}\1(?:[*_]{1,2})?[ \t]*(:=|=>|[:=])(?:[*_]{1,2})?[ \t]*(?:"(?<dq>[^"\n]{1,300})"|'(?<sq>[^'\n]{1,300})'|(?<bare>[^\s"'\`,;&)\]}<>|]{1,300}))`,
  'gid',
);
const PLACEHOLDER = /^(?:\$|<|\{|%|\*+$|x+$|\.+$|-+$|process\.env|os\.environ|env\(|getenv|null$|none$|nil$|undefined$|true$|false$|required$|optional$|string$|str$|redacted$|your[_-]|\[)/i;

function findAssignments(text: string): Span[] {
  return scan(ASSIGN_RE, text, (m) => {
    const g = m.groups!;
    const quoted = g.dq !== undefined || g.sq !== undefined;
    const name = g.dq !== undefined ? 'dq' : g.sq !== undefined ? 'sq' : 'bare';
    let [s, e] = m.indices!.groups![name]!;
    let value = text.slice(s, e);
    if (!quoted) {
      const t = value.replace(/[.,:!?*_]+$/, '');
      e -= value.length - t.length;
      value = t;
    }
    const v = value.trim();
    s += value.length - value.trimStart().length;
    e -= value.length - value.trimEnd().length;
    if (v.length < 3 || PLACEHOLDER.test(v)) return null;
    // Prose like "Password: must be 8 characters": an unquoted value after ':' must look like a
    // credential (a digit or symbol, or a long mixed-case string).
    if (!quoted && m[2] === ':') {
      const strong = /[\d\W_]/.test(v) || (v.length >= 12 && /[a-z]/.test(v) && /[A-Z]/.test(v));
      if (!strong || v.length < 4) return null;
    }
    return span(s, e, 'SECRET', PRIO.secret);
  });
}

const AUTH_RE = /\b(?:Authorization|Proxy-Authorization)["']?\s*[:=]\s*["']?(?:Bearer|Basic|Token|Digest|Bot)\s+([A-Za-z0-9._~+/=-]{8,})/gid;
const BEARER_RE = /\bBearer\s+([A-Za-z0-9._~+/-]{20,}=*)(?![A-Za-z0-9._~+/=-])/gd;

function findAuthHeaders(text: string): Span[] {
  return [
    ...scan(AUTH_RE, text, (m) => groupSpan(m, 1, 'SECRET', PRIO.secret)),
    ...scan(BEARER_RE, text, (m) => (/\d/.test(m[1]) ? groupSpan(m, 1, 'SECRET', PRIO.secret) : null)),
  ];
}

// ---------------------------------------------------------------------------------------------
// FINANCIAL (payment cards, IBANs) and national identifiers (SSN, UK NI), reported as FINANCIAL

const CARD_RE = /(?<![A-Za-z0-9.,+/-]|[A-Za-z0-9]_)\d(?:[ -]?\d){12,18}/g;

/** The longest prefix (ending at a group boundary) of a digit run that is a plausible, Luhn-valid card. */
function cardLength(cand: string): number {
  const groups = cand.split(/[ -]/);
  const seps = cand.match(/[ -]/g) ?? [];
  if (seps.some((s) => s !== seps[0])) {
    // Mixed separators: only the part before the first different separator can be a card.
    const cut = cand.indexOf(seps[0] === ' ' ? '-' : ' ');
    return cardLength(cand.slice(0, cut));
  }
  for (let n = groups.length; n >= 1; n--) {
    const gs = groups.slice(0, n);
    const digits = gs.join('');
    if (digits.length < 13 || digits.length > 19) continue;
    if (!/^[2-6]/.test(digits)) continue; // Visa, Mastercard, Amex, Discover, JCB, Diners, UnionPay...
    if (gs.length > 1) {
      const sizes = gs.map((g) => g.length).join(',');
      const fours = gs.slice(0, -1).every((g) => g.length === 4) && gs[gs.length - 1].length <= 4;
      if (!fours && sizes !== '4,6,5' && sizes !== '4,6,4') continue;
    }
    if (!luhnValid(digits)) continue;
    return gs.join(seps[0] ?? '').length;
  }
  return 0;
}

function findCards(text: string): Span[] {
  return scan(CARD_RE, text, (m) => {
    const len = cardLength(m[0]);
    if (!len) return null;
    const end = m.index + len;
    const next = text[end];
    if (wordAt(text, end) || ((next === '.' || next === ',' || next === '-') && isDigit(text[end + 1]))) return null;
    return span(m.index, end, 'FINANCIAL', PRIO.financial);
  });
}

const IBAN_RE = /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)(?![A-Za-z0-9])/g;

function findIbans(text: string): Span[] {
  return scan(IBAN_RE, text, (m) => (ibanValid(m[0]) ? span(m.index, m.index + m[0].length, 'FINANCIAL', PRIO.financial) : null));
}

const SSN_RE = /(?<![A-Za-z0-9-]|[A-Za-z0-9]_)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![A-Za-z0-9-]|_[A-Za-z0-9])/g;
const SSN_CUE_RE = /\b(?:SSN|SSA|social security(?: number| no\.?| #)?)\s*(?:#|no\.?|number)?\s*[:#]?\s*((?!000|666|9\d\d)\d{3}[ -]?(?!00)\d{2}[ -]?(?!0000)\d{4})(?![\w-])/gid;
const UK_NI_RE = /(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g;

function findSsn(text: string): Span[] {
  return scan(SSN_RE, text, (m) => span(m.index, m.index + m[0].length, 'FINANCIAL', PRIO.financial));
}
function findSsnCue(text: string): Span[] {
  return scan(SSN_CUE_RE, text, (m) => groupSpan(m, 1, 'FINANCIAL', PRIO.financial));
}
function findUkNi(text: string): Span[] {
  return scan(UK_NI_RE, text, (m) => span(m.index, m.index + m[0].length, 'FINANCIAL', PRIO.financial));
}

// ---------------------------------------------------------------------------------------------
// LOCATION: IP addresses

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4_RE = new RegExp(`(?<![A-Za-z0-9.-]|[A-Za-z0-9]_)${OCTET}(?:\\.${OCTET}){3}`, 'g');
const VERSION_CUE = /(?:\bversion|\bver\.?|\bv|\brelease|\bbuild|\bfirmware|\bfw|\brev\.?|\bsemver)\s*$/i;

function findIpv4(text: string): Span[] {
  return scan(IPV4_RE, text, (m) => {
    const end = m.index + m[0].length;
    const next = text[end];
    if (wordAt(text, end) || ((next === '.' || next === '-') && isDigit(text[end + 1]))) return null;
    if (VERSION_CUE.test(text.slice(Math.max(0, m.index - 12), m.index))) return null;
    // Addresses that identify no one: unspecified, loopback, broadcast.
    if (/^(?:0\.0\.0\.0|127\.|255\.255\.255\.255)/.test(m[0])) return null;
    return span(m.index, end, 'LOCATION', PRIO.ip);
  });
}

const IPV6_RE = /(?<![A-Za-z0-9:.-]|[A-Za-z0-9]_)(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}|[0-9A-Fa-f]{0,4})(?:%[A-Za-z0-9]+)?/g;

export function ipv6Valid(s: string): boolean {
  const addr = s.replace(/%[A-Za-z0-9]+$/, '');
  if (!/\d/.test(addr)) return false; // `dead::beef`, `Face::Add` are more likely code than addresses
  let tail = 0;
  let body = addr;
  const v4 = /:((?:\d{1,3}\.){3}\d{1,3})$/.exec(addr);
  if (v4) {
    tail = 2;
    body = addr.slice(0, v4.index + 1);
    if (body.endsWith(':') && !body.endsWith('::')) body = body.slice(0, -1);
  }
  const dbl = body.split('::');
  if (dbl.length > 2) return false;
  const parts = (p: string) => (p === '' ? [] : p.split(':'));
  const head = parts(dbl[0]);
  const rest = dbl.length === 2 ? parts(dbl[1]) : [];
  const all = [...head, ...rest];
  if (!all.every((g) => /^[0-9A-Fa-f]{1,4}$/.test(g))) return false;
  const count = all.length + tail;
  if (dbl.length === 2) return count <= 7 && all.length + tail >= 2;
  return count === 8;
}

function findIpv6(text: string): Span[] {
  return scan(IPV6_RE, text, (m) => {
    let s = m[0];
    // A sentence-ending colon ("address fe80::1:") is punctuation, not part of the address.
    if (s.endsWith(':') && !s.endsWith('::')) s = s.slice(0, -1);
    const end = m.index + s.length;
    const next = text[end];
    if (wordAt(text, end) || (next === '.' && isDigit(text[end + 1]))) return null;
    return ipv6Valid(s) ? span(m.index, end, 'LOCATION', PRIO.ip) : null;
  });
}

// ---------------------------------------------------------------------------------------------
// LOCATION: street addresses and ZIP/state

const US_STATES =
  'AL|AK|AZ|AR|CA|CO|CT|DE|DC|FL|GA|HI|ID|IL|IN|IA|KS|KY|LA|ME|MD|MA|MI|MN|MS|MO|MT|NE|NV|NH|NJ|NM|NY|NC|ND|OH|OK|OR|PA|RI|SC|SD|TN|TX|UT|VT|VA|WA|WV|WI|WY|PR|GU|VI';
const STREET_STOP =
  '(?!(?:The|A|An|And|Or|Of|In|On|At|To|For|By|With|From|Is|Are|Was|Were|Be|Our|Your|My|Top|Best|Easy|Simple|Step|Steps|Chapter|Page|Section|Part|Version|Year|Years|Days?|Minutes?|Hours?|Weeks?|Months?|Ways?|Things|Reasons|Tips|Items?|Times?)\\b)';
const STREET_WORD = String.raw`${STREET_STOP}(?:\p{Lu}[\p{L}'’.-]*|\d{1,3}(?:st|nd|rd|th))`;
const STREET_SUFFIX =
  '(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Ter|Circle|Cir|Parkway|Pkwy|Highway|Hwy|Square|Sq|Crescent|Cres|Close|Trail|Trl|Plaza|Plz|Alley|Row|Mews|Gardens|Grove|Expressway|Expy|Freeway|Fwy|Turnpike|Loop|Path|Walk|Parade|Esplanade|Embankment)';
const DIRECTION = '(?:N|S|E|W|NE|NW|SE|SW|North|South|East|West)';
const UNIT = String.raw`(?:,?\s(?:Apt|Apartment|Suite|Ste|Unit|Floor|Fl|Room|Rm|Bldg|Building)\.?\s?#?[A-Za-z0-9-]{1,6}|,?\s#\s?[A-Za-z0-9-]{1,6})`;
const CITY = String.raw`\p{Lu}[\p{L}.'’-]*(?:\s\p{Lu}[\p{L}.'’-]*){0,3}`;
const ZIP = String.raw`\d{5}(?:-\d{4})?`;
const UK_POSTCODE = String.raw`[A-Z]{1,2}\d[A-Z\d]?\s?\d[A-Z]{2}`;
const CITY_TAIL = String.raw`(?:,\s${CITY}(?:,?\s(?:${US_STATES})\.?\s${ZIP}|,?\s${UK_POSTCODE}))?`;
const STREET_RE = new RegExp(
  String.raw`(?<![\p{L}\p{N}_.,$€£/#-])\d{1,6}[A-Za-z]?(?:[-–]\d{1,6})?,?\s(?:${DIRECTION}\.?\s)?(?:${STREET_WORD}\s){1,4}?${STREET_SUFFIX}(?![\p{L}\p{N}])\.?(?:\s${DIRECTION}(?![\p{L}\p{N}])\.?)?${UNIT}?${CITY_TAIL}`,
  'gu',
);
// Single-word names (Hauptstraße, Hohlweg, Kaiser-Wilhelm-Ring) and two-word names (Berliner Straße).
const DE_SUFFIX = '(?:[Ss]tra(?:ß|ss)e|[Ss]tr\\.|[Ww]eg|[Pp]latz|[Aa]llee|[Gg]asse|[Dd]amm|[Uu]fer|[Cc]haussee|-Ring)';
const DE_SUFFIX_WORD = '(?:Straße|Strasse|Str\\.|Weg|Platz|Allee|Gasse|Damm|Ufer|Chaussee)';
const DE_STREET_RE = new RegExp(
  String.raw`(?<![\p{L}\p{N}])(?:\p{Lu}[\p{L}-]*${DE_SUFFIX}|(?:\p{Lu}[\p{L}-]*\s){1,2}${DE_SUFFIX_WORD})\s?\d{1,4}(?:\s?[a-z](?![\p{L}\p{N}]))?(?:\s?[-–/]\s?\d{1,4}[a-z]?)?(?:,\s(?:D-)?\d{5}\s\p{Lu}[\p{L}-]+(?:\s(?:am|an der|im)\s\p{Lu}[\p{L}-]+)?)?(?![\p{L}\p{N}])`,
  'gu',
);
const FR_STREET_RE = new RegExp(
  String.raw`(?<![\p{L}\p{N}])\d{1,4}(?:\s?(?:bis|ter))?,?\s(?:[Rr]ue|[Aa]venue|[Bb]oulevard|[Bb]d|[Pp]lace|[Cc]hemin|[Aa]llée|[Ii]mpasse|[Qq]uai|[Cc]ours)\s(?:(?:de\sla|de\sl['’]|des|du|de|d['’]|la|le|les|l['’])\s?)?\p{Lu}[\p{L}'’-]*(?:\s(?:(?:de\sla|des|du|de|d['’]|la|le|les|l['’])\s?)?\p{Lu}[\p{L}'’-]*){0,3}(?:,\s\d{5}\s\p{Lu}[\p{L}-]+)?`,
  'gu',
);
const ZIP_STATE_RE = new RegExp(
  String.raw`(?<![\p{L}\p{N}])(?:${CITY},\s)?(?:${US_STATES})\s${ZIP}(?![\p{L}\p{N}-])`,
  'gu',
);

const TITLE_BEFORE = /\p{Lu}[\p{L}'’-]*\s$/u;
const TITLE_AFTER = /^\s\p{Lu}\p{Ll}/u;

function findStreets(text: string): Span[] {
  const out: Span[] = [];
  // A Title Case run on both sides ("Top 10 Main Street Eateries") is a headline, not an address.
  const us = scan(STREET_RE, text, (m) => {
    const end = m.index + m[0].length;
    const bare = !m[0].includes(',');
    if (bare && TITLE_BEFORE.test(text.slice(Math.max(0, m.index - 30), m.index)) && TITLE_AFTER.test(text.slice(end, end + 3))) return null;
    return span(m.index, end, 'LOCATION', PRIO.address);
  });
  out.push(...us);
  for (const re of [DE_STREET_RE, FR_STREET_RE]) {
    out.push(...scan(re, text, (m) => span(m.index, m.index + m[0].length, 'LOCATION', PRIO.address)));
  }
  return out;
}

function findZipState(text: string): Span[] {
  return scan(ZIP_STATE_RE, text, (m) => span(m.index, m.index + m[0].length, 'LOCATION', PRIO.zip));
}

// ---------------------------------------------------------------------------------------------
// PHONE

const PHONE_GROUP = String.raw`(?:\(\d{1,5}\)|\d{1,15})`;
const PHONE_SEP = String.raw`(?:[ \u00a0]?[-./][ \u00a0]?|[ \u00a0]|(?<=\))|[ \u00a0]?(?=\())`;
const PHONE_RE = new RegExp(
  String.raw`(?<![A-Za-z0-9@$€£¥+.,/\\#%-]|[A-Za-z0-9]_|\d:)(?:\+[ \u00a0]?)?${PHONE_GROUP}(?:${PHONE_SEP}${PHONE_GROUP})*`,
  'g',
);
const NANP = /^(?:1[-. ]?)?(?:\(\d{3}\)[ \u00a0]?|\d{3}[-. \u00a0])\d{3}[-. \u00a0]\d{4}$/;
const DATE_PREFIX = /^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{4}|\d{1,2}[-./]\d{1,2}[-./]\d{2})(?!\d)/;
const YEAR_RANGE = /^(?:1[5-9]|20)\d\d\s?[-–/]\s?(?:1[5-9]|20)\d\d$/;
const SSN_SHAPE = /^\d{3}-\d{2}-\d{4}$/;
const PHONE_CUE = /(?:\b(?:tel|telephone|phone|ph|call|calls|mobile|mob|cell|fax|whatsapp|sms|text|hotline|dial|contact)\b|☎|📞)[^\n\d]{0,20}$/iu;
const NOT_PHONE_CUE = /\b(?:order|invoice|ref|reference|tracking|isbn|issn|sku|item|ticket|case|id|account|acct|serial|part|model|patent|doi|pmid|zip|postcode)\s*(?:no\.?|nr\.?|number|#)?\s*[:#]?\s*$/i;
const CURRENCY_BEFORE = /[$€£¥₹]\s?$/;
const CURRENCY_AFTER = /^\s?(?:[€$£¥₹%]|(?:USD|EUR|GBP|CHF|JPY|dollars?|euros?|pounds?|percent)\b)/i;

function phoneAccepted(cand: string, level: number, before: string, after: string): boolean {
  const digits = digitsOf(cand);
  if (digits.length < 7 || digits.length > 15) return false;
  const plus = cand.startsWith('+');
  const groups = cand.match(/\d+/g)!;
  if (CURRENCY_BEFORE.test(before) || CURRENCY_AFTER.test(after)) return false;
  if (DATE_PREFIX.test(cand.replace(/^\+\s?/, ''))) return false;
  if (!plus) {
    if ( YEAR_RANGE.test(cand) || SSN_SHAPE.test(cand)) return false;
    if (/^[\d-]+$/.test(cand) && groups.length >= 4 && (isbn13Valid(digits) || isbn10Valid(digits))) return false;
    if (NOT_PHONE_CUE.test(before)) return false;
  }
  if (plus) return groups[0].length <= 3 || groups.length === 1 ? digits.length >= 8 : false;
  // International with a 00 prefix: 00 49 30 1234567, 0049 30 1234567
  if (groups[0].startsWith('00') && groups.length >= 2 && digits.length >= 9) return true;
  if (NANP.test(cand)) return true;
  // National with a trunk 0: UK 020 7946 0958, DE 030 1234567, FR 01 23 45 67 89
  const first = groups[0];
  if (groups.length >= 2 && /^0[1-9]/.test(first) && first.length <= 5 && digits.length >= 9 && digits.length <= 12) {
    const dotted = /\./.test(cand);
    if (groups.slice(1).every((g) => g.length >= 2 && g.length <= 8) && (!dotted || groups.every((g) => g.length <= 4))) return true;
  }
  if (level < AGGRESSIVE) return false;
  if (PHONE_CUE.test(before)) return true;
  const seps = cand.replace(/^\+/, '').match(/[^\d]+/g) ?? [];
  if (groups.length < 2 || groups.length > 6 || seps.every((s) => s.trim() === '.')) return false;
  return groups[groups.length - 1].length >= 3 && groups.every((g) => g.length <= 8);
}

function findPhones(text: string, level: number): Span[] {
  return scan(PHONE_RE, text, (m) => {
    const cand = m[0];
    const end = m.index + cand.length;
    const next = text[end];
    if (wordAt(text, end) || (next !== undefined && ('@%€$£¥'.includes(next) || ('.,-/:'.includes(next) && isDigit(text[end + 1]))))) return null;
    const before = text.slice(Math.max(0, m.index - 40), m.index);
    const after = text.slice(end, end + 12);
    return phoneAccepted(cand, level, before, after) ? span(m.index, end, 'PHONE', PRIO.phone) : null;
  });
}

// ---------------------------------------------------------------------------------------------
// PERSON

const NAME_STOP =
  '(?!(?:The|A|An|And|Or|But|In|On|At|To|For|Of|With|From|By|As|Is|Was|Has|Had|Said|Says|Will|Would|Can|I|We|He|She|They|It|This|That|Who|What|When|Where|Why|How|Us|Our|Your|You)(?![\\p{L}\\p{N}]))';
const NAME_TOKEN = String.raw`${NAME_STOP}\p{Lu}[\p{L}'’-]*`;
const INITIAL = String.raw`\p{Lu}\.`;
const PARTICLE = '(?:van|von|der|den|de|del|della|di|da|du|la|le|bin|ibn|al|el|ter|ten)';
const NAME = String.raw`(?:(?:${INITIAL}\s?){0,3}${NAME_TOKEN}(?:\s(?:${PARTICLE}\s){0,2}(?:${INITIAL}\s?){0,2}${NAME_TOKEN}){0,2})`;
const HONORIFIC_RE = new RegExp(
  String.raw`(?<![\p{L}\p{N}])(?:Mr|Mrs|Ms|Mx|Dr|Prof|Sir|Dame|Mme|Mlle|Herr|Frau)(?:\.\s?|\s)(${NAME})`,
  'gdu',
);
const CUE_NAME_RE = new RegExp(
  String.raw`(?<![\p{L}])(?:(?<one>[Mm]y name is|[Nn]ame\s*:|(?:Attn|Attention|Author|Authored by|Written by|Signed|Sincerely|(?:Best |Kind |Warm )?[Rr]egards|Cheers)\s*[:,]?)|(?<two>[Cc]ontact(?:\s*:)?))(?:\s*[*_]{1,2})?\s+(?<name>${NAME})`,
  'gdu',
);
const GENERIC_AFTER_CONTACT =
  /^(?:Us|Me|Support|Sales|Customer|Customers|Service|Services|Team|Today|Now|Info|Information|Help|Details|Form|Page|Center|Centre|Desk|Office|Department|Our|Your|The)$/;

/** A name span, shrunk to drop a trailing possessive ('s). */
function nameSpan(start: number, end: number, text: string): Span {
  const s = text.slice(start, end);
  const pos = /['’]s$/.exec(s);
  return span(start, pos ? end - 2 : end, 'PERSON', PRIO.person);
}

function findHonorificNames(text: string): Span[] {
  return scan(HONORIFIC_RE, text, (m) => {
    const [s, e] = m.indices![1];
    return nameSpan(s, e, text);
  });
}

function findCueNames(text: string): Span[] {
  return scan(CUE_NAME_RE, text, (m) => {
    const name = m.groups!.name;
    if (m.groups!.two !== undefined) {
      const words = name.split(/\s+/).filter((w) => !/^\p{Lu}\.$/u.test(w));
      if (words.length < 2 || words.some((w) => GENERIC_AFTER_CONTACT.test(w))) return null;
    }
    const [s, e] = m.indices!.groups!.name;
    return nameSpan(s, e, text);
  });
}

// ---------------------------------------------------------------------------------------------
// Detector table

const DETECTORS: Detector[] = [
  { entity: 'SECRET', level: FAST, find: findPem },
  { entity: 'SECRET', level: FAST, find: (t) => findTokens(t) },
  { entity: 'SECRET', level: FAST, find: findAssignments },
  { entity: 'SECRET', level: FAST, find: findAuthHeaders },
  { entity: 'FINANCIAL', level: FAST, find: findCards },
  { entity: 'FINANCIAL', level: FAST, find: findIbans },
  { entity: 'FINANCIAL', level: FAST, find: findSsn },
  { entity: 'FINANCIAL', level: ACCURATE, find: findUkNi },
  { entity: 'FINANCIAL', level: AGGRESSIVE, find: findSsnCue },
  { entity: 'EMAIL', level: FAST, find: findEmails },
  { entity: 'EMAIL', level: AGGRESSIVE, find: findObfuscatedEmails },
  { entity: 'LOCATION', level: FAST, find: findIpv4 },
  { entity: 'LOCATION', level: FAST, find: findIpv6 },
  { entity: 'LOCATION', level: ACCURATE, find: findStreets },
  { entity: 'LOCATION', level: AGGRESSIVE, find: findZipState },
  { entity: 'PHONE', level: ACCURATE, find: findPhones },
  { entity: 'PERSON', level: ACCURATE, find: findHonorificNames },
  { entity: 'PERSON', level: AGGRESSIVE, find: findCueNames },
];

// ---------------------------------------------------------------------------------------------
// Markdown: URL ranges that are kept intact (apart from their sensitive parts)

interface Range {
  start: number;
  end: number;
  /** Enclosed in `<...>`: an autolink or an angle-bracketed link destination. */
  angle: boolean;
}

const REF_DEF_RE = /^ {0,3}\[[^\]\n]+\]:[ \t]*(?:<([^>\n]*)>|(\S+))/dgm;
const AUTOLINK_RE = /<((?:mailto|tel|sms):[^\s<>]+)>/gid;
const BARE_URL_RE = /(?<![\w/@.-])(?:(?:https?|ftps?|wss?):\/\/|www\.)[^\s<>"'`[\]]+/gi;

function indexOrEnd(text: string, ch: string, from: number): number {
  const i = text.indexOf(ch, from);
  return i < 0 ? text.length : i;
}

function findUrlRanges(text: string): Range[] {
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
      if (nextGt > j + 1 && nextGt < nextNl && nextGt < text.length) ranges.push({ start: j + 1, end: nextGt, angle: true });
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
  for (const m of text.matchAll(AUTOLINK_RE)) ranges.push({ start: m.indices![1][0], end: m.indices![1][1], angle: true });
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
    }
    else merged.push({ ...r });
  }
  return merged;
}

function overlapsAny(ranges: Range[], s: Span): boolean {
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
function urlSpans(text: string, r: Range, enabled: Set<PiiEntity>, level: number): Span[] {
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
    const ui = /^[a-z][a-z0-9+.-]*:\/\/[^/?#@\s:]*:([^/?#@\s]+)@/id.exec(url);
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

// ---------------------------------------------------------------------------------------------
// Resolution and replacement

/** Non-overlapping spans: higher priority first, then longer, then earlier. Returned by position. */
function resolve(spans: Span[]): Span[] {
  const order = [...spans].sort((a, b) => b.prio - a.prio || b.end - b.start - (a.end - a.start) || a.start - b.start);
  const taken: Span[] = [];
  for (const s of order) {
    if (s.end <= s.start) continue;
    let lo = 0;
    let hi = taken.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (taken[mid].start < s.start) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0 && taken[lo - 1].end > s.start) continue;
    if (lo < taken.length && taken[lo].start < s.end) continue;
    taken.splice(lo, 0, s);
  }
  return taken;
}

function apply(text: string, spans: Span[], style: 'tag' | 'mask' | 'remove'): RedactResult {
  const counts: Partial<Record<PiiEntity, number>> = {};
  let out = '';
  let last = 0;
  for (const s of spans) {
    out += text.slice(last, s.start);
    last = s.end;
    counts[s.entity] = (counts[s.entity] ?? 0) + 1;
    // `<jane@example.com>` (an email autolink) becomes `<EMAIL>`, not `<<EMAIL>>`.
    const bare = s.bare || (text[s.start - 1] === '<' && text[s.end] === '>');
    if (style === 'tag') out += bare ? s.entity : `<${s.entity}>`;
    else if (style === 'mask') out += text.slice(s.start, s.end).replace(/[^\r\n]/g, '*');
    else if ((out.endsWith(' ') || out.endsWith('\t')) && text[last] === ' ') last++;
  }
  out += text.slice(last);
  return { text: out, counts };
}

/**
 * Redact personal data and secrets from Markdown. `opts === true` means the defaults: every entity,
 * mode 'accurate', replaceStyle 'tag'. See the header comment for what each mode detects.
 */
export function redactPII(markdown: string, opts?: RedactOptions | true): RedactResult {
  const o: RedactOptions = opts === true || opts == null ? {} : opts;
  const level = LEVELS[o.mode ?? 'accurate'] ?? ACCURATE;
  const enabled = new Set<PiiEntity>(o.entities ?? PII_ENTITIES);
  const style = o.replaceStyle === 'mask' || o.replaceStyle === 'remove' ? o.replaceStyle : 'tag';
  if (typeof markdown !== 'string' || markdown.length === 0 || enabled.size === 0) return { text: markdown ?? '', counts: {} };

  const urls = findUrlRanges(markdown);
  const spans: Span[] = [];
  for (const d of DETECTORS) {
    if (!enabled.has(d.entity) || level < d.level) continue;
    for (const s of d.find(markdown, level)) if (!overlapsAny(urls, s)) spans.push(s);
  }
  for (const r of urls) spans.push(...urlSpans(markdown, r, enabled, level));
  return apply(markdown, resolve(spans), style);
}

/**
 * A document's markdown and per-page markdown redacted alike (scrape and parse); the warning
 * counts what was replaced in the markdown, or is undefined when nothing was.
 */
export function redactDocumentText(
  markdown: string,
  pages: { pageNumber: number; markdown: string }[] | undefined,
  opts: RedactOptions | true,
): { markdown: string; pages?: { pageNumber: number; markdown: string }[]; warning?: string } {
  const { text, counts } = redactPII(markdown, opts);
  const total = Object.values(counts).reduce((a, b) => a + (b ?? 0), 0);
  return {
    markdown: text,
    ...(pages ? { pages: pages.map((p) => ({ pageNumber: p.pageNumber, markdown: redactPII(p.markdown, opts).text })) } : {}),
    ...(total ? { warning: `redactPII replaced ${total} item(s) in markdown` } : {}),
  };
}
