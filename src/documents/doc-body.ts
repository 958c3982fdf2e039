// The main text of a Word 97–2003 binary (.doc) as blocks, read straight from the file ([MS-DOC]) for what
// word-extractor does not give: its plain text has no paragraph styles (the outline is in a style table it does
// not read) and keeps only the display text of a HYPERLINK field, not its target, nor which paragraphs are list
// items. Here each paragraph of the main document (CP 0 to ccpText) gets a heading level from its style or a list
// level from its list, and its hyperlinks stay links.
//
// The path: the FIB (start of the WordDocument stream) names the table stream (0Table or 1Table) and where the
// structures are in it. The piece table (the CLX's PlcPcd) maps character positions to text in the WordDocument
// stream, 8-bit (cp1252) or UTF-16 per piece. Paragraph properties are in PAPX FKPs (512-byte pages of the
// WordDocument stream, indexed by file offset): each gives a paragraph's style (istd), whether it is in a table,
// whether it ends a table row, and a direct outline level. The stylesheet (STSH) gives each style its built-in
// identifier (sti 1–9: heading 1–9; 62: Title), its name and outline level. Text marked deleted (tracked changes,
// in the CHPX FKPs) is left out, as word-extractor leaves it out.
//
// List paragraphs: a paragraph's list (sprmPIlfo, 1-based into the PlfLfo's LFOs, each naming a list by lsid) and
// level (sprmPIlvl), set directly or by its style, name an LVL: the list's own (the LVLs appended to the PlfLst,
// nine per list, one for a simple list) or the LFO's override of that level. An LVL whose number format is a bullet
// (nfc 23), or whose text is one character that is neither a digit nor a level placeholder, makes a bulleted item;
// one with a number sequence an ordered item; one without (nfc 255) leaves a plain paragraph, as does a list table
// that cannot be read. A numbered heading stays a heading, a list paragraph in a table cell the cell's text.
//
// Anything unexpected (a structure out of bounds, a gap in the pieces, unbalanced fields, cell marks without row
// ends) gives null, and the caller keeps word-extractor's text.

/** A list item's list level (0–8, as the file gives it) and whether it is numbered. */
export interface DocListItem {
  ilvl: number;
  ordered: boolean;
}

export type DocBlock = { text: string; level: number; list?: DocListItem } | { rows: string[][] };

interface Piece {
  cp: number;
  end: number;
  /** Byte offset of the piece's text in the WordDocument stream. */
  fc: number;
  bpc: 1 | 2;
}

interface Papx {
  istd: number;
  inTable: boolean;
  ttp: boolean;
  /** Direct outline level (0–8 a heading level, 9 body text), or -1. */
  outline: number;
  /** Direct list (sprmPIlfo) and list level (sprmPIlvl), or -1 where the style's apply. */
  ilfo: number;
  ilvl: number;
}

/** What a style gives its paragraphs: a heading level (0 for none), a list and list level (-1: none set). */
interface StyleProps {
  level: number;
  ilfo: number;
  ilvl: number;
}

interface Field {
  instr: string;
  result: boolean;
  /** Where the field's result starts in the paragraph's text, or -1 (not in this paragraph's text). */
  start: number;
}

const NO_PAPX: Papx = { istd: 0, inTable: false, ttp: false, outline: -1, ilfo: -1, ilvl: -1 };
const sprmPFInTable = 0x2416;
const sprmPFTtp = 0x2417;
const sprmPOutLvl = 0x2640;
const sprmPIlvl = 0x260a;
const sprmPIlfo = 0x460b;
const sprmCFRMarkDel = 0x0800;
const sprmTDefTable = 0xd608;
const sprmPChgTabs = 0xc615;
const stiTitle = 62;
const MAX_INSTRUCTION = 2048;
const cp1252 = new TextDecoder('windows-1252');

/** The main text's blocks, or null when the file's structures cannot be read (the caller falls back). */
export function readDocBody(stream: (name: string) => Buffer | undefined): DocBlock[] | null {
  try {
    return read(stream);
  } catch {
    return null;
  }
}

function read(stream: (name: string) => Buffer | undefined): DocBlock[] | null {
  const wd = stream('WordDocument');
  if (!wd || wd.length < 0x9a || wd.readUInt16LE(0) !== 0xa5ec || wd.readUInt16LE(2) < 0xc1) return null;
  const flags = wd.readUInt16LE(0x0a);
  if (flags & 0x8100) return null; // encrypted or obfuscated
  const table = stream(flags & 0x0200 ? '1Table' : '0Table');
  if (!table) return null;
  // FibBase (32 bytes), csw + FibRgW97, cslw + FibRgLw97, cbRgFcLcb + FibRgFcLcb (fc/lcb pairs).
  const csw = wd.readUInt16LE(0x20);
  const cslw = wd.readUInt16LE(0x22 + csw * 2);
  const rgLw = 0x24 + csw * 2;
  const ccpText = wd.readInt32LE(rgLw + 12);
  const cbRgFcLcb = wd.readUInt16LE(rgLw + cslw * 4);
  const rgFcLcb = rgLw + cslw * 4 + 2;
  if (cslw < 4 || cbRgFcLcb < 34 || ccpText < 0) return null;
  // Past cbRgFcLcb (an older FIB) or past the stream, a pair reads as empty.
  const fcLcb = (i: number): [number, number] =>
    i < cbRgFcLcb && rgFcLcb + i * 8 + 8 <= wd.length
      ? [wd.readUInt32LE(rgFcLcb + i * 8), wd.readUInt32LE(rgFcLcb + i * 8 + 4)]
      : [0, 0];

  const pieces = readPieces(table, ...fcLcb(33), ccpText);
  const papx = pieces && readPapx(wd, table, ...fcLcb(13));
  const deleted = papx && readDeletions(wd, table, ...fcLcb(12));
  if (!pieces || !papx || !deleted) return null;
  const styles = readStyles(table, ...fcLcb(1));
  const lists = readLists(table, ...fcLcb(73), ...fcLcb(74));

  // The main text, deleted runs as NULs (dropped below; positions stay those of the file).
  const parts: string[] = [];
  for (const p of pieces) {
    const n = p.end - p.cp;
    const bytes = wd.subarray(p.fc, p.fc + n * p.bpc);
    if (bytes.length !== n * p.bpc) return null;
    const text = p.bpc === 2 ? bytes.toString('utf16le') : cp1252.decode(bytes);
    let kept = 0;
    for (let k = firstEndingAfter(deleted, p.fc); k < deleted.length && deleted[k] < p.fc + n * p.bpc; k += 2) {
      const from = Math.max(kept, Math.ceil((deleted[k] - p.fc) / p.bpc));
      const to = Math.min(n, Math.ceil((deleted[k + 1] - p.fc) / p.bpc));
      if (to <= from) continue;
      parts.push(text.slice(kept, from), '\0'.repeat(to - from));
      kept = to;
    }
    parts.push(kept ? text.slice(kept) : text);
  }
  return toBlocks(parts.join(''), pieces, papx, styles, lists);
}

/** The pieces of the main text (CP 0 to ccpText), in CP order, or null when the piece table is broken. */
function readPieces(table: Buffer, fc: number, lcb: number, ccpText: number): Piece[] | null {
  const end = fc + lcb;
  if (!lcb || end > table.length) return null;
  let pos = fc;
  while (pos < end && table[pos] === 1) pos += 3 + table.readUInt16LE(pos + 1); // Prc: property modifiers
  if (pos + 5 > end || table[pos] !== 2) return null;
  const lcbPlc = table.readUInt32LE(pos + 1);
  const plc = pos + 5;
  const n = (lcbPlc - 4) / 12;
  if (!Number.isInteger(n) || n < 1 || plc + lcbPlc > end) return null;
  const pieces: Piece[] = [];
  for (let i = 0, cp = 0; i < n && cp < ccpText; i++) {
    const start = table.readUInt32LE(plc + i * 4);
    const stop = Math.min(table.readUInt32LE(plc + i * 4 + 4), ccpText);
    if (start !== cp || stop < start) return null;
    const raw = table.readUInt32LE(plc + (n + 1) * 4 + i * 8 + 2);
    const compressed = (raw & 0x40000000) !== 0;
    const at = raw & 0x3fffffff;
    pieces.push({ cp: start, end: stop, fc: compressed ? at >>> 1 : at, bpc: compressed ? 1 : 2 });
    cp = stop;
  }
  return (pieces.length ? pieces[pieces.length - 1].end : 0) === ccpText ? pieces : null;
}

/** The FKP pages a PlcBtePapx or PlcBteChpx names, as offsets in the WordDocument stream. */
function fkpPages(wd: Buffer, table: Buffer, fc: number, lcb: number): number[] | null {
  const n = (lcb - 4) / 8;
  if (!Number.isInteger(n) || n < 0 || fc + lcb > table.length) return null;
  const pages: number[] = [];
  for (let i = 0; i < n; i++) {
    const page = (table.readUInt32LE(fc + (n + 1) * 4 + i * 4) & 0x3fffff) * 512;
    if (page + 512 > wd.length) return null;
    pages.push(page);
  }
  return pages;
}

/** Paragraph runs: file offsets where each starts and ends, and its properties; sorted by start. */
interface PapxRuns {
  starts: number[];
  ends: number[];
  props: Papx[];
}

function readPapx(wd: Buffer, table: Buffer, fc: number, lcb: number): PapxRuns | null {
  const pages = fkpPages(wd, table, fc, lcb);
  if (!pages) return null;
  const runs: { start: number; end: number; props: Papx }[] = [];
  for (const page of pages) {
    const crun = wd[page + 511];
    if ((crun + 1) * 4 + crun * 13 > 511) return null;
    for (let j = 0; j < crun; j++) {
      const b = wd[page + (crun + 1) * 4 + j * 13];
      runs.push({
        start: wd.readUInt32LE(page + j * 4),
        end: wd.readUInt32LE(page + j * 4 + 4),
        props: b ? papxAt(wd, page, page + b * 2) : NO_PAPX,
      });
    }
  }
  runs.sort((a, b) => a.start - b.start);
  return { starts: runs.map((r) => r.start), ends: runs.map((r) => r.end), props: runs.map((r) => r.props) };
}

/** A PapxInFkp: its istd and the few paragraph properties read here. */
function papxAt(wd: Buffer, page: number, o: number): Papx {
  const cb = wd[o];
  const start = cb ? o + 1 : o + 2;
  const end = Math.min(start + (cb ? cb * 2 - 1 : wd[o + 1] * 2), page + 511);
  if (end - start < 2) return NO_PAPX;
  const props: Papx = { ...NO_PAPX, istd: wd.readUInt16LE(start) };
  forEachSprm(wd, start + 2, end, (sprm, at) => {
    if (sprm === sprmPFInTable) props.inTable = wd[at] !== 0;
    else if (sprm === sprmPFTtp) props.ttp = wd[at] !== 0;
    else if (sprm === sprmPOutLvl) props.outline = wd[at];
    else if (sprm === sprmPIlfo) props.ilfo = wd.readUInt16LE(at);
    else if (sprm === sprmPIlvl) props.ilvl = wd[at];
  });
  return props;
}

function papxAtFc(runs: PapxRuns, fc: number): Papx {
  let lo = 0;
  let hi = runs.starts.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (runs.starts[mid] <= fc) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi >= 0 && fc < runs.ends[hi] ? runs.props[hi] : NO_PAPX;
}

/** File-offset ranges of text marked deleted, as sorted, merged [start, end) pairs in one flat array. */
function readDeletions(wd: Buffer, table: Buffer, fc: number, lcb: number): number[] | null {
  const pages = fkpPages(wd, table, fc, lcb);
  if (!pages) return null;
  const ranges: [number, number][] = [];
  for (const page of pages) {
    const crun = wd[page + 511];
    if ((crun + 1) * 4 + crun > 511) return null;
    for (let j = 0; j < crun; j++) {
      const b = wd[page + (crun + 1) * 4 + j];
      if (!b) continue;
      const o = page + b * 2;
      let del = false;
      forEachSprm(wd, o + 1, Math.min(o + 1 + wd[o], page + 511), (sprm, at) => {
        if (sprm === sprmCFRMarkDel) del = (wd[at] & 1) === 1;
      });
      if (del) ranges.push([wd.readUInt32LE(page + j * 4), wd.readUInt32LE(page + j * 4 + 4)]);
    }
  }
  ranges.sort((a, b) => a[0] - b[0]);
  const flat: number[] = [];
  for (const [s, e] of ranges) {
    if (flat.length && s <= flat[flat.length - 1]) flat[flat.length - 1] = Math.max(flat[flat.length - 1], e);
    else flat.push(s, e);
  }
  return flat;
}

/** The index (even) of the first range in `flat` that ends after `fc`. */
function firstEndingAfter(flat: number[], fc: number): number {
  let lo = 0;
  let hi = flat.length / 2;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (flat[mid * 2 + 1] <= fc) lo = mid + 1;
    else hi = mid;
  }
  return lo * 2;
}

/** Calls `visit` with each Prl's sprm and operand offset in grpprl bytes [pos, end); stops at what it cannot size. */
function forEachSprm(b: Buffer, pos: number, end: number, visit: (sprm: number, at: number) => void): void {
  while (pos + 2 <= end) {
    const sprm = b.readUInt16LE(pos);
    pos += 2;
    let size: number;
    switch (sprm >>> 13) {
      case 0:
      case 1:
        size = 1;
        break;
      case 2:
      case 4:
      case 5:
        size = 2;
        break;
      case 3:
        size = 4;
        break;
      case 7:
        size = 3;
        break;
      default:
        // Variable: a length byte first, but sprmTDefTable's length is two bytes (counting one more than follows)
        // and a long sprmPChgTabs is sized by its contents (not read here: stop).
        if (sprm === sprmTDefTable) size = pos + 2 <= end ? b.readUInt16LE(pos) + 1 : end;
        else if (pos >= end || (sprm === sprmPChgTabs && b[pos] === 255)) return;
        else size = b[pos] + 1;
    }
    if (pos + size > end) return;
    visit(sprm, pos);
    pos += size;
  }
}

/**
 * What each style (by istd) gives its paragraphs, from the stylesheet. Heading level (1–9, 0 for none): built-in
 * headings (sti 1–9) and styles named "heading N" their level; a paragraph style with an outline level (its own or
 * its base style's) that level; Title level 1. List and list level: the style's own sprmPIlfo and sprmPIlvl, else
 * its base style's. An unreadable stylesheet gives no headings and no lists.
 */
function readStyles(table: Buffer, fc: number, lcb: number): StyleProps[] {
  const end = fc + lcb;
  if (lcb < 6 || end > table.length) return [];
  const cbStshi = table.readUInt16LE(fc);
  const cstd = table.readUInt16LE(fc + 2);
  const cbStdBase = table.readUInt16LE(fc + 4);
  type Std = { sti: number; base: number; name: string; outline: number; ilfo: number; ilvl: number };
  const styles: (Std | undefined)[] = [];
  try {
    for (let p = fc + 2 + cbStshi, istd = 0; istd < cstd && p + 2 <= end; istd++) {
      const cbStd = table.readUInt16LE(p);
      const std = p + 2;
      p = std + cbStd;
      if (!cbStd || p > end || cbStdBase + 2 > cbStd) {
        styles.push(undefined);
        continue;
      }
      const stk = table.readUInt16LE(std + 2) & 0xf;
      const at = std + cbStdBase;
      const cch = Math.min(table.readUInt16LE(at), (p - at - 2) >> 1);
      const style: Std = {
        sti: table.readUInt16LE(std) & 0xfff,
        base: table.readUInt16LE(std + 2) >>> 4,
        name: table.toString('utf16le', at + 2, at + 2 + cch * 2),
        outline: -1,
        ilfo: -1,
        ilvl: -1,
      };
      const upx = at + 2 + cch * 2 + 2; // after the name's terminating NUL: the paragraph style's UpxPapx first
      if (stk === 1 && upx + 4 <= p) {
        const grpprlEnd = Math.min(upx + 2 + table.readUInt16LE(upx), p);
        forEachSprm(table, upx + 4, grpprlEnd, (sprm, o) => {
          if (sprm === sprmPOutLvl) style.outline = table[o];
          else if (sprm === sprmPIlfo) style.ilfo = table.readUInt16LE(o);
          else if (sprm === sprmPIlvl) style.ilvl = table[o];
        });
      }
      styles.push(style);
    }
  } catch {
    // a truncated stylesheet: the styles read so far
  }
  /** A property from the style or the nearest base style that sets it, else -1. */
  const inherited = (istd: number, key: 'outline' | 'ilfo' | 'ilvl'): number => {
    for (let depth = 0; depth < 16; depth++) {
      const s = styles[istd];
      if (!s) return -1;
      if (s[key] >= 0) return s[key];
      if (s.base === 0xfff || s.base === istd) return -1;
      istd = s.base;
    }
    return -1;
  };
  const levelOf = (s: Std, istd: number): number => {
    if (s.sti >= 1 && s.sti <= 9) return s.sti;
    const named = /^heading ([1-9])$/i.exec(s.name.trim());
    if (named) return Number(named[1]);
    const outline = inherited(istd, 'outline');
    if (outline >= 0) return outline < 9 ? outline + 1 : 0;
    return s.sti === stiTitle || /^title$/i.test(s.name.trim()) ? 1 : 0;
  };
  return styles.map((s, istd) =>
    s
      ? { level: levelOf(s, istd), ilfo: inherited(istd, 'ilfo'), ilvl: inherited(istd, 'ilvl') }
      : { level: 0, ilfo: -1, ilvl: -1 },
  );
}

/** Whether a list level is bulleted or numbered; null when it has no number (or cannot be read). */
type ListKind = 'bullet' | 'ordered' | null;

/** One LVL at `o` (within `end`): its kind and where the next LVL starts. Throws past the buffer. */
function readLvl(table: Buffer, o: number, end: number): { kind: ListKind; next: number } {
  const nfc = table[o + 4];
  const xst = o + 28 + table[o + 25] + table[o + 24]; // LVLF (28 bytes), grpprlPapx, grpprlChpx
  if (xst + 2 > end) throw new RangeError('LVL past the list table');
  const cch = table.readUInt16LE(xst);
  const next = xst + 2 + cch * 2;
  if (next > end) throw new RangeError('LVL past the list table');
  const text = table.toString('utf16le', xst + 2, next);
  // A level's text: literal characters and placeholders (code units 0–8) for the level numbers.
  const single = cch === 1 && text.charCodeAt(0) > 8 && !/\p{Nd}/u.test(text);
  const kind: ListKind = nfc === 0x17 || single ? 'bullet' : nfc === 0xff ? null : 'ordered';
  return { kind, next };
}

/**
 * The list definitions: the PlfLst (LSTFs, then the LVLs appended to it) and the PlfLfo (LFOs naming a list by
 * lsid, then each LFO's level overrides). Gives the kind of a paragraph's (ilfo, ilvl); null for no list or an
 * unreadable one.
 */
function readLists(
  table: Buffer,
  fcLst: number,
  lcbLst: number,
  fcLfo: number,
  lcbLfo: number,
): (ilfo: number, ilvl: number) => ListKind {
  const none = () => null;
  if (lcbLst < 2 || lcbLfo < 4 || fcLst + lcbLst > table.length || fcLfo + lcbLfo > table.length) return none;
  try {
    const cLst = table.readInt16LE(fcLst);
    if (cLst < 1 || 2 + cLst * 28 > lcbLst) return none;
    // Each list's levels by lsid: nine (one for a simple list), read from the LVLs after the PlfLst.
    const byLsid = new Map<number, ListKind[]>();
    let o = fcLst + lcbLst;
    for (let k = 0; k < cLst; k++) {
      const lstf = fcLst + 2 + k * 28;
      const levels: ListKind[] = [];
      for (let n = table[lstf + 26] & 1 ? 1 : 9; n > 0; n--) {
        const lvl = readLvl(table, o, table.length);
        levels.push(lvl.kind);
        o = lvl.next;
      }
      byLsid.set(table.readInt32LE(lstf), levels);
    }
    const lfoEnd = fcLfo + lcbLfo;
    const lfoMac = table.readUInt32LE(fcLfo);
    if (4 + lfoMac * 16 > lcbLfo) return none;
    const lfos: { levels: ListKind[]; overrides: Map<number, ListKind> }[] = [];
    for (let k = 0; k < lfoMac; k++) {
      const lfo = fcLfo + 4 + k * 16;
      lfos.push({ levels: byLsid.get(table.readInt32LE(lfo)) ?? [], overrides: new Map() });
    }
    // The LFOData, parallel to the LFOs: a CP, then one LFOLVL per override (an LVL after it when it overrides the
    // level's formatting). Overrides past what can be read are not applied.
    try {
      let p = fcLfo + 4 + lfoMac * 16;
      for (let k = 0; k < lfoMac; k++) {
        const clfolvl = table[fcLfo + 4 + k * 16 + 12];
        p += 4;
        for (let j = 0; j < clfolvl; j++) {
          if (p + 8 > lfoEnd) throw new RangeError('LFOLVL past the list table');
          const flags = table[p + 4];
          p += 8;
          if (flags & 0x20) {
            const lvl = readLvl(table, p, lfoEnd);
            lfos[k].overrides.set(flags & 0xf, lvl.kind);
            p = lvl.next;
          }
        }
      }
    } catch {
      // the overrides read so far
    }
    return (ilfo, ilvl) => {
      const lfo = ilfo >= 1 && ilfo <= 0x7fe ? lfos[ilfo - 1] : undefined;
      if (!lfo || ilvl < 0 || ilvl > 8) return null;
      if (lfo.overrides.has(ilvl)) return lfo.overrides.get(ilvl)!;
      return lfo.levels.length === 1 ? lfo.levels[0] : (lfo.levels[ilvl] ?? null);
    };
  } catch {
    return none;
  }
}

/** Tab (0x09) is text; the other C0 characters below 0x20 are marks, field delimiters or special characters. */
const TEXT_BELOW_SPACE = 0x09;

/**
 * Paragraphs (each with its heading level, or as a list item) and tables from the main text; links from HYPERLINK
 * fields.
 */
function toBlocks(
  text: string,
  pieces: Piece[],
  papx: PapxRuns,
  styles: StyleProps[],
  lists: (ilfo: number, ilvl: number) => ListKind,
): DocBlock[] | null {
  const blocks: DocBlock[] = [];
  const fields: Field[] = [];
  let out = '';
  let rows: string[][] = [];
  let cells: string[] = [];
  let cellParas: string[] = [];
  let cellMarks = 0;
  let rowEnds = 0;
  let piece = 0;

  const emit = (s: string) => {
    if (!s) return;
    for (let k = fields.length - 1; k >= 0; k--) {
      if (!fields[k].result) {
        if (fields[k].instr.length < MAX_INSTRUCTION) fields[k].instr += s;
        return;
      }
    }
    out += s;
  };
  const endCell = () => {
    cells.push(cellParas.filter(Boolean).join('\n'));
    cellParas = [];
  };
  const endRow = () => {
    if (cellParas.length) endCell();
    if (cells.length) rows.push(cells);
    cells = [];
  };
  const endTable = () => {
    endRow();
    if (rows.length) blocks.push({ rows });
    rows = [];
  };
  const endParagraph = (mark: number, cp: number) => {
    while (pieces[piece].end <= cp) piece++;
    const p = pieces[piece];
    const props = papxAtFc(papx, p.fc + (cp - p.cp) * p.bpc);
    const para = clean(out);
    out = '';
    for (const f of fields) f.start = -1;
    if (mark === 0x07) {
      if (props.ttp) {
        rowEnds++;
        endRow();
      } else {
        cellMarks++;
        cellParas.push(para);
        endCell();
      }
    } else if (props.inTable) cellParas.push(para);
    else {
      endTable();
      const style = styles[props.istd];
      const level = props.outline >= 0 && props.outline < 9 ? props.outline + 1 : (style?.level ?? 0);
      if (!para) return;
      if (level) {
        blocks.push({ text: para.replace(/\n/g, ' '), level });
        return;
      }
      const ilfo = props.ilfo >= 0 ? props.ilfo : (style?.ilfo ?? -1);
      const ilvl = props.ilvl >= 0 ? props.ilvl : Math.max(style?.ilvl ?? 0, 0);
      const kind = ilfo > 0 ? lists(ilfo, ilvl) : null;
      if (kind) blocks.push({ text: para.replace(/\n/g, ' '), level: 0, list: { ilvl, ordered: kind === 'ordered' } });
      else blocks.push({ text: para, level: 0 });
    }
  };

  // Control characters of the text stream ([MS-DOC] 2.8.25): plain runs between them are taken as slices.
  let last = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 0x20 || c === TEXT_BELOW_SPACE) continue;
    emit(text.slice(last, i));
    last = i + 1;
    if (c === 0x0d || c === 0x07 || c === 0x0c) endParagraph(c, i);
    else if (c === 0x0b || c === 0x0a) emit('\n');
    else if (c === 0x1e) emit('-');
    else if (c === 0x13) fields.push({ instr: '', result: false, start: -1 });
    else if (c === 0x14 && fields.length) {
      const f = fields[fields.length - 1];
      f.result = true;
      f.start = fields.every((g) => g.result) ? out.length : -1;
    } else if (c === 0x15 && fields.length) {
      const f = fields.pop()!;
      const url = f.result && f.start >= 0 && f.start <= out.length ? hyperlinkTarget(f.instr) : null;
      if (url) out = out.slice(0, f.start) + linkMarkup(out.slice(f.start), url);
    }
    // other control characters (objects, note and comment references, optional hyphens) are not text
  }
  emit(text.slice(last));
  if (out.trim()) endParagraph(0x0d, text.length - 1);
  endTable();
  if (fields.length || (cellMarks && !rowEnds)) return null;
  return blocks;
}

/** A paragraph's text: whitespace runs as one space, line breaks kept as '\n', blank lines dropped. */
function clean(s: string): string {
  if (!s.includes('\n')) return s.replace(/\s+/g, ' ').trim();
  return s
    .split('\n')
    .map((l) => l.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}

/** `[label](url)`, the label's surrounding spaces kept outside the brackets; empty labels stay text. */
function linkMarkup(label: string, url: string): string {
  const core = label.trim();
  if (!core || core.includes('\n')) return label;
  const lead = label.slice(0, label.indexOf(core));
  const trail = label.slice(lead.length + core.length);
  return `${lead}[${core.replace(/([[\]\\])/g, '\\$1')}](${url})${trail}`;
}

/**
 * The target of a HYPERLINK field instruction (`HYPERLINK "url"`, `HYPERLINK \l "anchor"`, or both), or null
 * for other fields. Switches \o (tooltip) and \t (target frame) take an argument; \h, \m, \n do not.
 */
export function hyperlinkTarget(instr: string): string | null {
  const m = /^\s*HYPERLINK\b([\s\S]*)$/i.exec(instr);
  if (!m) return null;
  let url = '';
  let anchor = '';
  const tokens = [...m[1].matchAll(/"([^"]*)"?|(\S+)/g)].map((t) => ({ quoted: t[1] !== undefined, v: t[1] ?? t[2] }));
  for (let k = 0; k < tokens.length; k++) {
    const { quoted, v } = tokens[k];
    const sw = !quoted && /^\\[a-z]$/i.test(v) ? v[1].toLowerCase() : '';
    if (sw === 'l') anchor = tokens[++k]?.v ?? '';
    else if (sw === 'o' || sw === 't') k++;
    else if (!sw && !url) url = v.replace(/\\\\/g, '\\');
  }
  const target = (url + (anchor ? `#${anchor}` : '')).trim();
  return target ? target.replace(/ /g, '%20').replace(/\(/g, '%28').replace(/\)/g, '%29') : null;
}
