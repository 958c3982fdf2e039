// redactPII: deterministic, rule-based redaction of personal data and secrets in scraped Markdown.
// This module holds the entry points and the detector table (which detector runs in which mode);
// the detectors, the Markdown URL handling and the replacement are in the redact-*.ts siblings.
// What each mode detects, and why: docs/design/scrape.md ("Redaction").
import { findEmails, findObfuscatedEmails, findPhones } from './redact-contact.ts';
import { findCards, findIbans, findSsn, findSsnCue, findUkNi } from './redact-financial.ts';
import { findIpv4, findIpv6, findStreets, findZipState } from './redact-location.ts';
import { findCueNames, findHonorificNames } from './redact-person.ts';
import { apply, type RedactResult, resolve } from './redact-replace.ts';
import { findAssignments, findAuthHeaders, findPem, findTokens } from './redact-secrets.ts';
import { ACCURATE, AGGRESSIVE, FAST, type PiiEntity, type Span } from './redact-spans.ts';
import { findUrlRanges, overlapsAny, urlSpans } from './redact-urls.ts';

export interface RedactOptions {
  mode?: 'accurate' | 'aggressive' | 'fast';
  entities?: PiiEntity[];
  replaceStyle?: 'tag' | 'mask' | 'remove';
}

export const PII_ENTITIES: readonly PiiEntity[] = ['PERSON', 'EMAIL', 'PHONE', 'LOCATION', 'FINANCIAL', 'SECRET'];

const LEVELS: Record<string, number> = { fast: FAST, accurate: ACCURATE, aggressive: AGGRESSIVE };

interface Detector {
  entity: PiiEntity;
  /** Lowest mode level the detector runs at. */
  level: number;
  find(text: string, level: number): Span[];
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

/**
 * Redact personal data and secrets from Markdown. `opts === true` means the defaults: every entity,
 * mode 'accurate', replaceStyle 'tag'. What each mode detects: docs/design/scrape.md.
 */
export function redactPII(markdown: string, opts?: RedactOptions | true): RedactResult {
  const o: RedactOptions = opts === true || opts == null ? {} : opts;
  const level = LEVELS[o.mode ?? 'accurate'] ?? ACCURATE;
  const enabled = new Set<PiiEntity>(o.entities ?? PII_ENTITIES);
  const style = o.replaceStyle === 'mask' || o.replaceStyle === 'remove' ? o.replaceStyle : 'tag';
  if (typeof markdown !== 'string' || markdown.length === 0 || enabled.size === 0)
    return { text: markdown ?? '', counts: {} };

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
    ...(pages
      ? { pages: pages.map((p) => ({ pageNumber: p.pageNumber, markdown: redactPII(p.markdown, opts).text })) }
      : {}),
    ...(total ? { warning: `redactPII replaced ${total} item(s) in markdown` } : {}),
  };
}
