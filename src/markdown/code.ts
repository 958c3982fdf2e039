// Code for the HTML→Markdown converter: the text of `<code>`/`<pre>` elements as the browser shows
// it, a code block's lines (blank-line runs folded, trailing whitespace dropped) and its language.
import type { ChildNode, Element, Text } from 'domhandler';
import { nextNode } from './dom.ts';
import { K_DROP, KINDS, isHidden } from './elements.ts';

/** Inside `<pre>`, these start a new line (highlighters that put each line in its own element). */
const LINE_BLOCKS = new Set('div p li tr section article'.split(' '));

/** Text content for code: `<br>` is a newline in `<pre>` (a space otherwise), dropped and hidden
 *  elements are skipped, and in `<pre>` line-level elements start a new line. */
export function gatherText(root: Element, pre: boolean): string {
  let out = '';
  let atLineStart = true;
  const lists: ChildNode[][] = [root.children];
  const idx: number[] = [0];
  const lineBlock: boolean[] = [false];
  while (lists.length > 0) {
    const node = nextNode(lists, idx);
    if (node === null) {
      if (lineBlock.pop() && !atLineStart) {
        out += '\n';
        atLineStart = true;
      }
      continue;
    }
    const type = node.type as string;
    if (type === 'text') {
      const d = (node as Text).data;
      if (d === '') continue;
      out += d;
      atLineStart = d.charCodeAt(d.length - 1) === 10;
      continue;
    }
    if (type !== 'tag') continue;
    const el = node as Element;
    if (KINDS.get(el.name) === K_DROP || isHidden(el.attribs)) continue;
    if (el.name === 'br') {
      out += pre ? '\n' : ' ';
      atLineStart = pre;
      continue;
    }
    if (el.children.length === 0) continue;
    const block = pre && LINE_BLOCKS.has(el.name);
    if (block && !atLineStart) {
      out += '\n';
      atLineStart = true;
    }
    lists.push(el.children);
    idx.push(0);
    lineBlock.push(block);
  }
  // The newline right after <pre> is not content (HTML parsing rule htmlparser2 leaves to us).
  if (pre && out.charCodeAt(0) === 10) out = out.slice(1);
  return out;
}

/** A `<pre>`'s code: its text with newlines normalised and NBSP as an ordinary space. */
export function codeBlockText(pre: Element): string {
  let code = gatherText(pre, true);
  if (code.indexOf('\r') >= 0) code = code.replace(/\r\n?/g, '\n');
  if (code.indexOf('\u00a0') >= 0) code = code.replace(/\u00a0/g, ' ');
  return code;
}

/** The lines of a code block: trailing whitespace dropped, leading and trailing blank lines
 *  dropped, and a run of blank lines inside made one. */
export function codeBlockLines(code: string): string[] {
  const lines: string[] = [];
  let blank = false;
  for (const raw of code.split('\n')) {
    const line = raw.trimEnd();
    if (line === '') {
      blank = lines.length > 0;
      continue;
    }
    if (blank) lines.push('');
    blank = false;
    lines.push(line);
  }
  return lines;
}

const LANG_PREFIXES = ['language-', 'lang-', 'highlight-source-', 'highlight-'];

function languageOf(el: Element | null): string {
  if (el === null) return '';
  const a = el.attribs;
  const cls = a.class;
  if (cls !== undefined) {
    for (const token of cls.split(/\s+/)) {
      for (const p of LANG_PREFIXES) {
        if (token.length > p.length && token.startsWith(p)) return token.slice(p.length);
      }
    }
  }
  return a['data-lang'] ?? a['data-language'] ?? '';
}

/** The language of a code block, from `language-xxx` / `lang-xxx` / `highlight-source-xxx` (or
 *  data-lang) on the `<pre>`, its first `<code>` child, or the highlighter's wrapper around it. */
export function codeLanguage(pre: Element): string {
  let code: Element | null = null;
  for (const c of pre.children) {
    if ((c.type as string) === 'tag') {
      if ((c as Element).name === 'code') code = c as Element;
      break;
    }
  }
  const parent = pre.parent !== null && (pre.parent.type as string) === 'tag' ? (pre.parent as Element) : null;
  const lang = languageOf(pre) || languageOf(code) || languageOf(parent);
  return /^[\p{L}\p{N}_+#.-]{1,40}$/u.test(lang) ? lang : '';
}
