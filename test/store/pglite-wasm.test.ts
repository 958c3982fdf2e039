// How PGlite is loaded (src/store/pglite/wasm.ts): the module keeps the SQL parser on V8's
// baseline compiler while every other hot function still tiers up, and the service's Postgres
// settings apply.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, test } from 'node:test';
import { openDb } from '../../src/store/db.ts';
import { PARSER_EXPORT, pgliteWasmModule, readWasmLayout, withLiftoffHint } from '../../src/store/pglite/wasm.ts';

const execFileAsync = promisify(execFile);
const wasmBytes = () => readFileSync(new URL('pglite.wasm', import.meta.resolve('@electric-sql/pglite')));
declare const WebAssembly: { validate(bytes: Uint8Array): boolean };

describe('PGlite module and settings', () => {
  test('the module layout is read and the hints section keeps the module valid', () => {
    const bytes = wasmBytes();
    const layout = readWasmLayout(bytes);
    assert.ok(layout, 'PGlite module read');
    assert.ok(layout.functionImports > 0);
    assert.ok(layout.declaredFunctions > 1000);
    const parser = layout.exports.get(PARSER_EXPORT);
    assert.ok(parser !== undefined && parser >= layout.functionImports, 'the parser is a function of the module');
    const hinted = withLiftoffHint(bytes, layout, parser);
    assert.ok(WebAssembly.validate(hinted));
    assert.equal(readWasmLayout(hinted)?.exports.get(PARSER_EXPORT), parser, 'a custom section changes no index');
    assert.equal(readWasmLayout(Buffer.from('not wasm')), undefined);
    assert.equal(readWasmLayout(bytes.subarray(0, 1000)), undefined, 'a truncated module is not read');
    assert.ok(pgliteWasmModule(), 'on this Node the module is compiled with the hint');
  });

  test('the parser never tiers up; other functions still do (tier-up run synchronously)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gleaner-pglite-wasm-'));
    try {
      // Every function that gets hot is compiled by TurboFan on the spot (--wasm-sync-tier-up), so
      // what was not compiled by the end was not going to be.
      const script = `
        import { openDb } from ${JSON.stringify(new URL('../../src/store/db.ts', import.meta.url).href)};
        import { migrate } from ${JSON.stringify(new URL('../../src/store/migrations.ts', import.meta.url).href)};
        const db = await openDb({ dataDir: ${JSON.stringify(dir)} });
        await migrate(db);
        for (let i = 0; i < 1500; i++) await db.query('SELECT $1::int + ' + i + ' AS n, count(*) AS c FROM teams WHERE name <> $2', [i, 'x' + i]);
        await db.close();
        console.log('DONE');
      `;
      const { stdout } = await execFileAsync(
        process.execPath,
        ['--wasm-sync-tier-up', '--trace-wasm-compilation-times', '--input-type=module', '-e', script],
        {
          maxBuffer: 64 * 1024 * 1024,
          timeout: 120_000,
        },
      );
      assert.match(stdout, /DONE/);
      const layout = readWasmLayout(wasmBytes())!;
      const parser = layout.exports.get(PARSER_EXPORT)!;
      // The PGlite module is the one whose function #parser was compiled eagerly with Liftoff.
      const eager = stdout.match(new RegExp(`Compiled function (0x[0-9a-f]+)#${parser} using Liftoff`));
      assert.ok(eager, 'the parser was compiled with Liftoff');
      const mod = eager[1];
      assert.doesNotMatch(stdout, new RegExp(`${mod}#${parser} using TurboFan`), 'the parser was never optimised');
      const optimised = stdout.split('\n').filter((l) => l.includes(`${mod}#`) && l.includes('using TurboFan')).length;
      assert.ok(optimised > 20, `other functions still tier up (${optimised} did)`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("the service's Postgres settings apply to a new and to an existing data directory", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'gleaner-pglite-settings-'));
    try {
      for (let i = 0; i < 2; i++) {
        const db = await openDb({ dataDir: dir });
        try {
          const { rows } = await db.query<{ s: string; c: string }>(
            `SELECT current_setting('shared_buffers') AS s, current_setting('max_connections') AS c`,
          );
          assert.deepEqual(rows[0], { s: '16MB', c: '8' });
        } finally {
          await db.close();
        }
      }
      assert.match(
        readFileSync(join(dir, 'pglite', 'postgresql.conf'), 'utf8'),
        /^shared_buffers = 16MB/m,
        'initdb wrote them too',
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
