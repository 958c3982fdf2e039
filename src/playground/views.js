// What the playground shows: DOM built from API answers. Text always goes in as text nodes; only the
// markdown renderer's output (escaped by it) goes in as HTML.
/* global document */
import { renderMarkdown } from './markdown.js';

let ids = 0;
/** A fresh id for labelling. */
export const uid = (prefix) => `${prefix}-${++ids}`;

/** An element with attributes (on* never) and children (strings become text nodes; null is skipped). */
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false || k.startsWith('on')) continue;
    if (k === 'text') node.textContent = v;
    else if (k === 'className') node.className = v;
    else node.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) node.append(c);
  return node;
}

/** A section with a heading of `level`, labelled by it. */
export function section(title, level, ...children) {
  const id = uid('sec');
  return el('section', { 'aria-labelledby': id }, el(`h${level}`, { id, text: title }), ...children);
}

/** Preformatted text in a scrollable box that the keyboard can reach. */
export function pre(text, label) {
  return el('pre', { tabindex: 0, role: 'region', 'aria-label': label, text });
}

/** Rendered markdown. */
export function markdownView(markdown, label) {
  const box = el('div', { className: 'md', role: 'region', 'aria-label': label });
  box.innerHTML = renderMarkdown(markdown);
  return box;
}

/** A link opening outside the playground. */
export function outLink(href, text) {
  return el('a', { href, target: '_blank', rel: 'noopener noreferrer', text: text ?? href });
}

/** Markdown shown both ways: rendered, and the raw text behind a disclosure. */
function markdownBoth(markdown, level) {
  return section(
    'Markdown',
    level,
    markdownView(markdown, 'Rendered markdown'),
    el('details', {}, el('summary', { text: 'Raw markdown' }), pre(markdown, 'Raw markdown')),
  );
}

/** Metadata as a description list. */
export function metadataView(metadata, level = 3) {
  const dl = el('dl', { className: 'meta' });
  for (const [k, v] of Object.entries(metadata ?? {})) {
    if (v === undefined || v === null || v === '') continue;
    dl.append(el('dt', { text: k }), el('dd', { text: typeof v === 'string' ? v : JSON.stringify(v) }));
  }
  return section('Metadata', level, dl);
}

/** A scrape (or parse) document: every format it carries, then its metadata. */
export function documentView(doc, { warning, level = 3 } = {}) {
  const out = [];
  const title = doc.metadata?.title;
  if (title) out.push(el('p', {}, el('strong', { text: 'Title: ' }), title));
  if (warning) out.push(el('p', { className: 'note', text: `Warning: ${warning}` }));
  if (typeof doc.markdown === 'string') out.push(markdownBoth(doc.markdown, level));
  if (typeof doc.summary === 'string') out.push(section('Summary', level, el('p', { text: doc.summary })));
  if (doc.json !== undefined)
    out.push(section('JSON', level, pre(JSON.stringify(doc.json, null, 2), 'Extracted JSON')));
  if (Array.isArray(doc.links)) {
    out.push(
      section(
        `Links (${doc.links.length})`,
        level,
        el('ul', { className: 'links' }, ...doc.links.map((l) => el('li', {}, outLink(l)))),
      ),
    );
  }
  if (typeof doc.screenshot === 'string') {
    out.push(
      section(
        'Screenshot',
        level,
        el('img', {
          className: 'shot',
          src: doc.screenshot,
          alt: `Screenshot of ${doc.metadata?.url ?? doc.metadata?.sourceURL ?? 'the page'}`,
        }),
      ),
    );
  }
  if (typeof doc.html === 'string') out.push(section('HTML', level, pre(doc.html, 'HTML source')));
  if (typeof doc.rawHtml === 'string') out.push(section('Raw HTML', level, pre(doc.rawHtml, 'Raw HTML source')));
  if (Array.isArray(doc.pages) && doc.pages.length)
    out.push(el('p', { className: 'note', text: `${doc.pages.length} pages` }));
  out.push(metadataView(doc.metadata, level));
  return out;
}

/** A list of links with their titles and descriptions (map, search). */
export function linkList(items) {
  return el(
    'ol',
    { className: 'links' },
    ...items.map((item) =>
      el(
        'li',
        {},
        outLink(item.url, item.title || item.url),
        item.title ? el('span', { className: 'note', text: ` ${item.url}` }) : null,
        item.description ? el('div', { className: 'note', text: item.description }) : null,
      ),
    ),
  );
}

/**
 * A line diff (`diff.json`: files → chunks → changes with a one-character prefix) side by side: the
 * lines before on the left, after on the right; a run of deletions faces the additions that follow it.
 */
export function sideBySide(diffJson, caption) {
  const table = el(
    'table',
    { className: 'diff' },
    el('caption', { className: 'visually-hidden', text: caption }),
    el('colgroup', {}, el('col', { className: 'num' }), el('col'), el('col', { className: 'num' }), el('col')),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col', text: 'Line' }),
        el('th', { scope: 'col', text: 'Before' }),
        el('th', { scope: 'col', text: 'Line' }),
        el('th', { scope: 'col', text: 'After' }),
      ),
    ),
  );
  const body = el('tbody');
  const side = (change, kind) => {
    if (!change) return [el('td'), el('td')];
    const text = change.content.slice(1);
    const line = kind === 'normal' ? '' : String(change.ln);
    const mark = kind === 'del' ? el('del', {}, text) : kind === 'add' ? el('ins', {}, text) : text;
    return [el('td', { className: kind, text: line }), el('td', { className: kind }, mark)];
  };
  for (const file of diffJson?.files ?? []) {
    for (const chunk of file.chunks ?? []) {
      body.append(el('tr', {}, el('th', { colspan: 4, scope: 'rowgroup', className: 'hunk', text: chunk.content })));
      let dels = [];
      let adds = [];
      const flush = () => {
        for (let i = 0; i < Math.max(dels.length, adds.length); i++) {
          body.append(el('tr', {}, ...side(dels[i], 'del'), ...side(adds[i], 'add')));
        }
        dels = [];
        adds = [];
      };
      for (const change of chunk.changes ?? []) {
        if (change.type === 'del') {
          if (adds.length) flush();
          dels.push(change);
        } else if (change.type === 'add') adds.push(change);
        else {
          flush();
          const [, a] = side(change, 'normal');
          const [, b] = side(change, 'normal');
          body.append(
            el('tr', {}, el('td', { text: String(change.ln1) }), a, el('td', { text: String(change.ln2) }), b),
          );
        }
      }
      flush();
    }
  }
  table.append(body);
  return table;
}

/** A JSON monitor's per-field changes: field, before, after. */
export function fieldChanges(changes, caption) {
  return el(
    'table',
    {},
    el('caption', { text: caption }),
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        el('th', { scope: 'col', text: 'Field' }),
        el('th', { scope: 'col', text: 'Before' }),
        el('th', { scope: 'col', text: 'After' }),
      ),
    ),
    el(
      'tbody',
      {},
      ...Object.entries(changes).map(([field, { previous, current }]) =>
        el(
          'tr',
          {},
          el('th', { scope: 'row', text: field }),
          el('td', { text: JSON.stringify(previous) }),
          el('td', { text: JSON.stringify(current) }),
        ),
      ),
    ),
  );
}
