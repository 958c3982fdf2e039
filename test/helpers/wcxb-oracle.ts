// A ceiling for main-content extraction on a WCXB-layout corpus: the best token F1 that any single element of the
// page (its whole text, script/style/head aside) reaches against the ground truth, chosen with hindsight. Human
// ground truth is often one region of the page (the description block of a product, the first post of a thread),
// so this says how far picking one region could go; an extractor may pass it by combining and pruning regions.
import { type AnyNode, type Element, isTag } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import { tokenF1 } from './wcxb-score.ts';

const SKIPPED = new Set(['script', 'style', 'head', 'noscript', 'template', 'svg', 'iframe']);
/** Elements with less text than this are not candidates (a title alone is not a page's content). */
const MIN_CHARS = 50;

/** The best F1 of one element's text against the truth (0 when the truth is empty and every element has text). */
export function bestSubtreeF1(html: string, truth: string): number {
  const doc = parseDocument(html);
  let best = 0;
  const textOf = (n: AnyNode): string => {
    if (n.type === 'text') return (n as unknown as { data: string }).data;
    if (!isTag(n) && n.type !== 'root') return '';
    if (isTag(n) && SKIPPED.has(n.name)) return '';
    const kids = (n as Element).children;
    let s = '';
    let elements = 0;
    let ownText = false;
    for (const k of kids) {
      const t = textOf(k);
      if (isTag(k)) {
        elements++;
        s += t + ' ';
      } else {
        if (t.trim()) ownText = true;
        s += t;
      }
    }
    // A wrapper of one element with no text of its own has that element's text: scored once.
    if (isTag(n) && s.length >= MIN_CHARS && (elements !== 1 || ownText)) {
      const f = tokenF1(s, truth).F1;
      if (f > best) best = f;
    }
    return s;
  };
  textOf(doc);
  return best;
}
