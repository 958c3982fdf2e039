// Redaction detectors for payment cards (Luhn), IBANs (mod-97) and national identifiers (US SSN,
// UK NI number), all reported as FINANCIAL.
import { ibanValid, luhnValid } from './redact-checksums.ts';
import { groupSpan, isDigit, PRIO, scan, type Span, span, wordAt } from './redact-spans.ts';

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

export function findCards(text: string): Span[] {
  return scan(CARD_RE, text, (m) => {
    const len = cardLength(m[0]);
    if (!len) return null;
    const end = m.index + len;
    const next = text[end];
    if (wordAt(text, end) || ((next === '.' || next === ',' || next === '-') && isDigit(text[end + 1]))) return null;
    return span(m.index, end, 'FINANCIAL', PRIO.financial);
  });
}

const IBAN_RE =
  /(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?:[A-Z0-9]{11,30}|(?: [A-Z0-9]{4}){2,7}(?: [A-Z0-9]{1,3})?)(?![A-Za-z0-9])/g;

export function findIbans(text: string): Span[] {
  return scan(IBAN_RE, text, (m) =>
    ibanValid(m[0]) ? span(m.index, m.index + m[0].length, 'FINANCIAL', PRIO.financial) : null,
  );
}

const SSN_RE =
  /(?<![A-Za-z0-9-]|[A-Za-z0-9]_)(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![A-Za-z0-9-]|_[A-Za-z0-9])/g;
const SSN_CUE_RE =
  /\b(?:SSN|SSA|social security(?: number| no\.?| #)?)\s*(?:#|no\.?|number)?\s*[:#]?\s*((?!000|666|9\d\d)\d{3}[ -]?(?!00)\d{2}[ -]?(?!0000)\d{4})(?![\w-])/dgi;
const UK_NI_RE =
  /(?<![A-Za-z0-9])(?!BG|GB|KN|NK|NT|TN|ZZ)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?\d{2} ?\d{2} ?\d{2} ?[A-D](?![A-Za-z0-9])/g;

export function findSsn(text: string): Span[] {
  return scan(SSN_RE, text, (m) => span(m.index, m.index + m[0].length, 'FINANCIAL', PRIO.financial));
}
export function findSsnCue(text: string): Span[] {
  return scan(SSN_CUE_RE, text, (m) => groupSpan(m, 1, 'FINANCIAL', PRIO.financial));
}
export function findUkNi(text: string): Span[] {
  return scan(UK_NI_RE, text, (m) => span(m.index, m.index + m[0].length, 'FINANCIAL', PRIO.financial));
}
