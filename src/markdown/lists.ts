// Lists in the HTML→Markdown converter: item markers and numbering (start, reversed, value), tight
// or loose items, and telling apart two adjacent lists that Markdown would otherwise merge.
import type { Element } from 'domhandler';
import { InlineWriter } from './inline.ts';

interface ListState {
  ordered: boolean;
  n: number;
  step: number;
  /** An item had blank lines inside: items are then separated by blank lines too. */
  loose: boolean;
  /** Follows a list of the same kind directly: `*` / `1)` markers keep the two lists apart. */
  alt: boolean;
}

const SPACES: string[] = [];
function spaces(n: number): string {
  return (SPACES[n] ??= ' '.repeat(n));
}

function countItems(list: Element): number {
  let n = 0;
  for (const c of list.children) if ((c.type as string) === 'tag' && (c as Element).name === 'li') n++;
  return n;
}

export class ListWriter extends InlineWriter {
  private lists: ListState[] = [];
  /** Where the last list ended (output length, depth, kind), to tell adjacent lists apart. */
  private lastListOut = -1;
  private lastListDepth = 0;
  private lastListOrdered = false;
  private lastListAlt = false;

  protected enterList(el: Element): void {
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
    if (
      this.sep &&
      this.sepDepth === d &&
      this.ctxLi[d] &&
      this.blankCount === this.ctxBlankAt[d] &&
      (!ordered || n === 1)
    ) {
      this.sep = false;
    }
    // Markdown would merge two lists of one kind separated only by a blank line.
    const alt =
      this.lastListOut === this.out.length &&
      this.lastListDepth === d &&
      this.lastListOrdered === ordered &&
      !this.lastListAlt;
    this.lists.push({ ordered, n, step, loose: false, alt });
  }

  protected exitList(): void {
    this.flush();
    const list = this.lists.pop()!;
    this.lastListOut = this.out.length;
    this.lastListDepth = this.depth;
    this.lastListOrdered = list.ordered;
    this.lastListAlt = list.alt;
    this.requestBlank();
  }

  /** Opens an item; 1 when it is inside a list (to pass back to exitItem), else 0. */
  protected enterItem(el: Element): number {
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
    return list !== undefined ? 1 : 0;
  }

  protected exitItem(hasList: number): void {
    this.flush();
    const loose = this.blankCount !== this.ctxBlankAt[this.depth];
    this.popCtx();
    if (hasList === 1) {
      const list = this.lists[this.lists.length - 1];
      if (loose) list.loose = true;
      list.n += list.step;
    }
  }
}
