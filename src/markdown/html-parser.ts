// A fast HTML parser that builds the same domhandler tree as htmlparser2's parseDocument() (HTML mode, default
// options), so the cleaning, selectors and the converter run on it unchanged. htmlparser2 feeds every character
// through a state machine and every token through callbacks; this one jumps between `<`s with indexOf, reads tags
// with tight charCode loops, looks names up without slicing them (NameTable) and builds nodes directly: 2–3× faster
// on real pages. Tree construction follows htmlparser2's rules, quirks included (implied end tags, void and
// raw-text elements, foreign content, comments and their odd endings, what an unfinished tag at the end leaves);
// test/markdown/html-parser.test.ts compares the two trees on real pages, the fixture site and generated markup.
// One deliberate difference: attribute objects have no prototype (a keyed store into a plain object's ever-changing
// shape was a fifth of the parse), so `'constructor' in el.attribs` is false, as it should be.
// For the Markdown converter alone, skipUnrendered leaves out the content of elements it drops whole. Pages nested
// deeper than browsers build are flattened here (capDomDepth), only when they are that deep.
import { Comment, Document, Element, ProcessingInstruction, Text } from 'domhandler';
import type { ChildNode, ParentNode } from 'domhandler';
import { decodeHTML, decodeHTMLAttribute } from 'entities/decode';
import { MAX_DOM_DEPTH, capDomDepth } from './dom-depth.ts';

const GT = 0x3e;
const SLASH = 0x2f;
const EQ = 0x3d;
const DQ = 0x22;
const SQ = 0x27;
const BANG = 0x21;
const QM = 0x3f;
const DASH = 0x2d;

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0c || c === 0x0d;
}
/** Ends a tag or attribute name: whitespace, `/` or `>` (NaN past the end counts as not). */
function endsName(c: number): boolean {
  return c === SLASH || c === GT || c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0c || c === 0x0d;
}
function isAsciiAlpha(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a);
}

const P = new Set(['p']);
const HEADINGS = new Set(['h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'p']);
const FORM = new Set(['input', 'option', 'optgroup', 'select', 'button', 'datalist', 'textarea']);
const TABLE_SECTION = new Set(['thead', 'tbody']);
const DD_DT = new Set(['dd', 'dt']);
const RT_RP = new Set(['rt', 'rp']);
/** Opening the key closes an open element of these names first (htmlparser2's openImpliesClose). */
const OPEN_IMPLIES_CLOSE = new Map<string, Set<string>>([
  ['tr', new Set(['tr', 'th', 'td'])],
  ['th', new Set(['th'])],
  ['td', new Set(['thead', 'th', 'td'])],
  ['body', new Set(['head', 'link', 'script'])],
  ['a', new Set(['a'])],
  ['li', new Set(['li'])],
  ['p', P],
  ['h1', HEADINGS],
  ['h2', HEADINGS],
  ['h3', HEADINGS],
  ['h4', HEADINGS],
  ['h5', HEADINGS],
  ['h6', HEADINGS],
  ['select', FORM],
  ['input', FORM],
  ['output', FORM],
  ['button', FORM],
  ['datalist', FORM],
  ['textarea', FORM],
  ['option', new Set(['option'])],
  ['optgroup', new Set(['optgroup', 'option'])],
  ['dd', DD_DT],
  ['dt', DD_DT],
  ['rt', RT_RP],
  ['rp', RT_RP],
  ['tbody', TABLE_SECTION],
  ['tfoot', TABLE_SECTION],
  ...[
    'address',
    'article',
    'aside',
    'blockquote',
    'details',
    'div',
    'dl',
    'fieldset',
    'figcaption',
    'figure',
    'footer',
    'form',
    'header',
    'hr',
    'main',
    'nav',
    'ol',
    'pre',
    'section',
    'table',
    'ul',
  ].map((n): [string, Set<string>] => [n, P]),
]);

const VOID = new Set([
  'area',
  'base',
  'basefont',
  'br',
  'col',
  'command',
  'embed',
  'frame',
  'hr',
  'img',
  'input',
  'isindex',
  'keygen',
  'link',
  'meta',
  'param',
  'source',
  'track',
  'wbr',
]);

const HTML_INTEGRATION = new Set(['mi', 'mo', 'mn', 'ms', 'mtext', 'annotation-xml', 'foreignObject', 'desc', 'title']);

const SVG_NAMES = new Map(
  [
    'altGlyph',
    'altGlyphDef',
    'altGlyphItem',
    'animateColor',
    'animateMotion',
    'animateTransform',
    'clipPath',
    'feBlend',
    'feColorMatrix',
    'feComponentTransfer',
    'feComposite',
    'feConvolveMatrix',
    'feDiffuseLighting',
    'feDisplacementMap',
    'feDistantLight',
    'feDropShadow',
    'feFlood',
    'feFuncA',
    'feFuncB',
    'feFuncG',
    'feFuncR',
    'feGaussianBlur',
    'feImage',
    'feMerge',
    'feMergeNode',
    'feMorphology',
    'feOffset',
    'fePointLight',
    'feSpecularLighting',
    'feSpotLight',
    'feTile',
    'feTurbulence',
    'foreignObject',
    'glyphRef',
    'linearGradient',
    'radialGradient',
    'textPath',
  ].map((n) => [n.toLowerCase(), n]),
);

// Raw-text elements: their content is text up to `</name`. Title and textarea decode entities; plaintext
// never ends.
const RAW = 1;
const RAW_DECODED = 2;
const PLAINTEXT = 3;
const RAW_TEXT = new Map<string, number>([
  ['script', RAW],
  ['style', RAW],
  ['iframe', RAW],
  ['noembed', RAW],
  ['noframes', RAW],
  ['xmp', RAW],
  ['title', RAW_DECODED],
  ['textarea', RAW_DECODED],
  ['plaintext', PLAINTEXT],
]);

/** Elements whose content the Markdown converter never reads (it drops them whole: elements.ts). */
const SKIP_CONTENT = new Set([
  'script',
  'style',
  'svg',
  'template',
  'noscript',
  'select',
  'datalist',
  'canvas',
  'video',
  'audio',
  'object',
]);

// What the top of the foreign-content stack says about the current insertion point.
const HTML = 0;
const SVG = 1;
const MATHML = 2;

export interface HtmlParseOptions {
  /** Flatten elements nested deeper than this (default: Chromium's 512; see dom-depth.ts). */
  maxDepth?: number;
  /**
   * Leave out the content of elements the Markdown converter drops whole (SKIP_CONTENT: scripts, styles, SVG,
   * noscript, templates, selects, media): the elements stay, empty, so their neighbours read the same.
   */
  skipUnrendered?: boolean;
}

/** Parses an HTML document into a domhandler Document, as htmlparser2's `parseDocument(html)` would. */
export function parseHtml(html: string, opts: HtmlParseOptions = {}): Document {
  const builder = new TreeBuilder(opts.skipUnrendered === true);
  tokenize(html, builder);
  builder.end();
  const max = opts.maxDepth ?? MAX_DOM_DEPTH;
  if (builder.deepest >= max) capDomDepth(builder.root, max);
  return builder.root;
}

/** What a tag name means, looked up once per distinct spelling (names repeat: a page has a few dozen). */
interface TagInfo {
  /** Lower-cased, as written. */
  readonly lower: string;
  /** Its name in HTML content (`image` reads as `img`). */
  readonly name: string;
  readonly isVoid: boolean;
  /** Open elements an open tag of this name closes first. */
  readonly closes: Set<string> | undefined;
  /** RAW, RAW_DECODED, PLAINTEXT, or 0. */
  readonly raw: number;
  /** What pushing it does to the foreign-content stack: SVG, MATHML, HTML (an integration point) or -1. */
  readonly foreign: number;
}

/**
 * Names (of tags, of attributes) looked up straight from the input, without slicing it: an open-addressing table
 * keyed by the ASCII-lower-cased name. A page uses a few dozen distinct names thousands of times each.
 */
class NameTable<T> {
  private static readonly SIZE = 8192; // a power of two, twice MAX
  private static readonly MAX = 4096; // a page of generated names must not grow it without end
  private readonly keys: (string | undefined)[] = new Array<string | undefined>(NameTable.SIZE).fill(undefined);
  private readonly hashes = new Int32Array(NameTable.SIZE);
  private readonly values: T[] = new Array<T>(NameTable.SIZE);
  private size = 0;
  private readonly make: (lower: string) => T;

  constructor(make: (lower: string) => T) {
    this.make = make;
  }

  /** The value for html[start, end), lower-cased. */
  get(html: string, start: number, end: number): T {
    let h = 0;
    for (let i = start; i < end; i++) {
      let c = html.charCodeAt(i);
      if (c >= 0x41 && c <= 0x5a) c += 0x20;
      h = (Math.imul(h, 31) + c) | 0;
    }
    const mask = NameTable.SIZE - 1;
    const len = end - start;
    let slot = h & mask;
    for (let key = this.keys[slot]; key !== undefined; key = this.keys[slot]) {
      if (this.hashes[slot] === h && key.length === len && sameLower(html, start, key)) return this.values[slot];
      slot = (slot + 1) & mask;
    }
    let lower = html.slice(start, end).toLowerCase();
    // A name whose lower case is not ASCII folding (İ) would never match its key: not kept.
    if (lower.length !== len || !sameLower(html, start, lower)) return this.make(lower);
    if (this.size >= NameTable.MAX) {
      // Full of one-off names (data-* attributes of generated markup): start again.
      this.keys.fill(undefined);
      this.size = 0;
      slot = h & mask;
    }
    // A copy: a slice of the page would keep the whole page alive as long as the table holds it.
    lower = ownCopy(lower);
    const value = this.make(lower);
    this.keys[slot] = lower;
    this.hashes[slot] = h;
    this.values[slot] = value;
    this.size++;
    return value;
  }
}

/** The same text in a string of its own (V8 makes a long slice a view of its parent; a property key is copied). */
function ownCopy(s: string): string {
  return Object.keys({ [s]: 0 })[0];
}

/** Whether html at start reads key (lower case) with ASCII letters in any case. */
function sameLower(html: string, start: number, key: string): boolean {
  for (let k = 0; k < key.length; k++) {
    let c = html.charCodeAt(start + k);
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    if (c !== key.charCodeAt(k)) return false;
  }
  return true;
}

function infoFor(name: string, lower: string): TagInfo {
  return {
    lower,
    name,
    isVoid: VOID.has(name),
    closes: OPEN_IMPLIES_CLOSE.get(name),
    raw: RAW_TEXT.get(lower) ?? 0,
    foreign: name === 'svg' ? SVG : name === 'math' ? MATHML : HTML_INTEGRATION.has(name) ? HTML : -1,
  };
}

const TAGS = new NameTable<TagInfo>((lower) => infoFor(lower === 'image' ? 'img' : lower, lower));
const ATTRIBUTES = new NameTable<string>((lower) => lower);
const P_TAG = infoFor('p', 'p');

/** Builds the tree: htmlparser2's Parser (its stack of open names, foreign context) and domhandler in one. */
class TreeBuilder {
  readonly root = new Document([]);
  /** Open elements, innermost last; names[i] is elements[i]'s name, pushed[i] whether it pushed a context. */
  private readonly elements: ParentNode[] = [this.root];
  private readonly names: string[] = [''];
  private readonly pushed: boolean[] = [false];
  private readonly foreign: number[] = [HTML];
  /** The last node added when it is a text node, so that adjacent text merges (as domhandler does). */
  private lastText: Text | null = null;
  deepest = 0;
  /** While above 0: the depth of an element whose content is being left out (skipUnrendered). */
  private skipFrom = 0;

  private readonly skipUnrendered: boolean;

  constructor(skipUnrendered: boolean) {
    this.skipUnrendered = skipUnrendered;
  }

  get skipping(): boolean {
    return this.skipFrom > 0;
  }

  get foreignContext(): number {
    return this.foreign[this.foreign.length - 1];
  }

  /** The tag as read where it stands: outside foreign content its cached meaning, inside it adjusted. */
  resolve(info: TagInfo): TagInfo {
    if (this.foreign.length === 1) return info;
    const name = this.adjustName(info.lower);
    return name === info.name ? info : infoFor(name, info.lower);
  }

  /** A tag name as htmlparser2 reads it (lower case already): SVG's camelCase names, `image` as `img`. */
  private adjustName(name: string): string {
    const context = this.foreignContext;
    if (context === SVG) return SVG_NAMES.get(name) ?? name;
    const adjusted = SVG_NAMES.get(name);
    if (adjusted !== undefined && this.names.includes(adjusted)) return adjusted;
    if (context === HTML) return name === 'image' ? 'img' : name;
    return name;
  }

  /** An open tag's name: closes what it implies and pushes it. Returns false when the tag is ignored. */
  openTag(tag: TagInfo): boolean {
    const name = tag.name;
    if (name === 'form' && this.names.includes('form')) return false;
    const closes = tag.closes;
    if (closes !== undefined) {
      while (this.names.length > 1 && closes.has(this.names[this.names.length - 1])) this.pop();
    }
    if (!tag.isVoid) {
      this.names.push(name);
      const f = tag.foreign;
      this.pushed.push(f !== -1);
      if (f !== -1) this.foreign.push(f);
    }
    return true;
  }

  /** The element for the tag just opened (openTag), with its attributes. */
  element(tag: TagInfo, attribs: Record<string, string>): void {
    if (this.skipFrom > 0) {
      // Keeps the element stack in step with the names (pop() pops both).
      if (!tag.isVoid) this.elements.push(this.elements[this.elements.length - 1]);
      return;
    }
    const el = new Element(tag.name, attribs);
    this.add(el);
    if (!tag.isVoid) {
      this.elements.push(el);
      if (this.elements.length > this.deepest) this.deepest = this.elements.length;
      if (this.skipUnrendered && SKIP_CONTENT.has(tag.name)) {
        this.skipFrom = this.names.length;
      }
    }
  }

  /** `/>`: honoured in foreign content only (there it closes the element just opened). */
  selfClose(tag: TagInfo): void {
    if (this.foreignContext !== HTML && this.names[this.names.length - 1] === tag.name) this.pop();
  }

  closeTag(tag: TagInfo): void {
    const name = tag.name;
    if (tag.isVoid) {
      if (name === 'br') this.add(new Element('br', Object.create(null) as Record<string, string>));
      return;
    }
    const names = this.names;
    const at = names.lastIndexOf(name);
    if (at > 0) {
      while (names.length > at) this.pop();
    } else if (name === 'p') {
      // `</p>` with no open p: an empty paragraph, as browsers make.
      const p = P_TAG;
      this.openTag(p);
      this.element(p, Object.create(null) as Record<string, string>);
      this.pop();
    }
  }

  private pop(): void {
    this.names.pop();
    if (this.pushed.pop()) this.foreign.pop();
    this.elements.pop();
    this.lastText = null;
    if (this.names.length < this.skipFrom) this.skipFrom = 0;
  }

  text(data: string): void {
    if (this.skipFrom > 0) return;
    if (this.lastText !== null) {
      this.lastText.data += data;
      return;
    }
    const node = new Text(data);
    this.add(node);
    this.lastText = node;
  }

  comment(data: string): void {
    this.add(new Comment(data));
  }

  /** CDATA: text in foreign content, a comment elsewhere (HTML has no CDATA sections). */
  cdata(data: string): void {
    if (this.foreignContext !== HTML) this.text(data);
    else this.comment(`[CDATA[${data}]]`);
  }

  doctype(value: string): void {
    this.add(new ProcessingInstruction('!doctype', `!${value}`));
  }

  private add(node: ChildNode): void {
    if (this.skipFrom > 0) return;
    const parent = this.elements[this.elements.length - 1];
    const siblings = parent.children;
    const prev = siblings.length === 0 ? null : siblings[siblings.length - 1];
    siblings.push(node);
    if (prev !== null) {
      node.prev = prev;
      prev.next = node;
    }
    node.parent = parent;
    this.lastText = null;
  }

  end(): void {
    this.elements.length = 1;
    this.names.length = 1;
  }
}

/** The position after the comment or declaration that starts at `<!` (at = the index after `!`). */
function markupDeclaration(html: string, at: number, b: TreeBuilder): number {
  const n = html.length;
  if (at >= n) {
    b.comment('');
    return n;
  }
  const c = html.charCodeAt(at);
  if (c === DASH) {
    if (at + 1 >= n) {
      b.comment('-');
      return n;
    }
    if (html.charCodeAt(at + 1) === DASH) return comment(html, at + 2, b);
    return bogusComment(html, at, at + 1, b);
  }
  if (c === 0x5b /* [ */) {
    if (html.startsWith('CDATA[', at + 1)) {
      const start = at + 7;
      const end = html.indexOf(']]>', start);
      if (end === -1) {
        b.comment(html.slice(at, n));
        return n;
      }
      b.cdata(html.slice(start, end));
      return end + 3;
    }
    return bogusComment(html, at, at + 1, b);
  }
  if ((c | 0x20) === 0x64 /* d */) {
    // `doctype`, any case; a mismatch makes a bogus comment, `>` before the match ends it.
    const seq = 'doctype';
    let i = 1;
    for (; i < seq.length; i++) {
      const d = html.charCodeAt(at + i);
      if (at + i >= n) {
        b.comment(html.slice(at, n));
        return n;
      }
      if ((d | 0x20) !== seq.charCodeAt(i)) {
        if (d === GT) {
          b.comment(html.slice(at, at + i));
          return at + i + 1;
        }
        return bogusComment(html, at, at + i + 1, b);
      }
    }
    const gt = at + 7 >= n ? -1 : html.indexOf('>', at + 7);
    if (gt === -1) return n;
    b.doctype(html.slice(at, gt));
    return gt + 1;
  }
  if (c === GT) {
    b.comment('');
    return at + 1;
  }
  return bogusComment(html, at, at + 1, b);
}

/** A comment from `start` to the next `>` at or after `from` (or the end). */
function bogusComment(html: string, start: number, from: number, b: TreeBuilder): number {
  const gt = from >= html.length ? -1 : html.indexOf('>', from);
  if (gt === -1) {
    b.comment(html.slice(start));
    return html.length;
  }
  b.comment(html.slice(start, gt));
  return gt + 1;
}

/** `<!--` seen, `start` just after it: up to `-->` or `--!>`, with `<!-->` and `<!--->` empty. */
function comment(html: string, start: number, b: TreeBuilder): number {
  const n = html.length;
  if (start < n && html.charCodeAt(start) === GT) {
    b.comment('');
    return start + 1;
  }
  if (start + 1 < n && html.charCodeAt(start) === DASH && html.charCodeAt(start + 1) === GT) {
    b.comment('');
    return start + 2;
  }
  let from = start;
  for (;;) {
    const dashes = html.indexOf('--', from);
    if (dashes === -1) break;
    // Skip a run of dashes: `--->` ends at its last two.
    let d = dashes + 2;
    while (d < n && html.charCodeAt(d) === DASH) d++;
    const after = html.charCodeAt(d);
    if (after === GT) {
      b.comment(html.slice(start, d - 2));
      return d + 1;
    }
    if (after === BANG && html.charCodeAt(d + 1) === GT) {
      b.comment(html.slice(start, d - 2));
      return d + 2;
    }
    from = d - 1;
    if (d >= n) break;
  }
  // Unterminated: the rest, less a trailing partial `--!`.
  let end = n;
  if (html.endsWith('--!', n) && n - 3 >= start) end = n - 3;
  else if (html.endsWith('--', n) && n - 2 >= start) end = n - 2;
  else if (html.endsWith('-', n) && n - 1 >= start) end = n - 1;
  b.comment(html.slice(start, end));
  return n;
}

/** Decodes character references in text (legacy rules: `&amp` without `;` too). */
function decodeText(raw: string): string {
  return raw.indexOf('&') === -1 ? raw : decodeHTML(raw);
}

/**
 * The index of the `</name` (any case) that ends a raw-text element's content, followed by whitespace, `/` or
 * `>`; -1 when there is none.
 */
function rawTextEnd(html: string, name: string, from: number): number {
  const n = html.length;
  const len = name.length;
  let at = from;
  for (;;) {
    const lt = html.indexOf('</', at);
    if (lt === -1 || lt + 2 + len >= n) return -1;
    let i = 0;
    while (i < len && (html.charCodeAt(lt + 2 + i) | 0x20) === name.charCodeAt(i)) i++;
    if (i === len && endsName(html.charCodeAt(lt + 2 + len))) return lt;
    at = lt + 1;
  }
}

function tokenize(html: string, b: TreeBuilder): void {
  const n = html.length;
  let pos = 0;
  let textStart = 0;
  while (pos < n) {
    const lt = html.indexOf('<', pos);
    if (lt === -1) break;
    if (lt + 1 >= n) break; // a `<` at the very end is text
    const c = html.charCodeAt(lt + 1);
    if (isAsciiAlpha(c)) {
      if (lt > textStart && !b.skipping) b.text(decodeText(html.slice(textStart, lt)));
      pos = openTag(html, lt + 1, b);
      textStart = pos;
    } else if (c === SLASH) {
      if (lt > textStart && !b.skipping) b.text(decodeText(html.slice(textStart, lt)));
      pos = closeTag(html, lt + 2, b);
      if (pos < 0) {
        // `</` at the end of the input is text.
        textStart = lt;
        pos = n;
        break;
      }
      textStart = pos;
    } else if (c === BANG) {
      if (lt > textStart && !b.skipping) b.text(decodeText(html.slice(textStart, lt)));
      pos = markupDeclaration(html, lt + 2, b);
      textStart = pos;
    } else if (c === QM) {
      if (lt > textStart && !b.skipping) b.text(decodeText(html.slice(textStart, lt)));
      pos = bogusComment(html, lt + 1, lt + 2, b);
      textStart = pos;
    } else {
      pos = lt + 1; // a `<` that starts nothing is text
    }
  }
  if (textStart < n && !b.skipping) b.text(decodeText(html.slice(textStart, n)));
}

/** `</` seen; `at` is the index after it. Returns the position after the tag, or -1 for `</` at the end. */
function closeTag(html: string, at: number, b: TreeBuilder): number {
  const n = html.length;
  if (at >= n) return -1;
  const c = html.charCodeAt(at);
  if (c === GT) return at + 1; // `</>`: nothing
  if (!isAsciiAlpha(c)) return bogusComment(html, at, at, b);
  let i = at + 1;
  while (i < n && !endsName(html.charCodeAt(i))) i++;
  if (i >= n) return n; // an unfinished end tag at the end is dropped
  b.closeTag(b.resolve(TAGS.get(html, at, i)));
  const gt = html.charCodeAt(i) === GT ? i : html.indexOf('>', i + 1);
  if (gt === -1) {
    // htmlparser2 then emits the input's last character as text (its section start is -1).
    b.text(html.slice(-1));
    return n;
  }
  return gt + 1;
}

const RAW_TEXT_NAMES = [...RAW_TEXT.keys()];

/** Whether html from at to its end is the start of a raw-text element's name (any case). */
function startsRawTextName(html: string, at: number): boolean {
  const written = html.slice(at).toLowerCase();
  return RAW_TEXT_NAMES.some((name) => name.startsWith(written));
}

/** `<` and a letter seen; `at` is the index of the letter. Returns the position after the tag (and its raw text). */
function openTag(html: string, at: number, b: TreeBuilder): number {
  const n = html.length;
  let i = at + 1;
  while (i < n && !endsName(html.charCodeAt(i))) i++;
  if (i >= n) {
    // An unfinished tag at the end is dropped, except (htmlparser2's quirk) a name that could still become a
    // raw-text element's: that reads as text, without its `<`.
    if (b.foreignContext === HTML && !b.skipping && startsRawTextName(html, at)) b.text(html.slice(at));
    return n;
  }
  const written = TAGS.get(html, at, i);
  const raw = b.foreignContext === HTML ? written.raw : 0;
  const tag = b.resolve(written);
  const kept = b.openTag(tag);
  // Attributes are read only for an element that will exist (not inside content being left out).
  const store = kept && !b.skipping;
  const attribs: Record<string, string> = Object.create(null) as Record<string, string>;
  let selfClosing = false;
  // Attributes, then `>` (htmlparser2's BeforeAttributeName … InSelfClosingTag states).
  for (;;) {
    if (i >= n) return n;
    let c = html.charCodeAt(i);
    if (c === GT) break;
    if (c === SLASH) {
      // `/` then whitespace* then `>` self-closes; anything else starts an attribute.
      i++;
      while (i < n && isWhitespace(html.charCodeAt(i))) i++;
      if (i >= n) {
        // htmlparser2 then emits the input's last character as text (its section start is -1).
        if (!b.skipping) b.text(html.slice(-1));
        return n;
      }
      if (html.charCodeAt(i) === GT) {
        selfClosing = true;
        break;
      }
      c = html.charCodeAt(i);
      if (c === SLASH) continue;
    } else if (isWhitespace(c)) {
      i++;
      continue;
    }
    // An attribute name: its first character may be anything but whitespace, `/`, `>`.
    const nameStart = i;
    i++;
    while (i < n) {
      const d = html.charCodeAt(i);
      if (d === EQ || endsName(d)) break;
      i++;
    }
    if (i >= n) return n;
    const nameEnd = i;
    while (i < n && isWhitespace(html.charCodeAt(i))) i++;
    if (i >= n) return n;
    let value = '';
    if (html.charCodeAt(i) === EQ) {
      i++;
      while (i < n && isWhitespace(html.charCodeAt(i))) i++;
      if (i >= n) return n;
      const q = html.charCodeAt(i);
      if (q === DQ || q === SQ) {
        const close = html.indexOf(q === DQ ? '"' : "'", i + 1);
        if (close === -1) return n;
        if (store) value = html.slice(i + 1, close);
        i = close + 1;
      } else {
        const start = i;
        while (i < n) {
          const d = html.charCodeAt(i);
          if (d === GT || isWhitespace(d)) break;
          i++;
        }
        if (i >= n) return n;
        if (store) value = html.slice(start, i);
      }
      if (store && value.indexOf('&') !== -1) value = decodeHTMLAttribute(value);
    }
    if (store) {
      const name = ATTRIBUTES.get(html, nameStart, nameEnd);
      // The first of repeated attributes wins. Own values are strings; Object.prototype's members are not.
      if (attribs[name] === undefined) attribs[name] = value;
    }
  }
  // html[i] is the tag's `>`.
  if (kept) {
    b.element(tag, attribs);
    if (selfClosing) b.selfClose(tag);
  }
  const after = i + 1;
  if (raw === 0) return after;
  if (b.skipping) {
    const end = raw === PLAINTEXT ? -1 : rawTextEnd(html, written.lower, after);
    return end === -1 ? n : closeTag(html, end + 2, b);
  }
  if (raw === PLAINTEXT) {
    if (after < n) b.text(html.slice(after));
    return n;
  }
  const end = rawTextEnd(html, written.lower, after);
  if (end === -1) {
    if (after < n) b.text(raw === RAW_DECODED ? decodeText(html.slice(after)) : html.slice(after));
    return n;
  }
  if (end > after) b.text(raw === RAW_DECODED ? decodeText(html.slice(after, end)) : html.slice(after, end));
  return closeTag(html, end + 2, b);
}
