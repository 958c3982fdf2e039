// Browser profiles and stored files on every store: concurrent profile saves never produce a mixed
// state; stored files are readable until they expire.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { deleteExpiredFiles, readFile, storeFile } from '../../src/store/files.ts';
import { readProfile, saveProfile } from '../../src/store/profiles.ts';
import { ensureTeam } from '../../src/store/teams.ts';
import { openTestDb, storeKinds } from '../helpers/service.ts';

for (const store of storeKinds) {
  describe(`profiles and files on ${store}`, () => {
    test('concurrent saves of one profile leave one complete state and count every save', async () => {
      const { db, cleanup } = await openTestDb(store);
      try {
        const team = await ensureTeam(db, 'profiles');
        // Each writer's state is internally consistent: 50 cookies all carrying the writer's number.
        const state = (n: number) => ({
          cookies: Array.from({ length: 50 }, (_, i) => ({
            name: `c${i}`,
            value: `w${n}`,
            domain: 'example.test',
            path: '/',
          })),
          origins: [{ origin: 'https://example.test', localStorage: [{ name: 'writer', value: `w${n}` }] }],
        });
        const versions = await Promise.all(
          Array.from({ length: 20 }, (_, n) => saveProfile(db, team.id, 'shared', state(n))),
        );
        assert.deepEqual(
          [...versions].sort((a, b) => a - b),
          Array.from({ length: 20 }, (_, i) => i + 1),
          'every save counted once',
        );
        const saved = await readProfile(db, team.id, 'shared');
        assert.ok(saved);
        assert.equal(saved.version, 20);
        const s = saved.state as ReturnType<typeof state>;
        const writer = s.origins[0].localStorage[0].value;
        assert.ok(
          s.cookies.every((c) => c.value === writer),
          'no mix of two writers',
        );
        assert.equal(s.cookies.length, 50);
        assert.equal(await readProfile(db, team.id, 'missing'), undefined);
        const other = await ensureTeam(db, 'other');
        assert.equal(await readProfile(db, other.id, 'shared'), undefined, 'profiles are per team');
      } finally {
        await cleanup();
      }
    });

    test('stored files are read back by id until they expire', async () => {
      const { db, cleanup } = await openTestDb(store);
      try {
        const team = await ensureTeam(db, 'files');
        const data = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 255]);
        const id = await storeFile(db, { teamId: team.id, contentType: 'image/png', data, ttlMs: 60_000 });
        assert.match(id, /^[0-9a-f]{32}$/);
        assert.deepEqual(await readFile(db, id), { contentType: 'image/png', data });
        const gone = await storeFile(db, { teamId: team.id, contentType: 'application/pdf', data, ttlMs: 1 });
        await new Promise((r) => setTimeout(r, 20));
        assert.equal(await readFile(db, gone), undefined, 'expired');
        assert.equal(await deleteExpiredFiles(db), 1);
        assert.ok(await readFile(db, id), 'the live file stays');
      } finally {
        await cleanup();
      }
    });
  });
}
