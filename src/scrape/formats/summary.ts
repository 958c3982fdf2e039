// extractiveSummary: a deterministic, model-free summary of a Markdown document made of its own
// sentences.
//
// 1. Markdown → plain text blocks: fenced and indented code, tables, images, HTML comments/tags,
//    reference definitions and thematic breaks are dropped; links keep their text (URLs dropped);
//    emphasis and escapes are unwrapped. Headings are kept aside: the first one is the title, all of
//    them count as context (term frequencies), but they are summary sentences only when the document
//    has no body sentences at all.
// 2. Sentence splitting that survives abbreviations (e.g., i.e., Dr., Mr., vs., Fig.), initials
//    (J. R. R. Tolkien), dotted acronyms (U.S., a.m.: a boundary only when the next word is a typical
//    sentence opener such as "The" or "It"), decimals (3.14) and ellipses (a boundary only before a
//    capital).
// 3. Scoring: the sum, over a sentence's distinct content terms (English stopwords removed, light
//    suffix stemming; src/extractors/stem.ts), of each term's frequency in the document relative
//    to the most frequent one,
//    divided by √(content terms) so long sentences are not favoured for length alone; × a position
//    bonus decaying over the first ten sentences (+25% for the first) and +5% for a paragraph's
//    first sentence; × a length factor (under 5 words ×0.3, under 8 ×0.7, over 45 words
//    ×45/words); × (1 + 0.5·share of title terms present); ×0.6 for fragments without terminal
//    punctuation (list items, captions, bylines).
// 4. Selection: by score (ties → earlier sentence), skipping near-duplicates of a chosen sentence
//    (Jaccard ≥ 0.6 over content terms) and sentences that would overflow maxChars, until
//    maxSentences, stopping at sentences scoring under 35% of the best (no filler); output in
//    document order, joined by single spaces. If no qualifying sentence fits in maxChars, the best
//    one is cut at a word boundary and ends with "…".
//
// Same input and options → same output. Input with fewer than three words → ''.
import { PROSE_STOPWORDS, stem } from '../../extractors/stem.ts';

export interface SummaryOptions {
  /** Most sentences in the summary (default 5). */
  maxSentences?: number;
  /** Most characters in the summary (default 1000). */
  maxChars?: number;
}

// ---------------------------------------------------------------------------------------------
// Markdown → blocks of plain text

interface Block {
  text: string;
  kind: 'heading' | 'para' | 'item';
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})/;
const ATX = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const SETEXT = /^ {0,3}(?:=+|-+)[ \t]*$/;
const HR = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST_ITEM = /^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?/;
const QUOTE = /^[ \t]{0,3}(?:>[ \t]?)+/;
const REF_DEF = /^ {0,3}\[[^\]\n]+\]:[ \t]*\S/;
const TABLE_DELIM = /^[ \t]*\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$/;

function toBlocks(markdown: string): Block[] {
  const lines = markdown
    .replace(/\r\n?/g, '\n')
    .replace(/<!--[\s\S]*?-->/g, '')
    .split('\n');
  const blocks: Block[] = [];
  let para: string[] = [];
  let paraKind: Block['kind'] = 'para';
  let inList = false;
  const flush = () => {
    const text = inline(para.join(' '));
    if (text) blocks.push({ text, kind: paraKind });
    para = [];
    paraKind = 'para';
  };
  for (let i = 0; i < lines.length; i++) {
    let line = lines[i];
    // Fenced code: skip to the closing fence (same character, at least as long).
    const fence = FENCE_OPEN.exec(line);
    if (fence) {
      flush();
      const marker = fence[1];
      const close = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}[ \\t]*$`);
      for (i++; i < lines.length && !close.test(lines[i]); i++);
      continue;
    }
    if (QUOTE.test(line)) line = line.replace(QUOTE, '');
    if (/^[ \t]*$/.test(line)) {
      flush();
      continue;
    }
    // Indented code: four spaces or a tab, outside a paragraph and a list.
    if (/^(?: {4}|\t)/.test(line) && para.length === 0 && !inList) continue;
    // Tables: a header row followed by a delimiter row, then rows containing a pipe.
    if (line.includes('|') && i + 1 < lines.length && TABLE_DELIM.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      flush();
      for (i += 2; i < lines.length && lines[i].includes('|') && !/^[ \t]*$/.test(lines[i]); i++);
      i--;
      continue;
    }
    const atx = ATX.exec(line);
    if (atx) {
      flush();
      inList = false;
      const text = inline(atx[2] ?? '');
      if (text) blocks.push({ text, kind: 'heading' });
      continue;
    }
    if (
      para.length === 0 &&
      !LIST_ITEM.test(line) &&
      i + 1 < lines.length &&
      SETEXT.test(lines[i + 1]) &&
      !HR.test(line)
    ) {
      // Setext heading (a `---` underline only counts under a single text line here).
      const text = inline(line);
      if (text) blocks.push({ text, kind: 'heading' });
      i++;
      inList = false;
      continue;
    }
    if (HR.test(line)) {
      flush();
      continue;
    }
    if (REF_DEF.test(line) && para.length === 0) continue;
    const item = LIST_ITEM.exec(line);
    if (item) {
      flush();
      inList = true;
      paraKind = 'item';
      para.push(line.slice(item[0].length));
      continue;
    }
    if (para.length === 0) inList = inList && /^[ \t]/.test(line);
    para.push(line.trim());
  }
  flush();
  return blocks;
}

const ENTITIES: Record<string, string> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  '#39': "'",
  mdash: '—',
  ndash: '–',
  hellip: '…',
  rsquo: '’',
  lsquo: '‘',
  rdquo: '”',
  ldquo: '“',
};

/** Inline Markdown → plain text. Escaped punctuation is parked in the private-use area meanwhile. */
function inline(s: string): string {
  let t = s.replace(/\\([!-/:-@[-`{-~])/g, (_, c: string) => String.fromCharCode(0xe000 + c.charCodeAt(0)));
  t = t
    // Bracket texts exclude `[` as well as `]`, so a run of unclosed brackets stays linear.
    .replace(/!\[[^[\]]*\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+"[^"]*")?\)/g, '') // images
    .replace(/!\[[^[\]]*\]\[[^[\]]*\]/g, '')
    .replace(/\[\^[^[\]]+\]/g, '') // footnote references
    .replace(/\[([^[\]]*)\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\)/g, '$1') // inline links
    .replace(/\[([^[\]]+)\]\[[^[\]]*\]/g, '$1') // reference links
    .replace(/<(?:https?|ftp|mailto):[^\s>]*>/gi, '') // autolinks
    .replace(/<\/?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?\/?>/g, ' ') // HTML tags
    .replace(/\b(?:https?:\/\/|www\.)[^\s)\]]+/gi, '') // bare URLs
    .replace(/`+([^`]*?)`+/g, '$1') // inline code keeps its text
    // Emphasis markers are dropped without pairing them (linear, and harmless for plain text):
    // every `*` and `~~`, and `_` runs at a word edge (snake_case keeps its underscores).
    .replace(/\*+|~~/g, '')
    .replace(/(?<![\p{L}\p{N}])_+|_+(?![\p{L}\p{N}])/gu, '')
    .replace(
      /&(#?\w+);/g,
      (m, e: string) => ENTITIES[e.toLowerCase()] ?? (e.startsWith('#') ? (numericEntity(e) ?? m) : m),
    );
  t = t.replace(/[\ue000-\ue07f]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0xe000));
  return t.replace(/[\s\u00a0]+/g, ' ').trim();
}

function numericEntity(e: string): string | undefined {
  const n = e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
  return Number.isFinite(n) && n > 0 && n < 0x110000 ? String.fromCodePoint(n) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Sentence splitting

/** Never end a sentence (titles, Latin and reference abbreviations). Lower-case, without the dot. */
const ABBREV_NEVER = new Set([
  'mr',
  'mrs',
  'ms',
  'mx',
  'dr',
  'prof',
  'sr',
  'jr',
  'st',
  'mt',
  'ft',
  'vs',
  'v',
  'e.g',
  'i.e',
  'cf',
  'viz',
  'fig',
  'figs',
  'no',
  'nos',
  'vol',
  'vols',
  'pp',
  'p',
  'ch',
  'chap',
  'sec',
  'approx',
  'ca',
  'est',
  'dept',
  'gen',
  'col',
  'lt',
  'sgt',
  'capt',
  'cmdr',
  'rev',
  'hon',
  'gov',
  'sen',
  'rep',
  'pres',
  'supt',
  'mme',
  'mlle',
  'messrs',
  'eq',
  'eqs',
  'ref',
  'refs',
  'jan',
  'feb',
  'mar',
  'apr',
  'jun',
  'jul',
  'aug',
  'sep',
  'sept',
  'oct',
  'nov',
  'dec',
  'op',
  'ed',
  'eds',
  'trans',
  'al',
]);
/** May end a sentence: a boundary only when a typical sentence opener follows. */
const ABBREV_MAYBE = new Set([
  'etc',
  'inc',
  'ltd',
  'co',
  'corp',
  'llc',
  'plc',
  'bros',
  'a.m',
  'p.m',
  'u.s',
  'u.k',
  'u.n',
  'e.u',
  'ph.d',
  'b.c',
  'a.d',
]);
const OPENERS = new Set([
  'the',
  'a',
  'an',
  'it',
  'its',
  'this',
  'that',
  'these',
  'those',
  'he',
  'she',
  'they',
  'we',
  'i',
  'you',
  'there',
  'in',
  'on',
  'at',
  'but',
  'and',
  'so',
  'however',
  'meanwhile',
  'also',
  'then',
  'after',
  'before',
  'when',
  'while',
  'as',
  'if',
  'his',
  'her',
  'their',
  'our',
  'my',
  'some',
  'many',
  'most',
  'all',
  'one',
  'two',
  'for',
  'since',
  'yet',
  'still',
  'today',
]);

const BOUNDARY = /([.!?…]+)(["'”’)\]]*)(\s+)/g;

export function splitSentences(text: string): string[] {
  const out: string[] = [];
  let start = 0;
  BOUNDARY.lastIndex = 0;
  for (let m = BOUNDARY.exec(text); m !== null; m = BOUNDARY.exec(text)) {
    const punct = m[1];
    const end = m.index + punct.length + m[2].length;
    // Bounded windows: a long run of non-boundaries ("Dr. Dr. Dr. ...") stays linear.
    const after = m.index + m[0].length;
    if (!isBoundary(text.slice(Math.max(start, m.index - 40), m.index), punct, text.slice(after, after + 40))) continue;
    const s = text.slice(start, end).trim();
    if (s) out.push(s);
    start = m.index + m[0].length;
  }
  const rest = text.slice(start).trim();
  if (rest) out.push(rest);
  return out;
}

function isBoundary(before: string, punct: string, next: string): boolean {
  const c = next[0];
  if (c === undefined) return true;
  // The next sentence starts with a capital, a digit, a quote or a bracket; a lower-case letter
  // means the dot was not the end (approx. five, Yahoo! is, "wait..." she said).
  if (/\p{Ll}/u.test(c)) return false;
  if (punct !== '.') return true;
  const word = /(\S+)$/.exec(before)?.[1].replace(/^[("'“‘[]+/, '') ?? '';
  const lower = word.toLowerCase();
  if (ABBREV_NEVER.has(lower)) return false;
  if (/^\p{Lu}$/u.test(word)) return false; // an initial: John F. Kennedy
  const nextWord = /^["'“‘(]*([\p{L}]+)/u.exec(next)?.[1].toLowerCase() ?? '';
  if (ABBREV_MAYBE.has(lower) || /^(?:\p{L}\.)+\p{L}$/u.test(word)) return OPENERS.has(nextWord);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Terms

const WORD = /[\p{L}\p{N}]+(?:['’][\p{L}]+)*/gu;

function words(s: string): string[] {
  return s.match(WORD) ?? [];
}

/** Content terms: lower-cased, stopwords, one-letter words and bare numbers removed, stemmed. */
function terms(s: string): string[] {
  const out: string[] = [];
  for (const w of words(s)) {
    const lw = w.toLowerCase().replace(/’/g, "'");
    if (lw.length < 2 || PROSE_STOPWORDS.has(lw) || /^\d+$/.test(lw)) continue;
    out.push(stem(lw.replace(/'s$/, '')));
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Summary

interface Sentence {
  text: string;
  index: number;
  firstInBlock: boolean;
  fragment: boolean;
  terms: Set<string>;
  termCount: number;
  wordCount: number;
  score: number;
}

const MIN_RELATIVE_SCORE = 0.35;

function jaccard(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 && b.size === 0) return 1;
  let inter = 0;
  for (const t of a) if (b.has(t)) inter++;
  return inter / (a.size + b.size - inter);
}

function truncateAtWord(s: string, max: number): string {
  if (s.length <= max) return s;
  if (max <= 1) return s.slice(0, max);
  const cut = s.slice(0, max - 1);
  const sp = cut.lastIndexOf(' ');
  return (sp > max / 2 ? cut.slice(0, sp) : cut).replace(/[\s,;:–—-]+$/, '') + '…';
}

export function extractiveSummary(markdown: string, opts?: SummaryOptions): string {
  const maxSentences = Math.floor(opts?.maxSentences ?? 5);
  const maxChars = Math.floor(opts?.maxChars ?? 1000);
  if (typeof markdown !== 'string' || !markdown.trim() || !(maxSentences > 0) || !(maxChars > 0)) return '';

  const blocks = toBlocks(markdown);
  const totalWords = blocks.reduce((n, b) => n + words(b.text).length, 0);
  if (totalWords < 3) return '';

  const headings = blocks.filter((b) => b.kind === 'heading');
  const title = new Set(headings.length > 0 ? terms(headings[0].text) : []);
  let body = blocks.filter((b) => b.kind !== 'heading');
  if (!body.some((b) => words(b.text).length >= 3)) body = headings; // a tiny document: headings only

  const sentences: Sentence[] = [];
  for (const b of body) {
    splitSentences(b.text).forEach((text, k) => {
      const ts = terms(text);
      sentences.push({
        text,
        index: sentences.length,
        firstInBlock: k === 0,
        fragment: !/[.!?…]["'”’)\]]*$/.test(text),
        terms: new Set(ts),
        termCount: ts.length,
        wordCount: words(text).length,
        score: 0,
      });
    });
  }
  if (sentences.length === 0) return '';

  // Document term frequencies: body sentences plus every heading (context).
  const freq = new Map<string, number>();
  const count = (ts: Iterable<string>) => {
    for (const t of ts) freq.set(t, (freq.get(t) ?? 0) + 1);
  };
  for (const s of sentences) count(terms(s.text));
  if (body !== headings) for (const h of headings) count(terms(h.text));
  let maxFreq = 1;
  for (const v of freq.values()) if (v > maxFreq) maxFreq = v;

  const n = sentences.length;
  const window = Math.min(n, 10);
  for (const s of sentences) {
    if (s.termCount === 0) continue;
    let sum = 0;
    for (const t of s.terms) sum += (freq.get(t) ?? 0) / maxFreq;
    let score = sum / Math.sqrt(s.termCount);
    score *= 1 + 0.25 * Math.max(0, 1 - s.index / window);
    if (s.firstInBlock) score *= 1.05;
    if (s.wordCount < 5) score *= 0.3;
    else if (s.wordCount < 8) score *= 0.7;
    else if (s.wordCount > 45) score *= 45 / s.wordCount;
    if (title.size > 0) {
      let hit = 0;
      for (const t of title) if (s.terms.has(t)) hit++;
      score *= 1 + (0.5 * hit) / title.size;
    }
    if (s.fragment) score *= 0.6;
    s.score = score;
  }

  const ranked = [...sentences].sort((a, b) => b.score - a.score || a.index - b.index);
  const chosen: Sentence[] = [];
  let used = 0;
  for (const s of ranked) {
    if (chosen.length >= maxSentences) break;
    // Filler: sentences far below the best one are not worth adding (nor worth choosing over a
    // shortened best sentence when maxChars is tight).
    if (s.score < MIN_RELATIVE_SCORE * ranked[0].score) break;
    const cost = s.text.length + (chosen.length > 0 ? 1 : 0);
    if (used + cost > maxChars) continue;
    if (chosen.some((c) => jaccard(c.terms, s.terms) >= 0.6)) continue;
    chosen.push(s);
    used += cost;
  }
  if (chosen.length === 0) return truncateAtWord(ranked[0].text, maxChars);
  return chosen
    .sort((a, b) => a.index - b.index)
    .map((s) => s.text)
    .join(' ');
}
