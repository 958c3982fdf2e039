// Small helpers over htmlparser2/domhandler trees for the HTML→Markdown converter: the step of an
// iterative walk (no recursion, so deep documents cannot overflow the stack), figures, `<base>`.
import type { AnyNode, ChildNode, Document, Element } from 'domhandler';

/** One step of an iterative walk over a stack of child lists (`lists`, with the next index of
 *  each in `idx`): the next node of the innermost list, or null when that list is done (it is
 *  then popped, and the caller closes whatever it opened for it). Allocates nothing. */
export function nextNode<T>(lists: T[][], idx: number[]): T | null {
  const t = lists.length - 1;
  const list = lists[t];
  const i = idx[t];
  if (i >= list.length) {
    lists.pop();
    idx.pop();
    return null;
  }
  idx[t] = i + 1;
  return list[i];
}

/** A figure's children with its caption moved after the image. */
export function figureChildren(fig: Element): ChildNode[] {
  const caps: ChildNode[] = [];
  const rest: ChildNode[] = [];
  for (const c of fig.children) {
    if ((c.type as string) === 'tag' && (c as Element).name === 'figcaption') caps.push(c);
    else rest.push(c);
  }
  return caps.length === 0 ? fig.children : rest.concat(caps);
}

/** `<base href>` near the top of a document (in html > head), without walking the body. */
export function findBaseHref(nodes: AnyNode[], depth: number): string | undefined {
  for (const n of nodes) {
    const type = n.type as string;
    if (type === 'root' && depth === 0) {
      const r = findBaseHref((n as Document).children, 1);
      if (r !== undefined) return r;
    } else if (type === 'tag') {
      const e = n as Element;
      if (e.name === 'base' && e.attribs.href !== undefined) return e.attribs.href.trim();
      if ((e.name === 'html' || e.name === 'head') && depth < 3) {
        const r = findBaseHref(e.children, depth + 1);
        if (r !== undefined) return r;
      }
    }
  }
  return undefined;
}
