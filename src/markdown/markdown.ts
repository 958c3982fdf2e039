// HTML → GitHub-flavoured Markdown, on htmlparser2/domhandler trees (the transform stage parses a
// page once and hands the filtered DOM here). One iterative walk over the tree, no recursion, so
// arbitrarily deep documents cannot overflow the stack; no re-parsing, no per-node regexes on the
// common path.
//
// How it works: inline content accumulates in a stack of frames (one per open **, *, ~~ or link;
// the bottom frame is the current paragraph). Closing a frame wraps its text in the markers, moving
// whitespace at its edges outside (`<b> x </b>` → ` **x** `); an empty frame leaves only its
// whitespace. A block boundary closes every open frame into the paragraph, writes the paragraph, and
// leaves the frames open with empty text, so formatting and links carry on into the next block
// (`<a><h3>T</h3><p>E</p></a>` → `### [T](…)` and `[E](…)`). Blocks are written line by line under a
// stack of containers (blockquote `> `, list item `- ` then two spaces); a pending blank line is
// written only before the next line, and only where its container has content, so there is never
// more than one blank line and never one at the start of a container.
//
// Choices where Markdown gives several:
// - `<br>` is a plain newline (no trailing spaces, no backslash); two in a row make a paragraph
//   break; inside table cells it is `<br>`, and inside headings a space.
// - NBSP is rendered as an ordinary (collapsible) space.
// - Escaping is minimal (see markdown-text.ts): only what would otherwise be read as markup.
// - Code blocks keep indentation and inner spacing exactly; trailing whitespace on a line is
//   dropped and runs of blank lines become one (the output has neither anywhere).
// - Block boundaries inside a table cell become `<br>`; tables whose cells hold lists, headings,
//   code blocks, quotes or tables, and one-cell tables, are rendered as their content instead.
// - Every `data:` image (not only base64) becomes `<Base64-Image-Removed>` when removeBase64Images.
import type { AnyNode, ChildNode, Document, Element, Text } from 'domhandler';
import { parseDocument } from 'htmlparser2';
import {
  altText,
  codeSpan,
  collapseWhitespace,
  escapeLineStart,
  escapeText,
  largestSrcsetCandidate,
  linkDestination,
  linkTitle,
  longestBacktickRun,
} from './text.ts';

export interface MarkdownOptions {
  /** Absolute URL that relative links and images are resolved against. */
  baseUrl?: string;
  /** Replace `data:` image URLs with `<Base64-Image-Removed>` (default true). */
  removeBase64Images?: boolean;
}

export function htmlToMarkdown(html: string, opts?: MarkdownOptions): string {
  return domToMarkdown(parseDocument(html), opts);
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

// Element kinds.
const K_INLINE = 0; // transparent: its children are rendered in place
const K_DROP = 1;
const K_BLOCK = 2;
const K_HEADING = 3;
const K_LIST = 4;
const K_LI = 5;
const K_QUOTE = 6;
const K_PRE = 7;
const K_HR = 8;
const K_BR = 9;
const K_TABLE = 10;
const K_STRONG = 11;
const K_EM = 12;
const K_DEL = 13;
const K_A = 14;
const K_CODE = 15;
const K_IMG = 16;
const K_INPUT = 17;
const K_FIGURE = 18;
const K_DT = 19;
const K_DIALOG = 20;

const KINDS = new Map<string, number>();
function kind(k: number, names: string): void {
  for (const n of names.split(' ')) KINDS.set(n, k);
}
kind(
  K_DROP,
  'script style noscript template svg iframe object embed canvas head meta link title base select button textarea option optgroup datalist video audio source track map area param frameset frame noframes applet portal wbr',
);
kind(
  K_BLOCK,
  'address article aside body center details dl dd fieldset figcaption footer form header hgroup html legend main nav p section summary caption tbody thead tfoot tr td th search',
);
kind(K_HEADING, 'h1 h2 h3 h4 h5 h6');
kind(K_LIST, 'ul ol menu dir');
kind(K_LI, 'li');
kind(K_QUOTE, 'blockquote');
kind(K_PRE, 'pre listing xmp plaintext');
kind(K_HR, 'hr');
kind(K_BR, 'br');
kind(K_TABLE, 'table');
kind(K_STRONG, 'strong b');
kind(K_EM, 'em i');
kind(K_DEL, 'del s strike');
kind(K_A, 'a');
kind(K_CODE, 'code kbd samp tt');
kind(K_IMG, 'img');
kind(K_INPUT, 'input');
kind(K_FIGURE, 'figure');
kind(K_DT, 'dt');
kind(K_DIALOG, 'dialog');
KINDS.set('div', K_BLOCK);

/** Content that makes a table a layout table rather than data. */
const BLOCKY_IN_CELL = new Set('table ul ol dl dt dd menu dir li h1 h2 h3 h4 h5 h6 pre listing xmp blockquote hr'.split(' '));
/** Inside `<pre>`, these start a new line (highlighters that put each line in its own element). */
const LINE_BLOCKS = new Set('div p li tr section article'.split(' '));

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

// Frame kinds.
const F_PARA = 0;
const F_STRONG = 1;
const F_EM = 2;
const F_DEL = 3;
const F_LINK = 4;

interface Frame {
  kind: number;
  buf: string;
  /** Link destination and ` "title"`. */
  href: string;
  title: string;
  /** The text before this link ended with `!` (which must be escaped: `![` opens an image). */
  bang: boolean;
}

interface ListState {
  ordered: boolean;
  n: number;
  step: number;
  /** An item had blank lines inside: items are then separated by blank lines too. */
  loose: boolean;
  /** Follows a list of the same kind directly: `*` / `1)` markers keep the two lists apart. */
  alt: boolean;
}

const ABSOLUTE_URL = /^https?:\/\/[A-Za-z0-9\-._~:/?#[\]@!$&()*+,;=%]+$/;
const SCRIPT_URL = /^(?:javascript|vbscript):/i;
const HIDDEN_STYLE = /(?:^|;)\s*(?:display\s*:\s*none|visibility\s*:\s*hidden)\s*(?:!important\s*)?(?:;|$)/i;

function isHidden(a: Record<string, string>): boolean {
  if (a.hidden !== undefined || a['aria-hidden'] === 'true') return true;
  const style = a.style;
  return style !== undefined && (style.indexOf('none') >= 0 || style.indexOf('hidden') >= 0) && HIDDEN_STYLE.test(style);
}

function isDataUrl(s: string): boolean {
  return s.length > 5 && (s.charCodeAt(0) | 32) === 100 && s.slice(0, 5).toLowerCase() === 'data:';
}

const SPACES: string[] = [];
function spaces(n: number): string {
  return (SPACES[n] ??= ' '.repeat(n));
}

class Converter {
  /** Absolute base URL, or null to leave relative URLs as they are. */
  private readonly base: string | null;
  private readonly removeBase64: boolean;
  /** Rendering one table cell: everything ends up on one line, blocks joined by `<br>`. */
  private readonly cell: boolean;
  private readonly urlCache: Map<string, string>;

  private out: string[] = [];
  private cellParts: string[] = [];

  // Inline state.
  private frames: Frame[] = [];
  private top: Frame;
  private lastSpace = true;
  private lastBang = false;
  private strong = 0;
  private em = 0;
  private del = 0;
  private linkDepth = 0;
  private heading = 0;

  // Block containers: index 0 is the document.
  private depth = 0;
  private ctxPrefix: string[] = [''];
  private ctxCum: string[] = [''];
  private ctxBlank: string[] = [''];
  private ctxMarker: string[] = [''];
  private ctxFresh: boolean[] = [true];
  private ctxLi: boolean[] = [false];
  private ctxBlankAt: number[] = [0];
  private pendingMarkers = 0;
  private items = 0;
  private lists: ListState[] = [];
  /** A blank line is due before the next line, at container depth sepDepth. */
  private sep = false;
  private sepDepth = 0;
  private blankCount = 0;
  /** Where the last list ended (output length, depth, kind), to tell adjacent lists apart. */
  private lastListOut = -1;
  private lastListDepth = 0;
  private lastListOrdered = false;
  private lastListAlt = false;

  private aux = 0;
  private override: ChildNode[] | null = null;
  private cellConverter: Converter | null = null;

  constructor(base: string | null, removeBase64: boolean, cell: boolean, urlCache: Map<string, string>) {
    this.base = base;
    this.removeBase64 = removeBase64;
    this.cell = cell;
    this.urlCache = urlCache;
    this.top = { kind: F_PARA, buf: '', href: '', title: '', bang: false };
    this.frames.push(this.top);
  }

  finish(): string {
    this.flush();
    return this.out.join('\n').trim();
  }

  // ---- traversal -------------------------------------------------------------------------

  walk(roots: AnyNode[]): void {
    const lists: AnyNode[][] = [roots];
    const idx: number[] = [0];
    const exits: number[] = [X_NONE];
    const auxs: number[] = [0];
    while (lists.length > 0) {
      const t = lists.length - 1;
      const list = lists[t];
      const i = idx[t];
      if (i >= list.length) {
        lists.pop();
        idx.pop();
        const x = exits.pop()!;
        const aux = auxs.pop()!;
        if (x !== X_NONE) this.exit(x, aux);
        continue;
      }
      idx[t] = i + 1;
      const node = list[i];
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
    switch (k) {
      case K_INLINE:
        return X_NONE;
      case K_BLOCK:
        this.flush();
        this.requestBlank();
        return X_BLOCK;
      case K_STRONG:
        if (this.strong > 0) return X_NONE;
        this.strong++;
        this.pushFrame(F_STRONG, '', '');
        return X_FRAME;
      case K_EM:
        if (this.em > 0) return X_NONE;
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
        this.pushFrame(F_LINK, linkDestination(this.resolve(h)), linkTitle(a.title));
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
        return this.enterList(el);
      case K_LI:
        return this.enterItem(el);
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
          this.writeLine('---');
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
      case X_LIST: {
        this.flush();
        const list = this.lists.pop()!;
        this.lastListOut = this.out.length;
        this.lastListDepth = this.depth;
        this.lastListOrdered = list.ordered;
        this.lastListAlt = list.alt;
        this.requestBlank();
        break;
      }
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

  // ---- inline ----------------------------------------------------------------------------

  private text(data: string): void {
    let s = collapseWhitespace(data);
    if (s.charCodeAt(0) === 32 && this.lastSpace) {
      if (s.length === 1) return;
      s = s.slice(1);
    }
    if (s === '') return;
    s = escapeText(s, this.linkDepth > 0);
    this.top.buf += s;
    const last = s.charCodeAt(s.length - 1);
    this.lastSpace = last === 32;
    this.lastBang = last === 33;
  }

  private pushFrame(kind: number, href: string, title: string): void {
    const f: Frame = { kind, buf: '', href, title, bang: this.lastBang };
    this.frames.push(f);
    this.top = f;
  }

  private popFrame(): void {
    const f = this.frames.pop()!;
    const parent = this.frames[this.frames.length - 1];
    this.top = parent;
    switch (f.kind) {
      case F_STRONG:
        this.strong--;
        break;
      case F_EM:
        this.em--;
        break;
      case F_DEL:
        this.del--;
        break;
      case F_LINK:
        this.linkDepth--;
        break;
    }
    this.close(f, parent);
    this.lastBang = false;
  }

  /** Wrap a frame's text in its markers and append it to the parent frame. */
  private close(f: Frame, parent: Frame): void {
    const s = f.buf;
    if (s === '') return;
    f.buf = '';
    const n = s.length;
    let a = 0;
    let c = s.charCodeAt(0);
    while (c === 32 || c === 10) c = s.charCodeAt(++a);
    if (a === n) {
      parent.buf += s.indexOf('\n') >= 0 ? '\n' : ' ';
      return;
    }
    let b = n;
    c = s.charCodeAt(b - 1);
    while (c === 32 || c === 10) c = s.charCodeAt(--b - 1);
    const core = a === 0 && b === n ? s : s.slice(a, b);
    let md: string;
    switch (f.kind) {
      case F_STRONG:
        md = '**' + core + '**';
        break;
      case F_EM:
        md = '*' + core + '*';
        break;
      case F_DEL:
        md = '~~' + core + '~~';
        break;
      default:
        md = '[' + core + '](' + f.href + f.title + ')';
        if (f.bang) {
          parent.buf = parent.buf.slice(0, -1) + '\\!';
          f.bang = false;
        }
    }
    parent.buf += (a > 0 ? s.slice(0, a) : '') + md + (b < n ? s.slice(b) : '');
  }

  private inlineCode(el: Element): void {
    const s = collapseWhitespace(gatherText(el, false));
    const n = s.length;
    const a = s.charCodeAt(0) === 32 ? 1 : 0;
    const b = n > a && s.charCodeAt(n - 1) === 32 ? n - 1 : n;
    if (a >= b) {
      if (n > 0 && !this.lastSpace) {
        this.top.buf += ' ';
        this.lastSpace = true;
      }
      return;
    }
    let md = a === 1 && !this.lastSpace ? ' ' : '';
    md += codeSpan(s.slice(a, b));
    if (b < n) md += ' ';
    this.top.buf += md;
    this.lastSpace = b < n;
    this.lastBang = false;
  }

  private image(a: Record<string, string>): void {
    let src = a.src === undefined ? '' : a.src.trim();
    if (src === '' || isDataUrl(src)) {
      // Lazy loading: a placeholder (or nothing) in src, the real image elsewhere.
      const lazy = (a['data-src'] ?? a['data-lazy-src'] ?? a['data-original'] ?? '').trim();
      if (lazy !== '' && !isDataUrl(lazy)) src = lazy;
      else {
        const set = a.srcset ?? a['data-srcset'];
        const best = set === undefined ? undefined : largestSrcsetCandidate(set);
        if (best !== undefined && !isDataUrl(best)) src = best;
      }
    }
    if (src === '') return;
    let dest: string;
    if (isDataUrl(src)) dest = this.removeBase64 ? '<Base64-Image-Removed>' : linkDestination(src);
    else dest = linkDestination(this.resolve(src));
    this.top.buf += '![' + altText(a.alt) + '](' + dest + linkTitle(a.title) + ')';
    this.lastSpace = false;
    this.lastBang = false;
  }

  private resolve(href: string): string {
    const base = this.base;
    if (base === null || ABSOLUTE_URL.test(href)) return href;
    let r = this.urlCache.get(href);
    if (r === undefined) {
      r = URL.parse(href, base)?.href ?? href;
      this.urlCache.set(href, r);
    }
    return r;
  }

  // ---- blocks ----------------------------------------------------------------------------

  /** Write the pending paragraph (closing and reopening any open inline frames). */
  private flush(): void {
    const frames = this.frames;
    for (let i = frames.length - 1; i > 0; i--) {
      this.close(frames[i], frames[i - 1]);
      frames[i].bang = false;
    }
    const para = frames[0];
    const text = para.buf;
    this.lastSpace = true;
    this.lastBang = false;
    if (text === '') return;
    para.buf = '';
    if (this.heading > 0) this.emitHeading(text);
    else this.emitParagraph(text);
  }

  private emitParagraph(text: string): void {
    if (text.indexOf('\n') < 0) {
      const t = text.trim();
      if (t === '') return;
      if (this.cell) {
        this.cellParts.push(t);
        return;
      }
      this.requestBlank();
      this.writeLine(escapeLineStart(t));
      this.requestBlank();
      return;
    }
    let started = false;
    let gap = false;
    for (const line of text.split('\n')) {
      const t = line.trim();
      if (t === '') {
        gap = started;
        continue;
      }
      if (this.cell) this.cellParts.push(t);
      else {
        if (gap || !started) this.requestBlank();
        this.writeLine(escapeLineStart(t));
      }
      gap = false;
      started = true;
    }
    if (started) this.requestBlank();
  }

  private emitHeading(text: string): void {
    let t = (text.indexOf('\n') >= 0 ? text.replace(/ *\n */g, ' ') : text).trim();
    if (t === '') return;
    if (this.cell) {
      this.cellParts.push(t);
      return;
    }
    // A trailing run of `#` after a space would be read as a closing sequence.
    if (t.charCodeAt(t.length - 1) === 35) t = t.replace(/(^|\s)(#+)$/, '$1\\$2');
    this.requestBlank();
    this.writeLine('#'.repeat(this.heading) + ' ' + t);
    this.requestBlank();
  }

  private requestBlank(): void {
    if (this.sep || this.cell || this.ctxFresh[this.depth]) return;
    this.sep = true;
    this.sepDepth = this.depth;
  }

  private writeLine(text: string): void {
    if (this.cell) {
      this.cellParts.push(text);
      return;
    }
    if (this.sep) {
      const s = this.sepDepth;
      this.out.push(this.ctxBlank[s]);
      this.blankCount++;
      this.sep = false;
      // The blank line is outside the containers opened since: not a blank line inside them.
      for (let i = s + 1; i <= this.depth; i++) this.ctxBlankAt[i] = this.blankCount;
    }
    const d = this.depth;
    let prefix: string;
    if (this.pendingMarkers === 0) prefix = this.ctxCum[d];
    else {
      prefix = '';
      for (let i = 1; i <= d; i++) {
        const m = this.ctxMarker[i];
        if (m !== '') {
          prefix += m;
          this.ctxMarker[i] = '';
        } else prefix += this.ctxPrefix[i];
      }
      this.pendingMarkers = 0;
    }
    this.out.push(text === '' ? prefix.trimEnd() : prefix + text);
    for (let i = d; i >= 0 && this.ctxFresh[i]; i--) this.ctxFresh[i] = false;
  }

  private pushCtx(prefix: string, marker: string, li: boolean): void {
    const d = ++this.depth;
    const cum = this.ctxCum[d - 1] + prefix;
    this.ctxPrefix[d] = prefix;
    this.ctxCum[d] = cum;
    this.ctxBlank[d] = cum.trimEnd();
    this.ctxMarker[d] = marker;
    this.ctxFresh[d] = true;
    this.ctxLi[d] = li;
    this.ctxBlankAt[d] = this.blankCount;
    if (marker !== '') this.pendingMarkers++;
    if (li) this.items++;
  }

  private popCtx(): void {
    const d = this.depth--;
    if (this.ctxMarker[d] !== '') {
      this.pendingMarkers--;
      this.ctxMarker[d] = '';
    }
    if (this.ctxLi[d]) this.items--;
    if (this.sep && this.sepDepth > this.depth) this.sep = false;
  }

  private enterList(el: Element): number {
    this.flush();
    const ordered = el.name === 'ol';
    let n = 1;
    let step = 1;
    if (ordered) {
      if (el.attribs.reversed !== undefined) {
        step = -1;
        n = countItems(el);
      }
      const start = el.attribs.start;
      if (start !== undefined) {
        const v = parseInt(start, 10);
        if (Number.isFinite(v)) n = v;
      }
    }
    this.requestBlank();
    // A list nested in an item follows the item's text on the next line, unless the item's blocks
    // are already separated by blank lines, or it is an ordered list not starting at 1 (which
    // could not interrupt the paragraph above it).
    const d = this.depth;
    if (this.sep && this.sepDepth === d && this.ctxLi[d] && this.blankCount === this.ctxBlankAt[d] && (!ordered || n === 1)) {
      this.sep = false;
    }
    // Markdown would merge two lists of one kind separated only by a blank line.
    const alt = this.lastListOut === this.out.length && this.lastListDepth === d && this.lastListOrdered === ordered && !this.lastListAlt;
    this.lists.push({ ordered, n, step, loose: false, alt });
    return X_LIST;
  }

  private enterItem(el: Element): number {
    this.flush();
    const list = this.lists.length > 0 ? this.lists[this.lists.length - 1] : undefined;
    let marker = list !== undefined && list.alt ? '* ' : '- ';
    if (list !== undefined && list.ordered) {
      const value = el.attribs.value;
      if (value !== undefined) {
        const v = parseInt(value, 10);
        if (Number.isFinite(v)) list.n = v;
      }
      marker = Math.min(Math.max(list.n, 0), 999999999) + (list.alt ? ') ' : '. ');
    }
    if (list !== undefined && list.loose) this.requestBlank();
    this.pushCtx(spaces(marker.length), marker, true);
    this.aux = list !== undefined ? 1 : 0;
    return X_LI;
  }

  private exitItem(hasList: number): void {
    this.flush();
    const loose = this.blankCount !== this.ctxBlankAt[this.depth];
    this.popCtx();
    if (hasList === 1) {
      const list = this.lists[this.lists.length - 1];
      if (loose) list.loose = true;
      list.n += list.step;
    }
  }

  private codeBlock(pre: Element): void {
    let code = gatherText(pre, true);
    if (code.indexOf('\r') >= 0) code = code.replace(/\r\n?/g, '\n');
    if (code.indexOf('\u00a0') >= 0) code = code.replace(/\u00a0/g, ' ');
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
    if (lines.length === 0) return;
    if (this.cell) {
      for (const l of lines) this.cellParts.push(l.trim());
      return;
    }
    const fence = '`'.repeat(Math.max(3, longestBacktickRun(code) + 1));
    this.requestBlank();
    this.writeLine(fence + codeLanguage(pre));
    for (const l of lines) this.writeLine(l);
    this.writeLine(fence);
    this.requestBlank();
  }

  // ---- tables ----------------------------------------------------------------------------

  /** Render a data table; false when it is a layout table, to be rendered as its content. */
  private table(el: Element): boolean {
    if (this.cell) return false;
    const role = el.attribs.role;
    if (role === 'presentation' || role === 'none') return false;
    const head: Element[] = [];
    const body: Element[] = [];
    const foot: Element[] = [];
    let caption: Element | null = null;
    for (const c of el.children) {
      if ((c.type as string) !== 'tag') continue;
      const e = c as Element;
      switch (e.name) {
        case 'tr':
          body.push(e);
          break;
        case 'thead':
          rowsOf(e, head);
          break;
        case 'tbody':
          rowsOf(e, body);
          break;
        case 'tfoot':
          rowsOf(e, foot);
          break;
        case 'caption':
          caption ??= e;
          break;
      }
    }
    const rows: Element[][] = [];
    let count = 0;
    for (const r of head.length > 0 ? head.concat(body, foot) : body.concat(foot)) {
      if (isHidden(r.attribs)) continue;
      const cells: Element[] = [];
      for (const c of r.children) {
        if ((c.type as string) !== 'tag') continue;
        const e = c as Element;
        if ((e.name === 'td' || e.name === 'th') && !isHidden(e.attribs)) cells.push(e);
      }
      rows.push(cells);
      count += cells.length;
    }
    if (count < 2) return false;
    for (const r of rows) for (const c of r) if (hasBlockContent(c)) return false;

    this.flush();
    // Lay the cells out on a grid: colspan pads the row, rowspan reserves cells in later rows.
    const grid: string[][] = [];
    const pending: number[] = [];
    let width = 0;
    let any = false;
    let aligns: string[] = [];
    for (let r = 0; r < rows.length; r++) {
      const row: string[] = [];
      let col = 0;
      for (const cell of rows[r]) {
        while ((pending[col] ?? 0) > 0) {
          pending[col]--;
          row[col++] = '';
        }
        const text = this.renderCell(cell);
        if (text !== '') any = true;
        const cs = span(cell.attribs.colspan, 1000);
        let rs = span(cell.attribs.rowspan, 65534);
        if (cell.attribs.rowspan === '0') rs = rows.length;
        if (r === 0) aligns[col] = cellAlign(cell.attribs);
        row[col] = text;
        for (let j = 0; j < cs; j++) {
          if (j > 0) row[col + j] = '';
          if (rs > 1) pending[col + j] = rs - 1;
        }
        col += cs;
      }
      for (let j = col; j < pending.length; j++) {
        if ((pending[j] ?? 0) > 0) {
          pending[j]--;
          row[j] = '';
        }
      }
      for (let j = 0; j < row.length; j++) row[j] ??= '';
      if (row.length > width) width = row.length;
      grid.push(row);
    }
    if (!any) return true;

    if (caption !== null) {
      this.requestBlank();
      this.walk([caption]);
    }
    this.requestBlank();
    aligns = Array.from({ length: width }, (_, i) => aligns[i] ?? '---');
    for (let r = 0; r < grid.length; r++) {
      const row = grid[r];
      let line = '|';
      for (let j = 0; j < width; j++) {
        const c = row[j] ?? '';
        line += c === '' ? ' |' : ' ' + c + ' |';
      }
      this.writeLine(line);
      if (r === 0) this.writeLine('| ' + aligns.join(' | ') + ' |');
    }
    this.requestBlank();
    return true;
  }

  private renderCell(cell: Element): string {
    let c = this.cellConverter;
    if (c === null) c = this.cellConverter = new Converter(this.base, this.removeBase64, true, this.urlCache);
    c.cellParts = [];
    c.walk(cell.children);
    c.flush();
    const s = c.cellParts.length === 1 ? c.cellParts[0] : c.cellParts.join('<br>');
    return s.indexOf('|') >= 0 ? s.replace(/\|/g, '\\|') : s;
  }
}

// ---- helpers over the DOM ----------------------------------------------------------------

/** Text content for code: `<br>` is a newline in `<pre>` (a space otherwise), dropped and hidden
 *  elements are skipped, and in `<pre>` line-level elements start a new line. */
function gatherText(root: Element, pre: boolean): string {
  let out = '';
  let atLineStart = true;
  const lists: ChildNode[][] = [root.children];
  const idx: number[] = [0];
  const lineBlock: boolean[] = [false];
  while (lists.length > 0) {
    const t = lists.length - 1;
    const list = lists[t];
    const i = idx[t];
    if (i >= list.length) {
      lists.pop();
      idx.pop();
      if (lineBlock.pop() && !atLineStart) {
        out += '\n';
        atLineStart = true;
      }
      continue;
    }
    idx[t] = i + 1;
    const node = list[i];
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
function codeLanguage(pre: Element): string {
  let code: Element | null = null;
  for (const c of pre.children) {
    if ((c.type as string) === 'tag') {
      if ((c as Element).name === 'code') code = c as Element;
      break;
    }
  }
  const parent = pre.parent !== null && (pre.parent.type as string) === 'tag' ? (pre.parent as Element) : null;
  const lang = languageOf(pre) || languageOf(code) || languageOf(parent);
  return /^[\w+#.-]{1,40}$/.test(lang) ? lang : '';
}

function rowsOf(section: Element, into: Element[]): void {
  for (const c of section.children) if ((c.type as string) === 'tag' && (c as Element).name === 'tr') into.push(c as Element);
}

function span(v: string | undefined, max: number): number {
  if (v === undefined) return 1;
  const n = parseInt(v, 10);
  return n >= 1 ? Math.min(n, max) : 1;
}

function cellAlign(a: Record<string, string>): string {
  let v: string | undefined = a.align;
  if (v === undefined && a.style !== undefined) v = /text-align\s*:\s*(left|right|center)/i.exec(a.style)?.[1];
  switch (v?.toLowerCase()) {
    case 'left':
      return ':---';
    case 'center':
      return ':---:';
    case 'right':
      return '---:';
    default:
      return '---';
  }
}

/** A cell holding lists, headings, code blocks, quotes or tables makes a layout table. */
function hasBlockContent(cell: Element): boolean {
  const stack: ChildNode[] = cell.children.slice();
  while (stack.length > 0) {
    const n = stack.pop()!;
    if ((n.type as string) !== 'tag') continue;
    const e = n as Element;
    if (BLOCKY_IN_CELL.has(e.name)) return true;
    for (const c of e.children) stack.push(c);
  }
  return false;
}

function countItems(list: Element): number {
  let n = 0;
  for (const c of list.children) if ((c.type as string) === 'tag' && (c as Element).name === 'li') n++;
  return n;
}

/** A figure's children with its caption moved after the image. */
function figureChildren(fig: Element): ChildNode[] {
  const caps: ChildNode[] = [];
  const rest: ChildNode[] = [];
  for (const c of fig.children) {
    if ((c.type as string) === 'tag' && (c as Element).name === 'figcaption') caps.push(c);
    else rest.push(c);
  }
  return caps.length === 0 ? fig.children : rest.concat(caps);
}

/** `<base href>` near the top of a document (in html > head), without walking the body. */
function findBaseHref(nodes: AnyNode[], depth: number): string | undefined {
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
