// The PDF parser: reading order with columns, headings by size, tables, lists, page furniture,
// hyphenation, OCR of scanned pages (tesseract), encrypted and corrupt input, the options
// (pages, blocks, pageMarkers, maxPages, mode) and the markdownSpan contract.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ocrAvailable, parsePdf } from '../../src/documents/pdf.ts';
import type { ParsedDocument } from '../../src/documents/types.ts';
import { buildReportPdf, buildTextPdf, documentTexts, textPdfPageLines } from '../fixtures/site/documents.ts';
import * as F from './pdf-fixtures.ts';
import { DocumentError } from '../../src/errors.ts';

/** Markdown blocks (separated by blank lines), marker comments left out. */
function mdBlocks(md: string): string[] {
  return md.split(/\n{2,}/).filter((b) => !b.startsWith('<!--'));
}

async function rejectsWith(p: Promise<unknown>, code: string): Promise<DocumentError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof DocumentError, `expected DocumentError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}, parsing succeeded`);
}

function checkSpans(doc: ParsedDocument): void {
  for (const b of doc.blocks ?? []) {
    for (const it of b.items) {
      const [s, e] = it.markdownSpan;
      assert.ok(s >= 0 && e >= s && e <= doc.markdown.length, `${it.id} span in range`);
      if (it.type === 'header' || it.type === 'footer') {
        assert.equal(s, e, 'furniture is not in the markdown');
        continue;
      }
      const slice = doc.markdown.slice(s, e);
      if (it.type === 'heading')
        assert.match(slice, new RegExp(`^#{1,6} ${it.content.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
      else if (it.type === 'list') assert.match(slice, /^\s*(-|\d+\.) /);
      else if (it.type === 'table') assert.ok(slice.startsWith('| '));
      if (it.type !== 'table' && !/[\\*_`[\]<&~#>|-]/.test(it.content)) {
        assert.ok(slice.endsWith(it.content), `${it.id}: ${JSON.stringify(slice)} ends with its content`);
      }
    }
  }
}

describe('parsePdf: layout', () => {
  test('two-column article: title, headings at two sizes, left column read before right', async () => {
    const doc = await parsePdf(await F.buildArticlePdf(), { blocks: true });
    const para = (p: string[]): string => p.join(' ');
    const expected: string[] = [`# ${F.article.title}`];
    for (const part of [...F.article.left, ...F.article.right]) {
      if ('h2' in part) expected.push(`## ${part.h2}`);
      else if ('h3' in part) expected.push(`### ${part.h3}`);
      else expected.push(para(part.p));
    }
    assert.deepEqual(mdBlocks(doc.markdown), expected);
    const items = doc.blocks![0].items;
    assert.deepEqual(
      items.map((i) => i.label),
      ['title', 'h2', 'paragraph', 'h3', 'paragraph', 'h2', 'paragraph', 'h3', 'paragraph'],
    );
    assert.deepEqual(
      items.map((i) => i.readingOrder),
      items.map((_i, k) => k),
    );
    // Right column items sit right of the gutter.
    assert.ok(items[5].bbox[0] >= 300 && items[4].bbox[2] < 300);
    checkSpans(doc);
  });

  test('grid-aligned rows become a GFM table with exact cells', async () => {
    const doc = await parsePdf(await F.buildTablePdf(), { blocks: true });
    const rows = F.table.rows.map((r) => `| ${r.join(' | ')} |`);
    const tableMd = [rows[0], '| --- | --- | --- |', ...rows.slice(1)].join('\n');
    assert.deepEqual(mdBlocks(doc.markdown), [
      `# ${F.table.heading}`,
      'The table below lists stock held at each site.',
      tableMd.replace(/\$/g, '$'),
      F.table.after,
    ]);
    const t = doc.blocks![0].items.find((i) => i.type === 'table')!;
    assert.equal(t.label, 'table');
    assert.equal(t.content.split('\n')[2], 'Lyon\t980\t$31,900');
    assert.ok(t.confidence.layout < 1);
    checkSpans(doc);
  });

  test('bulleted and numbered lists with a nested level', async () => {
    const doc = await parsePdf(await F.buildListPdf(), { blocks: true });
    assert.deepEqual(mdBlocks(doc.markdown), [
      F.lists.intro,
      [
        `- ${F.lists.bullets[0].text}`,
        `  - ${F.lists.bullets[1].text}`,
        `  - ${F.lists.bullets[2].text}`,
        `- ${F.lists.bullets[3].text}`,
      ].join('\n'),
      F.lists.between,
      [
        `1. ${F.lists.numbered[0].text}`,
        `2. ${F.lists.numbered[1].text}`,
        `   1. ${F.lists.numbered[2].text}`,
        `   2. ${F.lists.numbered[3].text}`,
        `3. ${F.lists.numbered[4].text}`,
      ].join('\n'),
    ]);
    const items = doc.blocks![0].items.filter((i) => i.type === 'list');
    assert.equal(items.length, 9);
    assert.ok(items.every((i) => i.label === 'list-item'));
    assert.deepEqual(
      items.slice(0, 4).map((i) => i.content),
      F.lists.bullets.map((b) => b.text),
    );
    checkSpans(doc);
  });

  test('repeated header and "Page N of M" footer are kept out of the flow, labelled in blocks', async () => {
    const doc = await parsePdf(await F.buildFurniturePdf(), { blocks: true, pages: true });
    assert.doesNotMatch(doc.markdown, /Page \d of 3|Field Notes/);
    assert.deepEqual(
      doc.pages!.map((p) => p.markdown),
      F.furniture.pages.map((l) => l.join(' ')),
    );
    for (const [i, b] of doc.blocks!.entries()) {
      const header = b.items.find((it) => it.type === 'header');
      const footer = b.items.find((it) => it.type === 'footer');
      assert.equal(header?.label, 'page-header');
      assert.equal(header?.content, F.furniture.header);
      assert.equal(footer?.label, 'page-footer');
      assert.equal(footer?.content, `Page ${i + 1} of 3`);
      assert.ok(footer!.bbox[1] > 700, 'footer bbox is near the bottom (top-left origin)');
      assert.equal(b.items[b.items.length - 1], footer, 'furniture comes last in reading order');
    }
    checkSpans(doc);
  });

  test('hyphenated line breaks are joined before a lowercase continuation only', async () => {
    const doc = await parsePdf(await F.buildHyphenPdf());
    assert.equal(doc.markdown, F.hyphen.expected);
  });

  test('the fixture report: metadata, headings, table and lines in order', async () => {
    const doc = await parsePdf(buildReportPdf(), { pages: true, blocks: true });
    const t = documentTexts.pdf;
    assert.equal(doc.numPages, 3);
    assert.equal(doc.metadata.title, t.title);
    assert.equal(doc.metadata.author, t.author);
    assert.equal(doc.metadata.subject, t.subject);
    assert.equal(doc.metadata.keywords, 'gleaner, report, quarterly');
    assert.equal(doc.metadata.creationDate, '2024-01-01T12:00:00.000Z');
    assert.equal(doc.metadata.numPages, 3);
    const [p1, p2, p3] = doc.pages!.map((p) => p.markdown);
    assert.ok(p1.startsWith(`# ${t.title}\n\n## Executive Summary\n\n`));
    assert.ok(p3.startsWith('## Conclusion\n\n'));
    const table = t.table.map((r) => `| ${r.join(' | ')} |`);
    assert.ok(p2.includes([table[0], '| --- | --- | --- |', ...table.slice(1)].join('\n')), p2);
    // Every non-footer line appears, in order, in the (whitespace-collapsed) markdown.
    const flat = doc.markdown.replace(/\s+/g, ' ');
    let at = 0;
    for (const line of t.pages.flat()) {
      if (/^Page \d of 3$/.test(line)) {
        assert.ok(!flat.includes(line), `footer ${line} left out of markdown`);
        continue;
      }
      const k = flat.indexOf(line, at);
      assert.ok(k >= at, `"${line}" in order`);
      at = k + line.length;
    }
    assert.deepEqual(
      doc.blocks!.map((b) => b.items.filter((i) => i.type === 'footer').map((i) => i.content)),
      [['Page 1 of 3'], ['Page 2 of 3'], ['Page 3 of 3']],
    );
    checkSpans(doc);
  });
});

describe('parsePdf: options', () => {
  test('pageMarkers, pages, blocks and maxPages', async () => {
    const data = buildReportPdf();
    const plain = await parsePdf(data);
    assert.equal(plain.pages, undefined);
    assert.equal(plain.blocks, undefined);
    assert.doesNotMatch(plain.markdown, /<!-- Page/);

    const marked = await parsePdf(data, { pageMarkers: true, pages: true, blocks: true });
    assert.ok(marked.markdown.startsWith('<!-- Page 1 -->\n\n# Gleaner Quarterly Report'));
    assert.match(marked.markdown, /\n\n<!-- Page 2 -->\n\n## Regional Results/);
    assert.match(marked.markdown, /\n\n<!-- Page 3 -->\n\n## Conclusion/);
    assert.deepEqual(
      marked.pages!.map((p) => p.pageNumber),
      [1, 2, 3],
    );
    assert.equal(marked.markdown.replace(/<!-- Page \d -->\n\n/g, ''), plain.markdown);
    for (const b of marked.blocks!) {
      assert.equal(b.width, 612);
      assert.equal(b.height, 792);
      assert.equal(b.status, 'parsed');
      for (const it of b.items) {
        assert.match(it.id, new RegExp(`^p${b.pageNumber}-\\d+$`));
        assert.equal(it.source, 'text-layer');
        assert.equal(it.confidence.ocr, 1);
        assert.ok(it.confidence.layout > 0 && it.confidence.layout <= 1);
        const [x0, y0, x1, y1] = it.bbox;
        assert.ok(x0 >= 0 && y0 >= 0 && x1 <= 612 && y1 <= 792 && x0 < x1 && y0 < y1, `${it.id} bbox ${it.bbox}`);
      }
    }
    checkSpans(marked);
    // The page markdown is the slice between the spans of its first and last items.
    const p2 = marked.blocks![1].items.filter((i) => i.type !== 'footer');
    assert.equal(
      marked.markdown.slice(p2[0].markdownSpan[0], p2[p2.length - 1].markdownSpan[1]),
      marked.pages![1].markdown,
    );

    const two = await parsePdf(data, { maxPages: 2, pages: true });
    assert.equal(two.numPages, 3);
    assert.equal(two.pages!.length, 2);
    assert.doesNotMatch(two.markdown, /Conclusion/);
    assert.ok(two.warnings.some((w) => /first 2 of 3 pages/.test(w)));
  });

  test('a 40-page text document keeps every heading and line in order', async () => {
    const doc = await parsePdf(buildTextPdf(40), { pages: true });
    assert.equal(doc.pages!.length, 40);
    for (let n = 1; n <= 40; n += 13) {
      const [heading, ...body] = textPdfPageLines(n);
      const md = doc.pages![n - 1].markdown;
      assert.ok(md.startsWith(`# ${heading}\n\n`), md.slice(0, 40));
      assert.equal(md.slice(heading.length + 4).replace(/\s+/g, ' '), body.join(' '));
      assert.doesNotMatch(md, /Page \d+ of 40/);
    }
  });

  test('an aborted signal gives DOCUMENT_TIMEOUT', async () => {
    const ac = new AbortController();
    ac.abort(new Error('deadline'));
    await rejectsWith(parsePdf(buildReportPdf(), { signal: ac.signal }), 'DOCUMENT_TIMEOUT');
    const late = new AbortController();
    const p = parsePdf(buildTextPdf(60), { signal: late.signal });
    setTimeout(() => late.abort(), 5);
    await rejectsWith(p, 'DOCUMENT_TIMEOUT');
  });
});

describe('parsePdf: bad input', () => {
  test('an encrypted PDF gives DOCUMENT_ENCRYPTED', async () => {
    const err = await rejectsWith(parsePdf(F.buildEncryptedPdf()), 'DOCUMENT_ENCRYPTED');
    assert.match(err.message, /password/);
  });

  test('truncated and garbage files give DOCUMENT_CORRUPT', async () => {
    const full = await F.buildTablePdf();
    await rejectsWith(parsePdf(full.subarray(0, Math.floor(full.length / 2))), 'DOCUMENT_CORRUPT');
    await rejectsWith(parsePdf(F.buildGarbagePdf(true)), 'DOCUMENT_CORRUPT');
    await rejectsWith(parsePdf(F.buildGarbagePdf(false)), 'DOCUMENT_CORRUPT');
    await rejectsWith(parsePdf(new Uint8Array(0)), 'DOCUMENT_CORRUPT');
    await rejectsWith(parsePdf(Buffer.from('<html>not a pdf</html>')), 'DOCUMENT_CORRUPT');
    // The input buffer is left intact (pdf.js gets a copy).
    assert.equal(full[0], 0x25);
  });
});

describe('parsePdf: scanned pages', () => {
  test('without tesseract: empty page and a warning', async () => {
    const doc = await parsePdf(await F.buildMixedPdf(), { blocks: true, tesseractPath: '/nonexistent/tesseract' });
    assert.equal(doc.markdown, 'This first page has a text layer.');
    assert.deepEqual(doc.warnings, ['page 2 has no text layer; OCR needs tesseract (apt-get install tesseract-ocr)']);
    assert.deepEqual(
      doc.blocks!.map((b) => b.status),
      ['parsed', 'empty'],
    );
    assert.deepEqual(doc.blocks![1].items, []);
  });

  test('mode fast never OCRs', async () => {
    const doc = await parsePdf(await F.buildScannedPdf(), { mode: 'fast', blocks: true });
    assert.equal(doc.markdown, '');
    assert.equal(doc.blocks![0].status, 'empty');
  });

  test('with tesseract: recognised words, status ocr, confidence.ocr', async (t) => {
    if (!(await ocrAvailable())) {
      t.skip('tesseract is not installed (apt-get install tesseract-ocr)');
      return;
    }
    const doc = await parsePdf(await F.buildMixedPdf(), { blocks: true, pages: true });
    assert.deepEqual(doc.warnings, []);
    assert.equal(doc.pages![0].markdown, 'This first page has a text layer.');
    const words = doc.pages![1].markdown.toLowerCase();
    for (const w of ['invoice', '4471', 'total', 'amount', 'payment', 'thirty', 'days'])
      assert.ok(words.includes(w), `${w} in ${words}`);
    const b = doc.blocks![1];
    assert.equal(b.status, 'ocr');
    assert.ok(b.items.length >= 1);
    for (const it of b.items) {
      assert.equal(it.source, 'ocr');
      assert.ok(it.confidence.ocr > 0.5 && it.confidence.ocr <= 1, String(it.confidence.ocr));
      assert.ok(it.bbox[0] > 50 && it.bbox[0] < 100, `bbox in points: ${it.bbox}`);
    }
    // "Invoice number 4471" comes before "Payment within thirty days".
    assert.ok(words.indexOf('invoice') < words.indexOf('payment'));
    checkSpans(doc);

    // mode ocr OCRs text pages too.
    const all = await parsePdf(await F.buildMixedPdf(), { mode: 'ocr', blocks: true });
    assert.deepEqual(
      all.blocks!.map((x) => x.status),
      ['ocr', 'ocr'],
    );
    assert.match(all.markdown.toLowerCase(), /first page has a text layer/);
  });
});
