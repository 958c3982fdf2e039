// EPUB 2/3 → markdown: META-INF/container.xml → the OPF package → spine order; each XHTML chapter
// goes whole (no main-content filtering) through the web pipeline's HTML→markdown converter.
// Links between chapters stay relative as written (`chapter2.xhtml#s1`); images keep their
// relative paths. Chapters are separated by a blank line; numPages = chapters in the spine;
// `pages` (with ParseOptions.pages) = each chapter's markdown. Metadata: title, author (first
// creators), language, identifier, publisher, date, description, subject; the markdown opens with them too (the
// title as a heading, then author, language, publisher and date, then the description), before the chapters.
import { toMarkdown } from './html-builder.ts';
import { compact, open, readXml, resolvePart } from './package.ts';
import type { ParsedDocument, ParseOptions } from './types.ts';
import { attr, descendant, kid, kids, local, textOf } from './xml.ts';
import { decodeText } from './charset.ts';
import { throwIfAborted } from './zip.ts';
import { DocumentError } from '../errors.ts';

const CHAPTER_TYPES = new Set([
  'application/xhtml+xml',
  'text/html',
  'application/x-dtbook+xml',
  'text/x-oeb1-document',
]);

export async function parseEpub(bytes: Uint8Array, opts: ParseOptions = {}): Promise<ParsedDocument> {
  const zip = open(bytes, 'EPUB', opts);
  let opfPath: string | undefined;
  if (zip.has('META-INF/container.xml')) {
    const container = await readXml(zip, 'META-INF/container.xml');
    const rootfile = descendant(container, 'rootfile');
    opfPath = rootfile && attr(rootfile, 'full-path');
  }
  opfPath ??= zip.names().find((n) => n.toLowerCase().endsWith('.opf'));
  if (!opfPath || !zip.has(opfPath)) throw new DocumentError('DOCUMENT_CORRUPT', 'EPUB has no package document (OPF)');
  const opf = await readXml(zip, opfPath);

  const metadata: Record<string, string | undefined> = {};
  const metaEl = kid(opf, 'metadata');
  if (metaEl) {
    const creators: string[] = [];
    for (const el of kids(metaEl)) {
      const v = textOf(el).replace(/\s+/g, ' ').trim();
      if (!v) continue;
      const n = local(el.name);
      if (n === 'creator') creators.push(v);
      else if (['title', 'language', 'identifier', 'publisher', 'date', 'description', 'subject'].includes(n))
        metadata[n] ??= v;
      else if (n === 'meta' && attr(el, 'property') === 'dcterms:modified') metadata.modified = v;
    }
    if (creators.length) metadata.author = creators.join(', ');
  }

  const manifest = new Map<string, { href: string; type: string }>();
  for (const item of kids(kid(opf, 'manifest') ?? opf, 'item')) {
    manifest.set(attr(item, 'id') ?? '', { href: attr(item, 'href') ?? '', type: attr(item, 'media-type') ?? '' });
  }
  const spine = kids(kid(opf, 'spine') ?? opf, 'itemref');
  const chapters: string[] = [];
  const warnings: string[] = [];
  for (const ref of spine) {
    throwIfAborted(opts.signal);
    const item = manifest.get(attr(ref, 'idref') ?? '');
    if (!item || !CHAPTER_TYPES.has(item.type)) continue;
    const path = resolvePart(opfPath, item.href.split('#')[0]);
    if (!zip.has(path)) {
      warnings.push(`Chapter ${item.href} is missing from the EPUB`);
      continue;
    }
    const html = decodeText(await zip.readBytes(path), '', false, 'file').text;
    chapters.push(toMarkdown(html));
  }
  const doc: ParsedDocument = {
    kind: 'epub',
    markdown: [metadataBlock(metadata), ...chapters].filter(Boolean).join('\n\n'),
    metadata: compact(metadata),
    numPages: chapters.length,
    warnings,
  };
  if (opts.pages) doc.pages = chapters.map((markdown, i) => ({ pageNumber: i + 1, markdown }));
  return doc;
}

const BLOCK_FIELDS: [key: string, label: string][] = [
  ['author', 'Author'],
  ['language', 'Language'],
  ['publisher', 'Publisher'],
  ['date', 'Date'],
];

/** The book's metadata as the start of its markdown: what a reader sees on a catalogue card. */
function metadataBlock(metadata: Record<string, string | undefined>): string {
  const parts: string[] = [];
  if (metadata.title) parts.push(`# ${escapeInline(metadata.title)}`);
  const fields = BLOCK_FIELDS.filter(([k]) => metadata[k]).map(
    ([k, label]) => `- **${label}:** ${escapeInline(metadata[k]!)}`,
  );
  if (fields.length) parts.push(fields.join('\n'));
  if (metadata.description) parts.push(escapeInline(metadata.description));
  return parts.join('\n\n');
}

function escapeInline(text: string): string {
  return text.replace(/([\\`*_[\]<>])/g, '\\$1');
}
