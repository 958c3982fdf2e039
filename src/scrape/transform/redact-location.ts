// Redaction detectors for LOCATION: IPv4/IPv6 addresses (not versions, not addresses that identify
// no one) and street addresses (US/UK, German, French), with `City, ST 12345` in aggressive mode.
import { isDigit, PRIO, scan, type Span, span, wordAt } from './redact-spans.ts';

// LOCATION: IP addresses

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4_RE = new RegExp(`(?<![A-Za-z0-9.-]|[A-Za-z0-9]_)${OCTET}(?:\\.${OCTET}){3}`, 'g');
const VERSION_CUE = /(?:\bversion|\bver\.?|\bv|\brelease|\bbuild|\bfirmware|\bfw|\brev\.?|\bsemver)\s*$/i;

export function findIpv4(text: string): Span[] {
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

const IPV6_RE =
  /(?<![A-Za-z0-9:.-]|[A-Za-z0-9]_)(?:[0-9A-Fa-f]{0,4}:){2,7}(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(?:\.(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}|[0-9A-Fa-f]{0,4})(?:%[A-Za-z0-9]+)?/g;

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

export function findIpv6(text: string): Span[] {
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

export function findStreets(text: string): Span[] {
  const out: Span[] = [];
  // A Title Case run on both sides ("Top 10 Main Street Eateries") is a headline, not an address.
  const us = scan(STREET_RE, text, (m) => {
    const end = m.index + m[0].length;
    const bare = !m[0].includes(',');
    if (
      bare &&
      TITLE_BEFORE.test(text.slice(Math.max(0, m.index - 30), m.index)) &&
      TITLE_AFTER.test(text.slice(end, end + 3))
    )
      return null;
    return span(m.index, end, 'LOCATION', PRIO.address);
  });
  out.push(...us);
  for (const re of [DE_STREET_RE, FR_STREET_RE]) {
    out.push(...scan(re, text, (m) => span(m.index, m.index + m[0].length, 'LOCATION', PRIO.address)));
  }
  return out;
}

export function findZipState(text: string): Span[] {
  return scan(ZIP_STATE_RE, text, (m) => span(m.index, m.index + m[0].length, 'LOCATION', PRIO.zip));
}
