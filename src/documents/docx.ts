// DOCX (WordprocessingML) → markdown, through simple HTML and the web pipeline's converter.
//
// - Headings: paragraph styles named "heading 1".."heading 6" or "Title" (h1), or with an outline
//   level, following basedOn chains; an outline level in the paragraph itself counts too.
// - Lists: numbering definitions (numbering.xml): numFmt "bullet" (or none) → `-`, anything else →
//   ordered; nesting from ilvl.
// - Tables → GFM tables, first row as header. Merged cells: the content stays in the first
//   (top-left) cell of the merge; the other cells it covers are blank (gridSpan and vMerge).
//   Paragraphs inside a cell are joined with `<br>`.
// - Hyperlinks → [text](target of the relationship, or #anchor); bold/italic/struck-through runs; images →
//   `![alt](media/image1.png)` (the relationship target as written; alt from the drawing's descr,
//   else its name), or data: URIs with ParseOptions.embedImages; footnotes and endnotes → `[^n]`
//   references and definitions at the end; text boxes (w:txbxContent) → their paragraphs after the paragraph
//   they are anchored in, as mammoth reads them (a box given twice, DrawingML and its VML fallback, once).
// - Tracked changes read as accepted (w:ins kept, w:del left out); reviewers' comments are not the document's
//   text and are left out, as mammoth does by default.
// - Metadata from docProps/core.xml.
import type { Element } from 'domhandler';
import { ListBuilder, type Run, runsToHtml, tableHtml, toMarkdown } from './html-builder.ts';
import {
  compact,
  coreProperties,
  mainPart,
  open,
  readRels,
  readXml,
  type Rel,
  resolvePart,
  imageSources,
} from './package.ts';
import type { ParsedDocument, ParseOptions } from './types.ts';
import { attr, descendant, isElement, kid, kids, local, relAttr, textOf } from './xml.ts';
import { throwIfAborted } from './zip.ts';
import { DocumentError } from '../errors.ts';

interface Ctx {
  rels: Map<string, Rel>;
  /** Relationship id → data: URI of the picture, when the caller embeds pictures. */
  imageSrc: Map<string, string>;
  headingOf: (styleId: string) => number;
  listFormat: (numId: string, ilvl: number) => 'bullet' | 'ordered' | null;
  notes: Map<string, { n: number; kind: 'footnote' | 'endnote' }>;
  noteText: Map<string, string>;
  noteOrder: string[];
}

const OFF = new Set(['0', 'false', 'off', 'none']);
const on = (el: Element | undefined): boolean => !!el && !OFF.has(attr(el, 'val') ?? '1');

const FN = (n: number): string => `GLEANERFOOTNOTE${n}END`;

export async function parseDocx(bytes: Uint8Array, opts: ParseOptions = {}): Promise<ParsedDocument> {
  const zip = open(bytes, 'DOCX', opts);
  const main = await mainPart(zip, 'word/document.xml');
  const rels = await readRels(zip, main);
  const partOf = (type: string): string | undefined => {
    for (const r of rels.values()) if (r.type.endsWith(`/${type}`) && !r.external) return resolvePart(main, r.target);
    return undefined;
  };

  // Styles: heading level per paragraph style id.
  const styleInfo = new Map<string, { level: number; basedOn?: string }>();
  const stylesPart = partOf('styles');
  if (stylesPart && zip.has(stylesPart)) {
    const root = await readXml(zip, stylesPart);
    for (const st of kids(root, 'style')) {
      const id = attr(st, 'styleId');
      if (!id) continue;
      const name = (attr(kid(st, 'name') ?? st, 'val') ?? '').toLowerCase();
      let level = 0;
      const m = /^heading\s*([1-9])$/.exec(name);
      if (m) level = Number(m[1]);
      else if (name === 'title') level = 1;
      else {
        const ol = kid(kid(st, 'pPr') ?? st, 'outlineLvl');
        const v = ol ? Number(attr(ol, 'val')) : NaN;
        if (v >= 0 && v < 9) level = v + 1;
      }
      styleInfo.set(id, { level, basedOn: attr(kid(st, 'basedOn') ?? st, 'val') });
    }
  }
  const headingOf = (styleId: string): number => {
    let id: string | undefined = styleId;
    for (let i = 0; id && i < 10; i++) {
      const s = styleInfo.get(id);
      if (!s) break;
      if (s.level) return Math.min(6, s.level);
      id = s.basedOn;
    }
    const m = /^(?:heading|berschrift|titre)\s*([1-9])$/i.exec(styleId.replace(/\W/g, ''));
    if (m) return Math.min(6, Number(m[1]));
    return styleId.toLowerCase() === 'title' ? 1 : 0;
  };

  // Numbering: numId → abstract levels' formats.
  const abstractFormats = new Map<string, Map<number, string>>();
  const numToAbstract = new Map<string, string>();
  const numberingPart = partOf('numbering');
  if (numberingPart && zip.has(numberingPart)) {
    const root = await readXml(zip, numberingPart);
    for (const a of kids(root, 'abstractNum')) {
      const levels = new Map<number, string>();
      for (const l of kids(a, 'lvl'))
        levels.set(Number(attr(l, 'ilvl') ?? 0), attr(kid(l, 'numFmt') ?? l, 'val') ?? 'bullet');
      abstractFormats.set(attr(a, 'abstractNumId') ?? '', levels);
    }
    for (const n of kids(root, 'num'))
      numToAbstract.set(attr(n, 'numId') ?? '', attr(kid(n, 'abstractNumId') ?? n, 'val') ?? '');
  }
  const listFormat = (numId: string, ilvl: number): 'bullet' | 'ordered' | null => {
    if (numId === '0') return null; // numId 0 removes numbering
    const fmt = abstractFormats.get(numToAbstract.get(numId) ?? '')?.get(ilvl) ?? 'bullet';
    return fmt === 'bullet' || fmt === 'none' ? 'bullet' : 'ordered';
  };

  const warnings: string[] = [];
  const imageSrc = await imageSources(zip, main, rels, opts.embedImages, warnings);
  const ctx: Ctx = { rels, imageSrc, headingOf, listFormat, notes: new Map(), noteText: new Map(), noteOrder: [] };
  const doc = await readXml(zip, main);
  const body = descendant(doc, 'body');
  if (!body) throw new DocumentError('DOCUMENT_CORRUPT', 'DOCX has no document body');

  const html = blocksToHtml(kids(body), ctx, opts.signal);

  // Notes: their own parts, rendered as plain inline text.
  for (const kind of ['footnotes', 'endnotes'] as const) {
    const part = partOf(kind);
    if (!part || !zip.has(part) || !ctx.noteOrder.length) continue;
    const root = await readXml(zip, part);
    const noteRels = await readRels(zip, part);
    for (const note of kids(root, kind.slice(0, -1))) {
      const id = `${kind.slice(0, -1)}:${attr(note, 'id')}`;
      if (!ctx.notes.has(id)) continue;
      // A note's pictures are its part's own (its relationship ids are not the body's): their paths.
      const noteCtx = { ...ctx, rels: noteRels, imageSrc: new Map<string, string>() };
      const paras = kids(note, 'p').map((p) => toMarkdown(runsToHtml(paragraphRuns(p, noteCtx))));
      ctx.noteText.set(id, paras.filter(Boolean).join(' '));
    }
  }

  let markdown = toMarkdown(html, opts.embedImages);
  if (ctx.noteOrder.length) {
    for (const id of ctx.noteOrder) markdown = markdown.replace(FN(ctx.notes.get(id)!.n), `[^${ctx.notes.get(id)!.n}]`);
    markdown +=
      '\n\n' +
      ctx.noteOrder.map((id) => `[^${ctx.notes.get(id)!.n}]: ${ctx.noteText.get(id) ?? ''}`.trimEnd()).join('\n');
  }
  const metadata = compact(await coreProperties(zip));
  return { kind: 'docx', markdown, metadata, numPages: 1, warnings };
}

function blocksToHtml(blocks: Element[], ctx: Ctx, signal: AbortSignal | undefined): string {
  const list = new ListBuilder();
  let out = '';
  let count = 0;
  const paragraph = (el: Element): void => {
    const pPr = kid(el, 'pPr');
    const inline = runsToHtml(paragraphRuns(el, ctx));
    const numPr = pPr && kid(pPr, 'numPr');
    const styleId = pPr ? attr(kid(pPr, 'pStyle') ?? pPr, 'val') : undefined;
    let level = styleId ? ctx.headingOf(styleId) : 0;
    const ol = pPr && kid(pPr, 'outlineLvl');
    if (!level && ol) {
      const v = Number(attr(ol, 'val'));
      if (v >= 0 && v < 6) level = v + 1;
    }
    if (numPr && !level) {
      const numId = attr(kid(numPr, 'numId') ?? numPr, 'val') ?? '0';
      const ilvl = Number(attr(kid(numPr, 'ilvl') ?? numPr, 'val') ?? 0) || 0;
      const fmt = ctx.listFormat(numId, ilvl);
      if (fmt && inline.trim()) {
        list.item(ilvl, fmt === 'ordered', inline);
        return;
      }
    }
    if (!inline.trim()) return; // empty paragraphs do not end a list (Word puts them between items)
    out += list.flush();
    out += level ? `<h${level}>${inline}</h${level}>` : `<p>${inline}</p>`;
  };
  const walk = (els: Element[]): void => {
    for (const el of els) {
      if (++count % 500 === 0) throwIfAborted(signal);
      const name = local(el.name);
      if (name === 'p') {
        paragraph(el);
        // Text boxes anchored in the paragraph: their paragraphs after it, as mammoth reads them.
        const boxes = textBoxes(el);
        if (boxes.length) {
          out += list.flush();
          for (const box of boxes) walk(kids(box));
        }
      } else if (name === 'tbl') {
        out += list.flush();
        out += tableHtml(tableRows(el, ctx));
      } else if (name === 'sdt') {
        walk(kids(kid(el, 'sdtContent') ?? el));
      } else if (name === 'customXml' || name === 'ins' || name === 'smartTag') {
        walk(kids(el));
      }
    }
  };
  walk(blocks);
  return out + list.flush();
}

/**
 * The text boxes in a paragraph (w:txbxContent, in a DrawingML shape or a VML one), outermost only; of a shape
 * given twice (mc:AlternateContent's Choice and its VML Fallback), the Choice's.
 */
function textBoxes(p: Element): Element[] {
  const out: Element[] = [];
  const stack: Element[] = [p];
  while (stack.length) {
    const el = stack.pop()!;
    for (let i = el.children.length - 1; i >= 0; i--) {
      const k = el.children[i];
      if (k.type !== 'tag') continue;
      const n = local((k as Element).name);
      if (n === 'txbxContent') out.push(k as Element);
      else if (n !== 'Fallback') stack.push(k as Element);
    }
  }
  return out;
}

function tableRows(tbl: Element, ctx: Ctx): string[][] {
  const rows: string[][] = [];
  const trs: Element[] = [];
  for (const c of kids(tbl)) {
    if (local(c.name) === 'tr') trs.push(c);
    else if (local(c.name) === 'sdt') trs.push(...kids(kid(c, 'sdtContent') ?? c, 'tr'));
  }
  for (const tr of trs) {
    const row: string[] = [];
    const cells: Element[] = [];
    for (const c of kids(tr)) {
      if (local(c.name) === 'tc') cells.push(c);
      else if (local(c.name) === 'sdt') cells.push(...kids(kid(c, 'sdtContent') ?? c, 'tc'));
    }
    for (const tc of cells) {
      const tcPr = kid(tc, 'tcPr');
      const span = Math.max(1, Math.min(64, Number(attr(kid(tcPr ?? tc, 'gridSpan') ?? tc, 'val') ?? 1) || 1));
      const vMerge = tcPr && kid(tcPr, 'vMerge');
      const continued = vMerge && (attr(vMerge, 'val') ?? 'continue') === 'continue';
      row.push(continued ? '' : cellHtml(tc, ctx));
      for (let i = 1; i < span; i++) row.push('');
    }
    rows.push(row);
  }
  return rows;
}

/** A cell's paragraphs (also those of nested tables) as inline HTML joined by `<br>`. */
function cellHtml(tc: Element, ctx: Ctx): string {
  const parts: string[] = [];
  const stack: Element[] = [tc];
  // Depth-first over paragraphs in order.
  const visit = (el: Element): void => {
    for (const c of kids(el)) {
      const n = local(c.name);
      if (n === 'p') {
        const h = runsToHtml(paragraphRuns(c, ctx));
        if (h.trim()) parts.push(h);
      } else if (n !== 'tcPr' && n !== 'tblPr' && n !== 'trPr') visit(c);
    }
  };
  visit(stack[0]);
  return parts.join('<br>');
}

function paragraphRuns(p: Element, ctx: Ctx, href?: string): Run[] {
  const runs: Run[] = [];
  for (const c of kids(p)) {
    const name = local(c.name);
    if (name === 'r') runs.push(...runRuns(c, ctx, href));
    else if (name === 'hyperlink') {
      const id = relAttr(c);
      const rel = id ? ctx.rels.get(id) : undefined;
      const anchor = attr(c, 'anchor');
      const target = rel ? rel.target + (anchor ? `#${anchor}` : '') : anchor ? `#${anchor}` : undefined;
      runs.push(...paragraphRuns(c, ctx, target ?? href));
    } else if (
      name === 'ins' ||
      name === 'smartTag' ||
      name === 'fldSimple' ||
      name === 'customXml' ||
      name === 'dir' ||
      name === 'bdo'
    ) {
      runs.push(...paragraphRuns(c, ctx, href));
    } else if (name === 'sdt') {
      runs.push(...paragraphRuns(kid(c, 'sdtContent') ?? c, ctx, href));
    }
  }
  return runs;
}

function runRuns(r: Element, ctx: Ctx, href: string | undefined): Run[] {
  const rPr = kid(r, 'rPr');
  const bold = on(rPr && kid(rPr, 'b'));
  const italic = on(rPr && kid(rPr, 'i'));
  const strike = on(rPr && (kid(rPr, 'strike') ?? kid(rPr, 'dstrike')));
  const runs: Run[] = [];
  for (const c of r.children) {
    if (!isElement(c)) continue;
    switch (local(c.name)) {
      case 't':
        runs.push({ text: textOf(c), bold, italic, strike, href });
        break;
      case 'tab':
        runs.push({ text: ' ', href });
        break;
      case 'br':
      case 'cr':
        if (attr(c, 'type') !== 'page' && attr(c, 'type') !== 'column') runs.push({ text: '<br>', html: true, href });
        break;
      case 'noBreakHyphen':
        runs.push({ text: '-', bold, italic, strike, href });
        break;
      case 'drawing':
      case 'pict':
      case 'object': {
        const img = image(c, ctx);
        if (img) runs.push({ text: img, html: true, href });
        break;
      }
      case 'footnoteReference':
      case 'endnoteReference': {
        const kind = local(c.name) === 'footnoteReference' ? 'footnote' : 'endnote';
        const id = `${kind}:${attr(c, 'id')}`;
        if (!ctx.notes.has(id)) {
          ctx.notes.set(id, { n: ctx.notes.size + 1, kind });
          ctx.noteOrder.push(id);
        }
        runs.push({ text: FN(ctx.notes.get(id)!.n), href });
        break;
      }
    }
  }
  return runs;
}

function image(el: Element, ctx: Ctx): string | undefined {
  const blip = descendant(el, 'blip') ?? descendant(el, 'imagedata');
  if (!blip) return undefined;
  const id = relAttr(blip, 'embed') ?? relAttr(blip, 'link') ?? relAttr(blip, 'id');
  const rel = id ? ctx.rels.get(id) : undefined;
  if (!rel) return undefined;
  const docPr = descendant(el, 'docPr');
  const alt =
    (docPr && (attr(docPr, 'descr') || attr(docPr, 'title') || attr(docPr, 'name'))) || attr(blip, 'title') || '';
  const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
  return `<img src="${esc(ctx.imageSrc.get(id!) ?? rel.target)}" alt="${esc(alt)}">`;
}
