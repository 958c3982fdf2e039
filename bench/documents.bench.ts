// Document parsing speed, and what a large parse does to the API's latency.
//
// 1. PDF: Gleaner's parsePdf (markdown with layout: lines, headings by size, paragraphs, tables,
//    lists, page furniture) on the fixture site's 100-page text PDF (buildTextPdf(100), Flate
//    streams, ~45 lines a page) in this thread, against pdf.js (the same legacy build, same
//    document options) calling getTextContent on every page and joining the strings (plain text).
//    Pages/s, median of ROUNDS alternating runs after a warm-up, and the ratio Gleaner/baseline
//    (also as CPU time, baseline/Gleaner: steadier when the machine is shared).
// 2. XLSX: parseDocument(bytes, 'xlsx') (markdown tables) on a 20-sheet workbook
//    (buildLargeXlsx(20, XLSX_ROWS): 5 columns of strings and numbers, shared strings) against
//    exceljs 4 reading the same buffer (`workbook.xlsx.load`) and joining every cell's text.
//    Sheets/s and rows/s, median of ROUNDS alternating runs after a warm-up, ratio.
// 3. API p99: the real service in this process (PGlite store, default GLEANER_PARSE_WORKERS) and
//    the fixture site; SAMPLES small scrapes one at a time (POST /v2/scrape of /articles/1 with
//    maxAge 0: fetched, transformed and stored every time), first idle, then while a client
//    keeps POST /v2/parse of a 300-page PDF (buildTextPdf(300), ~0.7 MB) busy back to back.
//    Two rounds of (idle block, busy block), SAMPLES in all per condition; p50/p99 of each, the
//    ratio of the p99s (goal < 2×), and the main thread's CPU time per scrape (process.threadCpuUsage):
//    when that stays flat while the wall time grows, the parse costs the API a core, not event-loop time.
//
// 4. Legacy formats (.doc, .rtf, .ppt, .xls: test/fixtures/legacy, written by LibreOffice; the .xls by SheetJS):
//    files/s of parseDocument against LibreOffice headless converting the same files to text (`soffice
//    --headless --convert-to txt|csv`, one process per format as a user would run it, startup included) when
//    `soffice` is on PATH (Debian's libreoffice-*-nogui); skipped with a note otherwise.
// 5. Peak memory: a child process per case parses a 200-page PDF and a 50,000-row sheet and reports its peak RSS
//    (process.resourceUsage().maxRSS) beside an idle child's, the baseline of Node and the loaded modules.
//
// Figures are printed as `RESULT` lines; a missed goal is reported, never an exit code.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { utils, write } from '@e965/xlsx';
import ExcelJS from 'exceljs';
import { getDocument, VerbosityLevel } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { Pool } from 'undici';
import { parseDocument } from '../src/documents/index.ts';
import { parsePdf } from '../src/documents/pdf.ts';
import { buildLargeXlsx, buildTextPdf } from '../test/fixtures/site/documents.ts';
import { startFixtureSite } from '../test/fixtures/site/index.ts';
import { startTestService } from '../test/helpers/service.ts';

const PDF_PAGES = 100;
const XLSX_SHEETS = 20;
const XLSX_ROWS = Number(process.env.BENCH_XLSX_ROWS ?? 2000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 200);
const BIG_PDF_PAGES = 300;
const API_ROUNDS = 2;
const PART = process.env.BENCH_DOCUMENTS_PART; // 'pdf' | 'xlsx' | 'api' | 'legacy' | 'rss' to run one part
const LEGACY_ROUNDS = Number(process.env.BENCH_LEGACY_ROUNDS ?? 20);

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(s.length * p) - 1)];
};
const cpuMs = (c: NodeJS.CpuUsage): number => (c.user + c.system) / 1000;

async function timed(fn: () => Promise<unknown>): Promise<{ ms: number; cpu: number }> {
  const c = process.cpuUsage();
  const t = performance.now();
  await fn();
  return { ms: performance.now() - t, cpu: cpuMs(process.cpuUsage(c)) };
}

/** Runs both ROUNDS times after one warm-up each, alternating which goes first. */
async function compare(
  ours: () => Promise<unknown>,
  base: () => Promise<unknown>,
): Promise<{ ours: number[]; base: number[]; oursCpu: number[]; baseCpu: number[] }> {
  await ours();
  await base();
  const r = { ours: [] as number[], base: [] as number[], oursCpu: [] as number[], baseCpu: [] as number[] };
  for (let i = 0; i < ROUNDS; i++) {
    for (const which of i % 2 ? ['base', 'ours'] : ['ours', 'base']) {
      const t = await timed(which === 'ours' ? ours : base);
      (which === 'ours' ? r.ours : r.base).push(t.ms);
      (which === 'ours' ? r.oursCpu : r.baseCpu).push(t.cpu);
    }
  }
  return r;
}

// --- 1. PDF ------------------------------------------------------------------------------------

async function pdfjsPlainText(bytes: Uint8Array): Promise<string> {
  const doc = await getDocument({
    data: new Uint8Array(bytes),
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    useWorkerFetch: false,
    isOffscreenCanvasSupported: false,
    verbosity: VerbosityLevel.ERRORS,
  }).promise;
  try {
    const out: string[] = [];
    for (let n = 1; n <= doc.numPages; n++) {
      const page = await doc.getPage(n);
      const content = await page.getTextContent();
      out.push(content.items.map((it) => ('str' in it ? it.str + (it.hasEOL ? '\n' : '') : '')).join(''));
      page.cleanup();
    }
    return out.join('\n\n');
  } finally {
    await doc.destroy();
  }
}

async function pdfPart(): Promise<void> {
  const bytes = buildTextPdf(PDF_PAGES);
  const check = await parsePdf(bytes);
  const plain = await pdfjsPlainText(bytes);
  if (check.numPages !== PDF_PAGES || !check.markdown.includes(`# Section ${PDF_PAGES}`))
    throw new Error('parsePdf: unexpected output');
  if (!plain.includes(`Section ${PDF_PAGES}`)) throw new Error('pdf.js: unexpected output');
  const r = await compare(
    () => parsePdf(bytes),
    () => pdfjsPlainText(bytes),
  );
  const ours = PDF_PAGES / (median(r.ours) / 1000);
  const base = PDF_PAGES / (median(r.base) / 1000);
  console.log(
    `PDF: ${PDF_PAGES} pages, ${(bytes.length / 1024).toFixed(0)} KB; markdown ${(check.markdown.length / 1024).toFixed(0)} KB, plain text ${(plain.length / 1024).toFixed(0)} KB; ${ROUNDS} rounds`,
  );
  console.log(
    `  Gleaner parsePdf: median ${median(r.ours).toFixed(0)} ms (${r.ours.map((x) => x.toFixed(0)).join(', ')}), CPU ${median(r.oursCpu).toFixed(0)} ms`,
  );
  console.log(
    `  pdf.js getTextContent: median ${median(r.base).toFixed(0)} ms (${r.base.map((x) => x.toFixed(0)).join(', ')}), CPU ${median(r.baseCpu).toFixed(0)} ms`,
  );
  console.log(
    `RESULT documents-pdf: ${ours.toFixed(0)} pages/s vs pdf.js plain text ${base.toFixed(0)} pages/s = ${(ours / base).toFixed(2)}x (CPU time: ${(median(r.baseCpu) / median(r.oursCpu)).toFixed(2)}x)`,
  );
}

// --- 2. XLSX -----------------------------------------------------------------------------------

async function exceljsText(bytes: Uint8Array): Promise<string> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.load(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) as unknown as ExcelJS.Buffer);
  const out: string[] = [];
  wb.eachSheet((ws) => {
    out.push(ws.name);
    ws.eachRow((row) => {
      const cells: string[] = [];
      row.eachCell((cell) => cells.push(cell.text));
      out.push(cells.join('\t'));
    });
  });
  return out.join('\n');
}

async function xlsxPart(): Promise<void> {
  const bytes = buildLargeXlsx(XLSX_SHEETS, XLSX_ROWS);
  const check = await parseDocument(bytes, 'xlsx');
  const plain = await exceljsText(bytes);
  if (check.numPages !== XLSX_SHEETS || !check.markdown.includes(`Item ${XLSX_SHEETS}-${XLSX_ROWS}`))
    throw new Error('parseDocument xlsx: unexpected output');
  if (!plain.includes(`Item ${XLSX_SHEETS}-${XLSX_ROWS}`)) throw new Error('exceljs: unexpected output');
  const r = await compare(
    () => parseDocument(bytes, 'xlsx'),
    () => exceljsText(bytes),
  );
  const rows = XLSX_SHEETS * XLSX_ROWS;
  const ours = XLSX_SHEETS / (median(r.ours) / 1000);
  const base = XLSX_SHEETS / (median(r.base) / 1000);
  console.log(
    `XLSX: ${XLSX_SHEETS} sheets × ${XLSX_ROWS} rows × 5 columns, ${(bytes.length / 1024).toFixed(0)} KB; markdown ${(check.markdown.length / 1024).toFixed(0)} KB, plain text ${(plain.length / 1024).toFixed(0)} KB; ${ROUNDS} rounds`,
  );
  console.log(
    `  Gleaner parseDocument xlsx: median ${median(r.ours).toFixed(0)} ms (${r.ours.map((x) => x.toFixed(0)).join(', ')}), CPU ${median(r.oursCpu).toFixed(0)} ms, ${((rows / median(r.ours)) * 1000).toFixed(0)} rows/s`,
  );
  console.log(
    `  exceljs load + cell.text: median ${median(r.base).toFixed(0)} ms (${r.base.map((x) => x.toFixed(0)).join(', ')}), CPU ${median(r.baseCpu).toFixed(0)} ms, ${((rows / median(r.base)) * 1000).toFixed(0)} rows/s`,
  );
  console.log(
    `RESULT documents-xlsx: ${ours.toFixed(1)} sheets/s vs exceljs ${base.toFixed(1)} sheets/s = ${(ours / base).toFixed(2)}x (CPU time: ${(median(r.baseCpu) / median(r.oursCpu)).toFixed(2)}x)`,
  );
}

// --- 3. API p99 while a large PDF parses -------------------------------------------------------

async function apiPart(): Promise<void> {
  const site = await startFixtureSite();
  const svc = await startTestService({ env: { GLEANER_RATE_LIMITS: 'scrape=0,status=0,account=0' } });
  const api = new Pool(svc.url, { connections: 4 });
  const auth = { authorization: `Bearer ${svc.key}` };
  const small = site.url('/articles/1');
  const big = buildTextPdf(BIG_PDF_PAGES);

  const errors: string[] = [];
  /** One small scrape: wall ms and this thread's CPU ms (NaN when it failed: counted, not fatal). */
  async function scrape(): Promise<{ ms: number; cpu: number }> {
    const c = process.threadCpuUsage();
    const t = performance.now();
    const res = await api.request({
      method: 'POST',
      path: '/v2/scrape',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ url: small, maxAge: 0 }),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) {
      errors.push(`${res.statusCode} ${text.slice(0, 200)}`);
      return { ms: NaN, cpu: NaN };
    }
    return { ms: performance.now() - t, cpu: cpuMs(process.threadCpuUsage(c)) };
  }

  async function parseBig(): Promise<number> {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(big)], { type: 'application/pdf' }), 'big.pdf');
    const t = performance.now();
    const res = await fetch(`${svc.url}/v2/parse`, { method: 'POST', headers: auth, body: form });
    const json = (await res.json()) as { success: boolean; data?: { markdown?: string }; error?: string };
    if (res.status !== 200 || !json.data?.markdown?.includes(`Section ${BIG_PDF_PAGES}`))
      throw new Error(`parse: ${res.status} ${JSON.stringify(json).slice(0, 300)}`);
    return performance.now() - t;
  }

  const idle = { ms: [] as number[], cpu: [] as number[] };
  const busy = { ms: [] as number[], cpu: [] as number[] };
  async function series(into: { ms: number[]; cpu: number[] }, n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      const r = await scrape();
      if (Number.isNaN(r.ms)) continue;
      into.ms.push(r.ms);
      into.cpu.push(r.cpu);
    }
  }

  try {
    for (let i = 0; i < 30; i++) await scrape();
    errors.length = 0;
    const alone = await parseBig(); // starts the parser thread and warms it
    const parses: number[] = [];
    // API_ROUNDS rounds of (idle block, busy block) so both share the machine's drift.
    for (let r = 0; r < API_ROUNDS; r++) {
      await series(idle, SAMPLES / API_ROUNDS);
      let stop = false;
      const loop = (async () => {
        while (!stop) parses.push(await parseBig());
      })();
      await new Promise((res) => setTimeout(res, 200)); // the first parse under way
      await series(busy, SAMPLES / API_ROUNDS);
      stop = true;
      await loop;
    }

    const p99 = pct(idle.ms, 0.99);
    const p99Busy = pct(busy.ms, 0.99);
    const line = (name: string, x: { ms: number[]; cpu: number[] }): string =>
      `${name}: p50 ${median(x.ms).toFixed(1)} ms, p90 ${pct(x.ms, 0.9).toFixed(1)} ms, p99 ${pct(x.ms, 0.99).toFixed(1)} ms, max ${Math.max(...x.ms).toFixed(1)} ms; main-thread CPU per scrape median ${median(x.cpu).toFixed(1)} ms, p99 ${pct(x.cpu, 0.99).toFixed(1)} ms`;
    console.log(
      `API: POST /v2/scrape {url: /articles/1, maxAge: 0} one at a time, ${idle.ms.length} idle + ${busy.ms.length} busy samples in ${API_ROUNDS} alternating rounds; parse threads: ${svc.config.parseWorkers}; load average ${loadavg()
        .map((x) => x.toFixed(1))
        .join(' ')}`,
    );
    console.log(`  ${line('idle', idle)}`);
    console.log(`  ${line(`during ${BIG_PDF_PAGES}-page PDF parses`, busy)}`);
    console.log(
      `  POST /v2/parse of the ${BIG_PDF_PAGES}-page PDF (${(big.length / 1024).toFixed(0)} KB): ${parses.length} completed during the busy blocks, median ${median(parses).toFixed(0)} ms (${((BIG_PDF_PAGES / median(parses)) * 1000).toFixed(0)} pages/s); alone ${alone.toFixed(0)} ms`,
    );
    if (errors.length)
      console.log(`  failed scrapes: ${errors.length} (${[...new Set(errors)].slice(0, 3).join(' | ')})`);
    const ratio = p99Busy / p99;
    console.log(
      `RESULT documents-api-p99: small scrape p99 ${p99Busy.toFixed(1)} ms while a ${BIG_PDF_PAGES}-page PDF parses vs ${p99.toFixed(1)} ms idle = ${ratio.toFixed(2)}x (goal < 2x: ${ratio < 2 ? 'met' : 'NOT met'})`,
    );
  } finally {
    await api.close();
    await svc.destroy();
    await site.close();
  }
}

// --- 4. Legacy formats against LibreOffice ---

function legacyFiles(): { name: string; kind: 'doc' | 'rtf' | 'ppt' | 'xls'; bytes: Buffer; to: string }[] {
  const fixture = (name: string) => readFileSync(new URL(`../test/fixtures/legacy/${name}`, import.meta.url));
  const wb = utils.book_new();
  const rows = [
    ['Region', 'City', 'Units', 'Revenue'],
    ...Array.from({ length: 2000 }, (_, i) => [`R${i % 7}`, `City ${i}`, i, i * 1.5]),
  ];
  utils.book_append_sheet(wb, utils.aoa_to_sheet(rows), 'Sales');
  return [
    { name: 'report.doc', kind: 'doc', bytes: fixture('report.doc'), to: 'txt:Text' },
    { name: 'report.rtf', kind: 'rtf', bytes: fixture('report.rtf'), to: 'txt:Text' },
    { name: 'deck.ppt', kind: 'ppt', bytes: fixture('deck.ppt'), to: 'pdf' },
    { name: 'sales.xls', kind: 'xls', bytes: Buffer.from(write(wb, { type: 'buffer', bookType: 'biff8' })), to: 'csv' },
  ];
}

async function legacyPart(): Promise<void> {
  const files = legacyFiles();
  const soffice = spawnSync('soffice', ['--version'], { encoding: 'utf8' });
  const dir = mkdtempSync(join(tmpdir(), 'gleaner-legacy-'));
  try {
    for (const f of files) {
      for (let i = 0; i < 3; i++) await parseDocument(f.bytes, f.kind); // warm-up
      const t = performance.now();
      for (let i = 0; i < LEGACY_ROUNDS; i++) await parseDocument(f.bytes, f.kind);
      const ours = (LEGACY_ROUNDS / (performance.now() - t)) * 1000;
      if (soffice.status !== 0) {
        console.log(
          `RESULT documents-${f.kind}: ${ours.toFixed(0)} files/s (${f.name}); LibreOffice not installed: no baseline`,
        );
        continue;
      }
      writeFileSync(join(dir, f.name), f.bytes);
      // LibreOffice presentations have no text export: PDF stands in (what converting a .ppt costs it).
      const base: number[] = [];
      for (let i = 0; i < 3; i++) {
        const s0 = performance.now();
        execFileSync('soffice', ['--headless', '--convert-to', f.to, '--outdir', join(dir, 'out'), join(dir, f.name)], {
          stdio: 'ignore',
        });
        base.push(performance.now() - s0);
      }
      const lo = 1000 / median(base);
      console.log(
        `RESULT documents-${f.kind}: ${ours.toFixed(0)} files/s vs LibreOffice headless (${f.to}) ${lo.toFixed(2)} files/s = ${(ours / lo).toFixed(0)}x (${f.name}, ${(f.bytes.length / 1024).toFixed(0)} KB)`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// --- 5. Peak memory of large documents, each in a child process ---

function peakRss(script: string): number {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    cwd: new URL('..', import.meta.url).pathname,
    maxBuffer: 1 << 20,
  });
  return Number(/RSS (\d+)/.exec(out)?.[1] ?? NaN) / 1024;
}

async function rssPart(): Promise<void> {
  const prelude = `import { parseDocument } from './src/documents/index.ts'; import { buildTextPdf, buildLargeXlsx } from './test/fixtures/site/documents.ts';`;
  const report = `console.log('RSS ' + process.resourceUsage().maxRSS);`;
  const idle = peakRss(`${prelude} ${report}`);
  const pdf = peakRss(`${prelude} const b = buildTextPdf(200); await parseDocument(b, 'pdf'); ${report}`);
  const sheet = peakRss(
    `${prelude} const b = buildLargeXlsx(1, 50000); await parseDocument(b, 'xlsx', { maxRows: 50000, maxCells: 1000000 }); ${report}`,
  );
  console.log(
    `RESULT documents-rss: peak RSS parsing a 200-page PDF ${pdf.toFixed(0)} MB, a 50,000-row sheet ${sheet.toFixed(0)} MB; an idle process with the same modules ${idle.toFixed(0)} MB (= ${(pdf / idle).toFixed(2)}x and ${(sheet / idle).toFixed(2)}x)`,
  );
}

if (!PART || PART === 'pdf') await pdfPart();
if (!PART || PART === 'xlsx') await xlsxPart();
if (!PART || PART === 'api') await apiPart();
if (!PART || PART === 'legacy') await legacyPart();
if (!PART || PART === 'rss') await rssPart();
