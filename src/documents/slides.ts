// PPTX and ODP → one `## Slide N: <title>` section per slide, in presentation order (PPTX:
// presentation.xml sldIdLst through its relationships; ODP: draw:page order).
//
// Under the heading: the slide's other text in shape order (body placeholders and bulleted
// paragraphs as list items with their levels, other text as paragraphs), tables as GFM tables,
// pictures as `![alt](target)`, charts as their title and data (a column per series, a row per category), then
// the speaker notes as a blockquote that starts with a bold
// "Notes:" line. A slide without a title is `## Slide N`. numPages = slides; `pages` (with
// ParseOptions.pages) = each slide's markdown.
import type { Element } from 'domhandler';
import { ListBuilder, type Run, runsToHtml, tableHtml, toMarkdown } from './html-builder.ts';
import { inline, listItems, type OdfCtx, openOdf, tableRows } from './odt.ts';
import {
  compact,
  coreProperties,
  mainPart,
  odfMetadata,
  open,
  readRels,
  readXml,
  type Rel,
  resolvePart,
  imageBudget,
  imageSources,
} from './package.ts';
import type { ParsedDocument, ParseOptions } from './types.ts';
import { attr, descendant, descendants, escapeHtml, kid, kids, local, relAttr, textOf } from './xml.ts';
import { throwIfAborted } from './zip.ts';
import { DocumentError } from '../errors.ts';

export interface SlideContent {
  title: string;
  /** HTML of the body. */
  body: string;
  /** HTML of the notes (paragraphs). */
  notes: string;
}

export function renderSlides(
  kind: 'pptx' | 'ppt' | 'odp',
  slides: SlideContent[],
  metadata: ParsedDocument['metadata'],
  opts: ParseOptions,
  warnings: string[] = [],
): ParsedDocument {
  const sections = slides.map((s, i) => {
    const title = s.title.replace(/\s+/g, ' ').trim();
    let html = `<h2>Slide ${i + 1}${title ? `: ${escapeHtml(title)}` : ''}</h2>${s.body}`;
    if (s.notes.trim()) html += `<blockquote><p><strong>Notes:</strong></p>${s.notes}</blockquote>`;
    return toMarkdown(html, opts.embedImages);
  });
  const doc: ParsedDocument = {
    kind,
    markdown: sections.join('\n\n'),
    metadata,
    numPages: slides.length,
    warnings,
  };
  if (opts.pages) doc.pages = sections.map((markdown, i) => ({ pageNumber: i + 1, markdown }));
  return doc;
}

// ---------------------------------------------------------------------------------------------
// PPTX
// ---------------------------------------------------------------------------------------------

function paragraphRuns(p: Element, rels: Map<string, Rel>): Run[] {
  const runs: Run[] = [];
  for (const c of kids(p)) {
    const n = local(c.name);
    if (n === 'r' || n === 'fld') {
      const rPr = kid(c, 'rPr');
      const click = rPr && kid(rPr, 'hlinkClick');
      const rel = click ? rels.get(relAttr(click) ?? '') : undefined;
      runs.push({
        text: textOf(kid(c, 't') ?? c),
        bold: !!rPr && ['1', 'true'].includes(attr(rPr, 'b') ?? ''),
        italic: !!rPr && ['1', 'true'].includes(attr(rPr, 'i') ?? ''),
        href: rel?.target,
      });
    } else if (n === 'br') runs.push({ text: '<br>', html: true });
  }
  return runs;
}

/** Text body paragraphs → HTML; `bulleted`: body placeholder (bullets unless buNone). */
function txBodyHtml(txBody: Element, bulleted: boolean, rels: Map<string, Rel>): string {
  const list = new ListBuilder();
  let out = '';
  for (const p of kids(txBody, 'p')) {
    const html = runsToHtml(paragraphRuns(p, rels));
    if (!html.trim()) continue;
    const pPr = kid(p, 'pPr');
    const level = Number((pPr && attr(pPr, 'lvl')) ?? 0) || 0;
    const none = pPr && kid(pPr, 'buNone');
    const auto = pPr && kid(pPr, 'buAutoNum');
    const char = pPr && kid(pPr, 'buChar');
    if (!none && (bulleted || auto || char)) list.item(level, !!auto, html);
    else out += list.flush() + `<p>${html}</p>`;
  }
  return out + list.flush();
}

function pptxTable(tbl: Element, rels: Map<string, Rel>): string {
  const rows: string[][] = [];
  for (const tr of kids(tbl, 'tr')) {
    const row: string[] = [];
    for (const tc of kids(tr, 'tc')) {
      const covered =
        ['1', 'true'].includes(attr(tc, 'hMerge') ?? '') || ['1', 'true'].includes(attr(tc, 'vMerge') ?? '');
      const body = kid(tc, 'txBody');
      const paras = body
        ? kids(body, 'p')
            .map((p) => runsToHtml(paragraphRuns(p, rels)))
            .filter((s) => s.trim())
        : [];
      row.push(covered ? '' : paras.join('<br>'));
    }
    rows.push(row);
  }
  return tableHtml(rows);
}

/**
 * A chart part (DrawingML chart) → its title and its data as a table: a column per series (its name), a row per
 * category, the values as the chart caches them. Scatter charts' x values stand in for categories.
 */
function chartHtml(chart: Element): string {
  const plot = descendant(chart, 'plotArea');
  if (!plot) return '';
  const series = descendants(plot, 'ser').map((ser) => ({
    name: cachedValues(kid(ser, 'tx'))[0] ?? '',
    categories: cachedValues(kid(ser, 'cat') ?? kid(ser, 'xVal')),
    values: cachedValues(kid(ser, 'val') ?? kid(ser, 'yVal')),
  }));
  if (!series.length) return '';
  const categories = series.find((x) => x.categories.length)?.categories ?? [];
  const rowCount = Math.max(categories.length, ...series.map((x) => x.values.length));
  const rows: string[][] = [['', ...series.map((x, i) => escapeHtml(x.name || `Series ${i + 1}`))]];
  for (let r = 0; r < rowCount; r++)
    rows.push([escapeHtml(categories[r] ?? ''), ...series.map((x) => escapeHtml(x.values[r] ?? ''))]);
  const titleEl = kid(descendant(chart, 'chart') ?? chart, 'title');
  const title = titleEl
    ? descendants(titleEl, 't')
        .map((t) => textOf(t))
        .join('')
        .trim()
    : '';
  return `<p>${escapeHtml(title ? `Chart: ${title}` : 'Chart')}</p>${tableHtml(rows)}`;
}

/** The cached points of a chart reference (strRef/numRef/strLit/numLit), in index order. */
function cachedValues(ref: Element | undefined): string[] {
  if (!ref) return [];
  const out: string[] = [];
  for (const pt of descendants(ref, 'pt')) {
    const idx = Number(attr(pt, 'idx') ?? out.length);
    const v = kid(pt, 'v');
    if (v && Number.isInteger(idx) && idx >= 0 && idx < 100_000) out[idx] = textOf(v).trim();
  }
  // A series name written inline (<c:tx><c:v>Sales</c:v></c:tx>) has no points.
  if (!out.length) {
    const v = kid(ref, 'v');
    if (v) out.push(textOf(v).trim());
  }
  return Array.from(out, (x) => x ?? '');
}

function shapesHtml(
  tree: Element,
  rels: Map<string, Rel>,
  slide: { title: string },
  charts: Map<string, string>,
  images: Map<string, string>,
): string {
  let out = '';
  for (const el of kids(tree)) {
    const n = local(el.name);
    if (n === 'sp') {
      const ph = descendant(kid(el, 'nvSpPr') ?? el, 'ph');
      const type = ph ? (attr(ph, 'type') ?? 'obj') : null;
      const body = kid(el, 'txBody');
      if (!body) continue;
      if (type === 'title' || type === 'ctrTitle') {
        const t = kids(body, 'p')
          .map((p) =>
            paragraphRuns(p, rels)
              .filter((r) => !r.html)
              .map((r) => r.text)
              .join(''),
          )
          .join(' ')
          .trim();
        if (!slide.title) slide.title = t;
        else if (t) out += `<p>${escapeHtml(t)}</p>`;
        continue;
      }
      if (type === 'dt' || type === 'ftr' || type === 'sldNum' || type === 'hdr' || type === 'sldImg') continue;
      out += txBodyHtml(body, type === 'obj' || type === 'body', rels);
    } else if (n === 'grpSp') out += shapesHtml(el, rels, slide, charts, images);
    else if (n === 'graphicFrame') {
      const tbl = descendant(el, 'tbl');
      if (tbl) out += pptxTable(tbl, rels);
      const chart = descendant(el, 'chart');
      const chartRel = chart && relAttr(chart);
      if (chartRel) out += charts.get(chartRel) ?? '';
    } else if (n === 'pic') {
      const blip = descendant(el, 'blip');
      const rel = blip ? rels.get(relAttr(blip, 'embed') ?? relAttr(blip, 'link') ?? '') : undefined;
      if (rel) {
        const cNvPr = descendant(el, 'cNvPr');
        const alt = (cNvPr && (attr(cNvPr, 'descr') || attr(cNvPr, 'name'))) || '';
        const id = relAttr(blip!, 'embed') ?? '';
        out += `<p><img src="${escapeHtml(images.get(id) ?? rel.target)}" alt="${escapeHtml(alt)}"></p>`;
      }
    } else if (n === 'AlternateContent') {
      const choice = kid(el, 'Choice') ?? kid(el, 'Fallback');
      if (choice) out += shapesHtml(choice, rels, slide, charts, images);
    }
  }
  return out;
}

export async function parsePptx(bytes: Uint8Array, opts: ParseOptions = {}): Promise<ParsedDocument> {
  const zip = open(bytes, 'PPTX', opts);
  const pres = await mainPart(zip, 'ppt/presentation.xml');
  const presXml = await readXml(zip, pres);
  const presRels = await readRels(zip, pres);
  const slideParts: string[] = [];
  for (const id of kids(kid(presXml, 'sldIdLst') ?? presXml, 'sldId')) {
    const rel = presRels.get(relAttr(id) ?? '');
    if (rel) slideParts.push(resolvePart(pres, rel.target));
  }
  const slides: SlideContent[] = [];
  const warnings: string[] = [];
  const budget = imageBudget();
  for (const part of slideParts) {
    throwIfAborted(opts.signal);
    if (!zip.has(part)) throw new DocumentError('DOCUMENT_CORRUPT', `PPTX slide ${part} is missing`);
    const xml = await readXml(zip, part);
    const rels = await readRels(zip, part);
    const slide = { title: '' };
    const tree = descendant(xml, 'spTree');
    // Charts live in parts of their own: read before the (synchronous) walk of the shapes.
    const charts = new Map<string, string>();
    for (const [id, r] of rels) {
      if (!r.type.endsWith('/chart') || r.external) continue;
      const cp = resolvePart(part, r.target);
      if (zip.has(cp)) charts.set(id, chartHtml(await readXml(zip, cp)));
    }
    const images = await imageSources(zip, part, rels, opts.embedImages, warnings, budget);
    const body = tree ? shapesHtml(tree, rels, slide, charts, images) : '';
    let notes = '';
    for (const r of rels.values()) {
      if (!r.type.endsWith('/notesSlide')) continue;
      const np = resolvePart(part, r.target);
      if (!zip.has(np)) continue;
      const nx = await readXml(zip, np);
      const nrels = await readRels(zip, np);
      for (const sp of descendants(nx, 'sp')) {
        const ph = descendant(sp, 'ph');
        if (!ph || attr(ph, 'type') !== 'body') continue;
        const tb = kid(sp, 'txBody');
        if (tb) notes += txBodyHtml(tb, false, nrels);
      }
    }
    slides.push({ title: slide.title, body, notes });
  }
  return renderSlides('pptx', slides, compact(await coreProperties(zip)), opts, warnings);
}

// ---------------------------------------------------------------------------------------------
// ODP
// ---------------------------------------------------------------------------------------------

function odpFrames(container: Element, ctx: OdfCtx, slide: { title: string }): string {
  let out = '';
  for (const el of kids(container)) {
    const n = local(el.name);
    if (n === 'g') {
      out += odpFrames(el, ctx, slide);
      continue;
    }
    if (n !== 'frame' && n !== 'custom-shape' && n !== 'rect' && n !== 'ellipse') continue;
    const cls = attr(el, 'class');
    const box = kid(el, 'text-box') ?? el;
    if (cls === 'title') {
      const t = kids(box, 'p')
        .map((p) => textOf(p))
        .join(' ')
        .trim();
      if (!slide.title) slide.title = t;
      else if (t) out += `<p>${escapeHtml(t)}</p>`;
      continue;
    }
    if (cls === 'page-number' || cls === 'footer' || cls === 'date-time' || cls === 'header' || cls === 'page')
      continue;
    const table = kid(el, 'table');
    if (table) {
      out += tableHtml(tableRows(table, ctx));
      continue;
    }
    const image = kid(el, 'image');
    if (image && attr(image, 'href') && !kids(image, 'p').some((p) => textOf(p).trim())) {
      const alt = textOf(kid(el, 'title') ?? kid(el, 'desc') ?? el).trim() || attr(el, 'name') || '';
      out += `<p><img src="${escapeHtml(attr(image, 'href')!)}" alt="${escapeHtml(alt)}"></p>`;
      continue;
    }
    const list = new ListBuilder();
    const bulleted = cls === 'outline';
    for (const c of kids(box)) {
      const cn = local(c.name);
      if (cn === 'p' || cn === 'h') {
        const h = runsToHtml(inline(c, ctx, {}));
        if (!h.trim()) continue;
        if (bulleted) list.item(0, false, h);
        else out += list.flush() + `<p>${h}</p>`;
      } else if (cn === 'list') {
        out += list.flush();
        listItems(c, 0, attr(c, 'style-name'), ctx, list);
      }
    }
    out += list.flush();
  }
  return out;
}

export async function parseOdp(bytes: Uint8Array, opts: ParseOptions = {}): Promise<ParsedDocument> {
  const { zip, ctx, body: presentation } = await openOdf(bytes, 'ODP', 'presentation', opts);
  const slides: SlideContent[] = [];
  for (const page of kids(presentation, 'page')) {
    throwIfAborted(opts.signal);
    const slide = { title: '' };
    const body = odpFrames(page, ctx, slide);
    let notes = '';
    const notesEl = kid(page, 'notes');
    if (notesEl) {
      for (const frame of kids(notesEl, 'frame')) {
        if (attr(frame, 'class') !== 'notes') continue;
        for (const p of descendants(frame, 'p')) {
          const h = runsToHtml(inline(p, ctx, {}));
          if (h.trim()) notes += `<p>${h}</p>`;
        }
      }
    }
    slides.push({ title: slide.title, body, notes });
  }
  return renderSlides('odp', slides, compact(await odfMetadata(zip)), opts);
}
