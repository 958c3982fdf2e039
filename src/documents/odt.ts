// ODT (OpenDocument text) → markdown, through simple HTML and the web pipeline's converter.
//
// - Headings: text:h with its outline level (1..6); paragraphs styled "Title" → h1. Bold is
//   dropped inside headings (heading styles are bold; `# **x**` would add nothing).
// - Lists: text:list nesting; ordered when the list style's level is a number style with a
//   num-format, bullets otherwise. Bold/italic from automatic and common text styles.
// - Tables → GFM tables (first row as header). Merged cells: the content stays in the first cell;
//   covered cells are blank (ODF writes them as table:covered-table-cell).
// - Links (text:a) → [text](href); images (draw:image) → ![alt](Pictures/…) with the href as
//   written; footnotes (text:note) → [^n] and definitions at the end. Metadata from meta.xml.
import type { AnyNode, Element } from 'domhandler';
import { ListBuilder, type Run, runsToHtml, tableHtml, toMarkdown } from './html-builder.ts';
import { compact, odfMetadata, open, readXml } from './package.ts';
import type { ParsedDocument, ParseOptions } from './types.ts';
import { attr, descendant, isElement, kid, kids, local, textOf } from './xml.ts';
import { throwIfAborted, type ZipArchive } from './zip.ts';
import { DocumentError } from '../errors.ts';

interface StyleProps {
  bold?: boolean;
  italic?: boolean;
  parent?: string;
  /** Paragraph style display name / name. */
  name?: string;
}

export interface OdfCtx {
  styles: Map<string, StyleProps>;
  /** list style name → level (1-based) → ordered */
  listStyles: Map<string, Map<number, boolean>>;
  notes: { n: number; text: string }[];
}

const FN = (n: number): string => `GLEANERFOOTNOTE${n}END`;

async function collectStyles(zip: ZipArchive, ctx: OdfCtx, parts: Element[]): Promise<void> {
  if (zip.has('styles.xml')) parts.push(await readXml(zip, 'styles.xml'));
  for (const root of parts) {
    for (const holder of [...kids(root, 'styles'), ...kids(root, 'automatic-styles')]) {
      for (const st of kids(holder)) {
        const n = local(st.name);
        if (n === 'style') {
          const tp = kid(st, 'text-properties');
          const w = tp && attr(tp, 'font-weight');
          const s = tp && attr(tp, 'font-style');
          ctx.styles.set(attr(st, 'name') ?? '', {
            bold: w ? w === 'bold' || Number(w) >= 600 : undefined,
            italic: s ? s === 'italic' || s === 'oblique' : undefined,
            parent: attr(st, 'parent-style-name'),
            name: attr(st, 'display-name') ?? attr(st, 'name'),
          });
        } else if (n === 'list-style') {
          const levels = new Map<number, boolean>();
          for (const l of kids(st)) {
            const level = Number(attr(l, 'level') ?? 1);
            const ln = local(l.name);
            levels.set(level, ln === 'list-level-style-number' && !!attr(l, 'num-format'));
          }
          ctx.listStyles.set(attr(st, 'name') ?? '', levels);
        }
      }
    }
  }
}

function styleFlag(ctx: OdfCtx, name: string | undefined, key: 'bold' | 'italic'): boolean | undefined {
  for (let i = 0; name && i < 10; i++) {
    const s = ctx.styles.get(name);
    if (!s) return undefined;
    if (s[key] !== undefined) return s[key];
    name = s.parent;
  }
  return undefined;
}

function isTitleStyle(ctx: OdfCtx, name: string | undefined): boolean {
  for (let i = 0; name && i < 10; i++) {
    if (name === 'Title') return true;
    const s = ctx.styles.get(name);
    if (!s) return false;
    if (s.name === 'Title') return true;
    name = s.parent;
  }
  return false;
}

/** An ODF package opened: its styles (content.xml's and styles.xml's) and its office body (`text`, `presentation`). */
export async function openOdf(
  bytes: Uint8Array,
  what: 'ODT' | 'ODP',
  bodyName: string,
  opts: ParseOptions,
): Promise<{ zip: ZipArchive; ctx: OdfCtx; body: Element }> {
  const zip = open(bytes, what, opts);
  if (!zip.has('content.xml')) throw new DocumentError('DOCUMENT_CORRUPT', `${what} has no content.xml`);
  const content = await readXml(zip, 'content.xml');
  const ctx: OdfCtx = { styles: new Map(), listStyles: new Map(), notes: [] };
  await collectStyles(zip, ctx, [content]);
  const body = descendant(content, bodyName);
  if (!body) throw new DocumentError('DOCUMENT_CORRUPT', `${what} has no office:${bodyName} body`);
  return { zip, ctx, body };
}

export async function parseOdt(bytes: Uint8Array, opts: ParseOptions = {}): Promise<ParsedDocument> {
  const { zip, ctx, body: text } = await openOdf(bytes, 'ODT', 'text', opts);

  const list = new ListBuilder();
  let html = '';
  let count = 0;
  const block = (els: Element[]): void => {
    for (const el of els) {
      if (++count % 500 === 0) throwIfAborted(opts.signal);
      const n = local(el.name);
      if (n === 'h') {
        html += list.flush();
        const level = Math.max(1, Math.min(6, Number(attr(el, 'outline-level') ?? 1) || 1));
        const inner = runsToHtml(headingRuns(inline(el, ctx, {})));
        if (inner.trim()) html += `<h${level}>${inner}</h${level}>`;
      } else if (n === 'p') {
        html += list.flush();
        const title = isTitleStyle(ctx, attr(el, 'style-name'));
        const runs = inline(el, ctx, {});
        const inner = runsToHtml(title ? headingRuns(runs) : runs);
        if (!inner.trim()) continue;
        html += title ? `<h1>${inner}</h1>` : `<p>${inner}</p>`;
      } else if (n === 'list') {
        html += list.flush();
        listItems(el, 0, attr(el, 'style-name'), ctx, list);
        html += list.flush();
      } else if (n === 'table') {
        html += list.flush();
        html += tableHtml(tableRows(el, ctx));
      } else if (n === 'section' || n === 'index-body' || n === 'table-of-content' || n === 'alphabetical-index') {
        block(kids(el));
      }
    }
  };
  block(kids(text));
  html += list.flush();

  let markdown = toMarkdown(html);
  if (ctx.notes.length) {
    for (const note of ctx.notes) markdown = markdown.replace(FN(note.n), `[^${note.n}]`);
    markdown += '\n\n' + ctx.notes.map((n) => `[^${n.n}]: ${n.text}`.trimEnd()).join('\n');
  }
  return { kind: 'odt', markdown, metadata: compact(await odfMetadata(zip)), numPages: 1, warnings: [] };
}

/** A heading's runs without bold: heading styles are bold (Title, Heading n), and `# **x**` says nothing more than `# x`. */
function headingRuns(runs: Run[]): Run[] {
  return runs.map((r) => (r.bold ? { ...r, bold: false } : r));
}

export function listItems(
  listEl: Element,
  level: number,
  styleName: string | undefined,
  ctx: OdfCtx,
  out: ListBuilder,
): void {
  const style = attr(listEl, 'style-name') ?? styleName;
  const ordered = ctx.listStyles.get(style ?? '')?.get(level + 1) ?? false;
  for (const item of kids(listEl)) {
    const n = local(item.name);
    if (n !== 'list-item' && n !== 'list-header') continue;
    const texts: string[] = [];
    const nested: Element[] = [];
    for (const c of kids(item)) {
      const cn = local(c.name);
      if (cn === 'p' || cn === 'h') {
        const h = runsToHtml(inline(c, ctx, {}));
        if (h.trim()) texts.push(h);
      } else if (cn === 'list') nested.push(c);
    }
    if (texts.length) out.item(level, ordered, texts.join('<br>'));
    for (const l of nested) listItems(l, level + 1, style, ctx, out);
  }
}

export function tableRows(table: Element, ctx: OdfCtx): string[][] {
  const rows: string[][] = [];
  const visit = (el: Element): void => {
    for (const c of kids(el)) {
      const n = local(c.name);
      if (n === 'table-row') {
        const row: string[] = [];
        for (const cell of kids(c)) {
          const cn = local(cell.name);
          if (cn !== 'table-cell' && cn !== 'covered-table-cell') continue;
          const repeat = Math.max(1, Math.min(256, Number(attr(cell, 'number-columns-repeated') ?? 1) || 1));
          let h = '';
          if (cn === 'table-cell') {
            const parts: string[] = [];
            for (const p of kids(cell)) {
              const pn = local(p.name);
              if (pn === 'p' || pn === 'h') {
                const s = runsToHtml(inline(p, ctx, {}));
                if (s.trim()) parts.push(s);
              } else if (pn === 'list') {
                for (const li of kids(p)) for (const q of kids(li, 'p')) parts.push(runsToHtml(inline(q, ctx, {})));
              }
            }
            h = parts.join('<br>');
          }
          for (let i = 0; i < repeat; i++) row.push(h);
        }
        while (row.length && row[row.length - 1] === '') row.pop();
        rows.push(row);
      } else if (n === 'table-header-rows' || n === 'table-rows' || n === 'table-row-group') visit(c);
    }
  };
  visit(table);
  return rows;
}

interface Fmt {
  bold?: boolean;
  italic?: boolean;
  href?: string;
}

export function inline(el: Element, ctx: OdfCtx, fmt: Fmt): Run[] {
  const bold = styleFlag(ctx, attr(el, 'style-name'), 'bold');
  const italic = styleFlag(ctx, attr(el, 'style-name'), 'italic');
  const f: Fmt = { ...fmt, bold: bold ?? fmt.bold, italic: italic ?? fmt.italic };
  const runs: Run[] = [];
  const push = (text: string, html = false): void => {
    runs.push({ text, html, bold: f.bold, italic: f.italic, href: f.href });
  };
  for (const c of el.children as AnyNode[]) {
    if (c.type === 'text') {
      push(c.data);
      continue;
    }
    if (!isElement(c)) continue;
    switch (local(c.name)) {
      case 'span':
        runs.push(...inline(c, ctx, f));
        break;
      case 'a':
        runs.push(...inline(c, ctx, { ...f, href: attr(c, 'href') }));
        break;
      case 's':
        push(' '.repeat(Math.max(1, Math.min(100, Number(attr(c, 'c') ?? 1) || 1))));
        break;
      case 'tab':
        push(' ');
        break;
      case 'line-break':
        push('<br>', true);
        break;
      case 'frame': {
        const img = kid(c, 'image');
        const href = img && attr(img, 'href');
        if (href) {
          const alt = textOf(kid(c, 'title') ?? kid(c, 'desc') ?? c).trim() || attr(c, 'name') || '';
          const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
          push(`<img src="${esc(href)}" alt="${esc(alt)}">`, true);
        } else {
          const box = kid(c, 'text-box');
          if (box) for (const p of kids(box, 'p')) runs.push(...inline(p, ctx, f));
        }
        break;
      }
      case 'note': {
        const body = kid(c, 'note-body');
        const n = ctx.notes.length + 1;
        const text = body
          ? kids(body)
              .map((p) => toMarkdown(runsToHtml(inline(p, ctx, {}))))
              .filter(Boolean)
              .join(' ')
          : '';
        ctx.notes.push({ n, text });
        push(FN(n));
        break;
      }
      case 'note-citation':
      case 'bookmark':
      case 'bookmark-start':
      case 'bookmark-end':
      case 'soft-page-break':
      case 'annotation':
        break;
      default:
        runs.push(...inline(c, ctx, f));
    }
  }
  return runs;
}
