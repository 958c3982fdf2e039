// Ranking links by relevance to a search term (map's `search`).
//
// The term and each link are split into lower-case word tokens (letters and digits; everything
// else separates, so "/docs/getting-started" gives docs, getting, started). The URL contributes
// its path and query tokens and its subdomain labels (blog in blog.example.com); the link's
// title and description contribute theirs when known.
//
// Score, per distinct term token:
//   URL path/query/subdomain: +3 for an exact word match, else +1 when a word contains it
//   title:                    +3 exact,                  else +1 contained
//   description:              +1 exact,                  else +0.5 contained
// plus +5 when the whole term (two or more tokens) occurs as a phrase in the title or the path.
// Order: links matching more distinct term tokens exactly come first (exact word matches
// first), then by score, then in their original (discovery) order. Links scoring 0 do not match;
// they are kept after every match, in their original order, as Firecrawl's map keeps them (the
// `limit` then cuts from the end, so the non-matching ones go first).
import { registrableDomain } from './url.ts';

export interface Rankable {
  url: string;
  title?: string;
  description?: string;
}

export interface Ranked<T> {
  item: T;
  score: number;
  /** Distinct term tokens matched as whole words anywhere. */
  exact: number;
}

export function tokenize(s: string): string[] {
  return s
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter(Boolean);
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s.replace(/\+/g, ' '));
  } catch {
    return s;
  }
}

function urlTokens(url: string): string[] {
  try {
    const u = new URL(url);
    const host = u.hostname.toLowerCase();
    const site = registrableDomain(host);
    const sub = host.length > site.length && host.endsWith(`.${site}`) ? host.slice(0, -(site.length + 1)) : '';
    const labels = sub.split('.').filter((l) => l && l !== 'www');
    return [...labels, ...tokenize(safeDecode(u.pathname + u.search))];
  } catch {
    return tokenize(url);
  }
}

/** Score of one link against the term's tokens (see the file comment). */
export function scoreLink(
  link: Rankable,
  termTokens: string[],
  phrase = termTokens.join(' '),
): { score: number; exact: number } {
  const uTok = urlTokens(link.url);
  const tTok = link.title ? tokenize(link.title) : [];
  const dTok = link.description ? tokenize(link.description) : [];
  let score = 0;
  let exact = 0;
  for (const t of termTokens) {
    let exactHere = false;
    if (uTok.includes(t)) {
      score += 3;
      exactHere = true;
    } else if (uTok.some((w) => w.includes(t))) score += 1;
    if (tTok.includes(t)) {
      score += 3;
      exactHere = true;
    } else if (tTok.some((w) => w.includes(t))) score += 1;
    if (dTok.includes(t)) {
      score += 1;
      exactHere = true;
    } else if (dTok.some((w) => w.includes(t))) score += 0.5;
    if (exactHere) exact++;
  }
  if (termTokens.length > 1 && score > 0) {
    const inTitle = ` ${tTok.join(' ')} `.includes(` ${phrase} `);
    const inPath = ` ${uTok.join(' ')} `.includes(` ${phrase} `);
    if (inTitle || inPath) score += 5;
  }
  return { score, exact };
}

/**
 * Orders `items` by relevance to `term`: matches first (most exact token matches, then highest
 * score, then original order), then the non-matching ones in their original order. An empty term
 * (no tokens) leaves the order unchanged.
 */
export function rankByRelevance<T extends Rankable>(items: readonly T[], term: string): Ranked<T>[] {
  const tokens = [...new Set(tokenize(term))];
  if (!tokens.length) return items.map((item) => ({ item, score: 0, exact: 0 }));
  const phrase = tokens.join(' ');
  const scored = items.map((item, i) => ({ item, i, ...scoreLink(item, tokens, phrase) }));
  const matches = scored.filter((s) => s.score > 0).sort((a, b) => b.exact - a.exact || b.score - a.score || a.i - b.i);
  const rest = scored.filter((s) => s.score === 0);
  return [...matches, ...rest].map(({ item, score, exact }) => ({ item, score, exact }));
}
