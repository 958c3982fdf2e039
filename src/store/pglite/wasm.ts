// How PGlite is loaded: the memory it may use, and one compilation choice that keeps its peak low.
//
// V8 runs WebAssembly first with its baseline compiler (Liftoff) and recompiles hot functions
// with its optimising compiler (TurboFan) on background threads. One function of PGlite's
// Postgres is far more expensive to optimise than the rest: raw_parser, the SQL grammar's parser
// (Bison's state machine, 105 KB of code). TurboFan takes ~600 MB of compiler memory (and 3–10 s
// of CPU) for it alone, once per process, whenever it gets hot: on the first few hundred
// statements, that is at every start-up. Every other function takes under 90 MB. So the module
// is compiled here with raw_parser on Liftoff for good and every other function tiering up as
// usual: the compiler peak goes, the other hot paths (executor, storage, WAL…) keep TurboFan's
// speed, and parsing costs a little more CPU. (`--liftoff-only` on the whole process also
// removes the peak, but then all of Postgres runs at about half its speed once warm.)
//
// How: V8 only tiers up a function whose Liftoff code counts its executions, and Liftoff leaves
// the counting out while the flag --wasm-tier-up-filter names another function. raw_parser is
// compiled eagerly, alone, while the filter names an import (a function that is never compiled),
// through a `compilationHints` section (the WebAssembly compilation-hints proposal, behind V8's
// --experimental-wasm-compilation-hints: a custom section, so the code itself is unchanged)
// that asks for raw_parser to be compiled eagerly with Liftoff. The flags are set for the
// synchronous compile only and restored at once; every other function is compiled lazily
// afterwards with the default flags. Checked on V8 13.6 (Node 24, pinned by package.json); on
// any other V8, or when the process was started with its own WebAssembly tiering flags, PGlite
// loads its module itself, as it does without this file.
import { readFileSync } from 'node:fs';
import v8 from 'node:v8';

/** A compiled WebAssembly module (this project's `lib`, es2024 without the DOM, has no WebAssembly types). */
export type WasmModule = object;
declare const WebAssembly: { Module: new (bytes: Uint8Array) => WasmModule };

/** The function kept on Liftoff (see above). */
export const PARSER_EXPORT = 'raw_parser';

/**
 * Postgres settings for every PGlite of the service (PGlite passes them to the embedded server
 * as `-c` options on top of its own defaults). shared_buffers is 128 MB by default, and PGlite
 * zero-fills all of its shared memory when Postgres starts, so it all counts in the process's
 * resident memory from the first moment; 16 MB keeps the pages the crawl and the API touch most
 * (the frontier, the jobs, the page-cache index) while the operating system's file cache keeps
 * the rest of the database (PGlite reads and writes real files). A single-user server never has
 * more than one connection.
 */
export const PGLITE_SETTINGS = ['shared_buffers=16MB', 'max_connections=8'];

/**
 * Node flags of the child that creates a new data directory (src/store/pglite/initdb.ts). initdb
 * runs each of its statements once, so V8's optimising compiler only costs there (its compile of
 * the parser alone is the ~600 MB above): Liftoff alone. And PGlite's initdb keeps dead copies
 * of a whole Postgres memory and of the data directory (a tar) in ArrayBuffers that only a
 * major GC frees: a small old space (the child's live JavaScript heap is ~20 MB) makes V8 collect
 * them sooner. The child peaks ~450 MB instead of ~1.1 GB, and finishes sooner.
 */
export const PGLITE_INIT_NODE_ARGS = ['--liftoff-only', '--max-old-space-size=64'];

interface WasmLayout {
  functionImports: number;
  declaredFunctions: number;
  /** Byte offset just after the function section (where the hints section goes). */
  functionSectionEnd: number;
  exports: Map<string, number>;
}

/** The few facts this file needs from a WebAssembly binary; undefined when it reads anything unexpected. */
export function readWasmLayout(bytes: Uint8Array): WasmLayout | undefined {
  const magic = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  if (bytes.length < 8 || magic.some((b, i) => bytes[i] !== b)) return undefined;
  let p = 8;
  const u32 = (): number => {
    let result = 0;
    let shift = 0;
    for (;;) {
      if (p >= bytes.length) throw new RangeError('truncated');
      const b = bytes[p++];
      result += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (!(b & 0x80)) return result;
    }
  };
  const skipName = () => {
    const n = u32();
    p += n;
  };
  const skipLimits = () => {
    const flags = bytes[p++];
    u32();
    if (flags & 1) u32();
  };
  const skipValType = () => {
    const t = bytes[p++];
    if (t === 0x63 || t === 0x64) u32(); // (ref null? heaptype): a signed LEB, skipped the same way
  };
  const layout: WasmLayout = { functionImports: 0, declaredFunctions: -1, functionSectionEnd: -1, exports: new Map() };
  try {
    while (p < bytes.length) {
      const id = bytes[p++];
      const size = u32();
      const end = p + size;
      if (id === 2) {
        const n = u32();
        for (let i = 0; i < n; i++) {
          skipName();
          skipName();
          const kind = bytes[p++];
          if (kind === 0) {
            layout.functionImports++;
            u32();
          } else if (kind === 1) {
            skipValType();
            skipLimits();
          } else if (kind === 2) skipLimits();
          else if (kind === 3) {
            skipValType();
            p++;
          } else if (kind === 4) {
            p++;
            u32();
          } else return undefined;
        }
      } else if (id === 3) {
        layout.declaredFunctions = u32();
        layout.functionSectionEnd = end;
      } else if (id === 7) {
        const n = u32();
        for (let i = 0; i < n; i++) {
          const len = u32();
          const name = Buffer.from(bytes.buffer, bytes.byteOffset + p, len).toString('utf8');
          p += len;
          const kind = bytes[p++];
          const index = u32();
          if (kind === 0) layout.exports.set(name, index);
        }
      }
      if (end > bytes.length) return undefined;
      p = end;
    }
  } catch {
    return undefined;
  }
  return layout.declaredFunctions > 0 ? layout : undefined;
}

const leb = (n: number): Buffer => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return Buffer.from(out);
};

/**
 * The module's bytes with a compilationHints section asking for function `index` to be compiled
 * eagerly with Liftoff and never tiered up (one byte per declared function: strategy in bits 0–1,
 * baseline tier in 2–3, top tier in 4–5; 0 is the default for the others).
 */
export function withLiftoffHint(bytes: Uint8Array, layout: WasmLayout, index: number): Buffer {
  const EAGER = 2;
  const LIFTOFF = 1;
  const hints = Buffer.alloc(layout.declaredFunctions);
  hints[index - layout.functionImports] = EAGER | (LIFTOFF << 2) | (LIFTOFF << 4);
  const name = Buffer.from('compilationHints');
  const payload = Buffer.concat([leb(name.length), name, leb(layout.declaredFunctions), hints]);
  const at = layout.functionSectionEnd;
  return Buffer.concat([bytes.subarray(0, at), Buffer.from([0]), leb(payload.length), payload, bytes.subarray(at)]);
}

/** Whether this process may set the flags (see above): the V8 it was checked on, no tiering flags of its own. */
function canSteerTiering(): boolean {
  if (!process.versions.v8.startsWith('13.6.')) return false;
  const own = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  return !own.some((a) =>
    /^--(no-)?(liftoff|liftoff-only|wasm-tier-up|wasm-tier-up-filter|wasm-dynamic-tiering|experimental-wasm-compilation-hints|wasm-lazy-compilation)(=|$)/.test(
      a.replaceAll('_', '-'),
    ),
  );
}

let cached: WasmModule | null | undefined;

/**
 * PGlite's module compiled with the parser kept on Liftoff, once per process (every PGlite of
 * the process instantiates the same module); undefined when that is not possible here, and PGlite
 * then loads its own.
 */
export function pgliteWasmModule(): WasmModule | undefined {
  if (cached !== undefined) return cached ?? undefined;
  cached = null;
  if (!canSteerTiering()) return undefined;
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite')));
  } catch {
    return undefined;
  }
  const layout = readWasmLayout(bytes);
  const parser = layout?.exports.get(PARSER_EXPORT);
  if (!layout || parser === undefined || parser < layout.functionImports || layout.functionImports === 0)
    return undefined;
  // An import's index: no compiled function matches it, so the parser's Liftoff code counts nothing.
  v8.setFlagsFromString('--experimental-wasm-compilation-hints');
  v8.setFlagsFromString('--wasm-tier-up-filter=0');
  try {
    // Synchronous on purpose: this thread compiles nothing else while the flags are set (a lazy
    // compile in another thread during these ~0.1 s would only keep that function on Liftoff).
    cached = new WebAssembly.Module(withLiftoffHint(bytes, layout, parser));
  } catch {
    cached = null;
  } finally {
    v8.setFlagsFromString('--wasm-tier-up-filter=-1');
    v8.setFlagsFromString('--no-experimental-wasm-compilation-hints');
  }
  return cached ?? undefined;
}

/** PGlite.create options for the service's database (see above): the module and the settings. */
export function pgliteOptions(defaultStartParams: readonly string[]): {
  pgliteWasmModule?: WasmModule;
  startParams: string[];
} {
  const module = pgliteWasmModule();
  return {
    ...(module ? { pgliteWasmModule: module } : {}),
    startParams: [...defaultStartParams, ...PGLITE_SETTINGS.flatMap((s) => ['-c', s])],
  };
}
