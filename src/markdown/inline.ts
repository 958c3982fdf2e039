// Inline output of the HTML→Markdown converter: text, **, *, ~~ and links accumulate in a stack of
// frames over the current paragraph; code spans and images; flushing the paragraph into blocks.
// Design: docs/design/markdown.md.
import type { AnyNode, Element, Text } from 'domhandler';
import { BlockWriter } from './blocks.ts';
import { gatherText } from './code.ts';
import { KINDS, K_DROP, isDataUrl } from './elements.ts';
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
  /** Emphasis written with `_`/`__` rather than `*`/`**` (see pushFrame and close). */
  alt: boolean;
  /** Emphasis in buf whose text ends in punctuation: [start, marker length, end, kind] each (see settle), or null. */
  pending: number[] | null;
}

/** Emphasis of one kind nests at most this deep (deeper, as in tag soup, reads as the same). */
const MAX_NEST = 2;

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
    this.top = { kind: F_PARA, buf: '', href: '', title: '', bang: false, alt: false, pending: null };
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

  /** The code span written last: where it sits in which frame's text, and its text (inlineCode merges with it). */
  private lastCode: { frame: Frame; start: number; end: number; text: string } | null = null;

  /**
   * Emphasis inside emphasis of the same kind (`<em>a <em>b</em> c</em>`, `<b><b>x</b></b>`) is kept, as CommonMark
   * nests it, up to MAX_NEST deep and only where it shows in the markdown: not inside a word (`*a*b*c*` would not
   * nest), and not at the very start of other elements inside the outer one (`<b><a><b>x`, tag soup), where it would
   * only add markers.
   */
  protected nestable(kind: number, depth: number): boolean {
    if (depth >= MAX_NEST || isWordChar(this.charBefore(this.top))) return false;
    const frames = this.frames;
    let i = frames.length - 1;
    if (frames[i].kind === kind) return true;
    for (; i > 0; i--) {
      if (frames[i].buf !== '') return true;
      if (frames[i].kind === kind) return false;
    }
    return false;
  }

  protected pushFrame(kind: number, href: string, title: string): void {
    // Emphasis right after a closing `*` (`**a**` then `<em>b</em>`) takes `_`: `**a***b*` would merge the runs.
    const alt = kind !== F_LINK && kind !== F_DEL && this.top.buf.charCodeAt(this.top.buf.length - 1) === 42;
    const f: Frame = { kind, buf: '', href, title, bang: this.lastBang, alt, pending: null };
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

  /** The last character written before a frame's text (in it or the frames below), 32 at the start. */
  protected charBefore(f: Frame): number {
    const frames = this.frames;
    let i = frames.lastIndexOf(f);
    for (; i >= 0; i--) {
      const b = frames[i].buf;
      if (b !== '') return b.charCodeAt(b.length - 1);
    }
    return 32;
  }

  /** Wrap a frame's text in its markers and append it to the parent frame. */
  private close(f: Frame, parent: Frame): void {
    if (f.pending !== null) settle(f);
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
    let start = -1;
    if (f.kind !== F_LINK) {
      // Emphasis starting with punctuation right after a letter (`a**(b)**`) cannot open with markers (a marker
      // starting the text, of emphasis inside, joins the run): its text goes in plain, as does that of one ending
      // with punctuation before a letter, known once the text after it is (settle()). Literal `*` would show.
      const c0 = core.charCodeAt(0);
      if (c0 !== 42 && c0 !== 95 && isPunct(c0) && isWordChar(a > 0 ? 32 : this.charBefore(parent))) {
        parent.buf += s;
        return;
      }
      const cz = core.charCodeAt(core.length - 1);
      // (A `*` ending the text, unescaped, is the closing marker of emphasis inside: the runs join.)
      if (isPunct(cz) && !(cz === 42 && core.charCodeAt(core.length - 2) !== 92)) start = parent.buf.length + a;
    }
    switch (f.kind) {
      case F_STRONG:
        md =
          f.alt || (innerEdge(core, false) && !isWordChar(this.charBefore(parent)))
            ? '__' + core + '__'
            : '**' + core + '**';
        break;
      case F_EM:
        md =
          f.alt || (innerEdge(core, true) && !isWordChar(this.charBefore(parent)))
            ? '_' + core + '_'
            : '*' + core + '*';
        break;
      case F_DEL:
        md = '~~' + core + '~~';
        break;
      default:
        md = '[' + core + '](' + f.href + f.title + ')';
        // A `!` right before the link would make it an image. Only when it is in this same text: one written
        // before an emphasis marker (`!**[a](…)**`) is kept apart by the marker.
        if (f.bang && parent.buf.endsWith('!')) {
          parent.buf = parent.buf.slice(0, -1) + '\\!';
          f.bang = false;
        }
    }
    parent.buf += (a > 0 ? s.slice(0, a) : '') + md + (b < n ? s.slice(b) : '');
    if (start >= 0) {
      const p = (parent.pending ??= []);
      p.push(start, (md.length - core.length) >> 1, start + md.length, f.kind);
    }
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
    let text = s.slice(a, b);
    const top = this.top;
    if (md === '' && this.lastCode !== null && this.lastCode.frame === top && this.lastCode.end === top.buf.length) {
      // Right after another code span: one span of both texts (`a``b` would read as one span holding "a``b").
      top.buf = top.buf.slice(0, this.lastCode.start);
      text = this.lastCode.text + text;
    }
    const start = top.buf.length + md.length;
    md += codeSpan(text);
    top.buf += md;
    this.lastCode = b < n ? null : { frame: top, start, end: top.buf.length, text };
    if (b < n) top.buf += ' ';
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
    if (para.pending !== null) settle(para);
    const text = para.buf;
    this.lastSpace = true;
    this.lastBang = false;
    if (text === '') return;
    para.buf = '';
    if (this.heading > 0) this.emitHeading(text, this.heading);
    else this.emitParagraph(text);
  }
}

/**
 * Emphasis whose text starts with an emphasis that would merge with its own marker (`<em><em>x</em></em>` as
 * `**x**`) takes `_`/`__`. `***x***` reads as `<em><strong>`, which `<strong><em>` also shows as, and `****x****`
 * as `<strong><strong>`: those stay. Not inside a word, where `_` does not work.
 */
function innerEdge(core: string, em: boolean): boolean {
  if (core.charCodeAt(0) !== 42) return false;
  const run = core.charCodeAt(1) !== 42 ? 1 : core.charCodeAt(2) !== 42 ? 2 : 3;
  return em ? run !== 2 : run === 3;
}

function isWordChar(c: number): boolean {
  return (
    (c >= 48 && c <= 57) ||
    (c >= 65 && c <= 90) ||
    (c >= 97 && c <= 122) ||
    (c > 127 && WORD.test(String.fromCharCode(c)))
  );
}
const WORD = /[\p{L}\p{N}]/u;

/**
 * Emphasis of a frame's text that ends in punctuation and is followed by a letter or digit (`**(b)**c`): its closing
 * marker would not close and would show as a literal `**`, so its markers are taken out (`(b)c`).
 */
function settle(f: Frame): void {
  const p = f.pending!;
  f.pending = null;
  let buf = f.buf;
  for (let i = p.length - 4; i >= 0; i -= 4) {
    const start = p[i];
    const len = p[i + 1];
    const end = p[i + 2];
    if (end >= buf.length || !isWordChar(buf.charCodeAt(end))) continue;
    buf = buf.slice(0, start) + buf.slice(start + len, end - len) + buf.slice(end);
  }
  f.buf = buf;
}

/** ASCII or Unicode punctuation (or symbol), as CommonMark's flanking rules count it. */
function isPunct(c: number): boolean {
  if (c < 128) return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
  return PUNCT.test(String.fromCharCode(c));
}
const PUNCT = /[\p{P}\p{S}]/u;

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
    } else if (n.type === 'tag' && KINDS.get((n as Element).name) !== K_DROP) {
      // What the converter drops (an icon's <svg><title>) is not text the reader sees.
      const kids = (n as Element).children;
      for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]);
    }
  }
  return undefined;
}
