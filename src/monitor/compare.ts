// Stand-in until h-mon-pure merges (engineer B's module replaces this file): what counts as a
// change of a monitored page (normalisation, hashes), its diffs, and the page's classification.
import { createHash } from 'node:crypto';
import { createTwoFilesPatch, parsePatch } from 'diff';

const TRACKING = /^(utm_\w+|gclid|fbclid|mc_eid|mc_cid|ref|_|v|cb)$/i;

export function normalizeForCompare(markdown: string): string {
  const urls = markdown.replace(/https?:\/\/[^\s)\]]+/g, (u) => {
    try {
      const url = new URL(u);
      for (const k of [...url.searchParams.keys()]) if (TRACKING.test(k)) url.searchParams.delete(k);
      return url.href;
    } catch {
      return u;
    }
  });
  return urls
    .split('\n')
    .map((l) => l.replace(/[ \t]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

export function contentHash(normalized: string): string {
  return createHash('sha256').update(normalized).digest('hex');
}

export interface ParsedDiffFile {
  from: string;
  to: string;
  additions: number;
  deletions: number;
  chunks: {
    content: string;
    oldStart: number;
    oldLines: number;
    newStart: number;
    newLines: number;
    changes: { type: 'add' | 'del' | 'normal'; content: string }[];
  }[];
}

export function markdownDiff(
  previous: string,
  current: string,
  url: string,
): { text: string; json: { files: ParsedDiffFile[] } } {
  const text = createTwoFilesPatch(url, url, previous, current);
  const files = parsePatch(text).map((p) => {
    let additions = 0;
    let deletions = 0;
    const chunks = p.hunks.map((h) => ({
      content: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`,
      oldStart: h.oldStart,
      oldLines: h.oldLines,
      newStart: h.newStart,
      newLines: h.newLines,
      changes: h.lines.map((l) => {
        const type = l[0] === '+' ? ('add' as const) : l[0] === '-' ? ('del' as const) : ('normal' as const);
        if (type === 'add') additions++;
        if (type === 'del') deletions++;
        return { type, content: l };
      }),
    }));
    return { from: p.oldFileName ?? url, to: p.newFileName ?? url, additions, deletions, chunks };
  });
  return { text, json: { files } };
}

export function jsonDiff(previous: unknown, current: unknown): Record<string, { previous: unknown; current: unknown }> {
  const out: Record<string, { previous: unknown; current: unknown }> = {};
  const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  const walk = (a: unknown, b: unknown, path: string) => {
    if (isObj(a) && isObj(b)) {
      for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) walk(a[k], b[k], path ? `${path}.${k}` : k);
    } else if (JSON.stringify(a) !== JSON.stringify(b)) out[path] = { previous: a ?? null, current: b ?? null };
  };
  walk(previous, current, '');
  return out;
}

export function classify(
  prevHash: string | undefined,
  currHash: string | undefined,
  error?: string,
): 'same' | 'new' | 'changed' | 'removed' | 'error' {
  if (error) return 'error';
  if (currHash === undefined) return 'removed';
  if (prevHash === undefined) return 'new';
  return prevHash === currHash ? 'same' : 'changed';
}
