// Small XML helpers shared by the office/epub parsers: a DOM for small parts (htmlparser2 in
// xmlMode, names kept as written, prefixes included) matched by LOCAL name so an unusual namespace
// prefix does not break parsing; and a SAX wrapper for parts that are streamed (large sheets).
import { type AnyNode, DomHandler, type Element } from 'domhandler';
import { Parser } from 'htmlparser2';
import { DocumentError } from '../errors.ts';

/**
 * Deepest element nesting a part may have. Real parts nest a few dozen levels; htmlparser2 keeps
 * its stack of open elements newest-first (an unshift per element), so its time grows with the
 * square of the depth: a 6 KB docx whose part nested 200,000 elements held a parser thread for 50 s.
 */
export const MAX_XML_DEPTH = 2000;

function tooDeep(): DocumentError {
  return new DocumentError('DOCUMENT_CORRUPT', `An XML part nests elements deeper than ${MAX_XML_DEPTH} levels`);
}

/** A DOM builder that stops at MAX_XML_DEPTH. */
class BoundedDomHandler extends DomHandler {
  #depth = 0;
  override onopentag(name: string, attribs: Record<string, string>): void {
    if (++this.#depth > MAX_XML_DEPTH) throw tooDeep();
    super.onopentag(name, attribs);
  }
  override onclosetag(): void {
    this.#depth--;
    super.onclosetag();
  }
}

/** `w:p` → `p`. */
export function local(name: string): string {
  const i = name.indexOf(':');
  return i < 0 ? name : name.slice(i + 1);
}

export function isElement(n: AnyNode): n is Element {
  return n.type === 'tag' || n.type === 'script' || n.type === 'style';
}

/** Parses a whole XML part; returns the root element (throws DOCUMENT_CORRUPT when there is none, or it nests past MAX_XML_DEPTH). */
export function parseXml(text: string, part: string): Element {
  const handler = new BoundedDomHandler(undefined, { xmlMode: true });
  new Parser(handler, { xmlMode: true }).end(text);
  for (const n of handler.root.children) if (isElement(n)) return n;
  throw new DocumentError('DOCUMENT_CORRUPT', `${part} is not an XML document`);
}

/** Attribute by local name (`r:id`, `id` both match `id`; the exact name is tried first). */
export function attr(el: Element, name: string): string | undefined {
  const exact = el.attribs[name];
  if (exact !== undefined) return exact;
  for (const [k, v] of Object.entries(el.attribs)) if (local(k) === name) return v;
  return undefined;
}

/** Element children, optionally only those with this local name. */
export function kids(el: Element, name?: string): Element[] {
  const out: Element[] = [];
  for (const c of el.children) if (isElement(c) && (name === undefined || local(c.name) === name)) out.push(c);
  return out;
}

export function kid(el: Element, name: string): Element | undefined {
  for (const c of el.children) if (isElement(c) && local(c.name) === name) return c;
  return undefined;
}

/** Descendant elements with this local name, document order (iterative, no recursion). */
export function descendants(el: Element, name: string): Element[] {
  const out: Element[] = [];
  const stack: AnyNode[] = [...el.children].reverse();
  while (stack.length) {
    const n = stack.pop()!;
    if (!isElement(n)) continue;
    if (local(n.name) === name) out.push(n);
    for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i]);
  }
  return out;
}

export function descendant(el: Element, name: string): Element | undefined {
  return descendants(el, name)[0];
}

/** Concatenated text of all descendants. */
export function textOf(el: AnyNode): string {
  if (el.type === 'text') return el.data;
  if (!('children' in el)) return '';
  let s = '';
  for (const c of el.children) s += c.type === 'text' ? c.data : textOf(c);
  return s;
}

export interface SaxHandlers {
  open?(name: string, attrs: Record<string, string>): void;
  text?(text: string): void;
  close?(name: string): void;
}

/** A streaming XML parser: write() text chunks, then end(). Names are passed as written; nesting past MAX_XML_DEPTH is DOCUMENT_CORRUPT. */
export function saxParser(h: SaxHandlers): { write(s: string): void; end(): void } {
  let depth = 0;
  const p = new Parser(
    {
      onopentag: (name, attrs) => {
        if (++depth > MAX_XML_DEPTH) throw tooDeep();
        h.open?.(name, attrs);
      },
      ontext: (t) => h.text?.(t),
      onclosetag: (name) => {
        depth--;
        h.close?.(name);
      },
    },
    { xmlMode: true },
  );
  return { write: (s) => p.write(s), end: () => p.end() };
}

export function escapeHtml(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A relationship-id attribute (`r:id`, `r:embed`…): a prefixed attribute with this local name. */
export function relAttr(el: Element, name = 'id'): string | undefined {
  for (const [k, v] of Object.entries(el.attribs)) if (k.includes(':') && local(k) === name) return v;
  return undefined;
}
