// New PGlite data directories are copies of a template made once (src/store/pglite/template.ts):
// the copy opens as a database of its own, two processes making the template at once end with
// one, and where no template can be made the directory is made by initdb as before.
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { openDb } from '../../src/store/db.ts';
import { createPgliteDir, ensurePgliteTemplate, pgliteTemplatePath } from '../../src/store/pglite/template.ts';

describe('PGlite data directory template', () => {
  let dir: string;
  const saved = process.env.PGLITE_TEMPLATE_DIR;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'gleaner-template-test-'));
  });
  after(async () => {
    if (saved === undefined) delete process.env.PGLITE_TEMPLATE_DIR;
    else process.env.PGLITE_TEMPLATE_DIR = saved;
    await rm(dir, { recursive: true, force: true });
  });

  test('two makers at once: one template, no leftovers; its key names the PGlite version', async () => {
    const templates = join(dir, 'templates');
    const path = pgliteTemplatePath({ PGLITE_TEMPLATE_DIR: templates });
    assert.match(path, /pglite-\d+\.\d+\.\d+-[0-9a-f]{12}$/);
    const [a, b] = await Promise.all([ensurePgliteTemplate(path), ensurePgliteTemplate(path)]);
    assert.equal(a, path);
    assert.equal(b, path);
    assert.ok(existsSync(join(path, 'PG_VERSION')));
    assert.deepEqual(await readdir(templates), [path.split('/').pop()], 'the loser’s directory is gone');
  });

  test('directories copied from it are databases of their own', async () => {
    process.env.PGLITE_TEMPLATE_DIR = join(dir, 'templates');
    const one = join(dir, 'one');
    const two = join(dir, 'two');
    await createPgliteDir(join(one, 'pglite'));
    await createPgliteDir(join(two, 'pglite'));
    const a = await openDb({ dataDir: one });
    const b = await openDb({ dataDir: two });
    try {
      await a.exec('CREATE TABLE t (x int)');
      await a.query('INSERT INTO t VALUES (1)');
      assert.deepEqual((await a.query('SELECT x FROM t')).rows, [{ x: 1 }]);
      await assert.rejects(
        b.query('SELECT x FROM t'),
        (err: { code?: string }) => err.code === '42P01',
        'the other copy has no such table',
      );
    } finally {
      await a.close();
      await b.close();
    }
    await assert.rejects(createPgliteDir(join(one, 'pglite')), 'an existing directory is never overwritten');
    assert.deepEqual(
      (await readdir(one)).filter((f) => f.startsWith('pglite.')),
      [],
      'no half-made directory left beside it',
    );
  });

  test('without a place for the template, initdb makes the directory itself', async () => {
    const file = join(dir, 'not-a-directory');
    writeFileSync(file, '');
    process.env.PGLITE_TEMPLATE_DIR = join(file, 'templates');
    const target = join(dir, 'plain');
    await createPgliteDir(join(target, 'pglite'));
    const db = await openDb({ dataDir: target });
    try {
      assert.deepEqual((await db.query('SELECT 1 AS one')).rows, [{ one: 1 }]);
    } finally {
      await db.close();
    }
  });
});
