// Nesting beyond what browsers build: Chromium's HTML parser stops nesting at 512 levels (deeper
// elements become siblings). A page nested thousands deep (hostile, or a broken generator) would
// otherwise overflow the stack of every recursive walk after parsing (selectors, cleaning,
// markdown). Past the cap, the structure is flattened: the element at the cap keeps its
// descendants' text and leaf elements (images, line breaks), in document order.
import { type AnyNode, type ChildNode, type Document, type Element, hasChildren, isTag } from 'domhandler';

/** Chromium's kMaximumHTMLParserDOMTreeDepth. */
export const MAX_DOM_DEPTH = 512;

/** Flattens `doc` below `max` levels, in place (iteratively: the walk itself must not recurse). */
export function capDomDepth(doc: Document, max = MAX_DOM_DEPTH): void {
  const stack: { node: AnyNode; depth: number }[] = [{ node: doc, depth: 0 }];
  while (stack.length) {
    const { node, depth } = stack.pop()!;
    if (!hasChildren(node)) continue;
    if (depth >= max && isTag(node)) {
      flatten(node);
      continue;
    }
    for (const child of node.children) stack.push({ node: child, depth: depth + 1 });
  }
}

// The element's descendants that carry content on their own (text, leaf elements), as its children.
function flatten(el: Element): void {
  const leaves: ChildNode[] = [];
  const stack: ChildNode[] = [...el.children].reverse();
  while (stack.length) {
    const node = stack.pop()!;
    if (hasChildren(node) && node.children.length) {
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
    } else if (node.type === 'text' || isTag(node)) leaves.push(node);
  }
  for (const leaf of leaves) {
    leaf.prev = leaf.next = null;
    leaf.parent = el;
  }
  leaves.forEach((leaf, i) => {
    leaf.prev = leaves[i - 1] ?? null;
    leaf.next = leaves[i + 1] ?? null;
  });
  el.children = leaves;
}
