// Inline output of the HTML→Markdown converter: text, **, *, ~~ and links accumulate in a stack of
// frames over the current paragraph; code spans and images; flushing the paragraph into blocks.
// Design: docs/design/markdown.md.
import type { AnyNode, Element, Text } from 'domhandler';
import { BlockWriter } from './blocks.ts';
import { gatherText } from './code.ts';
import { isDataUrl } from './elements.ts';
import {
  altText,
  codeSpan,
  collapseWhitespace,
  escapeText,
  largestSrcsetCandidate,
  linkDestination,
  linkTitle,
} from './text.ts';

// Frame kinds.
export const F_PARA = 0;
export const F_STRONG = 1;
export const F_EM = 2;
export const F_DEL = 3;
export const F_LINK = 4;

interface Frame {
  kind: number;
  buf: string;
  /** Link destination and ` "title"`. */
  href: string;
  title: string;
  /** The text before this link ended with `!` (which must be escaped: `![` opens an image). */
  bang: boolean;
}

const ABSOLUTE_URL = /^https?:\/\/[A-Za-z0-9\-._~:/?#[\]@!$&()*+,;=%]+$/;

export class InlineWriter extends BlockWriter {
  /** Absolute base URL, or null to leave relative URLs as they are. */
  protected readonly base: string | null;
  protected readonly removeBase64: boolean;
  protected readonly urlCache: Map<string, string>;

  private frames: Frame[] = [];
  protected top: Frame;
  protected lastSpace = true;
  protected lastBang = false;
  protected strong = 0;
  protected em = 0;
  protected del = 0;
  protected linkDepth = 0;
  /** Level of the heading being written, 0 outside headings. */
  protected heading = 0;

  constructor(base: string | null, removeBase64: boolean, cell: boolean, urlCache: Map<string, string>) {
    super(cell);
    this.base = base;
    this.removeBase64 = removeBase64;
    this.urlCache = urlCache;
    this.top = { kind: F_PARA, buf: '', href: '', title: '', bang: false };
    this.frames.push(this.top);
  }

  protected text(data: string): void {
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

  protected pushFrame(kind: number, href: string, title: string): void {
    const f: Frame = { kind, buf: '', href, title, bang: this.lastBang };
    this.frames.push(f);
    this.top = f;
  }

  protected popFrame(): void {
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

  /**
   * Two inline elements back to back with no space between, the first ending a word in lower case
   * or a digit and the second starting with a capital ("<span>REI Co-op</span><span>Nalgene
   * bottle</span>"): the page's CSS lays them out apart (a brand over a name, menu entries), so a
   * reader sees two words, not "Co-opNalgene". Within a word ("<b>un</b>likely") nothing changes.
   */
  protected separateAdjacent(el: Element): void {
    const buf = this.top.buf;
    if (buf === '' || !isLowerOrDigit(buf.charCodeAt(buf.length - 1))) return;
    const first = firstTextChar(el);
    if (first !== undefined && isUpper(first)) {
      this.top.buf += ' ';
      this.lastSpace = true;
    }
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

  protected inlineCode(el: Element): void {
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

  protected image(a: Record<string, string>): void {
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

  protected resolve(href: string): string {
    const base = this.base;
    if (base === null || ABSOLUTE_URL.test(href)) return href;
    let r = this.urlCache.get(href);
    if (r === undefined) {
      r = URL.parse(href, base)?.href ?? href;
      this.urlCache.set(href, r);
    }
    return r;
  }

  /** Write the pending paragraph (closing and reopening any open inline frames). */
  protected flush(): void {
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
    if (this.heading > 0) this.emitHeading(text, this.heading);
    else this.emitParagraph(text);
  }
}

const LOWER_OR_DIGIT = /[\p{Ll}\p{Nd}]/u;
const UPPER = /\p{Lu}/u;

function isLowerOrDigit(c: number): boolean {
  if (c < 128) return (c >= 97 && c <= 122) || (c >= 48 && c <= 57);
  return LOWER_OR_DIGIT.test(String.fromCharCode(c));
}

function isUpper(c: number): boolean {
  if (c < 128) return c >= 65 && c <= 90;
  return UPPER.test(String.fromCharCode(c));
}

/** The first non-space character of an element's text (a short descent: the first text node). */
function firstTextChar(el: Element): number | undefined {
  const stack: AnyNode[] = [el];
  while (stack.length) {
    const n = stack.pop()!;
    if (n.type === 'text') {
      const m = /\S/.exec((n as Text).data);
      if (m) return m[0].charCodeAt(0);
    } else if (n.type === 'tag') {
      const kids = (n as Element).children;
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
    }
  }
  return undefined;
}
