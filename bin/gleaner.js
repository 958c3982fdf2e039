#!/usr/bin/env node
// `npx gleaner`: the package's command (docs/cli.md). The sources are TypeScript that Node 24 runs
// directly (type stripping), while the `node` on PATH may be older: on Node 24 or newer this runs
// src/cli.ts in this process; on an older Node it re-executes src/cli.ts with the Node 24 of the
// `node` dependency (node_modules/node/bin/node), as the npm scripts do. Plain JavaScript on
// purpose, so that any Node can start it.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = new URL('../src/cli.ts', import.meta.url);
const args = process.argv.slice(2);

if (Number(process.versions.node.split('.')[0]) >= 24) {
  const { run } = await import(cli.href);
  await run(args);
} else {
  const node = fileURLToPath(new URL('../node_modules/node/bin/node', import.meta.url));
  if (!existsSync(node)) {
    process.stderr.write(`gleaner: Node 24 is needed (this is ${process.version}); run npm install first\n`);
    process.exit(3);
  }
  const child = spawn(node, [fileURLToPath(cli), ...args], { stdio: 'inherit' });
  // Ctrl-C reaches the child too (same process group): it decides what to do; forward the others.
  process.on('SIGINT', () => undefined);
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  child.on('error', (err) => {
    process.stderr.write(`gleaner: cannot start ${node}: ${err.message}\n`);
    process.exit(3);
  });
  child.on('exit', (code, signal) => {
    if (!signal) process.exit(code ?? 1);
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
  });
}
