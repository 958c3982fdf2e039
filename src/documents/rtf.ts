// Rich Text Format (.rtf) → markdown: paragraphs, headings (a paragraph's \outlinelevel, as Word and LibreOffice
// write heading styles), bulleted and numbered lists with their nesting (\ls, \ilvl; numbered when the list
// text Word shows before the item has a digit), tables (\cell, \row; first row as header), footnotes as `[^n]`
// with their text at the end (as DOCX), text boxes (\shptxt) in place, and the \info title, author and subject as
// metadata. Text: \uN characters (skipping their \ucN fallbacks) and \'hh bytes in the document's ANSI code page
// (\ansicpg: windows-125x, Shift-JIS 932, GBK 936, EUC-KR 949, Big5 950), byte runs decoded together so
// double-byte characters survive. A HYPERLINK field is a link (`[its result](its target)`; other fields keep their
// result's text). Left out: fonts, colours, styles' looks, pictures, comments, page headers and footers.
//
// One pass over the bytes, no recursion (a deeply nested file cannot overflow the stack); groups deeper than
// MAX_DEPTH are DOCUMENT_CORRUPT.
import { codePageLabel } from './charset.ts';
import type { ParsedDocument } from './types.ts';
import { rowsToMarkdown } from './table.ts';
import { DocumentError } from '../errors.ts';

const MAX_DEPTH = 10_000;

/** Destinations whose text is not the document's. */
const SKIPPED = new Set([
  'fonttbl',
  'colortbl',
  'stylesheet',
  'listtable',
  'listoverridetable',
  'revtbl',
  'rsidtbl',
  'generator',
  'xmlnstbl',
  'pgdsctbl',
  'themedata',
  'colorschememapping',
  'datastore',
  'latentstyles',
  'pict',
  'object',
  'header',
  'headerl',
  'headerr',
  'headerf',
  'footer',
  'footerl',
  'footerr',
  'footerf',
  'ftnsep',
  'ftnsepc',
  'aftnsep',
  'aftnsepc',
  'bkmkstart',
  'bkmkend',
  'atnid',
  'atnauthor',
  'atndate',
  'atnref',
  'annotation',
  'xe',
  'tc',
  'sp',
  'shprslt',
  'nonshppict',
  'userprops',
  'docvar',
  'template',
  'operator',
  'company',
  'manager',
  'category',
  'comment',
  'doccomm',
  'hlinkbase',
  'creatim',
  'revtim',
  'printim',
  'buptim',
  'mmathPr',
  'passwordhash',
]);
/** \info fields kept as metadata. */
const INFO_FIELDS: Record<string, string> = {
  title: 'title',
  author: 'author',
  subject: 'subject',
  keywords: 'keywords',
};

const SYMBOLS: Record<string, string> = {
  emdash: '\u2014',
  endash: '\u2013',
  lquote: '\u2018',
  rquote: '\u2019',
  ldblquote: '\u201c',
  rdblquote: '\u201d',
  bullet: '\u2022',
  emspace: '\u2003',
  enspace: '\u2002',
  qmspace: '\u2005',
  tab: '\t',
  line: '\n',
};

interface Group {
  /** Text here is dropped. */
  skip: boolean;
  /** Where text goes: the body, a footnote, the list marker, an \info field. */
  into: 'body' | 'note' | 'listtext' | 'info' | 'fldinst';
  /** A field result group that is a hyperlink: its target, and where its text starts in the text it goes to. */
  link?: { url: string; sink: 'note' | 'cell' | 'para'; start: number };
  infoKey?: string;
  /** Fallback characters after \uN. */
  uc: number;
}

interface Paragraph {
  text: string;
  heading: number;
  list: { id: number; level: number } | null;
  inTable: boolean;
}

/** A link target as markdown writes it: spaces and parentheses escaped. */
function linkTarget(url: string): string {
  return url.trim().replace(/ /g, '%20').replace(/\(/g, '%28').replace(/\)/g, '%29');
}

export function parseRtf(bytes: Uint8Array): ParsedDocument {
  const src = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  if (!src.trimStart().startsWith('{\\rtf')) throw new DocumentError('DOCUMENT_CORRUPT', 'Not an RTF document');
  let decoder = new TextDecoder('windows-1252');
  const stack: Group[] = [];
  let g: Group = { skip: false, into: 'body', uc: 1 };
  const metadata: Record<string, string> = {};
  /** Markdown blocks; list items are marked so a run of them is one list. */
  const blocks: { md: string; item?: boolean }[] = [];
  const notes: string[] = [];
  let noteText = '';
  let listText = '';
  let infoText = '';
  const para: Paragraph = { text: '', heading: 0, list: null, inTable: false };
  let pending: number[] = []; // \'hh bytes not yet decoded
  let skipFallback = 0;
  let rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  const numbered = new Map<number, boolean>();
  let listKind = false;

  const flushBytes = () => {
    if (!pending.length) return;
    const text = decoder.decode(Uint8Array.from(pending));
    pending = [];
    emit(text);
  };
  const emit = (text: string) => {
    if (g.skip || !text) return;
    if (g.into === 'note') noteText += text;
    else if (g.into === 'listtext') listText += text;
    else if (g.into === 'info') infoText += text;
    else if (g.into === 'fldinst') fieldInst += text;
    else if (para.inTable) cell += text;
    else para.text += text;
  };
  // The hyperlink field being read: its instruction (HYPERLINK "url"), then its result (the link's text).
  let fieldInst = '';
  const sinkNow = (): 'note' | 'cell' | 'para' => (g.into === 'note' ? 'note' : para.inTable ? 'cell' : 'para');
  const sinkText = (sink: 'note' | 'cell' | 'para') =>
    sink === 'note' ? noteText : sink === 'cell' ? cell : para.text;
  const setSink = (sink: 'note' | 'cell' | 'para', text: string) => {
    if (sink === 'note') noteText = text;
    else if (sink === 'cell') cell = text;
    else para.text = text;
  };
  const flushTable = () => {
    if (row.length || cell.trim()) {
      row.push(cell);
      rows.push(row);
    }
    row = [];
    cell = '';
    if (!rows.length) return;
    blocks.push({ md: rowsToMarkdown(rows) });
    rows = [];
  };
  const endParagraph = () => {
    flushBytes();
    if (para.inTable) {
      cell += '\n';
      return;
    }
    const text = para.text
      .replace(/[ \t]+/g, ' ')
      .replace(/ ?\n ?/g, '\n')
      .trim();
    if (text) {
      if (para.heading) blocks.push({ md: `${'#'.repeat(Math.min(6, para.heading))} ${text.replace(/\n/g, ' ')}` });
      else if (para.list) {
        const marker = numbered.get(para.list.id) ? '1.' : '-';
        blocks.push({ md: `${'   '.repeat(para.list.level)}${marker} ${text.replace(/\n/g, ' ')}`, item: true });
      } else blocks.push({ md: text.replace(/\n/g, '  \n') });
    }
    para.text = '';
  };

  const n = src.length;
  let i = src.indexOf('{');
  while (i < n) {
    const c = src[i];
    if (c === '{') {
      flushBytes();
      if (stack.length >= MAX_DEPTH) throw new DocumentError('DOCUMENT_CORRUPT', 'RTF groups nest too deeply');
      stack.push(g);
      g = { ...g };
      i++;
      // An ignorable destination ({\*\name ...}): dropped unless it is one we read.
      if (src.startsWith('\\*', i)) {
        const m = /^\\\*\\([a-zA-Z]+)/.exec(src.slice(i, i + 40));
        const name = m?.[1] ?? '';
        if (name === 'footnote') startNote();
        else if (name === 'fldinst') {
          g.into = 'fldinst';
          fieldInst = '';
        } else if (name !== 'shpinst' && name !== 'shptxt') g.skip = true;
        i += 2;
      }
      continue;
    }
    if (c === '}') {
      flushBytes();
      if (g.into === 'note' && stack.at(-1)?.into !== 'note') endNote();
      if (g.into === 'info' && g.infoKey && stack.at(-1)?.infoKey !== g.infoKey) {
        const v = infoText.trim();
        if (v && !metadata[g.infoKey]) metadata[g.infoKey] = v;
      }
      if (g.into === 'listtext' && stack.at(-1)?.into !== 'listtext') listKind = /\d/.test(listText);
      if (g.link && stack.at(-1)?.link !== g.link) {
        const { url, sink, start } = g.link;
        const all = sinkText(sink);
        const label = all.slice(start).trim();
        if (label) setSink(sink, `${all.slice(0, start)}[${label.replace(/([[\]\\])/g, '\\$1')}](${linkTarget(url)})`);
      }
      const outer = stack.pop();
      if (!outer) break; // the document's closing brace
      g = outer;
      i++;
      continue;
    }
    if (c === '\\') {
      const next = src[i + 1];
      if (next === "'") {
        const byte = parseInt(src.slice(i + 2, i + 4), 16);
        i += 4;
        if (skipFallback > 0) {
          skipFallback--;
          continue;
        }
        if (!Number.isNaN(byte)) pending.push(byte);
        continue;
      }
      if (next === '\\' || next === '{' || next === '}') {
        flushBytes();
        i += 2;
        if (skipFallback > 0) skipFallback--;
        else emit(next);
        continue;
      }
      if (next === '~') {
        flushBytes();
        emit('\u00a0');
        i += 2;
        continue;
      }
      if (next === '_') {
        flushBytes();
        emit('\u2011');
        i += 2;
        continue;
      }
      if (next === '\n' || next === '\r') {
        // "\" before a line break is a paragraph mark.
        endParagraph();
        i += 2;
        continue;
      }
      const m = /^([a-zA-Z]{1,32})(-?\d{1,10})? ?/.exec(src.slice(i + 1, i + 46));
      if (!m) {
        i += 2; // another control symbol (\- \| \: ...): nothing to show
        continue;
      }
      i += 1 + m[0].length;
      const word = m[1];
      const arg = m[2] === undefined ? undefined : Number(m[2]);
      // Inside a skipped destination or the list marker's text, paragraph properties are not the paragraph's
      // (LibreOffice writes \pard inside \listtext).
      if ((g.skip || g.into === 'listtext') && word !== 'u' && word !== 'uc' && word !== 'bin' && !(word in SYMBOLS))
        continue;
      switch (word) {
        case 'ansicpg': {
          const label = arg === undefined ? undefined : codePageLabel(arg);
          if (label) decoder = new TextDecoder(label);
          break;
        }
        case 'u': {
          flushBytes();
          if (arg !== undefined) emit(String.fromCharCode(arg < 0 ? arg + 65536 : arg));
          skipFallback = g.uc;
          break;
        }
        case 'uc':
          g.uc = arg ?? 1;
          break;
        case 'bin':
          i += Math.max(0, arg ?? 0);
          break;
        case 'par':
        case 'sect':
        case 'page':
          endParagraph();
          break;
        case 'pard':
          flushBytes();
          para.heading = 0;
          para.list = null;
          para.inTable = false;
          break;
        case 'outlinelevel':
          para.heading = (arg ?? 0) + 1;
          break;
        case 'ls':
          if (arg !== undefined) {
            para.list = { id: arg, level: para.list?.level ?? 0 };
            if (!numbered.has(arg)) numbered.set(arg, listKind);
          }
          break;
        case 'ilvl':
          para.list = { id: para.list?.id ?? -1, level: arg ?? 0 };
          break;
        case 'intbl':
          if (!para.inTable && para.text.trim()) endParagraph();
          para.inTable = true;
          break;
        case 'cell':
        case 'nestcell':
          flushBytes();
          row.push(cell.replace(/\n+$/, ''));
          cell = '';
          break;
        case 'row':
        case 'nestrow':
          flushBytes();
          if (row.length) rows.push(row);
          row = [];
          cell = '';
          para.inTable = false;
          break;
        case 'listtext':
        case 'pntext':
          g.into = 'listtext';
          listText = '';
          break;
        case 'info':
          g.into = 'info';
          break;
        case 'fldinst':
          g.into = 'fldinst';
          fieldInst = '';
          break;
        case 'fldrslt': {
          const m = /HYPERLINK\s+(\\l\s+)?"([^"]+)"/i.exec(fieldInst);
          if (m) {
            const sink = sinkNow();
            g.link = { url: m[1] ? `#${m[2]}` : m[2], sink, start: sinkText(sink).length };
          }
          break;
        }
        case 'footnote':
          startNote();
          break;
        case 'chftn':
          if (g.into === 'body') emit(`[^${notes.length + 1}]`);
          break;
        default:
          if (SKIPPED.has(word)) g.skip = true;
          else if (g.into === 'info' && word in INFO_FIELDS) {
            g.infoKey = INFO_FIELDS[word];
            infoText = '';
          } else if (word in SYMBOLS) {
            flushBytes();
            if (skipFallback > 0) skipFallback--;
            else emit(SYMBOLS[word]);
          }
      }
      // A table ends where a paragraph outside one begins.
      if (rows.length && !para.inTable && (word === 'par' || word === 'pard') && para.text.trim()) flushTable();
      continue;
    }
    if (c === '\r' || c === '\n') {
      i++;
      continue;
    }
    // Plain text: up to the next control character.
    let j = i;
    while (j < n && src[j] !== '\\' && src[j] !== '{' && src[j] !== '}' && src[j] !== '\r' && src[j] !== '\n') j++;
    let text = src.slice(i, j);
    i = j;
    if (skipFallback > 0) {
      const drop = Math.min(skipFallback, text.length);
      text = text.slice(drop);
      skipFallback -= drop;
    }
    if (!text) continue;
    if (rows.length && !para.inTable && g.into === 'body' && !g.skip && text.trim()) flushTable();
    for (let k = 0; k < text.length; k++) pending.push(text.charCodeAt(k));
  }
  flushBytes();
  endParagraph();
  flushTable();

  function startNote(): void {
    g.into = 'note';
    noteText = '';
  }
  function endNote(): void {
    notes.push(noteText.replace(/\s+/g, ' ').trim());
    noteText = '';
  }

  const body = blocks.map((b, k) => (k === 0 ? '' : b.item && blocks[k - 1].item ? '\n' : '\n\n') + b.md).join('');
  const markdown = notes.length ? `${body}\n\n${notes.map((t, k) => `[^${k + 1}]: ${t}`).join('\n')}` : body;
  return { kind: 'rtf', markdown, metadata, numPages: 1, warnings: [] };
}
