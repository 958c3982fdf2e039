// A small, safe markdown-to-HTML renderer for the playground: every piece of text is escaped, and
// link and image addresses are kept only when they are http(s), mailto, data:image (images) or
// relative. It reads what Gleaner writes (GFM): ATX and setext headings, paragraphs, nested lists,
// block quotes, fenced and indented code, tables, rules, links, images, code spans, emphasis.
// Plain ES module, no DOM: the page inserts the returned string; tests import it in Node.

const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text made safe for HTML content and attribute values. */
export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

/** The address if it is safe to link or load, else null. */
export function safeUrl(url, { image = false } = {}) {
  const u = String(url).trim();
  if (/^(https?:|mailto:)/i.test(u)) return image && /^mailto:/i.test(u) ? null : u;
  if (image && /^data:image\/(png|jpe?g|gif|webp);base64,[a-z0-9+/=\s]*$/i.test(u)) return u;
  // Relative addresses (no scheme before the first /, ? or #).
  if (!/^[a-z][a-z0-9+.-]*:/i.test(u) && !u.startsWith('//')) return u;
  return null;
}

/** A markdown link destination: `<url>` or a bare one, then an optional quoted title. */
function destination(raw) {
  const m = /^\s*(?:<([^>]*)>|(\S*?))(?:\s+(?:"([^"]*)"|'([^']*)'))?\s*$/.exec(raw);
  if (!m) return { url: raw.trim(), title: undefined };
  return { url: m[1] ?? m[2] ?? '', title: m[3] ?? m[4] };
}

/** Finds the ")" closing a link destination that starts at `from` (balanced parentheses). */
function closingParen(text, from) {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '(') depth++;
    else if (c === ')') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** Finds the "]" closing link text that starts at `from` (balanced brackets). */
function closingBracket(text, from) {
  let depth = 0;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (c === '\\') i++;
    else if (c === '`') {
      const end = text.indexOf('`', i + 1);
      if (end !== -1) i = end;
    } else if (c === '[') depth++;
    else if (c === ']') {
      if (depth === 0) return i;
      depth--;
    }
  }
  return -1;
}

/** Inline markdown to HTML: code spans, images, links, autolinks, emphasis, line breaks. */
export function renderInline(text) {
  let out = '';
  let plain = '';
  const flush = () => {
    out += emphasis(escapeHtml(plain));
    plain = '';
  };
  for (let i = 0; i < text.length;) {
    const c = text[i];
    if (c === '\\' && i + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[i + 1])) {
      // An escaped punctuation character: kept literally, never markup.
      flush();
      out += escapeHtml(text[i + 1]);
      i += 2;
      continue;
    }
    if (c === '`') {
      const run = /^`+/.exec(text.slice(i))[0];
      const end = text.indexOf(run, i + run.length);
      if (end !== -1) {
        flush();
        out += `<code>${escapeHtml(text.slice(i + run.length, end).replace(/^ (.*) $/s, '$1'))}</code>`;
        i = end + run.length;
        continue;
      }
    }
    const image = c === '!' && text[i + 1] === '[';
    if (c === '[' || image) {
      const open = i + (image ? 2 : 1);
      const close = closingBracket(text, open);
      if (close !== -1 && text[close + 1] === '(') {
        const end = closingParen(text, close + 2);
        if (end !== -1) {
          const label = text.slice(open, close);
          const { url, title } = destination(text.slice(close + 2, end));
          const safe = safeUrl(url, { image });
          const titleAttr = title ? ` title="${escapeHtml(title)}"` : '';
          flush();
          if (image) {
            out += safe
              ? `<img src="${escapeHtml(safe)}" alt="${escapeHtml(label)}"${titleAttr} loading="lazy">`
              : escapeHtml(label);
          } else {
            const inner = renderInline(label);
            out += safe
              ? `<a href="${escapeHtml(safe)}"${titleAttr} rel="noopener noreferrer nofollow">${inner}</a>`
              : inner;
          }
          i = end + 1;
          continue;
        }
      }
    }
    if (c === '<') {
      const auto = /^<((?:https?|mailto):[^\s<>]*)>/i.exec(text.slice(i));
      if (auto) {
        flush();
        out += `<a href="${escapeHtml(auto[1])}" rel="noopener noreferrer nofollow">${escapeHtml(auto[1])}</a>`;
        i += auto[0].length;
        continue;
      }
    }
    if (c === '\n') {
      // A hard break: two trailing spaces or a backslash before the newline.
      const hard = / {2,}$|\\$/.test(plain);
      plain = plain.replace(/ +$|\\$/, '');
      flush();
      out += hard ? '<br>\n' : '\n';
      i++;
      continue;
    }
    plain += c;
    i++;
  }
  flush();
  return out;
}

/** Bold, italic and strikethrough on already escaped text (no markup inside it yet). */
function emphasis(html) {
  return html
    .replace(/(\*\*|__)(?=\S)([^]*?\S)\1/g, '<strong>$2</strong>')
    .replace(/(^|[^\w*])\*(?=\S)([^*]*?\S)\*(?!\w)/g, '$1<em>$2</em>')
    .replace(/(^|[^\w])_(?=\S)([^_]*?\S)_(?!\w)/g, '$1<em>$2</em>')
    .replace(/~~(?=\S)([^]*?\S)~~/g, '<del>$1</del>');
}

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])([ \t]+|$)(.*)$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const TABLE_DELIMITER = /^ *\|? *:?-+:? *(\| *:?-+:? *)*\|? *$/;

/** The cells of a table row (`| a | b |`), pipes escaped with a backslash kept in the cell. */
function cells(row) {
  let s = row.trim();
  if (s.startsWith('|')) s = s.slice(1);
  if (s.endsWith('|') && !s.endsWith('\\|')) s = s.slice(0, -1);
  const out = [];
  let cell = '';
  for (let i = 0; i < s.length; i++) {
    if (s[i] === '\\' && s[i + 1] === '|') {
      cell += '|';
      i++;
    } else if (s[i] === '|') {
      out.push(cell.trim());
      cell = '';
    } else cell += s[i];
  }
  out.push(cell.trim());
  return out;
}

const blank = (line) => /^\s*$/.test(line);

/** True when `line` starts a block other than a paragraph (so it ends a paragraph). */
function startsBlock(line, next) {
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    LIST_ITEM.test(line) ||
    (line.includes('|') && next !== undefined && TABLE_DELIMITER.test(next) && next.includes('-'))
  );
}

/** Markdown (a whole document) to HTML. */
export function renderMarkdown(markdown) {
  const lines = String(markdown ?? '')
    .replace(/\r\n?/g, '\n')
    .replace(/\t/g, '    ')
    .split('\n');
  return blocks(lines, 0).trim();
}

function blocks(lines, depth) {
  if (depth > 20) return `<p>${escapeHtml(lines.join('\n'))}</p>`;
  let html = '';
  for (let i = 0; i < lines.length;) {
    const line = lines[i];
    if (blank(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1];
      const body = [];
      i++;
      while (i < lines.length && !new RegExp(`^ {0,3}${marker[0]}{${marker.length},}\\s*$`).test(lines[i])) {
        body.push(lines[i]);
        i++;
      }
      i++; // the closing fence (or the end)
      const lang = fence[2] ? ` class="language-${escapeHtml(fence[2].replace(/[^\w+-]/g, ''))}"` : '';
      html += `<pre><code${lang}>${escapeHtml(body.join('\n'))}</code></pre>\n`;
      continue;
    }
    if (/^ {4}/.test(line)) {
      const body = [];
      while (i < lines.length && (/^ {4}/.test(lines[i]) || (blank(lines[i]) && /^ {4}/.test(lines[i + 1] ?? '')))) {
        body.push(lines[i].slice(4));
        i++;
      }
      html += `<pre><code>${escapeHtml(body.join('\n'))}</code></pre>\n`;
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1].length;
      html += `<h${level}>${renderInline(heading[2] ?? '')}</h${level}>\n`;
      i++;
      continue;
    }
    if (RULE.test(line)) {
      html += '<hr>\n';
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body = [];
      while (i < lines.length && !blank(lines[i])) {
        const q = QUOTE.exec(lines[i]);
        body.push(q ? q[1] : lines[i]);
        i++;
      }
      html += `<blockquote>\n${blocks(body, depth + 1)}\n</blockquote>\n`;
      continue;
    }
    if (LIST_ITEM.test(line)) {
      const [list, next] = listAt(lines, i, depth);
      html += list;
      i = next;
      continue;
    }
    if (
      line.includes('|') &&
      i + 1 < lines.length &&
      TABLE_DELIMITER.test(lines[i + 1]) &&
      lines[i + 1].includes('-')
    ) {
      const head = cells(line);
      const align = cells(lines[i + 1]).map((d) =>
        d.startsWith(':') && d.endsWith(':') ? 'center' : d.endsWith(':') ? 'right' : d.startsWith(':') ? 'left' : '',
      );
      const cls = (n) => (align[n] ? ` class="align-${align[n]}"` : '');
      i += 2;
      let body = '';
      while (i < lines.length && !blank(lines[i]) && lines[i].includes('|')) {
        const row = cells(lines[i]);
        body += `<tr>${head.map((_, n) => `<td${cls(n)}>${renderInline(row[n] ?? '')}</td>`).join('')}</tr>\n`;
        i++;
      }
      html +=
        `<table>\n<thead><tr>${head.map((h, n) => `<th scope="col"${cls(n)}>${renderInline(h)}</th>`).join('')}</tr></thead>\n` +
        `<tbody>\n${body}</tbody>\n</table>\n`;
      continue;
    }
    // A paragraph: up to a blank line or another block; a setext underline makes it a heading.
    const para = [line.trimStart()];
    i++;
    let setext = 0;
    while (i < lines.length && !blank(lines[i])) {
      if (/^ {0,3}=+\s*$/.test(lines[i])) setext = 1;
      else if (/^ {0,3}-+\s*$/.test(lines[i])) setext = 2;
      if (setext) {
        i++;
        break;
      }
      if (startsBlock(lines[i], lines[i + 1])) break;
      para.push(lines[i].replace(/^ +/, ''));
      i++;
    }
    const inner = renderInline(para.join('\n'));
    html += setext ? `<h${setext}>${inner}</h${setext}>\n` : `<p>${inner}</p>\n`;
  }
  return html;
}

/** The list starting at line `start`: its HTML and the index of the first line after it. */
function listAt(lines, start, depth) {
  const first = LIST_ITEM.exec(lines[start]);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const startNumber = ordered ? parseInt(first[2], 10) : 1;
  const items = [];
  let i = start;
  let loose = false;
  while (i < lines.length) {
    const m = LIST_ITEM.exec(lines[i]);
    if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) break;
    const contentIndent = indent + m[2].length + Math.max(1, Math.min(m[3].length, 4));
    const body = [m[4]];
    i++;
    while (i < lines.length) {
      const l = lines[i];
      if (blank(l)) {
        // A blank line inside the item when what follows is indented to the item's content.
        const nextLine = lines[i + 1];
        if (nextLine !== undefined && !blank(nextLine) && nextLine.search(/\S/) >= contentIndent) {
          body.push('');
          loose = true;
          i++;
          continue;
        }
        break;
      }
      const lead = l.search(/\S/);
      if (lead >= contentIndent || (lead > indent && LIST_ITEM.test(l))) {
        body.push(l.slice(Math.min(lead, contentIndent)));
      } else if (!LIST_ITEM.test(l) && !startsBlock(l, lines[i + 1])) {
        body.push(l.trim()); // a lazy continuation line
      } else break;
      i++;
    }
    items.push(body);
    // A blank line between items makes the list loose; it goes on if the next item follows.
    if (blank(lines[i] ?? 'x')) {
      const next = LIST_ITEM.exec(lines[i + 1] ?? '');
      if (next && next[1].length === indent && /\d/.test(next[2]) === ordered) {
        loose = true;
        i++;
      }
    }
  }
  const tag = ordered ? 'ol' : 'ul';
  const startAttr = ordered && startNumber !== 1 ? ` start="${startNumber}"` : '';
  const lis = items.map((body) => {
    const inner = blocks(body, depth + 1);
    const tight = !loose ? inner.replace(/^<p>([^]*?)<\/p>\n?/, '$1') : inner;
    return `<li>${tight.trim()}</li>`;
  });
  return [`<${tag}${startAttr}>\n${lis.join('\n')}\n</${tag}>\n`, i];
}
