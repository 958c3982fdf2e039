// String helpers for the HTML→Markdown converter (markdown.ts): whitespace collapsing, the
// minimal escaping of text, code fences, srcset parsing and link destinations. Pure functions
// over strings; each scans its input once, and the common case (nothing to do) is one regex test.

/** HTML's collapsible whitespace, plus no-break space (rendered as an ordinary space). */
const WS_RUN = /[\t\n\r\f \u00a0]+/g;
const WS_TEST = /[\t\n\r\f\u00a0]| {2}/;

/** Runs of whitespace (and NBSP) become one space, as a browser renders them outside `<pre>`. */
export function collapseWhitespace(s: string): string {
  return WS_TEST.test(s) ? s.replace(WS_RUN, ' ') : s;
}

const SPECIAL = /[\\*_`[\]<&~]/;

function isAsciiPunct(c: number): boolean {
  return (c >= 33 && c <= 47) || (c >= 58 && c <= 64) || (c >= 91 && c <= 96) || (c >= 123 && c <= 126);
}
function isWhitespaceCode(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13 || c === 12 || c === 0xa0;
}
function isSpace(c: number): boolean {
  return c === 32 || c === 10;
}
/** Letters and digits; any non-ASCII character counts as a letter (emphasis treats them so). */
function isWord(c: number): boolean {
  return (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c > 127;
}
function isAlpha(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

/**
 * Escape the characters of collapsed text that Markdown would otherwise read as markup, and only
 * those: `\` before punctuation or whitespace, `*`/`~` unless surrounded by spaces (`2 * 3` stays), `_` unless
 * inside a word (`snake_case` stays), every backtick, `]` before `(`/`[`/`:` (all brackets inside
 * link text), `<` that would open a tag and `&` that would read as an entity. Neighbours outside
 * this string count as non-space, so a boundary errs on the side of escaping. Line-start markers
 * (`#`, `>`, `- `, `1. `...) are handled per line by escapeLineStart.
 */
export function escapeText(s: string, inLink: boolean): string {
  let i = s.search(SPECIAL);
  if (i < 0) return s;
  const n = s.length;
  let out = '';
  let last = 0;
  for (; i < n; i++) {
    const c = s.charCodeAt(i);
    let esc: boolean;
    switch (c) {
      case 92: // \
        // Before whitespace too: a frame's edge may trim it (`[\](…)` escapes the bracket), and before a line end
        // a backslash is a hard break.
        esc = i + 1 >= n || isAsciiPunct(s.charCodeAt(i + 1)) || isWhitespaceCode(s.charCodeAt(i + 1));
        break;
      case 42: // *
      case 126: // ~
        // Spaces at the string's edges do not count: an emphasis or link frame may move them outside itself.
        esc = !(i > 1 && i + 2 < n && isSpace(s.charCodeAt(i - 1)) && isSpace(s.charCodeAt(i + 1)));
        break;
      case 95: // _
        esc = !(i > 0 && i + 1 < n && isWord(s.charCodeAt(i - 1)) && isWord(s.charCodeAt(i + 1)));
        break;
      case 96: // `
        esc = true;
        break;
      case 91: // [
        esc = inLink;
        break;
      case 93: {
        // ]
        const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        esc = inLink || d === 40 || d === 91 || d === 58;
        break;
      }
      case 60: {
        // <
        const d = i + 1 < n ? s.charCodeAt(i + 1) : 0;
        esc = isAlpha(d) || d === 47 || d === 33 || d === 63;
        break;
      }
      case 38: // &
        esc = looksLikeEntity(s, i + 1);
        break;
      default:
        continue;
    }
    if (esc) {
      out += s.slice(last, i) + '\\';
      last = i;
    }
  }
  return out === '' ? s : out + s.slice(last);
}

/** `&name;` / `&#123;` / `&#x1F;` starting at i (just after the `&`). */
function looksLikeEntity(s: string, i: number): boolean {
  const end = Math.min(s.length, i + 32);
  let j = i;
  if (j < end && s.charCodeAt(j) === 35) j++;
  const start = j;
  while (j < end) {
    const c = s.charCodeAt(j);
    if (c === 59) return j > start;
    if (!((c >= 48 && c <= 57) || isAlpha(c))) return false;
    j++;
  }
  return false;
}

/**
 * A trimmed line of paragraph text that starts like a block marker gets that marker escaped:
 * ATX heading `#`, blockquote `>`, bullet `-`/`+`/`*` + space, thematic break `---`/`***`,
 * setext underline `===`, ordered-list `1.`/`1)` + space.
 */
export function escapeLineStart(line: string): string {
  const c = line.charCodeAt(0);
  switch (c) {
    case 35: {
      // #
      let j = 1;
      while (j < line.length && line.charCodeAt(j) === 35) j++;
      return j <= 6 && (j === line.length || line.charCodeAt(j) === 32) ? '\\' + line : line;
    }
    case 62: // >
      return '\\' + line;
    case 45: // -
    case 43: // +
    case 42: {
      // *
      if (line.length === 1 || line.charCodeAt(1) === 32) return '\\' + line;
      if (c !== 43 && onlyChars(line, c)) return '\\' + line;
      return line;
    }
    case 61: // =
      return onlyChars(line, 61) ? '\\' + line : line;
    default: {
      if (c < 48 || c > 57) return line;
      let j = 1;
      while (j < line.length && j < 10) {
        const d = line.charCodeAt(j);
        if (d < 48 || d > 57) break;
        j++;
      }
      const d = line.charCodeAt(j);
      if ((d === 46 || d === 41) && j <= 9 && (j + 1 === line.length || line.charCodeAt(j + 1) === 32)) {
        return line.slice(0, j) + '\\' + line.slice(j);
      }
      return line;
    }
  }
}

/** The line is made only of `c` and spaces (a thematic break or setext underline). */
function onlyChars(line: string, c: number): boolean {
  for (let i = 0; i < line.length; i++) {
    const d = line.charCodeAt(i);
    if (d !== c && d !== 32) return false;
  }
  return true;
}

/** The longest run of backticks in s. */
export function longestBacktickRun(s: string): number {
  let max = 0;
  let i = s.indexOf('`');
  while (i >= 0) {
    let j = i + 1;
    while (j < s.length && s.charCodeAt(j) === 96) j++;
    if (j - i > max) max = j - i;
    i = s.indexOf('`', j);
  }
  return max;
}

/** Inline code for already collapsed, trimmed, non-empty content: a fence longer than any run
 *  of backticks inside, padded with spaces when the content starts or ends with a backtick. */
export function codeSpan(content: string): string {
  const run = longestBacktickRun(content);
  if (run === 0) return '`' + content + '`';
  const fence = '`'.repeat(run + 1);
  const pad = content.charCodeAt(0) === 96 || content.charCodeAt(content.length - 1) === 96 ? ' ' : '';
  return fence + pad + content + pad + fence;
}

/** The candidate of a srcset with the largest width (`w`) or, failing widths, density (`x`). */
export function largestSrcsetCandidate(srcset: string): string | undefined {
  let best: string | undefined;
  let bestW = -1;
  let bestX = -1;
  let i = 0;
  const n = srcset.length;
  while (i < n) {
    // Skip whitespace and commas, then the URL runs to the next whitespace.
    let c = srcset.charCodeAt(i);
    while (i < n && (c === 32 || c === 44 || c === 9 || c === 10 || c === 13 || c === 12)) c = srcset.charCodeAt(++i);
    if (i >= n) break;
    const start = i;
    while (i < n && !isHtmlSpace(srcset.charCodeAt(i))) i++;
    let url = srcset.slice(start, i);
    let descriptor = '';
    if (url.endsWith(',')) {
      url = url.replace(/,+$/, '');
    } else {
      const comma = srcset.indexOf(',', i);
      const end = comma < 0 ? n : comma;
      descriptor = srcset.slice(i, end).trim();
      i = end + 1;
    }
    if (!url) continue;
    let w = -1;
    let x = 1;
    if (descriptor) {
      const last = descriptor.charCodeAt(descriptor.length - 1) | 32;
      const v = parseFloat(descriptor);
      if (last === 119 /* w */ && v > 0) w = v;
      else if (last === 120 /* x */ && v > 0) x = v;
    }
    if (w > bestW || (w === bestW && x > bestX)) {
      best = url;
      bestW = w;
      bestX = x;
    }
  }
  return best;
}

function isHtmlSpace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 12;
}

/** A URL as a link destination: spaces and unbalanced parentheses percent-encoded so the
 *  destination cannot end early (balanced parentheses, as in Wikipedia URLs, stay readable). */
export function linkDestination(url: string): string {
  let u = url;
  if (u.indexOf(' ') >= 0 || u.indexOf('<') >= 0 || u.indexOf('>') >= 0)
    u = u.replace(/ /g, '%20').replace(/</g, '%3C').replace(/>/g, '%3E');
  if (u.indexOf('(') >= 0 || u.indexOf(')') >= 0) {
    let depth = 0;
    let balanced = true;
    for (let i = 0; i < u.length; i++) {
      const c = u.charCodeAt(i);
      if (c === 40) depth++;
      else if (c === 41 && --depth < 0) {
        balanced = false;
        break;
      }
    }
    if (!balanced || depth !== 0) u = u.replace(/\(/g, '%28').replace(/\)/g, '%29');
  }
  return u;
}

/** ` "title"` for a link or image, or '' when there is none. */
export function linkTitle(title: string | undefined): string {
  if (title === undefined) return '';
  const t = collapseWhitespace(title).trim();
  if (t === '') return '';
  return ' "' + (t.indexOf('"') >= 0 || t.indexOf('\\') >= 0 ? t.replace(/[\\"]/g, '\\$&') : t) + '"';
}

/** Image alt text: collapsed, brackets and backslashes escaped. */
export function altText(alt: string | undefined): string {
  if (!alt) return '';
  const t = collapseWhitespace(alt).trim();
  return /[[\]\\]/.test(t) ? t.replace(/[[\]\\]/g, '\\$&') : t;
}
