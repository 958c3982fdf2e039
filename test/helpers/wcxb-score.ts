// The metric of the WCXB corpus's score.mjs, in TypeScript (the quality test scores without spawning it, and the
// bench keeps per-page figures): bag-of-words token F1 of the prediction against the ground truth's main_content
// (lower-cased runs of letters, digits and underscores), averaged over pages, overall and by page type; plus the
// share of `with` snippets found in the prediction and of `without` snippets wrongly kept (whitespace-normalised,
// lower-cased substring match). Any change here must keep it equal to score.mjs: the quality test checks that.
// score.mjs reads its predictions as they are; markdownText (below) reduces markdown to text before either.

/** What score.mjs reads of a page's ground truth. */
export interface WcxbTruth {
  main_content: string;
  /** The same content as markdown (for structure: headings, lists, tables, code). */
  main_content_markdown?: string;
  with?: string[];
  without?: string[];
}

export interface PageScore {
  P: number;
  R: number;
  F1: number;
  withFound: number;
  withAll: number;
  withoutKept: number;
  withoutAll: number;
}

export interface ScoreRow {
  n: number;
  P: number;
  R: number;
  F1: number;
}

/** The shape score.mjs prints (figures rounded to 3 decimals). */
export interface ScoreSummary extends ScoreRow {
  withFound: number;
  withoutKept: number;
  byType: Record<string, ScoreRow>;
}

export const tokens = (s: string): string[] => (s || '').toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
const norm = (s: string): string => (s || '').toLowerCase().replace(/\s+/g, ' ').trim();

/** Precision, recall and F1 of the prediction's tokens against the reference's (multiset overlap). */
export function tokenF1(pred: string, ref: string): { P: number; R: number; F1: number } {
  const p = tokens(pred);
  const r = tokens(ref);
  if (!r.length) return p.length ? { P: 0, R: 0, F1: 0 } : { P: 1, R: 1, F1: 1 };
  if (!p.length) return { P: 0, R: 0, F1: 0 };
  const left = new Map<string, number>();
  for (const t of r) left.set(t, (left.get(t) ?? 0) + 1);
  let overlap = 0;
  for (const t of p) {
    const k = left.get(t);
    if (k) {
      overlap++;
      left.set(t, k - 1);
    }
  }
  const P = overlap / p.length;
  const R = overlap / r.length;
  return { P, R, F1: P + R ? (2 * P * R) / (P + R) : 0 };
}

export function scorePage(pred: string, truth: WcxbTruth): PageScore {
  const np = norm(pred);
  const found = (snippets: string[] | undefined) => (snippets ?? []).filter((w) => np.includes(norm(w))).length;
  return {
    ...tokenF1(pred, truth.main_content),
    withFound: found(truth.with),
    withAll: truth.with?.length ?? 0,
    withoutKept: found(truth.without),
    withoutAll: truth.without?.length ?? 0,
  };
}

/** Averages over pages (in the given order, which sets byType's key order, as score.mjs's metadata order does). */
export function summarize(pages: { type: string; score: PageScore }[]): ScoreSummary {
  const sums = new Map<string, [number, number, number, number]>([['all', [0, 0, 0, 0]]]);
  let withFound = 0;
  let withAll = 0;
  let withoutKept = 0;
  let withoutAll = 0;
  for (const { type, score } of pages) {
    for (const k of ['all', type]) {
      const s = sums.get(k) ?? [0, 0, 0, 0];
      sums.set(k, s);
      s[0] += score.P;
      s[1] += score.R;
      s[2] += score.F1;
      s[3]++;
    }
    withFound += score.withFound;
    withAll += score.withAll;
    withoutKept += score.withoutKept;
    withoutAll += score.withoutAll;
  }
  const round = (x: number) => +x.toFixed(3);
  const row = (s: [number, number, number, number]): ScoreRow => ({
    n: s[3],
    P: round(s[0] / s[3]),
    R: round(s[1] / s[3]),
    F1: round(s[2] / s[3]),
  });
  return {
    ...row(sums.get('all')!),
    withFound: round(withFound / withAll),
    withoutKept: round(withoutKept / withoutAll),
    byType: Object.fromEntries([...sums].filter(([k]) => k !== 'all').map(([k, s]) => [k, row(s)])),
  };
}

/** Whether two summaries hold the same figures (byType's key order aside). */
export function sameSummary(a: ScoreSummary, b: ScoreSummary): boolean {
  const canonical = (s: ScoreSummary) =>
    JSON.stringify({ ...s, byType: Object.fromEntries(Object.entries(s.byType).sort(([x], [y]) => (x < y ? -1 : 1))) });
  return canonical(a) === canonical(b);
}

/**
 * The text a reader sees of a markdown document, for scoring: an image is dropped (its alt text is not page text),
 * a link keeps its text and loses its target, fence lines go (a language tag is not content), backslash escapes
 * and the underscores of emphasis go (the metric's tokens include `_`, so `_word_` would not match `word`), and so
 * do heading and quote markers, table cells' `<br>` line breaks, asterisks of emphasis and backticks of code (no token has them, but the snippet
 * checks match text: "**McAfee** didn't" must read "McAfee didn't").
 * Without this, every link's URL would count as words the page never showed.
 */
export function markdownText(md: string): string {
  return md
    .replace(/^\s*(```|~~~).*$/gm, '')
    .replace(/!\[(?:\\.|[^\]\\])*\]\((?:[^()\s]|\([^()]*\))*(?:\s+"(?:\\.|[^"\\])*")?\)/g, '')
    .replace(/\[((?:\\.|[^\]\\])*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+"(?:\\.|[^"\\])*")?\)/g, '$1')
    .replace(/<br\s*\/?>/gi, ' ')
    .replace(/^[ \t]*(?:>[ \t]?)*(?:#{1,6}[ \t]+)?/gm, '')
    .replace(/(?<!\\)[*`]/g, '')
    .replace(/\\([\\`*_{}[\]()#+\-.!|<>~])/g, '$1')
    .replace(/(?<![\p{L}\p{N}])_+|_+(?![\p{L}\p{N}])/gu, '');
}

/**
 * The structure of a markdown document, for checking fidelity against the corpus's main_content_markdown:
 * its heading texts and list item texts (each reduced as markdownText does, lower-cased, whitespace collapsed,
 * curly quotes and en/em dashes made plain: converters differ on them),
 * and whether it has a table and a fenced code block. Lines inside fences are not read.
 */
export interface MarkdownStructure {
  headings: string[];
  items: string[];
  table: boolean;
  code: boolean;
}

export function markdownStructure(md: string): MarkdownStructure {
  const out: MarkdownStructure = { headings: [], items: [], table: false, code: false };
  let fence = false;
  const clean = (s: string) =>
    norm(markdownText(s))
      .replace(/[\u2018\u2019]/g, "'")
      .replace(/[\u201c\u201d]/g, '"')
      .replace(/[\u2013\u2014]/g, '-');
  // The item being read: its lines so far (an item's later paragraphs are indented under it).
  let item: string[] | null = null;
  const endItem = () => {
    if (item) {
      const t = clean(item.join(' '));
      if (t) out.items.push(t);
    }
    item = null;
  };
  for (const line of md.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) {
      endItem();
      fence = !fence;
      out.code = true;
      continue;
    }
    if (fence) continue;
    const body = line.replace(/^[ \t]*(?:>[ \t]?)*/, '');
    const h = /^#{1,6}[ \t]+(.*)$/.exec(body);
    const li = h ? null : /^(?:[-*+]|\d+[.)])[ \t]+(.*)$/.exec(body);
    if (h || li || !/^[ \t]/.test(line)) {
      if (body.trim() || h || li) endItem();
    } else if (item && body.trim()) (item as string[]).push(body);
    if (h) {
      const t = clean(h[1]);
      if (t) out.headings.push(t);
    } else if (li) item = [li[1]];
    else if (/^\|.*\|\s*$/.test(body) && /^\|\s*:?-{3,}/.test(body)) out.table = true;
  }
  endItem();
  return out;
}

/**
 * F1 of two multisets of strings (1 when both are empty), one matching the other when equal or, with `prefix`,
 * when the shorter (of 10 characters or more) begins the longer: a list item's first paragraph against the whole
 * item, as converters differ on whether an item's later paragraphs belong to it.
 */
function multisetF1(pred: string[], ref: string[], prefix = false): number {
  if (!ref.length && !pred.length) return 1;
  if (!ref.length || !pred.length) return 0;
  const used = new Array<boolean>(ref.length).fill(false);
  const matches = (a: string, b: string) =>
    a === b || (prefix && Math.min(a.length, b.length) >= 10 && (a.startsWith(b) || b.startsWith(a)));
  let hit = 0;
  for (const p of pred) {
    const i = ref.findIndex((r, k) => !used[k] && matches(p, r));
    if (i >= 0) {
      used[i] = true;
      hit++;
    }
  }
  const P = hit / pred.length;
  const R = hit / ref.length;
  return P + R ? (2 * P * R) / (P + R) : 0;
}

/**
 * Structure fidelity over pages, against each page's reference markdown: heading F1 (the multiset of heading
 * texts; pages whose reference has headings), list item F1 (pages whose reference has list items), and the
 * share of pages whose reference has a table (a fenced code block) where the prediction has one too.
 */
export interface StructureSummary {
  headingF1: number;
  headingPages: number;
  itemF1: number;
  itemPages: number;
  tableKept: number;
  tablePages: number;
  codeKept: number;
  codePages: number;
}

export function summarizeStructure(pages: { pred: string; ref: string }[]): StructureSummary {
  let h = 0;
  let hn = 0;
  let li = 0;
  let ln = 0;
  let t = 0;
  let tn = 0;
  let c = 0;
  let cn = 0;
  for (const { pred, ref } of pages) {
    const p = markdownStructure(pred);
    const r = markdownStructure(ref);
    if (r.headings.length) {
      h += multisetF1(p.headings, r.headings);
      hn++;
    }
    if (r.items.length) {
      li += multisetF1(p.items, r.items, true);
      ln++;
    }
    if (r.table) {
      tn++;
      if (p.table) t++;
    }
    if (r.code) {
      cn++;
      if (p.code) c++;
    }
  }
  const round = (x: number) => +x.toFixed(3);
  return {
    headingF1: round(hn ? h / hn : 0),
    headingPages: hn,
    itemF1: round(ln ? li / ln : 0),
    itemPages: ln,
    tableKept: round(tn ? t / tn : 0),
    tablePages: tn,
    codeKept: round(cn ? c / cn : 0),
    codePages: cn,
  };
}
