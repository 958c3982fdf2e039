// Search results' highlights (the request's `highlights`, default true): the passage of a page
// that best matches the query, picked by BM25 over the page's markdown passages
// (src/extractors/bm25.ts) and cut to a snippet around the first query word it holds.
import { rankPassages, splitPassages, tokenize } from '../extractors/bm25.ts';
import { INDEXED_MARKDOWN_CHARS } from '../store/search-index.ts';

/** Longest highlight, in characters (a passage longer than this is cut around its first match). */
export const HIGHLIGHT_MAX_CHARS = 320;

/**
 * The query's words, without web-search syntax: excluded words (-word, -"a phrase") and the `or`
 * operator dropped, quotes removed.
 */
export function queryWords(query: string): string {
  return query
    .replace(/(^|\s)-"[^"]*"?/g, ' ')
    .replace(/(^|\s)-\S+/g, ' ')
    .replace(/"/g, ' ')
    .replace(/(^|\s)or(?=\s|$)/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * The passage of `markdown` that best matches `query` (web-search syntax), at most
 * HIGHLIGHT_MAX_CHARS long; undefined when no passage holds a word of the query. Only the part of
 * the page the index reads (its first INDEXED_MARKDOWN_CHARS characters) is looked at.
 */
export function highlightOf(markdown: string | null | undefined, query: string): string | undefined {
  if (!markdown) return undefined;
  const words = queryWords(query);
  if (!words) return undefined;
  // The best passage whose own text holds a query word (a passage scores for its headings too).
  const terms = new Set(tokenize(words));
  const best = rankPassages(splitPassages(markdown.slice(0, INDEXED_MARKDOWN_CHARS)), words).find((p) =>
    tokenize(p.text).some((t) => terms.has(t)),
  );
  return best ? around(best.text, words) : undefined;
}

/** The page's first passage, at most HIGHLIGHT_MAX_CHARS long ('' without one). */
export function firstPassage(markdown: string | null | undefined): string {
  const first = markdown ? splitPassages(markdown.slice(0, 20_000))[0] : undefined;
  return first ? around(first.text, '') : '';
}

/** `text` cut to HIGHLIGHT_MAX_CHARS around its first word whose stem is a query word's. */
function around(text: string, words: string): string {
  if (text.length <= HIGHLIGHT_MAX_CHARS) return text;
  const terms = new Set(tokenize(words));
  let at = 0;
  for (const m of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    const [term] = tokenize(m[0]);
    if (term !== undefined && terms.has(term)) {
      at = m.index;
      break;
    }
  }
  // A third of the room before the match, the rest after; cut at spaces.
  let start = Math.max(0, at - Math.floor(HIGHLIGHT_MAX_CHARS / 3));
  let end = Math.min(text.length, start + HIGHLIGHT_MAX_CHARS);
  start = Math.max(0, end - HIGHLIGHT_MAX_CHARS);
  if (start > 0) start = spaceAfter(text, start);
  if (end < text.length) end = spaceBefore(text, end);
  return `${start > 0 ? '…' : ''}${text.slice(start, end).trim()}${end < text.length ? '…' : ''}`;
}

function spaceAfter(text: string, i: number): number {
  const j = text.indexOf(' ', i);
  return j < 0 || j - i > 30 ? i : j + 1;
}

function spaceBefore(text: string, i: number): number {
  const j = text.lastIndexOf(' ', i);
  return j < 0 || i - j > 30 ? i : j;
}
