// Block output of the HTML→Markdown converter: lines written under a stack of containers
// (blockquote `> `, list item marker then spaces) with at most one blank line between blocks and
// none at the start of a container; or, rendering a table cell, everything collected for one line.
// Design: docs/design/markdown.md.
import { escapeLineStart } from './text.ts';

export class BlockWriter {
  /** Rendering one table cell: everything ends up on one line, blocks joined by `<br>`. */
  protected readonly cell: boolean;

  protected out: string[] = [];
  protected cellParts: string[] = [];

  // Block containers: index 0 is the document.
  protected depth = 0;
  private ctxPrefix: string[] = [''];
  private ctxCum: string[] = [''];
  private ctxBlank: string[] = [''];
  private ctxMarker: string[] = [''];
  private ctxFresh: boolean[] = [true];
  protected ctxLi: boolean[] = [false];
  protected ctxBlankAt: number[] = [0];
  private pendingMarkers = 0;
  /** List items open around the current position. */
  protected items = 0;
  /** A blank line is due before the next line, at container depth sepDepth. */
  protected sep = false;
  protected sepDepth = 0;
  protected blankCount = 0;

  constructor(cell: boolean) {
    this.cell = cell;
  }

  protected emitParagraph(text: string): void {
    if (text.indexOf('\n') < 0) {
      const t = text.trim();
      if (t === '' || (t.length < 8 && INVISIBLE.test(t))) return;
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

  protected emitHeading(text: string, level: number): void {
    let t = (text.indexOf('\n') >= 0 ? text.replace(/ *\n */g, ' ') : text).trim();
    if (t === '' || (t.length < 8 && INVISIBLE.test(t))) return;
    if (this.cell) {
      this.cellParts.push(t);
      return;
    }
    // A trailing run of `#` after a space would be read as a closing sequence.
    if (t.charCodeAt(t.length - 1) === 35) t = t.replace(/(^|\s)(#+)$/, '$1\\$2');
    this.requestBlank();
    this.writeLine('#'.repeat(level) + ' ' + t);
    this.requestBlank();
  }

  protected emitCodeBlock(lines: string[], fence: string, language: string): void {
    if (this.cell) {
      for (const l of lines) this.cellParts.push(l.trim());
      return;
    }
    this.requestBlank();
    this.writeLine(fence + language);
    for (const l of lines) this.writeLine(l);
    this.writeLine(fence);
    this.requestBlank();
  }

  protected requestBlank(): void {
    if (this.sep || this.cell || this.ctxFresh[this.depth]) return;
    this.sep = true;
    this.sepDepth = this.depth;
  }

  protected writeLine(text: string): void {
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

  protected pushCtx(prefix: string, marker: string, li: boolean): void {
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

  protected popCtx(): void {
    const d = this.depth--;
    if (this.ctxMarker[d] !== '') {
      this.pendingMarkers--;
      this.ctxMarker[d] = '';
    }
    if (this.ctxLi[d]) this.items--;
    if (this.sep && this.sepDepth > this.depth) this.sep = false;
  }
}

/** Text of zero-width characters only (a heading's anchor spacer, a layout's filler): nothing a reader sees. */
const INVISIBLE = /^[\s\u200b-\u200d\u2060\ufeff]+$/;
