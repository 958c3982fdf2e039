// Legacy Word documents (.doc: Word 97–2003 binary) → markdown: the body's paragraphs, headings as `#` headings
// (built-in heading styles, styles with an outline level, Title), list paragraphs as `-` or `1.` items nested by
// their list level (as RTF's lists), hyperlinks as links, its tables as GFM tables, text boxes after the body,
// footnotes and endnotes as a numbered list at the end; page headers and footers are left out (a page's running
// title and number, not its text), as for DOCX. Title, author and subject come from the file's SummaryInformation
// properties.
//
// word-extractor (pure JS) reads the file first: it answers whether it is a readable Word binary at all, and gives
// the footnotes, endnotes and text boxes. Its text has no styles and no link targets, so the body is read by
// doc-body.ts (the piece table, paragraph properties, stylesheet and list tables, straight from the file); when that
// cannot read the file's structures, the body is word-extractor's plain text, headings and list items as paragraphs
// and links as their text.
import { CFB } from '@e965/xlsx';
import WordExtractor from 'word-extractor';
import { type DocBlock, readDocBody } from './doc-body.ts';
import { readSummaryInformation } from './ole-properties.ts';
import { rowsToMarkdown } from './table.ts';
import type { ParsedDocument } from './types.ts';
import { DocumentError } from '../errors.ts';

export async function parseDoc(bytes: Uint8Array): Promise<ParsedDocument> {
  let doc: Awaited<ReturnType<WordExtractor['extract']>>;
  try {
    doc = await new WordExtractor().extract(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    if (/encrypt|password/i.test(message))
      throw new DocumentError(
        'DOCUMENT_ENCRYPTED',
        'The document is password-protected; it cannot be read without its password',
      );
    throw new DocumentError('DOCUMENT_CORRUPT', `The .doc document could not be read: ${message}`);
  }
  const stream = openStreams(bytes);
  const blocks = stream && readDocBody(stream);
  const parts = [blocks?.length ? renderBlocks(blocks) : blocksToMarkdown(doc.getBody({ filterUnicode: false }))];
  const boxes = doc.getTextboxes({ includeHeadersAndFooters: false, includeBody: true, filterUnicode: false }).trim();
  if (boxes) parts.push(blocksToMarkdown(boxes));
  const notes = [doc.getFootnotes({ filterUnicode: false }), doc.getEndnotes({ filterUnicode: false })]
    .flatMap((t) => t.split('\n'))
    .map((l) => l.trim())
    .filter(Boolean);
  if (notes.length) parts.push('## Notes\n\n' + notes.map((n, i) => `${i + 1}. ${n}`).join('\n'));
  const markdown = parts.filter(Boolean).join('\n\n');
  return { kind: 'doc', markdown, metadata: summaryOf(stream), numPages: 1, warnings: [] };
}

/**
 * doc-body.ts's blocks → markdown: headings at their level (past 6 as 6), line breaks as hard breaks, list items as
 * `-` or `1.` lines (a run of items one list, each nesting level three spaces in, as RTF's lists).
 */
function renderBlocks(blocks: DocBlock[]): string {
  const out: string[] = [];
  let open: number[] = []; // list levels (ilvl) of the items the next one may be nested in; empty outside a list
  for (const b of blocks) {
    if ('rows' in b || !b.list) {
      open = [];
      if ('rows' in b) out.push(rowsToMarkdown(b.rows));
      else if (b.level) out.push(`${'#'.repeat(Math.min(b.level, 6))} ${b.text}`);
      else out.push(b.text.split('\n').map(escapeMarkdown).join('  \n'));
      continue;
    }
    const item = b.list;
    // Nesting follows the order of the levels, not their values (a list that starts at level 2 is not code).
    const inList = open.length > 0;
    while (open.length && open[open.length - 1] > item.ilvl) open.pop();
    if (open[open.length - 1] !== item.ilvl) open.push(item.ilvl);
    const line = `${'   '.repeat(open.length - 1)}${item.ordered ? '1.' : '-'} ${escapeMarkdown(b.text)}`;
    if (inList) out[out.length - 1] += `\n${line}`;
    else out.push(line);
  }
  return out.join('\n\n');
}

/**
 * word-extractor's text (the text boxes; the body when doc-body.ts cannot read it) → markdown. In the binary
 * format a table cell ends with a cell mark and a row with one more (word-extractor turns both into tabs): a line
 * ending in a tab is a table row.
 */
function blocksToMarkdown(text: string): string {
  const out: string[] = [];
  let rows: string[][] = [];
  const flush = () => {
    if (!rows.length) return;
    out.push(rowsToMarkdown(rows));
    rows = [];
  };
  for (const raw of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (raw.endsWith('\t')) {
      rows.push(raw.replace(/\t+$/, '').split('\t'));
      continue;
    }
    flush();
    const line = raw.replace(/\s+/g, ' ').trim();
    if (line) out.push(escapeMarkdown(line));
  }
  flush();
  return out.join('\n\n');
}

/** Text that would read as markdown syntax at a line's start (a heading, a list, a quote) is escaped. */
function escapeMarkdown(line: string): string {
  return line.replace(/^([#>+-]|\d+[.)])(\s)/, '\\$1$2');
}

/** The compound file's streams by name (the root storage's own), or null when it cannot be read. */
function openStreams(bytes: Uint8Array): ((name: string) => Buffer | undefined) | null {
  try {
    const cfb = CFB.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { type: 'buffer' });
    return (name) => {
      const entry = CFB.find(cfb, `/${name}`);
      return entry?.content ? Buffer.from(entry.content as Uint8Array) : undefined;
    };
  } catch {
    return null;
  }
}

/** Title, author, subject, keywords and times from the file's SummaryInformation stream. */
function summaryOf(stream: ((name: string) => Buffer | undefined) | null): ParsedDocument['metadata'] {
  try {
    const info = stream?.('\u0005SummaryInformation');
    return info ? readSummaryInformation(info) : {};
  } catch {
    return {};
  }
}
