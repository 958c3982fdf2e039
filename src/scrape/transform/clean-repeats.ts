// Repeated blocks inside the main content: responsive layouts render the same title, price or
// paragraph twice (a mobile and a desktop copy, one hidden by CSS the page does not say inline).
// The second copy of a block whose text is already there adds nothing; it is dropped.
import { type Element, isTag, type ParentNode } from 'domhandler';
import { textContent } from 'domutils';

/** Blocks compared: headings, paragraphs and list items (their text is the unit a reader sees). */
const COMPARED = new Set(['p', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'dt', 'dd', 'blockquote', 'figcaption']);
/** Shorter texts repeat on purpose ("Yes", "Reply", a size in every row). */
const MIN_CHARS = 12;

/** The later copies of repeated blocks in the roots (and under them), outermost only. */
export function repeatedBlocks(roots: Element[]): Element[] {
  const seen = new Set<string>();
  const repeats: Element[] = [];
  const stack: Element[] = [];
  for (let r = roots.length - 1; r >= 0; r--) stack.push(roots[r]);
  while (stack.length) {
    const el = stack.pop()!;
    if (el.name === 'pre' || el.name === 'code' || el.name === 'table') continue;
    if (COMPARED.has(el.name)) {
      const key = el.name + ' ' + textContent(el).replace(/\s+/g, ' ').trim().toLowerCase();
      if (key.length >= MIN_CHARS + el.name.length + 1) {
        if (seen.has(key)) {
          repeats.push(el);
          continue;
        }
        seen.add(key);
      }
      if (el.name !== 'li' && el.name !== 'dd' && el.name !== 'blockquote') continue;
    }
    pushChildren(stack, el);
  }
  return repeats;
}

function pushChildren(stack: Element[], el: ParentNode): void {
  const kids = el.children;
  for (let i = kids.length - 1; i >= 0; i--) {
    const k = kids[i];
    if (isTag(k)) stack.push(k);
  }
}
