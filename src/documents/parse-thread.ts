// One parser thread of the pool (src/documents/parse-pool.ts): receives {buffer, kind, options,
// timeoutMs}, runs parseDocument with a deadline, answers with the document or a DocumentError's
// code and message. One job at a time.
import { parentPort } from 'node:worker_threads';
import { parseDocument } from './index.ts';
import type { WorkerReply } from './parse-pool.ts';
import type { DocumentKind, ParseOptions } from './types.ts';
import { DocumentError } from '../errors.ts';

interface Request {
  buffer: ArrayBuffer;
  kind: DocumentKind;
  options: Omit<ParseOptions, 'signal'>;
  timeoutMs: number;
}

const port = parentPort;
if (!port) throw new Error('src/documents/parse-thread.ts runs as a worker thread');

port.on('message', (req: Request) => {
  void handle(req).then((reply) => port.postMessage(reply));
});

async function handle(req: Request): Promise<WorkerReply> {
  try {
    // Blocks are always computed for PDFs (they tell which pages were OCR'd) and dropped unless asked.
    const wantBlocks = Boolean(req.options.blocks);
    const document = await parseDocument(new Uint8Array(req.buffer), req.kind, {
      ...req.options,
      blocks: req.kind === 'pdf' ? true : req.options.blocks,
      signal: AbortSignal.timeout(req.timeoutMs),
    });
    const ocrPages = document.blocks?.filter((b) => b.status === 'ocr').length ?? 0;
    if (!wantBlocks) delete document.blocks;
    return { ok: true, document, ocrPages };
  } catch (err) {
    if (err instanceof DocumentError) return { ok: false, code: err.code, message: err.message };
    return {
      ok: false,
      code: 'DOCUMENT_CORRUPT',
      message: `The ${req.kind} document could not be parsed: ${(err as Error)?.message ?? String(err)}`,
    };
  }
}
