// Bad input: zip bombs, truncation, encryption, legacy and unsupported types, detection from
// content, and large sheets (row cap with a warning, 20 sheets).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDocument } from '../../src/documents/index.ts';
import { ZipArchive } from '../../src/documents/zip.ts';
import { buildDocx, buildLargeXlsx, buildPng, buildReportXlsx, writeZip } from '../fixtures/site/documents.ts';
import { DocumentError } from '../../src/errors.ts';
import { detectDocument, detectDocumentKind, requireDocumentKind } from '../../src/documents/detect.ts';

const code = (c: string) => (err: unknown) => err instanceof DocumentError && err.code === c;

function cfb(stream: string): Buffer {
  const b = Buffer.alloc(2048);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(b);
  Buffer.from(stream, 'utf16le').copy(b, 1024);
  return b;
}

test('zip bomb: 50 MB of zeros in one entry stops at a low bound, quickly', async () => {
  const bomb = writeZip([
    { name: '[Content_Types].xml', data: '<Types/>' },
    { name: 'word/document.xml', data: Buffer.alloc(50 * 1024 * 1024) },
  ]);
  assert.ok(bomb.length < 200 * 1024);
  const t = performance.now();
  await assert.rejects(parseDocument(bomb, 'docx', { maxUnpackedBytes: 1024 * 1024 }), code('DOCUMENT_TOO_LARGE'));
  assert.ok(performance.now() - t < 2000);
  // The default bound (200 MB over all entries) is shared: five such entries are over it.
  const five = writeZip(
    Array.from({ length: 5 }, (_v, i) => ({ name: `e${i}`, data: Buffer.alloc(50 * 1024 * 1024) })),
  );
  const zip = new ZipArchive(five);
  await assert.rejects(
    (async () => {
      for (const n of zip.names()) await zip.stream(n, () => {});
    })(),
    code('DOCUMENT_TOO_LARGE'),
  );
});

test('truncated and corrupt containers are DOCUMENT_CORRUPT', async () => {
  const docx = buildDocx();
  await assert.rejects(parseDocument(docx.subarray(0, docx.length - 100), 'docx'), code('DOCUMENT_CORRUPT'));
  await assert.rejects(parseDocument(docx.subarray(0, 2000), 'docx'), code('DOCUMENT_CORRUPT'));
  const flipped = Buffer.from(docx);
  for (let i = 200; i < 600; i++) flipped[i] ^= 0x5a;
  await assert.rejects(parseDocument(flipped, 'docx'), (e) => e instanceof DocumentError);
  await assert.rejects(parseDocument(Buffer.from('not a zip at all'), 'xlsx'), code('DOCUMENT_CORRUPT'));
});

test('encrypted: zip entry flag and Office EncryptedPackage', async () => {
  const zip = writeZip([{ name: 'word/document.xml', data: '<w:document/>' }]);
  zip.writeUInt16LE(1, 6); // local header flags
  const central = zip.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02]));
  zip.writeUInt16LE(1, central + 8);
  await assert.rejects(parseDocument(zip, 'docx'), code('DOCUMENT_ENCRYPTED'));
  const enc = cfb('EncryptedPackage');
  await assert.rejects(parseDocument(enc, 'docx'), code('DOCUMENT_ENCRYPTED'));
  assert.equal(detectDocument(enc, { fileName: 'secret.docx' }).encrypted, true);
  assert.throws(() => requireDocumentKind(enc), code('DOCUMENT_ENCRYPTED'));
});

test('legacy types are recognised by their content; unsupported ones are named', () => {
  assert.equal(detectDocumentKind(cfb('WordDocument'), { fileName: 'a.bin' }), 'doc');
  assert.equal(detectDocumentKind(cfb('Workbook')), 'xls');
  assert.equal(detectDocumentKind(Buffer.from('{\\rtf1\\ansi Hello}')), 'rtf');
  assert.throws(
    () => requireDocumentKind(cfb('__substg1.0_0037001F')),
    (e) => code('DOCUMENT_UNSUPPORTED')(e) && /Outlook message \(\.msg\)/.test((e as Error).message),
  );
  assert.throws(
    () => requireDocumentKind(buildPng()),
    (e) => code('DOCUMENT_UNSUPPORTED')(e) && /PNG/.test((e as Error).message),
  );
});

test('detection: content beats a wrong extension or content type', () => {
  assert.equal(detectDocumentKind(buildDocx(), { fileName: 'x.pdf', contentType: 'application/pdf' }), 'docx');
  assert.equal(detectDocumentKind(buildReportXlsx(), { fileName: 'x.docx' }), 'xlsx');
  assert.equal(detectDocumentKind(Buffer.from('%PDF-1.4\n...'), { fileName: 'x.txt' }), 'pdf');
  assert.equal(
    detectDocumentKind(Buffer.from('<!DOCTYPE html><html><body>x</body></html>'), { contentType: 'text/plain' }),
    'html',
  );
  assert.equal(detectDocumentKind(Buffer.from('a\tb\n1\t2\n')), 'csv');
  assert.equal(detectDocumentKind(Buffer.from('# Title\n\nSome *text*.\n')), 'markdown');
  assert.equal(detectDocumentKind(Buffer.from('Just a sentence.\nAnother one.\n')), 'text');
  assert.equal(detectDocumentKind(Buffer.from('Just words'), { fileName: 'notes.md' }), 'markdown');
});

test('detection of text full of brackets is fast: it runs on the event loop (found by test/fuzz)', () => {
  // The markdown-link sniff was quadratic in a run of "[": 16 KB of them took 0.5 to 1.3 s.
  for (const text of ['['.repeat(20_000), '[a'.repeat(10_000), '!['.repeat(10_000)]) {
    const t = performance.now();
    assert.equal(detectDocumentKind(Buffer.from(text)), 'text');
    assert.ok(performance.now() - t < 100, `${JSON.stringify(text.slice(0, 4))}: ${performance.now() - t} ms`);
  }
  assert.equal(detectDocumentKind(Buffer.from('see [the docs](https://example.com/) here')), 'markdown');
});

test('XML nested 200,000 deep is DOCUMENT_CORRUPT at once, not 50 s of parsing (found by test/fuzz)', async () => {
  const deep = `<?xml version="1.0"?><w:document>${'<w:p>'.repeat(200_000)}x${'</w:p>'.repeat(200_000)}</w:document>`;
  const docx = writeZip([
    { name: '[Content_Types].xml', data: '<Types/>' },
    { name: 'word/document.xml', data: deep },
  ]);
  const t = performance.now();
  await assert.rejects(
    parseDocument(docx, 'docx'),
    (e) => code('DOCUMENT_CORRUPT')(e) && /deeper than 2000/.test(String(e)),
  );
  assert.ok(performance.now() - t < 2000, `${performance.now() - t} ms`);
  // A real document still parses.
  const nested = buildDocx();
  assert.ok((await parseDocument(nested, 'docx')).markdown.length > 0);
});

test('html needs the injected converter', async () => {
  await assert.rejects(parseDocument(Buffer.from('<p>x</p>'), 'html'), code('DOCUMENT_UNSUPPORTED'));
  const r = await parseDocument(Buffer.from('<p>x</p>'), 'html', {
    html: () => ({ kind: 'html', markdown: 'x', metadata: {}, numPages: 1, warnings: [] }),
  });
  assert.equal(r.markdown, 'x');
});

test('aborted parsing is DOCUMENT_TIMEOUT', async () => {
  await assert.rejects(parseDocument(buildDocx(), 'docx', { signal: AbortSignal.abort() }), code('DOCUMENT_TIMEOUT'));
});

test('large sheets: 50,000 rows capped with a warning; 20 sheets', async () => {
  const big = await parseDocument(buildLargeXlsx(1, 50_000), 'xlsx');
  assert.deepEqual(big.warnings, ['Sheet "Sheet1": 40001 rows left out (limit 10000 rows per sheet)']);
  assert.equal(big.markdown.split('\n').filter((l) => l.startsWith('| ')).length, 10_001); // 10,000 rows + separator
  const small = await parseDocument(buildLargeXlsx(1, 100), 'xlsx', { maxRows: 10 });
  assert.deepEqual(small.warnings, ['Sheet "Sheet1": 91 rows left out (limit 10 rows per sheet)']);
  const t = performance.now();
  const twenty = await parseDocument(buildLargeXlsx(20, 500), 'xlsx');
  const ms = performance.now() - t;
  assert.equal(twenty.numPages, 20);
  assert.deepEqual(
    twenty.markdown.split('\n').filter((l) => l.startsWith('## ')),
    Array.from({ length: 20 }, (_v, i) => `## Sheet${i + 1}`),
  );
  assert.match(twenty.markdown, /\| 1 \| Item 20-1 \|/);
  console.log(`20 sheets × 500 rows: ${ms.toFixed(0)} ms`);
});
