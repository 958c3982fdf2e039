// Builds simple HTML from document structure, rendered to markdown by the web pipeline's converter
// (src/markdown/markdown.ts) so escaping, lists and tables come out the same as for pages.
import { htmlToMarkdown } from '../markdown/markdown.ts';
import { escapeHtml } from './xml.ts';

export interface Run {
  /** Plain text (escaped when rendered), or raw HTML when `html` is set. */
  text: string;
  html?: boolean;
  bold?: boolean;
  italic?: boolean;
  strike?: boolean;
  href?: string;
}

/** Runs → inline HTML: neighbours with the same formatting are merged first (no `**a****b**`). */
export function runsToHtml(runs: Run[]): string {
  const merged: Run[] = [];
  for (const r of runs) {
    if (!r.text) continue;
    const last = merged[merged.length - 1];
    if (
      last &&
      !last.html &&
      !r.html &&
      !!last.bold === !!r.bold &&
      !!last.italic === !!r.italic &&
      !!last.strike === !!r.strike &&
      last.href === r.href
    ) {
      last.text += r.text;
    } else merged.push({ ...r });
  }
  let out = '';
  let i = 0;
  while (i < merged.length) {
    const href = merged[i].href;
    let inner = '';
    for (; i < merged.length && merged[i].href === href; i++) {
      const r = merged[i];
      let s = r.html ? r.text : escapeHtml(r.text);
      if (r.strike && !r.html) s = `<del>${s}</del>`;
      if (r.italic && !r.html) s = `<em>${s}</em>`;
      if (r.bold && !r.html) s = `<strong>${s}</strong>`;
      inner += s;
    }
    out += href ? `<a href="${escapeHtml(href)}">${inner}</a>` : inner;
  }
  return out;
}

/** Nested HTML lists from a flat sequence of (level, ordered) items. */
export class ListBuilder {
  private stack: { ordered: boolean; liOpen: boolean }[] = [];
  out = '';

  item(level: number, ordered: boolean, html: string): void {
    const depth = Math.max(0, Math.min(level, 8)) + 1;
    while (this.stack.length > depth) this.pop();
    if (this.stack.length === depth && this.stack[depth - 1].ordered !== ordered) this.pop();
    while (this.stack.length < depth) {
      const parent = this.stack[this.stack.length - 1];
      if (parent && !parent.liOpen) {
        this.out += '<li>';
        parent.liOpen = true;
      }
      this.out += ordered ? '<ol>' : '<ul>';
      this.stack.push({ ordered, liOpen: false });
    }
    const top = this.stack[depth - 1];
    if (top.liOpen) this.out += '</li>';
    this.out += `<li>${html}`;
    top.liOpen = true;
  }

  private pop(): void {
    const top = this.stack.pop()!;
    this.out += (top.liOpen ? '</li>' : '') + (top.ordered ? '</ol>' : '</ul>');
  }

  /** Closes every open list and returns the HTML written since the last flush. */
  flush(): string {
    while (this.stack.length) this.pop();
    const s = this.out;
    this.out = '';
    return s;
  }
}

/** A table (first row is the header) as HTML; cells are inline HTML. */
export function tableHtml(rows: string[][]): string {
  if (!rows.length) return '';
  const width = Math.max(...rows.map((r) => r.length));
  let s = '<table>';
  for (const r of rows) {
    s += '<tr>';
    for (let c = 0; c < width; c++) s += `<td>${r[c] ?? ''}</td>`;
    s += '</tr>';
  }
  return s + '</table>';
}

/** HTML → markdown; `keepDataImages` when the caller asked for pictures as data: URIs (else they are placeholders). */
export function toMarkdown(html: string, keepDataImages = false): string {
  return htmlToMarkdown(html, { removeBase64Images: !keepDataImages }).trim();
}
