// Legacy PowerPoint presentations (.ppt: PowerPoint 97–2003 binary) → the same markdown as PPTX (slides.ts):
// one `## Slide N: <title>` section per slide in presentation order, bulleted paragraphs as list items nested by
// their indent level (the StyleTextPropAtom's paragraph runs; where a run is silent, a body placeholder's
// paragraphs are bulleted, as its master says), other text as paragraphs, speaker notes as a "Notes:" blockquote;
// the document's title and author as metadata.
//
// The format ([MS-PPT]): a compound file whose "PowerPoint Document" stream is a tree of records. The slides'
// order is the SlideListWithText of the Document container; each names its Slide container through the persist
// directory (Current User → the last UserEditAtom → PersistDirectoryAtoms, newest edit first). A shape's text is
// in its OfficeArtClientTextbox (a TextHeaderAtom giving the text's type, then TextCharsAtom UTF-16 or
// TextBytesAtom 8-bit text), or, for placeholders PowerPoint itself wrote, in the SlideListWithText under the
// slide's SlidePersistAtom, which the shape points at with an OutlineTextRefAtom. Notes: the slide's SlideAtom
// names its Notes container. Read with SheetJS's compound-file reader; records are walked without recursion.
//
// Pictures ([MS-ODRAW]), in the slide's body in shape order as `![alt](src)`, as PPTX's: a shape whose property
// table (OfficeArtFOPT, or the tertiary one) has a `pib` names a BLIP by its 1-based place in the BLIP store (the
// Document's PPDrawingGroup → OfficeArtDggContainer → OfficeArtBStoreContainer); the store's entry (OfficeArtFBSE)
// holds the BLIP record or gives its offset in the "Pictures" stream. The alt text is the shape's description
// (wzDescription), else its name (wzName). With ParseOptions.embedImages a PNG or JPEG comes as a data: URI (within
// the bounds PPTX's pictures have); other formats (EMF, WMF, PICT, DIB, TIFF), pictures over the bounds, and every
// picture without embedImages are `image<N>.<ext>`, N the picture's place in the store. A picture that cannot be
// found is left out.
import { CFB } from '@e965/xlsx';
import { ListBuilder } from './html-builder.ts';
import { readSummaryInformation } from './ole-properties.ts';
import { embedPicture, imageBudget } from './package.ts';
import { type SlideContent, renderSlides } from './slides.ts';
import type { ParsedDocument, ParseOptions } from './types.ts';
import { escapeHtml } from './xml.ts';
import { DocumentError } from '../errors.ts';

const RT = {
  Document: 0x03e8,
  Slide: 0x03ee,
  SlideAtom: 0x03ef,
  Notes: 0x03f0,
  SlidePersistAtom: 0x03f3,
  MainMaster: 0x03f8,
  SlideListWithText: 0x0ff0,
  UserEditAtom: 0x0ff5,
  CurrentUserAtom: 0x0ff6,
  PersistDirectoryAtom: 0x1772,
  TextHeaderAtom: 0x0f9f,
  TextCharsAtom: 0x0fa0,
  TextBytesAtom: 0x0fa8,
  StyleTextPropAtom: 0x0fa1,
  OutlineTextRefAtom: 0x0f9e,
  ShapeContainer: 0xf004,
  PlaceholderAtom: 0x0bc3,
  PPDrawingGroup: 0x040b,
  DggContainer: 0xf000,
  BStoreContainer: 0xf001,
  FBSE: 0xf007,
  FOPT: 0xf00b,
  TertiaryFOPT: 0xf122,
} as const;

/** OfficeArtFOPTE property ids ([MS-ODRAW] 2.3): the picture's BLIP, the shape's name and description. */
const PID_PIB = 0x0104;
const PID_NAME = 0x0380;
const PID_DESCRIPTION = 0x0381;

/** BLIP record types ([MS-ODRAW] 2.2.23–2.2.30): file extension, MIME type where a browser shows it, metafile. */
const BLIP_FORMATS: Partial<globalThis.Record<number, { ext: string; mime?: string; metafile?: boolean }>> = {
  0xf01a: { ext: 'emf', metafile: true },
  0xf01b: { ext: 'wmf', metafile: true },
  0xf01c: { ext: 'pict', metafile: true },
  0xf01d: { ext: 'jpg', mime: 'image/jpeg' },
  0xf02a: { ext: 'jpg', mime: 'image/jpeg' },
  0xf01e: { ext: 'png', mime: 'image/png' },
  0xf01f: { ext: 'bmp' },
  0xf029: { ext: 'tif' },
};
/** MSOBLIPTYPE ([MS-ODRAW] 2.4.1) → extension: what a store entry says when its BLIP cannot be read. */
const BLIP_TYPE_EXT: Partial<globalThis.Record<number, string>> = {
  2: 'emf',
  3: 'wmf',
  4: 'pict',
  5: 'jpg',
  6: 'png',
  7: 'bmp',
  0x11: 'tif',
  0x12: 'jpg',
};

/** A BLIP of the store: its extension, and its image bytes where they are a PNG or JPEG file. */
interface Blip {
  ext: string;
  mime?: string;
  data?: Buffer;
}

/** TextHeaderAtom text types ([MS-PPT] 2.13.33 TextTypeEnum). */
const TITLE_TYPES = new Set([0, 6]);
const BODY_TYPES = new Set([1, 5, 7, 8]);
const NOTES_TYPE = 2;
/** The longest first line of an untyped slide read as its title. */
const UNTYPED_TITLE = 120;

interface Record {
  type: number;
  instance: number;
  /** Where the record's body starts and ends in the stream. */
  start: number;
  end: number;
  container: boolean;
}

interface TextUnit {
  type: number;
  text: string;
  /** The paragraph runs of its StyleTextPropAtom, when it has one: what each paragraph's bullet and level are. */
  runs?: ParagraphRun[];
  /** A picture shape (its text empty): the BLIP's 1-based place in the store, and its alt text. */
  picture?: { pib: number; alt: string };
}

interface ParagraphRun {
  /** The character offset where the run ends (its paragraphs start before it). */
  end: number;
  /** Set when the run says (masks.hasBullet); else the master's style decides. */
  bullet: boolean | undefined;
  level: number;
}

function recordAt(s: Buffer, off: number): Record | null {
  if (off < 0 || off + 8 > s.length) return null;
  const verInst = s.readUInt16LE(off);
  const len = s.readUInt32LE(off + 4);
  const end = off + 8 + len;
  if (end > s.length) return null;
  return {
    type: s.readUInt16LE(off + 2),
    instance: verInst >> 4,
    start: off + 8,
    end,
    container: (verInst & 0xf) === 0xf,
  };
}

/** The records inside a container, depth first, in stream order (an explicit stack: no recursion). */
function* descendants(s: Buffer, parent: Record): Generator<Record> {
  const stack: number[][] = [[parent.start, parent.end]];
  while (stack.length) {
    const top = stack[stack.length - 1];
    const r = top[0] < top[1] ? recordAt(s, top[0]) : null;
    if (!r || r.end > top[1]) {
      stack.pop();
      continue;
    }
    top[0] = r.end;
    yield r;
    if (r.container) stack.push([r.start, r.end]);
  }
}

function children(s: Buffer, parent: Record): Record[] {
  const out: Record[] = [];
  for (let off = parent.start; off < parent.end;) {
    const r = recordAt(s, off);
    if (!r || r.end > parent.end) break;
    out.push(r);
    off = r.end;
  }
  return out;
}

function atomText(s: Buffer, r: Record): string {
  const body = s.subarray(r.start, r.end);
  return r.type === RT.TextCharsAtom ? body.toString('utf16le') : body.toString('latin1');
}

/** persistId → stream offset, from the newest edit back (newer entries win). */
function persistDirectory(s: Buffer, currentUser: Buffer | undefined): Map<number, number> {
  const dir = new Map<number, number>();
  let edit = currentUser && currentUser.length >= 20 ? currentUser.readUInt32LE(16) : -1;
  const seen = new Set<number>();
  while (edit >= 0 && !seen.has(edit)) {
    seen.add(edit);
    const r = recordAt(s, edit);
    if (!r || r.type !== RT.UserEditAtom || r.end - r.start < 16) break;
    const previous = s.readUInt32LE(r.start + 8);
    const pd = recordAt(s, s.readUInt32LE(r.start + 12));
    if (pd && pd.type === RT.PersistDirectoryAtom) {
      for (let off = pd.start; off + 4 <= pd.end;) {
        const word = s.readUInt32LE(off);
        const first = word & 0xfffff;
        const count = word >>> 20;
        off += 4;
        for (let k = 0; k < count && off + 4 <= pd.end; k++, off += 4)
          if (!dir.has(first + k)) dir.set(first + k, s.readUInt32LE(off));
      }
    }
    edit = previous === 0 ? -1 : previous;
  }
  return dir;
}

/** The text units of a SlideListWithText, by the persist id of the SlidePersistAtom they follow. */
function listTexts(
  s: Buffer,
  slwt: Record | undefined,
): { order: number[]; texts: Map<number, TextUnit[]>; bySlideId: Map<number, number> } {
  const order: number[] = [];
  const texts = new Map<number, TextUnit[]>();
  const bySlideId = new Map<number, number>();
  if (!slwt) return { order, texts, bySlideId };
  let current: TextUnit[] | null = null;
  for (const r of children(s, slwt)) {
    if (r.type === RT.SlidePersistAtom && r.end - r.start >= 4) {
      const id = s.readUInt32LE(r.start);
      order.push(id);
      if (r.end - r.start >= 16) bySlideId.set(s.readUInt32LE(r.start + 12), id);
      texts.set(id, (current = []));
    } else if (r.type === RT.TextHeaderAtom && current) current.push({ type: s.readUInt32LE(r.start), text: '' });
    else if ((r.type === RT.TextCharsAtom || r.type === RT.TextBytesAtom) && current?.length)
      current[current.length - 1].text += atomText(s, r);
    else if (r.type === RT.StyleTextPropAtom && current?.length) {
      const unit = current[current.length - 1];
      unit.runs = paragraphRuns(s, r, unit.text.length);
    }
  }
  return { order, texts, bySlideId };
}

/** Placeholder types ([MS-PPT] PlaceholderEnum) → the text type they stand for, as PowerPoint's own headers say. */
const PLACEHOLDER_TEXT: Partial<globalThis.Record<number, number>> = {
  0x0c: NOTES_TYPE, // NotesBody
  0x0d: 0, // Title
  0x0e: 1, // Body
  0x0f: 6, // CenterTitle
  0x10: 5, // SubTitle
  0x11: 0, // VerticalTitle
  0x12: 1, // VerticalBody
};

/**
 * A slide's (or notes page's) text units in shape order: its own text boxes, and the list's text it points at. A
 * shape that is a placeholder gives its text the placeholder's type (LibreOffice heads all text "other").
 */
function containerTexts(s: Buffer, container: Record, fromList: TextUnit[] = []): TextUnit[] {
  const units: TextUnit[] = [];
  let shape: { end: number; placeholder: number | undefined; units: TextUnit[]; props: ShapeProps } | null = null;
  const close = () => {
    if (!shape) return;
    const { pib, name, description } = shape.props;
    if (pib) units.push({ type: -1, text: '', picture: { pib, alt: description || name || '' } });
    const type = shape.placeholder === undefined ? undefined : PLACEHOLDER_TEXT[shape.placeholder];
    for (const u of shape.units) units.push(type === undefined || fromList.includes(u) ? u : { ...u, type });
    shape = null;
  };
  let last: TextUnit | null = null;
  for (const r of descendants(s, container)) {
    if (shape && r.start >= shape.end) close();
    if (r.type === RT.ShapeContainer && !shape) shape = { end: r.end, placeholder: undefined, units: [], props: {} };
    const into = shape ? shape.units : units;
    if (r.type === RT.PlaceholderAtom && shape && r.end - r.start >= 5) shape.placeholder = s[r.start + 4];
    else if ((r.type === RT.FOPT || r.type === RT.TertiaryFOPT) && shape) readShapeProps(s, r, shape.props);
    else if (r.type === RT.TextHeaderAtom) into.push((last = { type: s.readUInt32LE(r.start), text: '' }));
    else if ((r.type === RT.TextCharsAtom || r.type === RT.TextBytesAtom) && last) last.text += atomText(s, r);
    else if (r.type === RT.StyleTextPropAtom && last) last.runs = paragraphRuns(s, r, last.text.length);
    else if (r.type === RT.OutlineTextRefAtom) {
      const ref = fromList[s.readInt32LE(r.start)];
      if (ref) into.push(ref);
      last = null;
    }
  }
  close();
  return units;
}

/** What a shape's property tables say of it as a picture. */
interface ShapeProps {
  pib?: number;
  name?: string;
  description?: string;
}

/**
 * An OfficeArtFOPT or OfficeArtTertiaryFOPT ([MS-ODRAW] 2.2.9): recInstance properties of 6 bytes (id, value), then
 * the complex properties' data in their order, each as long as its value says. Stops at what overruns the record.
 */
function readShapeProps(s: Buffer, r: Record, props: ShapeProps): void {
  let complex = r.start + r.instance * 6;
  if (complex > r.end) return;
  for (let k = 0; k < r.instance; k++) {
    const opid = s.readUInt16LE(r.start + k * 6);
    const op = s.readUInt32LE(r.start + k * 6 + 2);
    const pid = opid & 0x3fff;
    if (!(opid & 0x8000)) {
      if (pid === PID_PIB) props.pib = op;
      continue;
    }
    const from = complex;
    complex += op;
    if (complex > r.end) return;
    if (pid !== PID_NAME && pid !== PID_DESCRIPTION) continue;
    // A NUL-terminated UTF-16 string.
    const text = s
      .toString('utf16le', from, from + (op & ~1))
      .replace(/\0[\s\S]*$/, '')
      .replace(/\s+/g, ' ')
      .trim();
    if (pid === PID_NAME) props.name = text;
    else props.description = text;
  }
}

/**
 * The BLIP store: each entry by its 1-based place. An entry's BLIP is in the entry (after its name) or at its
 * offset in the Pictures stream; a BLIP record has one or two 16-byte UIDs, then a tag byte (a bitmap) or a
 * 34-byte metafile header, then the image. Only a PNG or JPEG whose bytes say so gets `data`; an entry whose BLIP
 * cannot be read keeps the extension its type gives. An unreadable store has no entries.
 */
function readBlipStore(s: Buffer, doc: Record, pictures: Buffer | undefined): Map<number, Blip> {
  const out = new Map<number, Blip>();
  const child = (r: Record | undefined, type: number) => (r ? children(s, r).find((c) => c.type === type) : undefined);
  const store = child(child(child(doc, RT.PPDrawingGroup), RT.DggContainer), RT.BStoreContainer);
  if (!store) return out;
  children(s, store).forEach((entry, k) => {
    let blip: { buf: Buffer; r: Record | null } | null = null;
    let ext: string | undefined;
    if (entry.type === RT.FBSE && entry.end - entry.start >= 36) {
      ext = BLIP_TYPE_EXT[s[entry.start]];
      const embeddedAt = entry.start + 36 + s[entry.start + 33];
      const size = s.readUInt32LE(entry.start + 20);
      const foDelay = s.readUInt32LE(entry.start + 28);
      if (embeddedAt < entry.end) blip = { buf: s, r: recordAt(s, embeddedAt) };
      else if (pictures && size > 0) blip = { buf: pictures, r: recordAt(pictures, foDelay) };
      if (blip?.r && blip.r.end > (blip.buf === s ? entry.end : blip.buf.length)) blip = null;
    } else if (BLIP_FORMATS[entry.type]) blip = { buf: s, r: entry }; // a BLIP stored in place of an entry
    const r = blip?.r;
    const format = r ? BLIP_FORMATS[r.type] : undefined;
    if (!r || !format) {
      if (ext) out.set(k + 1, { ext });
      return;
    }
    const at = r.start + (r.instance & 1 ? 32 : 16) + (format.metafile ? 34 : 1);
    const data = at < r.end ? blip!.buf.subarray(at, r.end) : undefined;
    const valid =
      data &&
      data.length >= 8 &&
      ((format.mime === 'image/png' && data.readUInt32BE(0) === 0x89504e47) ||
        (format.mime === 'image/jpeg' && data[0] === 0xff && data[1] === 0xd8));
    out.set(k + 1, valid ? { ext: format.ext, mime: format.mime, data } : { ext: format.ext });
  });
  return out;
}

/** PFMasks bits ([MS-PPT] 2.9.21) of the fields a TextPFException holds, in the order they are stored, with their size. */
const PF_FIELDS: [mask: number, bytes: number][] = [
  [0x0f, 2], // bulletFlags: any of hasBullet, bulletHasFont, bulletHasColor, bulletHasSize
  [1 << 7, 2], // bulletChar
  [1 << 4, 2], // bulletFontRef
  [1 << 6, 2], // bulletSize
  [1 << 5, 4], // bulletColor
  [1 << 11, 2], // textAlignment
  [1 << 12, 2], // lineSpacing
  [1 << 13, 2], // spaceBefore
  [1 << 14, 2], // spaceAfter
  [1 << 8, 2], // leftMargin
  [1 << 10, 2], // indent
  [1 << 15, 2], // defaultTabSize
  [1 << 20, -1], // tabStops: a count, then 4 bytes each
  [1 << 16, 2], // fontAlign
  [(1 << 17) | (1 << 18) | (1 << 19), 2], // wrapFlags
  [1 << 21, 2], // textDirection
];

/**
 * A StyleTextPropAtom's paragraph runs ([MS-PPT] 2.9.44 TextPFRun: count, indentLevel, TextPFException), over the
 * text and its closing paragraph mark. Unreadable runs end the list: the paragraphs past them fall back to the
 * text type's default (bulleted in a body placeholder).
 */
function paragraphRuns(s: Buffer, r: Record, length: number): ParagraphRun[] {
  const runs: ParagraphRun[] = [];
  let end = 0;
  for (let off = r.start; end <= length && off + 10 <= r.end;) {
    const count = s.readUInt32LE(off);
    const level = s.readUInt16LE(off + 4);
    const masks = s.readUInt32LE(off + 6);
    off += 10;
    let bullet: boolean | undefined;
    for (const [mask, bytes] of PF_FIELDS) {
      if (!(masks & mask)) continue;
      if (off + 2 > r.end) return runs;
      if (mask === 0x0f && masks & 1) bullet = !!(s.readUInt16LE(off) & 1);
      off += bytes < 0 ? 2 + 4 * s.readUInt16LE(off) : bytes;
    }
    if (count === 0 || off > r.end) return runs;
    end += count;
    runs.push({ end, bullet, level: Math.min(level, 8) });
  }
  return runs;
}

const paragraphs = (text: string) =>
  text
    .split('\r')
    .map((p) => p.replace(/\v/g, ' ').replace(/\s+/g, ' ').trim())
    .filter(Boolean);

/** A picture unit's `<img>`: its src from `pictureSrc` (left out when that has none). */
type PictureSrc = (pib: number) => string | null;

function slideContent(units: TextUnit[], notes: TextUnit[], pictureSrc: PictureSrc): SlideContent {
  let title = '';
  let body = '';
  // Without placeholders (LibreOffice writes plain text boxes, all "other" text) the first box, one short line,
  // is the title, as it is on screen.
  const titled = units.some((u) => TITLE_TYPES.has(u.type) && paragraphs(u.text).length);
  const firstText = units.find((u) => paragraphs(u.text).length);
  if (!titled && firstText && paragraphs(firstText.text).length === 1 && firstText.text.length <= UNTYPED_TITLE)
    title = paragraphs(firstText.text)[0];
  for (const u of units) {
    if (u === firstText && title) continue;
    if (u.picture) {
      const src = pictureSrc(u.picture.pib);
      if (src) body += `<p><img src="${escapeHtml(src)}" alt="${escapeHtml(u.picture.alt)}"></p>`;
      continue;
    }
    const ps = paragraphs(u.text);
    if (!ps.length) continue;
    if (TITLE_TYPES.has(u.type) && !title) title = ps.join(' ');
    else body += bodyHtml(u);
  }
  // A notes page's text is its notes (the slide image above them has none); a master's prompt text is not copied here.
  const noteHtml = notes
    .flatMap((u) => paragraphs(u.text))
    .map((p) => `<p>${escapeHtml(p)}</p>`)
    .join('');
  return { title, body, notes: noteHtml };
}

/**
 * A text unit's paragraphs: list items where its paragraph runs say bullet (nested by their indent level), or, where
 * they say nothing, where the text type is a body placeholder's; paragraphs otherwise.
 */
function bodyHtml(u: TextUnit): string {
  const list = new ListBuilder();
  let html = '';
  let at = 0;
  let run = 0;
  for (const raw of u.text.split('\r')) {
    const start = at;
    at += raw.length + 1;
    const p = raw.replace(/\v/g, ' ').replace(/\s+/g, ' ').trim();
    if (!p) continue;
    while (u.runs && run < u.runs.length && u.runs[run].end <= start) run++;
    const style = u.runs?.[run];
    if (style?.bullet ?? BODY_TYPES.has(u.type)) list.item(style?.level ?? 0, false, escapeHtml(p));
    else html += list.flush() + `<p>${escapeHtml(p)}</p>`;
  }
  return html + list.flush();
}

export function parsePpt(bytes: Uint8Array, opts: ParseOptions = {}): ParsedDocument {
  let cfb: ReturnType<typeof CFB.read>;
  try {
    cfb = CFB.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { type: 'buffer' });
  } catch (err) {
    throw new DocumentError('DOCUMENT_CORRUPT', `The .ppt file could not be read: ${(err as Error).message}`);
  }
  const stream = (name: string) => {
    const e = CFB.find(cfb, name);
    return e?.content ? Buffer.from(e.content as Uint8Array) : undefined;
  };
  const s = stream('PowerPoint Document');
  if (!s) throw new DocumentError('DOCUMENT_CORRUPT', 'The .ppt file has no PowerPoint Document stream');
  const user = stream('Current User');
  // An encrypted presentation says so in its UserEditAtom's encryptSessionPersistIdRef and keeps its records in
  // an encrypted stream; its text atoms are unreadable.
  if (stream('EncryptedSummary'))
    throw new DocumentError('DOCUMENT_ENCRYPTED', 'The presentation is password-protected');

  const dir = persistDirectory(s, user);
  const at = (persistId: number) => {
    const off = dir.get(persistId);
    return off === undefined ? null : recordAt(s, off);
  };
  // The Document container: the one the newest edit names, else the first at the top level.
  let doc: Record | null = null;
  if (user && user.length >= 20) {
    const edit = recordAt(s, user.readUInt32LE(16));
    if (edit?.type === RT.UserEditAtom && edit.end - edit.start >= 20) doc = at(s.readUInt32LE(edit.start + 16));
  }
  if (!doc || doc.type !== RT.Document) doc = topLevel(s).find((r) => r.type === RT.Document) ?? null;
  if (!doc) throw new DocumentError('DOCUMENT_CORRUPT', 'The .ppt file has no Document record');

  const lists = children(s, doc).filter((r) => r.type === RT.SlideListWithText);
  const slideList = listTexts(
    s,
    lists.find((r) => r.instance === 0),
  );
  const notesList = listTexts(
    s,
    lists.find((r) => r.instance === 2),
  );

  // Pictures: the store read once; each picture's src as it is met (the embedding budget spent in slide order).
  let store = new Map<number, Blip>();
  try {
    store = readBlipStore(s, doc, stream('Pictures'));
  } catch {
    // an unreadable store: no pictures
  }
  const warnings: string[] = [];
  const budget = imageBudget();
  const pictureSrc: PictureSrc = (pib) => {
    const blip = store.get(pib);
    if (!blip) return null;
    const name = `image${pib}.${blip.ext}`;
    if (!opts.embedImages || !blip.data || !blip.mime) return name;
    return embedPicture(blip.data, blip.mime, name, budget, warnings) ?? name;
  };

  const slides: SlideContent[] = [];
  let slideRecords = slideList.order.map((id) => ({ id, record: at(id) }));
  // Without a usable persist directory, the Slide containers in stream order.
  if (!slideRecords.length || slideRecords.some((r) => r.record?.type !== RT.Slide))
    slideRecords = topLevel(s)
      .filter((r) => r.type === RT.Slide)
      .map((record, k) => ({ id: slideList.order[k] ?? -1, record }));
  for (const { id, record } of slideRecords) {
    if (!record || record.type !== RT.Slide) continue;
    const units = containerTexts(s, record, slideList.texts.get(id));
    let notes: TextUnit[] = [];
    const slideAtom = children(s, record).find((r) => r.type === RT.SlideAtom);
    // The SlideAtom names its notes page by id; the notes list maps ids to persist ids.
    const notesId = slideAtom && slideAtom.end - slideAtom.start >= 20 ? s.readUInt32LE(slideAtom.start + 16) : 0;
    const notesPersist = notesId ? notesList.bySlideId.get(notesId) : undefined;
    const notesRecord = notesPersist === undefined ? null : at(notesPersist);
    if (notesRecord?.type === RT.Notes) notes = containerTexts(s, notesRecord, notesList.texts.get(notesPersist!));
    slides.push(slideContent(units, notes, pictureSrc));
  }
  const info = stream('\u0005SummaryInformation');
  const metadata = info ? readSummaryInformation(info) : {};
  return renderSlides('ppt', slides, metadata, opts, warnings);
}

function topLevel(s: Buffer): Record[] {
  return children(s, { type: 0, instance: 0, start: 0, end: s.length, container: true });
}
