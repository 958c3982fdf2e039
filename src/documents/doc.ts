// Legacy Word documents (.doc: Word 97–2003 binary) → markdown: the body's paragraphs, its tables as GFM tables,
// text boxes after the body, footnotes and endnotes as a numbered list at the end; page headers and footers
// are left out (a page's running title and number, not its text), as for DOCX. Title, author and subject come from
// the file's SummaryInformation properties.
//
// Read by word-extractor (pure JS: the compound file, the piece table, 8-bit and UTF-16 runs, fields). The
// binary format keeps styles in a separate table word-extractor does not read, so headings come out as
// paragraphs: what a reader gets is every word in order, tables intact, not the outline.
import { CFB } from '@e965/xlsx';
import WordExtractor from 'word-extractor';
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
  const parts = [blocksToMarkdown(doc.getBody())];
  const boxes = doc.getTextboxes({ includeHeadersAndFooters: false, includeBody: true }).trim();
  if (boxes) parts.push(blocksToMarkdown(boxes));
  const notes = [doc.getFootnotes(), doc.getEndnotes()]
    .flatMap((t) => t.split('\n'))
    .map((l) => l.trim())
    .filter(Boolean);
  if (notes.length) parts.push('## Notes\n\n' + notes.map((n, i) => `${i + 1}. ${n}`).join('\n'));
  const markdown = parts.filter(Boolean).join('\n\n');
  return { kind: 'doc', markdown, metadata: summaryOf(bytes), numPages: 1, warnings: [] };
}

/**
 * Body text → markdown. In the binary format a table cell ends with a cell mark and a row with one more
 * (word-extractor turns both into tabs): a line ending in a tab is a table row.
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

/** Title, author, subject, keywords and times from the file's SummaryInformation stream. */
function summaryOf(bytes: Uint8Array): ParsedDocument['metadata'] {
  try {
    const cfb = CFB.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), { type: 'buffer' });
    const info = CFB.find(cfb, '\u0005SummaryInformation');
    return info?.content ? readSummaryInformation(Buffer.from(info.content as Uint8Array)) : {};
  } catch {
    return {};
  }
}
