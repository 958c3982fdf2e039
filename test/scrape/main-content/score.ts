// Scoring helpers for the main-content corpus (test and bench): the text of a node list with
// block boundaries kept as line breaks (domutils' textContent glues "<td>a</td><td>b</td>" into
// "ab"), and token-level F1 between two texts.
import type { AnyNode } from 'domhandler';
import { isTag, isText } from 'domhandler';

const INLINE = new Set([
  'a',
  'abbr',
  'b',
  'bdi',
  'bdo',
  'cite',
  'code',
  'data',
  'dfn',
  'em',
  'i',
  'kbd',
  'mark',
  'q',
  's',
  'samp',
  'small',
  'span',
  'strong',
  'sub',
  'sup',
  'time',
  'u',
  'var',
  'wbr',
  'img',
  'label',
  'font',
  'strike',
  'tt',
  'big',
  'del',
  'ins',
  'nobr',
  'picture',
]);

/** Text of the nodes; every non-inline element starts and ends a line. */
export function blockText(nodes: AnyNode | AnyNode[]): string {
  const out: string[] = [];
  const stack: (AnyNode | '\n')[] = (Array.isArray(nodes) ? [...nodes] : [nodes]).reverse();
  while (stack.length) {
    const n = stack.pop()!;
    if (n === '\n') out.push('\n');
    else if (isText(n)) out.push(n.data);
    else if (isTag(n)) {
      if (n.name === 'br') {
        out.push('\n');
        continue;
      }
      const block = !INLINE.has(n.name);
      if (block) {
        out.push('\n');
        stack.push('\n');
      }
      for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
    } else if ('children' in n) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return out
    .join('')
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}

/** Lowercase words (letters and digits). */
export function tokens(s: string): string[] {
  return s.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** Token-level precision, recall and F1 of `got` against `expected` over multiset counts. */
export function tokenF1(got: string, expected: string): { precision: number; recall: number; f1: number } {
  const a = tokens(got);
  const b = tokens(expected);
  const counts = new Map<string, number>();
  for (const t of b) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of a) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      common++;
      counts.set(t, c - 1);
    }
  }
  if (!a.length && !b.length) return { precision: 1, recall: 1, f1: 1 };
  const precision = a.length ? common / a.length : 0;
  const recall = b.length ? common / b.length : 0;
  return { precision, recall, f1: precision + recall ? (2 * precision * recall) / (precision + recall) : 0 };
}
