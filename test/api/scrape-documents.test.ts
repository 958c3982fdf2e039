// POST /v2/scrape of document URLs: the type found from content (also behind a lying or missing
// Content-Type), the same parsers as POST /v2/parse (in the worker pool), credits per PDF page with
// the pdf parser and a flat 1 with `parsers: []`, the object form of the pdf parser (pages,
// blocks, pageMarkers, maxPages), and the errors: encrypted, corrupt, unsupported types.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { FixtureSite } from '../fixtures/site/index.ts';
import { buildReportPdf, buildTextPdf, documentTexts } from '../fixtures/site/documents.ts';
import { buildEncryptedPdf } from '../documents/pdf-fixtures.ts';
import type { Api } from '../helpers/api.ts';
import { type TestService, startSiteAndService, stopSiteAndService } from '../helpers/service.ts';

describe('scrape of document URLs', () => {
  let site: FixtureSite;
  let svc: TestService;
  let api: Api;
  let extra: http.Server;
  let extraUrl: string;

  before(async () => {
    ({ site, svc, api } = await startSiteAndService());
    // Files the fixture site does not serve: an encrypted PDF, a legacy Word file, an Outlook message.
    const legacyDoc = readFileSync(new URL('../fixtures/legacy/report.doc', import.meta.url));
    const outlook = Buffer.alloc(2048);
    Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(outlook);
    Buffer.from('__substg1.0_0037001F', 'utf16le').copy(outlook, 1024);
    extra = http.createServer((req, res) => {
      if (req.url === '/secret.pdf')
        res.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.from(buildEncryptedPdf()));
      else if (req.url === '/people.csv')
        res.writeHead(200, { 'content-type': 'text/csv' }).end('name,email\nAda,ada.lovelace@example.com\n');
      else if (req.url === '/old.doc') res.writeHead(200, { 'content-type': 'application/msword' }).end(legacyDoc);
      else if (req.url === '/mail.msg')
        res.writeHead(200, { 'content-type': 'application/vnd.ms-outlook' }).end(outlook);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => extra.listen(0, '127.0.0.1', resolve));
    extraUrl = `http://127.0.0.1:${(extra.address() as AddressInfo).port}`;
  });
  after(async () => {
    await stopSiteAndService(svc, site);
    await new Promise((resolve) => extra?.close(resolve));
  });

  const credits = async (id: string): Promise<number> => {
    await svc.settled();
    return (await svc.db.query<{ credits: number }>('SELECT credits FROM jobs WHERE id = $1', [id])).rows[0].credits;
  };

  test('a PDF: markdown in reading order, its metadata, 1 credit per page', async () => {
    const res = await api.scrape({ url: site.url('/files/report.pdf') });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const d = res.json.data;
    const t = documentTexts.pdf;
    assert.equal(d.metadata.numPages, t.pageCount);
    assert.equal(d.metadata.title, t.title);
    assert.equal(d.metadata.author, t.author);
    assert.equal(d.metadata.contentType, 'application/pdf');
    assert.equal(d.metadata.statusCode, 200);
    // Every line of the body text, in order (page footers are page furniture, left out).
    let at = 0;
    for (const line of t.pages.flat().filter((l) => !/^Page \d+ of \d+$/.test(l))) {
      const i = d.markdown.indexOf(line.split(' ').slice(0, 3).join(' '), at);
      assert.ok(i >= at, `"${line}" missing or out of order`);
      at = i;
    }
    assert.match(d.markdown, /\| Region \| Revenue \| Growth \|/);
    assert.equal(d.metadata.creditsUsed, 3);
    assert.equal(await credits(d.metadata.scrapeId), 3);
    assert.equal(d.pages, undefined, 'pages only when asked');
  });

  test('found from content: a PDF served as octet-stream, as text/html, without extension', async () => {
    for (const path of ['/files/report.bin', '/files/pdf-as-html', '/download/report', '/download/attachment']) {
      const res = await api.scrape({ url: site.url(path) });
      assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.data.metadata.numPages, 3, path);
      assert.match(res.json.data.markdown, /Executive Summary/, path);
    }
  });

  test('office, EPUB, CSV: each through its parser, 1 credit', async () => {
    const cases: [string, RegExp][] = [
      ['/files/report.docx', /^# Gleaner Project Handbook$/m],
      ['/files/document.bin', /^## Getting Started$/m],
      ['/files/report.xlsx', /\| Region \| Product \| Units \| Revenue \|/],
      ['/download/spreadsheet', /## Inventory/],
      ['/files/slides.pptx', /## Slide 1: Gleaner Overview/],
      ['/files/book.epub', /\S/],
      ['/files/document.odt', /\S/],
      ['/files/spreadsheet.ods', /\|/],
      ['/files/presentation.odp', /## Slide 1/],
      ['/files/data.csv', /^\| .* \|$/m],
    ];
    for (const [path, expected] of cases) {
      const res = await api.scrape({ url: site.url(path), formats: ['markdown', 'links'] });
      assert.equal(res.status, 200, `${path}: ${JSON.stringify(res.json)}`);
      assert.match(res.json.data.markdown, expected, path);
      assert.equal(res.json.data.metadata.creditsUsed, 1, path);
      assert.ok(Array.isArray(res.json.data.links), path);
    }
    const docx = await api.scrape({ url: site.url('/files/report.docx'), formats: ['links'] });
    assert.deepEqual(docx.json.data.links, [documentTexts.docx.link.href]);
  });

  test('parsers: [] returns the PDF base64-encoded for 1 credit; the object form fills pages, blocks, markers, maxPages', async () => {
    const raw = await api.scrape({ url: site.url('/files/report.pdf'), parsers: [] });
    assert.equal(raw.status, 200, JSON.stringify(raw.json));
    assert.deepEqual(Buffer.from(raw.json.data.rawBase64, 'base64'), buildReportPdf());
    assert.equal(raw.json.data.markdown, undefined);
    assert.equal(raw.json.data.metadata.creditsUsed, 1);
    assert.match(raw.json.data.warning, /base64/);

    const rich = await api.scrape({
      url: site.url('/files/report.pdf'),
      parsers: [{ type: 'pdf', pages: true, blocks: true, pageMarkers: true }],
    });
    assert.equal(rich.status, 200, JSON.stringify(rich.json));
    const d = rich.json.data;
    assert.deepEqual(
      d.pages.map((p: { pageNumber: number }) => p.pageNumber),
      [1, 2, 3],
    );
    assert.match(d.pages[1].markdown, /Regional Results/);
    assert.equal(d.blocks.length, 3);
    const item = d.blocks[0].items.find((i: { type: string }) => i.type !== 'footer');
    assert.equal(d.markdown.slice(item.markdownSpan[0], item.markdownSpan[1]).replace(/^#+ /, ''), item.content);
    assert.match(d.markdown, /<!-- Page 1 -->[\s\S]*<!-- Page 2 -->[\s\S]*<!-- Page 3 -->/);

    const two = await api.scrape({
      url: site.url('/files/generated.pdf?pages=10'),
      parsers: [{ type: 'pdf', maxPages: 2 }],
    });
    assert.equal(two.status, 200, JSON.stringify(two.json));
    assert.equal(two.json.data.metadata.creditsUsed, 2, 'credits for the pages converted');
    assert.ok(buildTextPdf(10).length > 0);
  });

  test('redactPII applies to the document markdown; with blocks it is a 400', async () => {
    const plain = await api.scrape({ url: `${extraUrl}/people.csv` });
    assert.match(plain.json.data.markdown, /ada\.lovelace@example\.com/);
    const res = await api.scrape({ url: `${extraUrl}/people.csv`, redactPII: true });
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.doesNotMatch(res.json.data.markdown, /ada\.lovelace@example\.com/);
    assert.match(res.json.data.markdown, /\| Ada \|/);
    const bad = await api.scrape({
      url: site.url('/files/report.pdf'),
      redactPII: true,
      parsers: [{ type: 'pdf', blocks: true }],
    });
    assert.equal(bad.status, 400);
    assert.match(bad.json.error, /body\.parsers\.0\.blocks/);
  });

  test('errors: encrypted 422, corrupt 422, an Outlook message 415 naming the type (a legacy Word file converts); the image parser is refused', async () => {
    const enc = await api.scrape({ url: `${extraUrl}/secret.pdf` });
    assert.equal(enc.status, 422, JSON.stringify(enc.json));
    assert.equal(enc.json.code, 'DOCUMENT_ENCRYPTED');
    const corrupt = await api.scrape({ url: site.url('/files/corrupt.pdf') });
    assert.equal(corrupt.status, 422, JSON.stringify(corrupt.json));
    assert.equal(corrupt.json.code, 'DOCUMENT_CORRUPT');
    const legacy = await api.scrape({ url: `${extraUrl}/old.doc` });
    assert.equal(legacy.status, 200, JSON.stringify(legacy.json));
    assert.match(legacy.json.data.markdown, /\| North \| 1240 \| 96% \|/);
    const outlook = await api.scrape({ url: `${extraUrl}/mail.msg` });
    assert.equal(outlook.status, 415, JSON.stringify(outlook.json));
    assert.equal(outlook.json.code, 'SCRAPE_UNSUPPORTED_FILE_ERROR');
    assert.match(outlook.json.error, /Outlook message/);
    const image = await api.scrape({ url: site.url('/files/report.pdf'), parsers: [{ type: 'image' }] });
    assert.equal(image.status, 400);
    assert.match(image.json.error, /body\.parsers\.0/);
    // The failed jobs cost nothing.
    await svc.settled();
    const { rows } = await svc.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM jobs WHERE status = 'failed' AND credits > 0",
    );
    assert.equal(rows[0].n, 0);
  });
});
