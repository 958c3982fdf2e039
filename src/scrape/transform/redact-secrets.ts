// Redaction detectors for secrets: known token formats, PEM private keys, `key = value`
// assignments of secret-looking names, and Authorization/Bearer headers.
import { groupSpan, PRIO, scan, type Span, span } from './redact-spans.ts';

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
  {
    re: /(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{8,}\.(?:eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*|[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,})(?![A-Za-z0-9_-])/g,
  },
];

export function findTokens(text: string, offset = 0): Span[] {
  const out: Span[] = [];
  for (const { re, check } of TOKEN_RES) {
    for (const s of scan(re, text, (m) =>
      check && !check(m[0]) ? null : span(m.index, m.index + m[0].length, 'SECRET', PRIO.secret),
    )) {
      s.start += offset;
      s.end += offset;
      out.push(s);
    }
  }
  return out;
}

const PEM_BEGIN_RE = /-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----/g;

/** The base64 body of a PEM private key block (the BEGIN/END lines stay, for readability). */
export function findPem(text: string): Span[] {
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
export const PLACEHOLDER =
  /^(?:\$|<|\{|%|\*+$|x+$|\.+$|-+$|process\.env|os\.environ|env\(|getenv|null$|none$|nil$|undefined$|true$|false$|required$|optional$|string$|str$|redacted$|your[_-]|\[)/i;

export function findAssignments(text: string): Span[] {
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

const AUTH_RE =
  /\b(?:Authorization|Proxy-Authorization)["']?\s*[:=]\s*["']?(?:Bearer|Basic|Token|Digest|Bot)\s+([A-Za-z0-9._~+/=-]{8,})/dgi;
const BEARER_RE = /\bBearer\s+([A-Za-z0-9._~+/-]{20,}=*)(?![A-Za-z0-9._~+/=-])/dg;

export function findAuthHeaders(text: string): Span[] {
  return [
    ...scan(AUTH_RE, text, (m) => groupSpan(m, 1, 'SECRET', PRIO.secret)),
    ...scan(BEARER_RE, text, (m) => (/\d/.test(m[1]) ? groupSpan(m, 1, 'SECRET', PRIO.secret) : null)),
  ];
}
