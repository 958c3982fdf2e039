// The agent without an LLM (or after the LLM failed): the given URLs read first, then the own index
// searched for the prompt's key terms (OR-ed) and its best hits read, MAX_PAGES pages in all, through
// the same tools (credits, scope and actions as the LLM's). With a schema, the pages'
// deterministic fills merged (fillJsonSchema: structured data, labels, tables; never invented);
// without, the best BM25 passages across the pages as {answer, sources}. Same input, same answer.
import { AgentError } from '../errors.ts';
import { fillOf, isEmpty, mergeFills } from '../extract/merge-fills.ts';
import { type Passage, rankPassages, splitPassages } from '../extractors/bm25.ts';
import { PROSE_STOPWORDS } from '../extractors/stem.ts';
import type { AgentOutcome } from './rows.ts';
import type { AgentRun, PageRead } from './tools.ts';

/** Pages the deterministic agent reads at most. */
export const MAX_PAGES = 5;
/** Search hits it reads at most (after the given URLs). */
const SEARCH_PAGES = 3;
/** Passages of the answer. */
const ANSWER_PASSAGES = 3;
/** Words of a request that never name what is sought. */
const REQUEST_WORDS = new Set(
  'find tell give list show please know want need information info page pages website site web search look answer question'.split(
    ' ',
  ),
);

/** The prompt's content words, in order, each once (at most 8): what the index is searched for. */
export function keyTerms(prompt: string): string[] {
  const out: string[] = [];
  for (const w of prompt.toLowerCase().split(/[^\p{L}\p{N}]+/u)) {
    if (w.length < 2 || PROSE_STOPWORDS.has(w) || REQUEST_WORDS.has(w) || out.includes(w)) continue;
    out.push(w);
    if (out.length >= 8) break;
  }
  return out;
}

/** `why` opens the warning: "no LLM is configured" or "the LLM failed (…)". */
export async function runDeterministicAgent(run: AgentRun, why: string): Promise<AgentOutcome> {
  const r = run.row.request;
  const notes: string[] = [];
  for (const url of r.urls) {
    if (run.pages.size >= MAX_PAGES || run.exhausted) break;
    await run.checkpoint();
    await run.scrape({ url });
  }
  const terms = keyTerms(r.prompt);
  if (terms.length && !run.exhausted && run.pages.size < MAX_PAGES) {
    await run.checkpoint();
    const query = terms.join(' or ');
    const found = await run.search({ query, limit: 5 });
    notes.push(`searched for "${query}" (${found.urls?.length ?? 0} result(s))`);
    let read = 0;
    for (const url of found.urls ?? []) {
      if (read >= SEARCH_PAGES || run.pages.size >= MAX_PAGES || run.exhausted) break;
      await run.checkpoint();
      if ((await run.scrape({ url })).ok) read++;
    }
  }
  const pages = [...new Set(run.pages.values())];
  if (!pages.length) {
    if (run.exhausted) throw run.exhaustedError();
    throw new AgentError(
      'AGENT_NOTHING_FOUND',
      `no page to answer from: ${r.urls.length ? 'the given URLs could not be read and ' : ''}the index has no page matching ${terms.length ? `"${terms.join(' ')}"` : 'the prompt'}`,
    );
  }
  notes.push(`read ${pages.length} page(s)`);
  if (run.exhausted) notes.push(`stopped at maxCredits (${r.maxCredits})`);
  const base = `${why}; a deterministic agent answered: ${notes.join(', ')}`;

  if (r.schema) {
    const fills = pages.map((p) => fillOf(p.doc, r.schema));
    const data = mergeFills(fills.map((f) => f.fill)) ?? {};
    const missing = fills.map((f) => f.missing).reduce((a, b) => a.filter((x) => b.includes(x)));
    if (isEmpty(data)) throw new AgentError('AGENT_NOTHING_FOUND', `${base}; no field of the schema was found in them`);
    return {
      status: 'completed',
      data,
      warning: `${base}; the schema was filled from their structured data and labels${missing.length ? `, missing ${missing.slice(0, 10).join(', ')}` : ''}`,
      sources: pages.map((p) => p.url),
    };
  }
  const best = bestPassages(pages, r.prompt);
  if (!best.length) throw new AgentError('AGENT_NOTHING_FOUND', `${base}; no passage of them matches the prompt`);
  const sources = [...new Set(best.map((b) => b.page.url))];
  return {
    status: 'completed',
    data: { answer: best.map((b) => b.text).join('\n\n'), sources },
    warning: `${base}; the answer is the best matching passages (BM25)`,
    sources: pages.map((p) => p.url),
  };
}

/** The passages of every page ranked together (one idf over all of them), the best ANSWER_PASSAGES. */
function bestPassages(pages: PageRead[], prompt: string): { text: string; page: PageRead }[] {
  const all: Passage[] = [];
  const owner: PageRead[] = [];
  for (const page of pages)
    for (const p of splitPassages(page.markdown)) {
      all.push({ ...p, index: all.length });
      owner.push(page);
    }
  return rankPassages(all, prompt)
    .slice(0, ANSWER_PASSAGES)
    .map((p) => ({ text: p.text, page: owner[p.index] }));
}
