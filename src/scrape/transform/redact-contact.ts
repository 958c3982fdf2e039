// Redaction detectors for contact details: email addresses (plain, percent-encoded, obfuscated)
// and phone numbers (grouping shapes, cue words, and what only looks like one: dates, prices, IDs).
import { isbn10Valid, isbn13Valid } from './redact-checksums.ts';
import { AGGRESSIVE, digitsOf, isDigit, PRIO, scan, type Span, span, wordAt } from './redact-spans.ts';

// EMAIL

// A leading/trailing `_` is left out (Markdown emphasis) unless it is inside a word.
const EMAIL_RE =
  /(?<![A-Za-z0-9.%+-]|[A-Za-z0-9]_)[A-Za-z0-9%+-](?:[A-Za-z0-9_%+.-]{0,62}[A-Za-z0-9_%+-])?@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-]|_[A-Za-z0-9])/g;
/** Same, with the `@` percent-encoded (inside URL query values). */
export const EMAIL_ENC_RE =
  /(?<![A-Za-z0-9.%+-]|[A-Za-z0-9]_)[A-Za-z0-9+-](?:[A-Za-z0-9_+.-]{0,62}[A-Za-z0-9_+-])?%40(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,24}(?![A-Za-z0-9-]|_[A-Za-z0-9])/g;

const OB_AT = String.raw`(?:\s*[[({<]\s*(?:at|@)\s*[\])}>]\s*|\s+at\s+|\s*@\s*)`;
const OB_DOT = String.raw`(?:\s*[[({<]\s*(?:dot|\.)\s*[\])}>]\s*|\s+dot\s+|\.)`;
const OB_LABEL = '[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?';
const OB_EMAIL_RE = new RegExp(
  String.raw`(?<![A-Za-z0-9.%+-]|[A-Za-z0-9]_)[A-Za-z0-9](?:[A-Za-z0-9._%+-]{0,62}[A-Za-z0-9_%+-])?(${OB_AT})${OB_LABEL}((?:${OB_DOT}${OB_LABEL})*${OB_DOT})[A-Za-z]{2,24}(?![A-Za-z0-9-]|_[A-Za-z0-9])`,
  'gi',
);
const BRACKETED = /[[({<]/;
const WORD_DOT = /\sdot\s/i;

export function findEmails(text: string): Span[] {
  return scan(EMAIL_RE, text, (m) => span(m.index, m.index + m[0].length, 'EMAIL', PRIO.email));
}

export function findObfuscatedEmails(text: string): Span[] {
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

// PHONE

const PHONE_GROUP = String.raw`(?:\(\d{1,5}\)|\d{1,15})`;
const PHONE_SEP = String.raw`(?:[ \u00a0]?[-./][ \u00a0]?|[ \u00a0]|(?<=\))|[ \u00a0]?(?=\())`;
const PHONE_RE = new RegExp(
  String.raw`(?<![A-Za-z0-9@$€£¥+.,/\\#%-]|[A-Za-z0-9]_|\d:)(?:\+[ \u00a0]?)?${PHONE_GROUP}(?:${PHONE_SEP}${PHONE_GROUP})*`,
  'g',
);
const NANP = /^(?:1[-. ]?)?(?:\(\d{3}\)[ \u00a0]?|\d{3}[-. \u00a0])\d{3}[-. \u00a0]\d{4}$/;
const DATE_PREFIX =
  /^(?:\d{4}[-./]\d{1,2}[-./]\d{1,2}|\d{1,2}[-./]\d{1,2}[-./]\d{4}|\d{1,2}[-./]\d{1,2}[-./]\d{2})(?!\d)/;
const YEAR_RANGE = /^(?:1[5-9]|20)\d\d\s?[-–/]\s?(?:1[5-9]|20)\d\d$/;
const SSN_SHAPE = /^\d{3}-\d{2}-\d{4}$/;
const PHONE_CUE =
  /(?:\b(?:tel|telephone|phone|ph|call|calls|mobile|mob|cell|fax|whatsapp|sms|text|hotline|dial|contact)\b|☎|📞)[^\n\d]{0,20}$/iu;
const NOT_PHONE_CUE =
  /\b(?:order|invoice|ref|reference|tracking|isbn|issn|sku|item|ticket|case|id|account|acct|serial|part|model|patent|doi|pmid|zip|postcode)\s*(?:no\.?|nr\.?|number|#)?\s*[:#]?\s*$/i;
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
    if (YEAR_RANGE.test(cand) || SSN_SHAPE.test(cand)) return false;
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
    if (groups.slice(1).every((g) => g.length >= 2 && g.length <= 8) && (!dotted || groups.every((g) => g.length <= 4)))
      return true;
  }
  if (level < AGGRESSIVE) return false;
  if (PHONE_CUE.test(before)) return true;
  const seps = cand.replace(/^\+/, '').match(/[^\d]+/g) ?? [];
  if (groups.length < 2 || groups.length > 6 || seps.every((s) => s.trim() === '.')) return false;
  return groups[groups.length - 1].length >= 3 && groups.every((g) => g.length <= 8);
}

export function findPhones(text: string, level: number): Span[] {
  return scan(PHONE_RE, text, (m) => {
    const cand = m[0];
    const end = m.index + cand.length;
    const next = text[end];
    if (
      wordAt(text, end) ||
      (next !== undefined && ('@%€$£¥'.includes(next) || ('.,-/:'.includes(next) && isDigit(text[end + 1]))))
    )
      return null;
    const before = text.slice(Math.max(0, m.index - 40), m.index);
    const after = text.slice(end, end + 12);
    return phoneAccepted(cand, level, before, after) ? span(m.index, end, 'PHONE', PRIO.phone) : null;
  });
}
