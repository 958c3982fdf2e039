// Fuzzing of the document parsers with mutated real files: every fixture document (the site's
// documents, the richer parser fixtures, the Word corpus, the legacy files, PDFs and XLS) is
// mutated byte by byte (flips, truncation, splices, zeroed and duplicated ranges, a corrupted
// zip end) and, for zip containers (OOXML, ODF, EPUB), entry by entry (an entry's XML corrupted,
// truncated, dropped, duplicated, swapped, or replaced by an entity bomb or deep nesting), then
// detected and parsed in the parser threads exactly as POST /v2/parse does.
//
// Each parse must settle within a bound, resolve with a document or reject with a DocumentError
// carrying a document code; never time out (a small mutated file is no reason to run for 15 s),
// never run a thread out of its heap nor crash it; and the main thread's share (detection, the
// links of the markdown) must not throw or take long. RSS of this process stays bounded.
//
// Seeded and bounded for CI: FUZZ_SEED (default 42) and FUZZ_DOC_RUNS (mutants per file, default 60).
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { after, describe, test } from 'node:test';
import { utils, write } from '@e965/xlsx';
import fc from 'fast-check';
import { markdownTargets } from '../../src/documents/convert.ts';
import { detectDocument } from '../../src/documents/detect.ts';
import { ZipArchive } from '../../src/documents/zip.ts';
import { ParsePool } from '../../src/documents/parse-pool.ts';
import type { DocumentKind } from '../../src/documents/types.ts';
import { DocumentError, errorCodeGroups } from '../../src/errors.ts';
import {
  allDocuments,
  buildRichDocx,
  buildRichOdp,
  buildRichOds,
  buildRichOdt,
  buildRichPptx,
  buildRichXlsx,
  buildSpineEpub,
  buildTextPdf,
  writeZip,
} from '../fixtures/site/documents.ts';
import { buildArticlePdf, buildEncryptedPdf, buildTablePdf } from '../documents/pdf-fixtures.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 42);
const RUNS = Number(process.env.FUZZ_DOC_RUNS ?? 60);
/** Each parse's deadline in the thread (what a caller's `timeout` is). */
const PARSE_TIMEOUT_MS = 15_000;
/** The parser threads' heap (the service's default is 1024 MB; a mutant of a small file needs far less). */
const THREAD_HEAP_MB = 512;
/** The main thread's work on one parse (detection, links of the markdown). */
const MAIN_THREAD_BOUND_MS = 1000;

const documentCodes = new Set(Object.keys(errorCodeGroups.find((g) => g.title.startsWith('Documents'))?.codes ?? {}));

// ---- The corpus: real files, each with its kind

function isZip(b: Buffer): boolean {
  return b.length > 4 && b.readUInt32LE(0) === 0x04034b50;
}

const fixtures = new URL('../fixtures/', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, fixtures));

function xls(): Buffer {
  const wb = utils.book_new();
  utils.book_append_sheet(
    wb,
    utils.aoa_to_sheet([
      ['Region', 'Units', 'Revenue'],
      ['North', 12, 345.5],
      ['South', 7, 99],
    ]),
    'Sales',
  );
  return Buffer.from(write(wb, { type: 'buffer', bookType: 'biff8' }));
}

interface Entry {
  name: string;
  data: Buffer;
  store: boolean;
}
/** Each file with its kind and, for a zip container, its entries (read by the service's own zip reader). */
const corpus: { name: string; kind: DocumentKind; bytes: Buffer; entries?: Entry[] }[] = [];
const pending: Promise<void>[] = [];
function add(name: string, bytes: Uint8Array): void {
  const b = Buffer.from(bytes);
  const kind = detectDocument(b, { fileName: name }).kind;
  if (!kind || kind === 'html') return;
  const item: (typeof corpus)[number] = { name, kind, bytes: b };
  corpus.push(item);
  if (isZip(b))
    pending.push(
      (async () => {
        const zip = new ZipArchive(b);
        item.entries = [];
        for (const entry of zip.names())
          item.entries.push({ name: entry, data: Buffer.from(await zip.readBytes(entry)), store: false });
      })(),
    );
}
for (const [name, bytes] of Object.entries(allDocuments())) add(name, bytes);
add('rich.docx', buildRichDocx());
add('rich.xlsx', buildRichXlsx());
add('rich.pptx', buildRichPptx());
add('spine.epub', buildSpineEpub());
add('rich.odt', buildRichOdt());
add('rich.ods', buildRichOds());
add('rich.odp', buildRichOdp());
add('text.pdf', buildTextPdf(3));
add('article.pdf', await buildArticlePdf());
add('table.pdf', await buildTablePdf());
add('encrypted.pdf', buildEncryptedPdf());
add('sales.xls', xls());
for (const file of readdirSync(new URL('word/', fixtures)).filter((f) => f.endsWith('.docx')))
  add(`word/${file}`, read(`word/${file}`));
for (const file of ['report.doc', 'deck.ppt', 'report.rtf', 'report.docx', 'report.fodt', 'deck.fodp'])
  add(`legacy/${file}`, read(`legacy/${file}`));
add(
  'notes.md',
  Buffer.from('# Notes\n\n- [a link](https://example.com/) and ![img](x.png)\n\n| a | b |\n|---|---|\n| 1 | 2 |\n'),
);
add('plain.txt', Buffer.from('Plain text, several sentences. Another one here.\n'.repeat(20)));
await Promise.all(pending);

// ---- Mutations

type ByteMutation =
  | { op: 'flip'; at: number[]; xor: number }
  | { op: 'truncate'; at: number }
  | { op: 'delete'; at: number; len: number }
  | { op: 'insert'; at: number; bytes: Uint8Array }
  | { op: 'fill'; at: number; len: number; value: number }
  | { op: 'duplicate'; at: number; len: number; to: number; times: number }
  | { op: 'tail'; at: number; xor: number };

const pos = fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true });
const byteMutation: fc.Arbitrary<ByteMutation> = fc.oneof(
  fc.record({
    op: fc.constant('flip' as const),
    at: fc.array(pos, { minLength: 1, maxLength: 16 }),
    xor: fc.integer({ min: 1, max: 255 }),
  }),
  fc.record({ op: fc.constant('truncate' as const), at: pos }),
  fc.record({ op: fc.constant('delete' as const), at: pos, len: fc.integer({ min: 1, max: 4096 }) }),
  fc.record({ op: fc.constant('insert' as const), at: pos, bytes: fc.uint8Array({ minLength: 1, maxLength: 512 }) }),
  fc.record({
    op: fc.constant('fill' as const),
    at: pos,
    len: fc.integer({ min: 1, max: 4096 }),
    value: fc.constantFrom(0, 0xff, 0x5b),
  }),
  fc.record({
    op: fc.constant('duplicate' as const),
    at: pos,
    len: fc.integer({ min: 1, max: 2048 }),
    to: pos,
    times: fc.constantFrom(1, 2, 50, 1000),
  }),
  // The end of a zip (its central directory and end record) or of a PDF (xref, trailer).
  fc.record({
    op: fc.constant('tail' as const),
    at: fc.integer({ min: 1, max: 200 }),
    xor: fc.integer({ min: 1, max: 255 }),
  }),
);

/**
 * Largest mutant: a duplicated chunk may grow a file, up to this. pdf.js rescans an unterminated
 * string to the end of the file for each object when it rebuilds a broken xref: a 400 KB mutant
 * of text.pdf took 11 s of CPU (bounded by the parse timeout; pdf.js's own, not fixed here).
 */
const MAX_MUTANT_BYTES = 256 * 1024;

function applyBytes(input: Uint8Array, m: ByteMutation): Buffer {
  const b = Buffer.from(input);
  const at = (p: number) => Math.floor(p * b.length);
  switch (m.op) {
    case 'flip':
      for (const p of m.at) if (b.length) b[at(p)] ^= m.xor;
      return b;
    case 'truncate':
      return b.subarray(0, at(m.at));
    case 'delete':
      return Buffer.concat([b.subarray(0, at(m.at)), b.subarray(at(m.at) + m.len)]);
    case 'insert':
      return Buffer.concat([b.subarray(0, at(m.at)), m.bytes, b.subarray(at(m.at))]);
    case 'fill':
      b.fill(m.value, at(m.at), Math.min(b.length, at(m.at) + m.len));
      return b;
    case 'duplicate': {
      const chunk = b.subarray(at(m.at), at(m.at) + m.len);
      const times = Math.max(1, Math.min(m.times, Math.floor(MAX_MUTANT_BYTES / Math.max(1, chunk.length))));
      return Buffer.concat([b.subarray(0, at(m.to)), ...Array<Buffer>(times).fill(chunk), b.subarray(at(m.to))]);
    }
    case 'tail':
      if (b.length) b[Math.max(0, b.length - m.at)] ^= m.xor;
      return b;
  }
}

const ENTITY_BOMB =
  '<?xml version="1.0"?><!DOCTYPE d [<!ENTITY a "aaaaaaaaaa">' +
  Array.from(
    { length: 8 },
    (_v, i) => `<!ENTITY ${String.fromCharCode(98 + i)} "${`&${String.fromCharCode(97 + i)};`.repeat(10)}">`,
  ).join('') +
  ']><d>&i;</d>';

type EntryMutation =
  | { op: 'bytes'; entry: number; mutations: ByteMutation[] }
  | { op: 'replace'; entry: number; with: 'entity-bomb' | 'deep' | 'wide' | 'empty' | 'utf16' | 'garbage' }
  | { op: 'drop'; entry: number }
  | { op: 'duplicate'; entry: number }
  | { op: 'swap'; entry: number; other: number }
  | { op: 'store'; entry: number };

const entryMutation: fc.Arbitrary<EntryMutation> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('bytes' as const),
      entry: fc.nat(),
      mutations: fc.array(byteMutation, { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('replace' as const),
      entry: fc.nat(),
      with: fc.constantFrom(
        'entity-bomb' as const,
        'deep' as const,
        'wide' as const,
        'empty' as const,
        'utf16' as const,
        'garbage' as const,
      ),
    }),
  },
  fc.record({ op: fc.constant('drop' as const), entry: fc.nat() }),
  fc.record({ op: fc.constant('duplicate' as const), entry: fc.nat() }),
  fc.record({ op: fc.constant('swap' as const), entry: fc.nat(), other: fc.nat() }),
  fc.record({ op: fc.constant('store' as const), entry: fc.nat() }),
);

function replacement(kind: string, original: Buffer): Buffer {
  switch (kind) {
    case 'entity-bomb':
      return Buffer.from(ENTITY_BOMB);
    case 'deep':
      return Buffer.from(`<?xml version="1.0"?><d>${'<p>'.repeat(200_000)}x${'</p>'.repeat(200_000)}</d>`);
    case 'wide':
      return Buffer.from(`<?xml version="1.0"?><d>${'<p a="1" b="2"><r><t>x</t></r></p>'.repeat(100_000)}</d>`);
    case 'empty':
      return Buffer.alloc(0);
    case 'utf16':
      return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(original.toString('latin1'), 'utf16le')]);
    default:
      return Buffer.from(original.map((_v, i) => (i * 131 + 7) & 0xff));
  }
}

function applyEntries(original: Entry[], mutations: EntryMutation[]): Buffer {
  const entries = original.map((e) => ({ ...e }));
  for (const m of mutations) {
    if (!entries.length) break;
    const i = m.entry % entries.length;
    const e = entries[i];
    switch (m.op) {
      case 'bytes':
        e.data = m.mutations.reduce((d, bm) => applyBytes(d, bm), e.data);
        break;
      case 'replace':
        e.data = replacement(m.with, e.data);
        break;
      case 'drop':
        entries.splice(i, 1);
        break;
      case 'duplicate':
        entries.push({ ...e, data: Buffer.from(e.data) });
        break;
      case 'swap':
        e.data = entries[m.other % entries.length].data;
        break;
      case 'store':
        e.store = !e.store;
        break;
    }
  }
  return writeZip(entries);
}

function mutantArb(original: Buffer, entries: Entry[] | undefined): fc.Arbitrary<Buffer> {
  const bytes = fc
    .array(byteMutation, { minLength: 1, maxLength: 4 })
    .map((ms) => ms.reduce((b, m) => applyBytes(b, m), original));
  if (!entries) return bytes;
  return fc.oneof(
    bytes,
    fc.array(entryMutation, { minLength: 1, maxLength: 3 }).map((ms) => applyEntries(entries, ms)),
  );
}

// ---- Parsing

const pool = new ParsePool({ size: 2, maxQueue: 4, maxOldGenerationSizeMb: THREAD_HEAP_MB, graceMs: 2000 });
/** What the parses ended with, by file and outcome (FUZZ_VERBOSE=1 prints it). */
const outcomes = new Map<string, number>();

async function parseMutant(name: string, kind: DocumentKind, bytes: Buffer): Promise<void> {
  const what = `${name} (${kind}, ${bytes.length} bytes)`;
  let t = performance.now();
  // The main thread's share before a parse: detection from content.
  const detected = detectDocument(bytes, { fileName: name });
  assert.ok(performance.now() - t < MAIN_THREAD_BOUND_MS, `${what}: detection took ${performance.now() - t} ms`);
  const bound = PARSE_TIMEOUT_MS + 5000;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: the parse did not settle within ${bound} ms`)), bound);
  });
  let outcome: string;
  try {
    // The pool takes the bytes (transferred): a copy, so that a failure can still name them.
    const { document } = await Promise.race([
      pool.parse(new Uint8Array(bytes), kind, { mode: 'fast', maxPages: 50 }, PARSE_TIMEOUT_MS),
      deadline,
    ]);
    assert.equal(typeof document.markdown, 'string', what);
    assert.ok(Number.isFinite(document.numPages), what);
    t = performance.now();
    markdownTargets(document.markdown);
    assert.ok(
      performance.now() - t < MAIN_THREAD_BOUND_MS,
      `${what}: links of the markdown took ${performance.now() - t} ms`,
    );
    outcome = `ok${detected.kind === kind ? '' : ` (detected ${detected.kind ?? 'nothing parseable'})`}`;
  } catch (err) {
    if (!(err instanceof DocumentError)) throw err;
    assert.ok(documentCodes.has(err.code), `${what}: code ${err.code}`);
    // The thread's deadline is the bound; a small mutant is no reason to reach it, but pdf.js may
    // (MAX_MUTANT_BYTES above) on a loaded machine.
    if (kind !== 'pdf') assert.notEqual(err.code, 'DOCUMENT_TIMEOUT', `${what}: ${err.message}`);
    assert.doesNotMatch(err.message, /ran out of memory|crashed|exited with code/, what);
    // A raw error of a parser (a TypeError...) is reported as DOCUMENT_CORRUPT with its message.
    const raw = /Cannot read|is not a function|is not iterable|undefined|null/.test(err.message) ? ' (raw)' : '';
    outcome = `${err.code}${raw}`;
    if (raw && process.env.FUZZ_VERBOSE) console.log(`${what}: ${err.message}`);
  } finally {
    clearTimeout(timer);
  }
  const key = `${kind} ${outcome}`;
  outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
}

describe(`document parsers fuzz (seed ${SEED}, ${RUNS} mutants per file)`, () => {
  const rssBefore = process.memoryUsage().rss;
  after(async () => {
    await pool.close();
    if (process.env.FUZZ_VERBOSE)
      console.log(
        [...outcomes]
          .sort()
          .map(([k, n]) => `${k}: ${n}`)
          .join('\n'),
      );
  });

  test('the corpus has every kind of file', () => {
    const kinds = new Set(corpus.map((c) => c.kind));
    for (const k of [
      'pdf',
      'docx',
      'doc',
      'odt',
      'xlsx',
      'xls',
      'ods',
      'csv',
      'pptx',
      'ppt',
      'odp',
      'epub',
      'rtf',
      'text',
      'markdown',
    ])
      assert.ok(kinds.has(k as DocumentKind), `no ${k} in ${[...kinds].join(', ')}`);
  });

  for (const { name, kind, bytes, entries } of corpus) {
    test(`${name} (${kind})`, async () => {
      await fc.assert(
        fc.asyncProperty(mutantArb(bytes, entries), (mutant) => parseMutant(name, kind, mutant)),
        // A failure is shrunk for a minute at most (each step is a parse): CI reports what it has by then.
        { seed: SEED, numRuns: RUNS, interruptAfterTimeLimit: 60_000 },
      );
    });
  }

  test('memory stays bounded over the whole run', () => {
    const grown = process.memoryUsage().rss - rssBefore;
    assert.ok(grown < 1024 * 1024 * 1024, `RSS grew by ${(grown / 1024 / 1024).toFixed(0)} MB`);
  });
});
