// A new PGlite data directory is a copy of a template made once per installation, instead of a
// run of initdb each time: initdb in WASM takes ~3 s and peaks near 500 MB (src/store/pglite/initdb.ts),
// a copy of its 39 MB result takes a fraction of a second and no memory to speak of. npm install
// makes the template (`postinstall` runs this file); without one (installed with
// --ignore-scripts, or a read-only node_modules), the first directory created makes it, and
// where it cannot be written, each directory is made by initdb as before.
//
// The template is keyed by the PGlite version and the settings initdb writes into
// postgresql.conf, so an upgrade of either makes a new one. It holds the empty cluster only:
// migrations run on every open (src/store/migrations.ts).
import { execFile } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { PGLITE_INIT_NODE_ARGS, PGLITE_SETTINGS } from './wasm.ts';

const root = fileURLToPath(new URL('../../..', import.meta.url));
const execFileAsync = promisify(execFile);

/** Where this installation's template lives (PGLITE_TEMPLATE_DIR overrides the folder). */
export function pgliteTemplatePath(env: NodeJS.ProcessEnv = process.env): string {
  const pkg = JSON.parse(readFileSync(join(root, 'node_modules/@electric-sql/pglite/package.json'), 'utf8')) as {
    version: string;
  };
  const key = createHash('sha256')
    .update(JSON.stringify([pkg.version, PGLITE_SETTINGS]))
    .digest('hex')
    .slice(0, 12);
  const dir = env.PGLITE_TEMPLATE_DIR || join(root, 'node_modules/.cache/gleaner');
  return join(dir, `pglite-${pkg.version}-${key}`);
}

/** Runs initdb (in a child process: src/store/pglite/initdb.ts says why) into `path`. */
export async function initdb(path: string): Promise<void> {
  const script = fileURLToPath(new URL('./initdb.ts', import.meta.url));
  try {
    await execFileAsync(process.execPath, [...PGLITE_INIT_NODE_ARGS, script, path], { timeout: 120_000 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`could not create the PGlite data directory ${path}: ${(e.stderr || e.message).trim()}`, {
      cause: err,
    });
  }
}

/**
 * The template, made now if missing. Made beside its final place and renamed into it, so a
 * process never sees half of one, and two processes making it at once both end with the one
 * that landed first.
 */
export async function ensurePgliteTemplate(path = pgliteTemplatePath()): Promise<string> {
  if (existsSync(join(path, 'PG_VERSION'))) return path;
  await mkdir(dirname(path), { recursive: true });
  const making = `${path}.${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    await initdb(making);
    await rename(making, path).catch((err: NodeJS.ErrnoException) => {
      if (!existsSync(join(path, 'PG_VERSION'))) throw err;
    });
  } finally {
    await rm(making, { recursive: true, force: true });
  }
  return path;
}

/**
 * Creates a new PGlite data directory at `path` (which must not exist): a copy of the template,
 * or initdb's own where no template can be made (a read-only node_modules, say). Made beside
 * `path` and renamed into it, so a start killed half-way leaves no half-made database behind.
 */
export async function createPgliteDir(path: string): Promise<void> {
  const template = await ensurePgliteTemplate().catch(() => undefined);
  const making = `${path}.${process.pid}-${randomBytes(4).toString('hex')}`;
  await mkdir(dirname(path), { recursive: true });
  try {
    if (template) await cp(template, making, { recursive: true, errorOnExist: true, force: false });
    else await initdb(making);
    await rename(making, path);
  } finally {
    await rm(making, { recursive: true, force: true });
  }
}

// `npm install` (postinstall): make the template now, so that no start of the service runs initdb.
// A failure only warns: the service makes the directory itself then.
if (import.meta.main) {
  try {
    const path = await ensurePgliteTemplate();
    console.log(`gleaner: embedded database template ready (${path})`);
  } catch (err) {
    console.warn(
      `gleaner: could not prepare the embedded database template (${(err as Error).message}); the service will run initdb on its first start`,
    );
  }
}
