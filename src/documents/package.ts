// Shared by the OOXML and ODF parsers: relationships, part paths, document properties.
import type { ParseOptions } from './types.ts';
import { attr, kids, local, parseXml, textOf } from './xml.ts';
import { openZip, type ZipArchive } from './zip.ts';
import { DocumentError } from '../errors.ts';

export interface Rel {
  type: string;
  target: string;
  external: boolean;
}

export function open(bytes: Uint8Array, what: string, opts: ParseOptions): ZipArchive {
  return openZip(bytes, what, { maxUnpackedBytes: opts.maxUnpackedBytes, signal: opts.signal });
}

/** Resolves a relationship target against the folder of `fromPart` (zip paths, no leading slash). */
export function resolvePart(fromPart: string, target: string): string {
  let t = target;
  try {
    t = decodeURIComponent(target);
  } catch {
    // keep as written
  }
  if (t.startsWith('/')) return t.slice(1);
  const out = fromPart.split('/').slice(0, -1);
  for (const seg of t.split('/')) {
    if (seg === '..') out.pop();
    else if (seg !== '.' && seg !== '') out.push(seg);
  }
  return out.join('/');
}

/** `word/document.xml` → `word/_rels/document.xml.rels`. */
export function relsPath(part: string): string {
  const i = part.lastIndexOf('/');
  return `${part.slice(0, i + 1)}_rels/${part.slice(i + 1)}.rels`;
}

/** Relationships of a part by id (empty when the part has none). */
export async function readRels(zip: ZipArchive, part: string): Promise<Map<string, Rel>> {
  const path = relsPath(part);
  const out = new Map<string, Rel>();
  if (!zip.has(path)) return out;
  const root = parseXml(await zip.readText(path), path);
  for (const r of kids(root, 'Relationship')) {
    const id = attr(r, 'Id');
    if (!id) continue;
    out.set(id, {
      type: attr(r, 'Type') ?? '',
      target: attr(r, 'Target') ?? '',
      external: attr(r, 'TargetMode') === 'External',
    });
  }
  return out;
}

/** The package's main part (officeDocument relationship of /_rels/.rels), or the fallback. */
export async function mainPart(zip: ZipArchive, fallback: string): Promise<string> {
  const rels = await readRels(zip, '');
  for (const r of rels.values()) if (r.type.endsWith('/officeDocument')) return resolvePart('', r.target);
  if (zip.has(fallback)) return fallback;
  throw new DocumentError('DOCUMENT_CORRUPT', `Package has no main part (${fallback})`);
}

export async function readXml(zip: ZipArchive, part: string) {
  return parseXml(await zip.readText(part), part);
}

const clean = (s: string): string | undefined => {
  const t = s.replace(/\s+/g, ' ').trim();
  return t || undefined;
};

/** docProps/core.xml (OOXML) → title, author, subject, keywords, description, created, modified… */
export async function coreProperties(zip: ZipArchive): Promise<Record<string, string | undefined>> {
  const meta: Record<string, string | undefined> = {};
  if (!zip.has('docProps/core.xml')) return meta;
  const root = await readXml(zip, 'docProps/core.xml');
  const map: Record<string, string> = {
    title: 'title',
    creator: 'author',
    subject: 'subject',
    keywords: 'keywords',
    description: 'description',
    created: 'created',
    modified: 'modified',
    lastModifiedBy: 'lastModifiedBy',
    language: 'language',
    category: 'category',
  };
  for (const el of kids(root)) {
    const key = map[local(el.name)];
    if (key) meta[key] = clean(textOf(el));
  }
  return meta;
}

/** meta.xml (ODF) → the same keys as coreProperties. */
export async function odfMetadata(zip: ZipArchive): Promise<Record<string, string | undefined>> {
  const meta: Record<string, string | undefined> = {};
  if (!zip.has('meta.xml')) return meta;
  const root = await readXml(zip, 'meta.xml');
  const office = kids(root, 'meta')[0];
  if (!office) return meta;
  const keywords: string[] = [];
  for (const el of kids(office)) {
    const v = clean(textOf(el));
    switch (el.name) {
      case 'dc:title':
        meta.title = v;
        break;
      case 'dc:creator':
        meta.author = v;
        break;
      case 'meta:initial-creator':
        meta.author ??= v;
        break;
      case 'dc:subject':
        meta.subject = v;
        break;
      case 'dc:description':
        meta.description = v;
        break;
      case 'dc:language':
        meta.language = v;
        break;
      case 'meta:creation-date':
        meta.created = v;
        break;
      case 'dc:date':
        meta.modified = v;
        break;
      case 'meta:keyword':
        if (v) keywords.push(v);
        break;
    }
  }
  if (keywords.length) meta.keywords = keywords.join(', ');
  return meta;
}

/** Drops undefined values (metadata records stay compact and comparable). */
export function compact(
  meta: Record<string, string | number | undefined>,
): Record<string, string | number | undefined> {
  const out: Record<string, string | number | undefined> = {};
  for (const [k, v] of Object.entries(meta)) if (v !== undefined && v !== '') out[k] = v;
  return out;
}

const IMAGE_TYPES: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  svg: 'image/svg+xml',
  bmp: 'image/bmp',
  tif: 'image/tiff',
  tiff: 'image/tiff',
};
/** Pictures larger than this stay as their path, and all embedded pictures of a document hold at most TOTAL bytes. */
const EMBED_MAX_IMAGE = 5 * 1024 * 1024;
const EMBED_MAX_TOTAL = 20 * 1024 * 1024;

/** What one document may embed in all (pass the same budget to every part's imageSources). */
export function imageBudget(): { left: number } {
  return { left: EMBED_MAX_TOTAL };
}

/**
 * The src of each picture a part's relationships name: with `embed`, a data: URI of the picture's bytes (formats a
 * browser shows; others, EMF/WMF, and pictures over the size bounds keep their path, with a warning), else nothing
 * (callers write the path as the package has it).
 */
export async function imageSources(
  zip: ZipArchive,
  part: string,
  rels: Map<string, Rel>,
  embed: boolean | undefined,
  warnings: string[],
  budget: { left: number } = imageBudget(),
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (!embed) return out;
  for (const [id, r] of rels) {
    if (!r.type.endsWith('/image') || r.external) continue;
    const path = resolvePart(part, r.target);
    const type = IMAGE_TYPES[path.split('.').pop()?.toLowerCase() ?? ''];
    if (!type || !zip.has(path)) continue;
    const src = embedPicture(await zip.readBytes(path), type, r.target, budget, warnings);
    if (src) out.set(id, src);
  }
  return out;
}

/**
 * A picture's bytes as a data: URI when they fit the embedding bounds (taken from `budget`), else null and a
 * warning naming the picture by `name` (the caller writes that name as its src).
 */
export function embedPicture(
  bytes: Uint8Array,
  type: string,
  name: string,
  budget: { left: number },
  warnings: string[],
): string | null {
  if (bytes.length > EMBED_MAX_IMAGE || bytes.length > budget.left) {
    warnings.push(`Picture ${name} (${Math.round(bytes.length / 1024)} KB) left as its path: over the embedding bound`);
    return null;
  }
  budget.left -= bytes.length;
  return `data:${type};base64,${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')}`;
}
