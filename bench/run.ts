// `npm run bench`: installs the third-party baselines (bench/package.json) into bench/node_modules when they are
// missing or not at their locked versions, typechecks bench/ against them, then runs every bench/*.bench.ts (or
// those named on the command line) one after another, each in its own process so one's memory does not skew the next.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';

const dir = new URL('./', import.meta.url).pathname;

/** True when every baseline bench/package-lock.json names is installed at its locked version. */
function baselinesInstalled(): boolean {
  type Lock = { packages: Record<string, { version?: string; dependencies?: Record<string, string> }> };
  const lock = JSON.parse(readFileSync(dir + 'package-lock.json', 'utf8')) as Lock;
  return Object.keys(lock.packages['']?.dependencies ?? {}).every((name) => {
    const installed = dir + `node_modules/${name}/package.json`;
    if (!existsSync(installed)) return false;
    const { version } = JSON.parse(readFileSync(installed, 'utf8')) as { version: string };
    return version === lock.packages[`node_modules/${name}`]?.version;
  });
}

function run(command: string, args: string[]): void {
  const r = spawnSync(command, args, { cwd: dir, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${r.status ?? r.signal})`);
}

if (!baselinesInstalled()) run('npm', ['ci', '--no-audit', '--no-fund']);
// The root typecheck sees stand-ins for the baselines (bench/baseline-types.d.ts); this checks the real ones.
run(process.execPath, [new URL('../node_modules/typescript/bin/tsc', import.meta.url).pathname, '-p', dir]);

const wanted = process.argv.slice(2);
const all = readdirSync(dir).filter((f) => f.endsWith('.bench.ts'));
// A name that is a bench's whole name runs that bench alone (`crawl` is not also `crawl-scale`); any other name
// runs every bench whose file name contains it.
const matches = (w: string) => {
  const exact = all.filter((f) => f === `${w}.bench.ts`);
  return exact.length > 0 ? exact : all.filter((f) => f.includes(w));
};
const files = (wanted.length === 0 ? all : [...new Set(wanted.flatMap(matches))]).sort();
let failed = 0;
for (const file of files) {
  console.log(`\n### ${file}`);
  const r = spawnSync(process.execPath, [dir + file], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exitCode = failed ? 1 : 0;
