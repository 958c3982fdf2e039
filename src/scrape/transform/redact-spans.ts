// What redaction detectors produce: spans of text with an entity and a priority, the mode levels,
// and the scanning helpers the detectors share.

export type PiiEntity = 'PERSON' | 'EMAIL' | 'PHONE' | 'LOCATION' | 'FINANCIAL' | 'SECRET';

export const FAST = 0;
export const ACCURATE = 1;
export const AGGRESSIVE = 2;

export interface Span {
  start: number;
  end: number;
  entity: PiiEntity;
  prio: number;
  /** Inside `<...>` (an autolink or bracketed destination): the tag is written without brackets. */
  bare?: boolean;
}

export const PRIO = {
  pem: 95,
  secret: 90,
  financial: 80,
  email: 70,
  obfEmail: 65,
  ip: 60,
  phone: 50,
  address: 40,
  zip: 35,
  person: 30,
};

// Small helpers

export function span(start: number, end: number, entity: PiiEntity, prio: number): Span {
  return { start, end, entity, prio };
}

export const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const WORDISH = /[\p{L}\p{N}_]/u;
const LETTER_DIGIT = /[\p{L}\p{N}]/u;

/**
 * Whether text[i] continues a word. A `_` counts only when a letter or digit follows it, so Markdown
 * emphasis (`_jane@example.com_`) still ends a match.
 */
export function wordAt(text: string, i: number): boolean {
  const c = text[i];
  if (c === undefined) return false;
  if (c === '_') return LETTER_DIGIT.test(text[i + 1] ?? '');
  return WORDISH.test(c);
}

export function digitsOf(s: string): string {
  return s.replace(/\D/g, '');
}

/** Run a global regex over text, mapping each match to zero or more spans. */
export function scan(re: RegExp, text: string, fn: (m: RegExpExecArray) => Span | Span[] | null | undefined): Span[] {
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
export function groupSpan(m: RegExpExecArray, group: number | string, entity: PiiEntity, prio: number): Span | null {
  const idx = typeof group === 'number' ? m.indices?.[group] : m.indices?.groups?.[group];
  return idx ? span(idx[0], idx[1], entity, prio) : null;
}
