// Extractive question answering and highlights without a model: BM25 over markdown passages.
//
// Passages: paragraphs, list items (each item, nested lines joined), table rows (as
// "header: cell; …"), block quotes; fenced code is one passage; headings are not passages but
// context: each passage carries the text of the headings above it (h1 > h2 > …), and heading
// terms count towards its score at half weight. Markdown inline syntax is unwrapped (links keep
// their text, images their alt text).
// Tokens: lowercase, accents folded (NFD, marks removed), split on non-alphanumerics, a small
// English stopword list removed, light stemming (./stem.ts).
// BM25: k1 = 1.2, b = 0.75, idf = ln(1 + (N − df + 0.5) / (df + 0.5)).
// Confidence of an answer: the share of the question's idf weight that the chosen passage
// covers (0…1), rounded to 2 decimals; 0 and an empty answer when no passage shares a term.
// Same input → same output.
import { STOPWORDS, stem } from './stem.ts';

export interface Passage {
  /** Position in the page (0-based, in page order). */
  index: number;
  /** Plain text of the passage. */
  text: string;
  /** Heading path above the passage ("Pricing > Plans"), '' at the top. */
  heading: string;
  kind: 'paragraph' | 'item' | 'row' | 'quote' | 'code';
}

export interface ScoredPassage extends Passage {
  score: number;
}

export interface Answer {
  /** The answer text: the best passage, plus the next one when it continues it and scores close. */
  answer: string;
  confidence: number;
  passages: ScoredPassage[];
}

/** Lowercase, accent-folded, stopword-free, lightly stemmed terms of a text. */
export function tokenize(text: string): string[] {
  const folded = text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  const out: string[] = [];
  for (const w of folded.split(/[^\p{L}\p{N}]+/u)) {
    if (!w || STOPWORDS.has(w)) continue;
    out.push(stem(w));
  }
  return out;
}

/** Markdown inline syntax → plain text. */
function inline(s: string): string {
  return s
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\((?:[^()]|\([^)]*\))*\)/g, '$1')
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/<[^>]+>/g, '')
    .replace(/(\*\*|__)(.+?)\1/g, '$2')
    .replace(/(^|[^\w*])[*_](\S(?:.*?\S)?)[*_](?=[^\w*]|$)/g, '$1$2')
    .replace(/`([^`]+)`/g, '$1')
    .replace(/\\([\\`*_{}[\]()#+\-.!|>])/g, '$1')
    .replace(/\s+/g, ' ')
    .trim();
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;
const ATX = /^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/;
const LIST = /^([ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?/;
const TABLE_DELIM = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;

function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\|/, '')
    .replace(/\|$/, '')
    .split(/(?<!\\)\|/)
    .map((c) => inline(c.trim()));
}

/** Markdown → passages in page order. */
export function splitPassages(markdown: string): Passage[] {
  const lines = markdown.replace(/\r\n?/g, '\n').split('\n');
  const out: Passage[] = [];
  const headings: string[] = [];
  let buf: string[] = [];
  let kind: Passage['kind'] = 'paragraph';
  const push = (text: string, k: Passage['kind']) => {
    const t = k === 'code' ? text.trim() : inline(text);
    if (t) out.push({ index: out.length, text: t, heading: headings.filter(Boolean).join(' > '), kind: k });
  };
  const flush = () => {
    if (buf.length) push(buf.join(' '), kind);
    buf = [];
    kind = 'paragraph';
  };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const fence = FENCE.exec(line);
    if (fence) {
      flush();
      const code: string[] = [];
      for (i++; i < lines.length && !lines[i].trimStart().startsWith(fence[1]); i++) code.push(lines[i]);
      push(code.join('\n'), 'code');
      continue;
    }
    const h = ATX.exec(line);
    if (h) {
      flush();
      const level = h[1].length;
      headings.length = level;
      headings[level - 1] = inline(h[2]);
      continue;
    }
    if (/^\s*$/.test(line) || HR.test(line)) {
      flush();
      continue;
    }
    // Setext heading: a paragraph line followed by === or ---.
    if (buf.length === 1 && kind === 'paragraph' && /^ {0,3}(=+|-+)[ \t]*$/.test(line)) {
      const level = line.includes('=') ? 1 : 2;
      headings.length = level;
      headings[level - 1] = inline(buf[0]);
      buf = [];
      continue;
    }
    // Tables: a header row followed by a delimiter row.
    if (line.includes('|') && i + 1 < lines.length && TABLE_DELIM.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      flush();
      const head = cells(line);
      for (i += 2; i < lines.length && lines[i].includes('|') && lines[i].trim(); i++) {
        const row = cells(lines[i]);
        push(
          row
            .map((c, j) => (head[j] && c ? `${head[j]}: ${c}` : c))
            .filter(Boolean)
            .join('; '),
          'row',
        );
      }
      i--;
      continue;
    }
    const li = LIST.exec(line);
    if (li) {
      flush();
      kind = 'item';
      buf.push(line.slice(li[0].length));
      continue;
    }
    if (/^ {0,3}>/.test(line)) {
      if (kind !== 'quote') flush();
      kind = 'quote';
      buf.push(line.replace(/^(?: {0,3}>[ \t]?)+/, ''));
      continue;
    }
    if (kind === 'quote') flush();
    buf.push(line.trim());
  }
  flush();
  return out;
}

export interface Bm25Options {
  k1?: number;
  b?: number;
}

interface Indexed {
  passages: Passage[];
  docs: Map<string, number>[];
  lengths: number[];
  avg: number;
  df: Map<string, number>;
}

function index(passages: Passage[]): Indexed {
  const docs: Map<string, number>[] = [];
  const lengths: number[] = [];
  const df = new Map<string, number>();
  for (const p of passages) {
    const tf = new Map<string, number>();
    let len = 0;
    for (const t of tokenize(p.text)) {
      tf.set(t, (tf.get(t) ?? 0) + 1);
      len++;
    }
    for (const t of tokenize(p.heading)) tf.set(t, (tf.get(t) ?? 0) + 0.5);
    for (const t of tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
    docs.push(tf);
    lengths.push(len);
  }
  const avg = lengths.reduce((a, b) => a + b, 0) / Math.max(1, lengths.length) || 1;
  return { passages, docs, lengths, avg, df };
}

function idf(ix: Indexed, t: string): number {
  const n = ix.passages.length;
  const df = ix.df.get(t) ?? 0;
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** Every passage with its BM25 score for the query, best first (ties: page order); zero scores dropped. */
export function rankPassages(passages: Passage[], query: string, opts: Bm25Options = {}): ScoredPassage[] {
  const k1 = opts.k1 ?? 1.2;
  const b = opts.b ?? 0.75;
  const ix = index(passages);
  const terms = [...new Set(tokenize(query))];
  const scored: ScoredPassage[] = [];
  passages.forEach((p, i) => {
    let score = 0;
    const tf = ix.docs[i];
    for (const t of terms) {
      const f = tf.get(t);
      if (!f) continue;
      score += (idf(ix, t) * (f * (k1 + 1))) / (f + k1 * (1 - b + (b * ix.lengths[i]) / ix.avg));
    }
    if (score > 0) scored.push({ ...p, score: Math.round(score * 1e6) / 1e6 });
  });
  return scored.sort((x, y) => y.score - x.score || x.index - y.index);
}

function coverage(ix: Indexed, terms: string[], ps: Passage[]): number {
  let total = 0;
  let hit = 0;
  for (const t of terms) {
    const w = idf(ix, t) || 1e-6;
    total += w;
    if (ps.some((p) => ix.docs[p.index].has(t))) hit += w;
  }
  return total ? Math.round((hit / total) * 100) / 100 : 0;
}

/** The extractive answer to a question: the best passage (and the one after it when it continues
 * the same section and scores at least 60% of the best). */
export function answerQuestion(markdown: string, question: string, opts: Bm25Options = {}): Answer {
  const passages = splitPassages(markdown);
  const ranked = rankPassages(passages, question, opts);
  if (!ranked.length) return { answer: '', confidence: 0, passages: [] };
  const best = ranked[0];
  const chosen: ScoredPassage[] = [best];
  const next = ranked.find((p) => p.index === best.index + 1);
  if (next && next.heading === best.heading && next.score >= best.score * 0.6) chosen.push(next);
  const ix = index(passages);
  const confidence = coverage(ix, [...new Set(tokenize(question))], chosen);
  return { answer: chosen.map((p) => p.text).join('\n\n'), confidence, passages: ranked.slice(0, 5) };
}

/** The k best passages for the query, in page order. */
export function highlights(markdown: string, query: string, k = 3, opts: Bm25Options = {}): ScoredPassage[] {
  return rankPassages(splitPassages(markdown), query, opts)
    .slice(0, Math.max(0, k))
    .sort((a, b) => a.index - b.index);
}

/** Highlights as the format's string output: passages separated by blank lines. */
export function highlightsText(markdown: string, query: string, k = 3): string {
  return highlights(markdown, query, k)
    .map((p) => p.text)
    .join('\n\n');
}
