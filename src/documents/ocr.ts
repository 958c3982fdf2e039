// Tesseract runner (Debian `tesseract-ocr`): recognises the words of one image through the
// `tesseract` CLI with TSV output. Shared by the PDF parser (scanned pages) and, later, images.
// The binary is optional: ocrAvailable() says whether it runs; callers warn when it does not.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One recognised word; box in image pixels, conf 0..100. */
export interface OcrWord {
  text: string;
  left: number;
  top: number;
  width: number;
  height: number;
  conf: number;
  /** Tesseract's block / paragraph / line numbers (a line is unique by all three). */
  block: number;
  par: number;
  line: number;
}

export interface OcrOptions {
  /** Path of the tesseract binary; default `tesseract` on PATH. */
  tesseractPath?: string;
  /** Tesseract language(s), e.g. `eng` or `eng+deu`; default `eng`. */
  language?: string;
  /** Page segmentation mode; default 3 (fully automatic). */
  psm?: number;
  timeoutMs?: number;
  signal?: AbortSignal;
}

const availability = new Map<string, Promise<boolean>>();

/** Whether `tesseract --version` runs (cached per binary path). */
export function ocrAvailable(tesseractPath = 'tesseract'): Promise<boolean> {
  let p = availability.get(tesseractPath);
  if (!p) {
    p = new Promise<boolean>((resolve) => {
      try {
        execFile(tesseractPath, ['--version'], { timeout: 10_000 }, (err) => resolve(!err));
      } catch {
        resolve(false);
      }
    });
    availability.set(tesseractPath, p);
  }
  return p;
}

/** Parses tesseract's TSV output into words (level 5 rows with text). */
export function parseTesseractTsv(tsv: string): OcrWord[] {
  const words: OcrWord[] = [];
  for (const row of tsv.split('\n')) {
    if (!row.startsWith('5\t')) continue;
    const f = row.split('\t');
    if (f.length < 12) continue;
    const text = f.slice(11).join('\t').trim();
    if (!text) continue;
    words.push({
      block: Number(f[2]),
      par: Number(f[3]),
      line: Number(f[4]),
      left: Number(f[6]),
      top: Number(f[7]),
      width: Number(f[8]),
      height: Number(f[9]),
      conf: Math.max(0, Number(f[10])),
      text,
    });
  }
  return words;
}

/** Runs tesseract on an image (PNG/JPEG/TIFF bytes) and returns the recognised words. */
export async function recognise(image: Uint8Array, opts: OcrOptions = {}): Promise<OcrWord[]> {
  const dir = await mkdtemp(join(tmpdir(), 'gleaner-ocr-'));
  try {
    const file = join(dir, 'page.png');
    await writeFile(file, image);
    const args = [file, 'stdout', '-l', opts.language ?? 'eng', '--psm', String(opts.psm ?? 3), 'tsv'];
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        opts.tesseractPath ?? 'tesseract',
        args,
        {
          timeout: opts.timeoutMs ?? 120_000,
          maxBuffer: 64 * 1024 * 1024,
          signal: opts.signal,
          env: { ...process.env, OMP_THREAD_LIMIT: '1' },
        },
        (err, out) => (err ? reject(err) : resolve(out)),
      );
    });
    return parseTesseractTsv(stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
