// HTML → GitHub-flavoured Markdown, on htmlparser2/domhandler trees (the transform stage parses a
// page once and hands the filtered DOM here): the entry points and the one iterative walk, which
// says what entering and leaving each kind of element does. Design and the choices made where
// Markdown gives several: docs/design/markdown.md.
import type { AnyNode, ChildNode, Document, Element, Text } from 'domhandler';
import { codeBlockLines, codeBlockText, codeLanguage } from './code.ts';
import { figureChildren, findBaseHref, nextNode } from './dom.ts';
import { parseHtml } from './html-parser.ts';
import {
  K_A,
  K_BLOCK,
  K_BR,
  K_CODE,
  K_DEL,
  K_DIALOG,
  K_DROP,
  K_DT,
  K_EM,
  K_FIGURE,
  K_HEADING,
  K_HR,
  K_IMG,
  K_INLINE,
  K_INPUT,
  K_LI,
  K_LIST,
  K_PRE,
  K_QUOTE,
  K_STRONG,
  K_TABLE,
  KINDS,
  isHidden,
} from './elements.ts';
import { F_DEL, F_EM, F_LINK, F_STRONG } from './inline.ts';
import { ListWriter } from './lists.ts';
import { type CellRenderer, dataTable, escapePipes, layoutGrid, tableLines } from './tables.ts';
import { unwrapSearchRedirect } from './redirects.ts';
import { linkDestination, linkTitle, longestBacktickRun } from './text.ts';

export interface MarkdownOptions {
  /** Absolute URL that relative links and images are resolved against. */
  baseUrl?: string;
  /** Replace `data:` image URLs with `<Base64-Image-Removed>` (default true). */
  removeBase64Images?: boolean;
}

export function htmlToMarkdown(html: string, opts?: MarkdownOptions): string {
  return domToMarkdown(parseHtml(html, { skipUnrendered: true }), opts);
}

export function domToMarkdown(nodes: AnyNode | AnyNode[], opts: MarkdownOptions = {}): string {
  const roots = Array.isArray(nodes) ? nodes : [nodes];
  let base = opts.baseUrl ? (URL.parse(opts.baseUrl)?.href ?? null) : null;
  const baseHref = findBaseHref(roots, 0);
  if (baseHref !== undefined) base = URL.parse(baseHref, base ?? undefined)?.href ?? base;
  const c = new Converter(base, opts.removeBase64Images ?? true, false, new Map());
  c.walk(roots);
  return c.finish();
}

// What to do when leaving an element.
const X_NONE = 0;
const X_BLOCK = 1;
const X_HEADING = 2;
const X_LIST = 3;
const X_LI = 4;
const X_QUOTE = 5;
const X_FRAME = 6;
const X_DT = 7;
const SKIP = -1; // the element was handled whole (or dropped): do not descend

const SCRIPT_URL = /^(?:javascript|vbscript):/i;

/** Kinds whose elements run inline with their neighbours (spans, emphasis, links). */
const RUN_KINDS = new Set([K_INLINE, K_STRONG, K_EM, K_DEL, K_A]);

class Converter extends ListWriter implements CellRenderer {
  /** Passed from enter() to the matching exit(). */
  private aux = 0;
  /** Children to walk instead of the element's own (a figure's, caption last). */
  private override: ChildNode[] | null = null;
  private cellConverter: Converter | null = null;

  finish(): string {
    this.flush();
    return this.out.join('\n').trim();
  }

  walk(roots: AnyNode[]): void {
    const lists: AnyNode[][] = [roots];
    const idx: number[] = [0];
    const exits: number[] = [X_NONE];
    const auxs: number[] = [0];
    while (lists.length > 0) {
      const node = nextNode(lists, idx);
      if (node === null) {
        const x = exits.pop()!;
        const aux = auxs.pop()!;
        if (x !== X_NONE) this.exit(x, aux);
        continue;
      }
      const type = node.type as string;
      if (type === 'text') {
        this.text((node as Text).data);
      } else if (type === 'tag') {
        const el = node as Element;
        this.aux = 0;
        const x = this.enter(el);
        if (x === SKIP) continue;
        let children: ChildNode[] = el.children;
        if (this.override !== null) {
          children = this.override;
          this.override = null;
        }
        if (children.length === 0) {
          if (x !== X_NONE) this.exit(x, this.aux);
          continue;
        }
        lists.push(children);
        idx.push(0);
        exits.push(x);
        auxs.push(this.aux);
      } else if (type === 'root') {
        lists.push((node as Document).children);
        idx.push(0);
        exits.push(X_NONE);
        auxs.push(0);
      }
      // comments, directives, script/style (their own node types) are skipped
    }
  }

  private enter(el: Element): number {
    const k = KINDS.get(el.name) ?? K_INLINE;
    if (k === K_DROP) return SKIP;
    const a = el.attribs;
    if (isHidden(a)) return SKIP;
    if (!this.lastSpace && el.prev !== null && el.prev.type === 'tag' && RUN_KINDS.has(k)) this.separateAdjacent(el);
    switch (k) {
      case K_INLINE:
        return X_NONE;
      case K_BLOCK:
        this.flush();
        this.requestBlank();
        return X_BLOCK;
      case K_STRONG:
        if (this.strong > 0 && !this.nestable(F_STRONG, this.strong)) return X_NONE;
        this.strong++;
        this.pushFrame(F_STRONG, '', '');
        return X_FRAME;
      case K_EM:
        if (this.em > 0 && !this.nestable(F_EM, this.em)) return X_NONE;
        this.em++;
        this.pushFrame(F_EM, '', '');
        return X_FRAME;
      case K_DEL:
        if (this.del > 0) return X_NONE;
        this.del++;
        this.pushFrame(F_DEL, '', '');
        return X_FRAME;
      case K_A: {
        const href = a.href;
        if (href === undefined || this.linkDepth > 0) return X_NONE;
        const h = href.trim();
        if (SCRIPT_URL.test(h)) return X_NONE;
        this.linkDepth++;
        this.pushFrame(F_LINK, linkDestination(unwrapSearchRedirect(this.resolve(h))), linkTitle(a.title));
        return X_FRAME;
      }
      case K_BR:
        this.top.buf += '\n';
        this.lastSpace = true;
        this.lastBang = false;
        return SKIP;
      case K_IMG:
        this.image(a);
        return SKIP;
      case K_CODE:
        this.inlineCode(el);
        return SKIP;
      case K_HEADING:
        this.flush();
        this.requestBlank();
        this.aux = this.heading;
        this.heading = el.name.charCodeAt(1) - 48;
        return X_HEADING;
      case K_LIST:
        this.enterList(el);
        return X_LIST;
      case K_LI:
        this.aux = this.enterItem(el);
        return X_LI;
      case K_QUOTE:
        this.flush();
        this.requestBlank();
        this.pushCtx('> ', '', false);
        return X_QUOTE;
      case K_PRE:
        this.flush();
        this.codeBlock(el);
        return SKIP;
      case K_HR:
        this.flush();
        if (!this.cell) {
          this.requestBlank();
          // `- ---` would read as a rule across the list, not one inside the item.
          this.writeLine(this.items > 0 ? '***' : '---');
          this.requestBlank();
        }
        return SKIP;
      case K_TABLE:
        if (this.table(el)) return SKIP;
        this.flush();
        this.requestBlank();
        return X_BLOCK;
      case K_INPUT:
        if (this.items > 0 && a.type !== undefined && a.type.toLowerCase() === 'checkbox') {
          this.top.buf += a.checked !== undefined ? '[x] ' : '[ ] ';
          this.lastSpace = true;
          this.lastBang = false;
        }
        return SKIP;
      case K_FIGURE:
        this.flush();
        this.requestBlank();
        this.override = figureChildren(el);
        return X_BLOCK;
      case K_DT:
        this.flush();
        this.requestBlank();
        if (this.strong === 0) {
          this.strong++;
          this.pushFrame(F_STRONG, '', '');
          this.aux = 1;
        }
        return X_DT;
      case K_DIALOG:
        if (a.open === undefined) return SKIP;
        this.flush();
        this.requestBlank();
        return X_BLOCK;
      default:
        return X_NONE;
    }
  }

  private exit(x: number, aux: number): void {
    switch (x) {
      case X_BLOCK:
        this.flush();
        this.requestBlank();
        break;
      case X_FRAME:
        this.popFrame();
        break;
      case X_HEADING:
        this.flush();
        this.heading = aux;
        this.requestBlank();
        break;
      case X_LIST:
        this.exitList();
        break;
      case X_LI:
        this.exitItem(aux);
        break;
      case X_QUOTE:
        this.flush();
        this.popCtx();
        this.requestBlank();
        break;
      case X_DT:
        if (aux === 1) this.popFrame();
        this.flush();
        this.requestBlank();
        break;
    }
  }

  private codeBlock(pre: Element): void {
    const code = codeBlockText(pre);
    const lines = codeBlockLines(code);
    if (lines.length === 0) return;
    const fence = '`'.repeat(Math.max(3, longestBacktickRun(code) + 1));
    this.emitCodeBlock(lines, fence, this.cell ? '' : codeLanguage(pre));
  }

  /** Render a data table; false when it is a layout table, to be rendered as its content. */
  private table(el: Element): boolean {
    if (this.cell) return false;
    const t = dataTable(el);
    if (t === null) return false;
    this.flush();
    const grid = layoutGrid(t.rows, this);
    if (!grid.any) return true;
    if (t.caption !== null) {
      this.requestBlank();
      this.walk([t.caption]);
    }
    this.requestBlank();
    for (const line of tableLines(grid)) this.writeLine(line);
    this.requestBlank();
    return true;
  }

  renderCell(cell: Element): string {
    let c = this.cellConverter;
    if (c === null) c = this.cellConverter = new Converter(this.base, this.removeBase64, true, this.urlCache);
    c.cellParts = [];
    c.walk(cell.children);
    c.flush();
    return escapePipes(c.cellParts.length === 1 ? c.cellParts[0] : c.cellParts.join('<br>'));
  }
}
