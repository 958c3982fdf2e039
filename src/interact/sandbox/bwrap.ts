// The bubblewrap command line of a session's runner: what the sandbox sees (read-only /usr, the
// Node binary, playwright-core, acorn, agent-browser and this folder's runner files; a fresh /tmp;
// the server's CDP socket) and what it does not (the rest of the filesystem, the server's
// environment, any network but its own loopback).
import { spawn } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SandboxUnavailableError } from '../../errors.ts';
import { SANDBOX_PATHS } from './protocol.ts';

const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);

/** The host files the sandbox mounts read-only, resolved once. */
export interface SandboxMounts {
  node: string;
  playwrightCore: string;
  acorn: string;
  agentBrowser: string;
}

function packageDir(name: string): string {
  return dirname(require.resolve(`${name}/package.json`));
}

export function sandboxMounts(): SandboxMounts {
  const agentBrowserDir = join(packageDir('agent-browser'), 'bin');
  const agentBrowser = join(agentBrowserDir, `agent-browser-linux-${process.arch === 'arm64' ? 'arm64' : 'x64'}`);
  return {
    // The Node running the server (Node 24 strips the runner's types), wherever its symlinks lead.
    node: realpathSync(process.execPath),
    playwrightCore: realpathSync(packageDir('playwright-core')),
    acorn: realpathSync(packageDir('acorn')),
    agentBrowser: realpathSync(agentBrowser),
  };
}

/** The runner's files in this folder, mounted one by one at /opt/gleaner (nothing else of the source). */
const RUNNER_FILES = ['runner.ts', 'last-expression.ts', 'protocol.ts', 'gleaner_playwright.py'];

export interface BwrapPaths {
  /** The session's private directory, the sandbox's /tmp and HOME. */
  tmpDir: string;
  /** The directory of the server's CDP socket, at /run/gleaner. */
  cdpDir: string;
}

/** bwrap's arguments up to (not including) the command. */
export function bwrapArgs(mounts: SandboxMounts, paths: BwrapPaths): string[] {
  const ro = (host: string, inside: string) => ['--ro-bind', host, inside];
  return [
    '--die-with-parent',
    '--unshare-all', // user, pid, ipc, uts, cgroup and net: a network namespace with only lo
    '--new-session', // no TIOCSTI into the server's terminal
    '--clearenv',
    ...['--setenv', 'PATH', `${SANDBOX_PATHS.bin}:${dirname(SANDBOX_PATHS.node)}:/usr/bin:/bin`],
    ...['--setenv', 'HOME', '/tmp', '--setenv', 'TMPDIR', '/tmp', '--setenv', 'LANG', 'C.UTF-8'],
    ...ro('/usr', '/usr'),
    ...['--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64'],
    ...['--symlink', 'usr/bin', '/bin', '--symlink', 'usr/sbin', '/sbin'],
    ...(existsSync('/etc/alternatives') ? ro('/etc/alternatives', '/etc/alternatives') : []),
    ...['--proc', '/proc', '--dev', '/dev'],
    ...['--bind', paths.tmpDir, '/tmp'],
    ...['--bind', paths.cdpDir, SANDBOX_PATHS.cdpDir],
    ...ro(mounts.node, SANDBOX_PATHS.node),
    ...ro(mounts.playwrightCore, `${SANDBOX_PATHS.gleaner}/node_modules/playwright-core`),
    ...ro(mounts.acorn, `${SANDBOX_PATHS.gleaner}/node_modules/acorn`),
    ...RUNNER_FILES.flatMap((file) => ro(join(here, file), `${SANDBOX_PATHS.gleaner}/${file}`)),
    ...ro(join(here, 'bin', 'agent-browser'), `${SANDBOX_PATHS.bin}/agent-browser`),
    ...ro(mounts.agentBrowser, SANDBOX_PATHS.agentBrowser),
    ...['--uid', '65534', '--gid', '65534', '--hostname', 'sandbox', '--chdir', '/tmp'],
  ];
}

const probes = new Map<string, Promise<void>>();

/**
 * Checks once per bwrap binary that it exists and can make the namespaces (a kernel without
 * unprivileged user namespaces, or a container without them, fails here, not on the first call).
 */
export function probeBwrap(bwrap: string): Promise<void> {
  let probe = probes.get(bwrap);
  if (!probe) {
    probe = runProbe(bwrap);
    probes.set(bwrap, probe);
    probe.catch(() => probes.delete(bwrap)); // installing it later works without a restart
  }
  return probe;
}

function runProbe(bwrap: string): Promise<void> {
  const args = [
    ...['--die-with-parent', '--unshare-all', '--new-session', '--clearenv'],
    ...['--ro-bind', '/usr', '/usr', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64'],
    ...['--symlink', 'usr/bin', '/bin', '--proc', '/proc', '--dev', '/dev', '--uid', '65534', '--gid', '65534'],
    ...['/bin/true'],
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(bwrap, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (err: NodeJS.ErrnoException) =>
      reject(
        new SandboxUnavailableError(
          err.code === 'ENOENT'
            ? `Running code needs bubblewrap, and ${bwrap} is not installed: install Debian's \`bubblewrap\` package.`
            : `bubblewrap (${bwrap}) does not start: ${err.message}`,
        ),
      ),
    );
    child.on('close', (code) =>
      code === 0
        ? resolve()
        : reject(
            new SandboxUnavailableError(
              `bubblewrap (${bwrap}, Debian's \`bubblewrap\` package) cannot make its sandbox here: ${stderr.trim() || `exit code ${code}`}`,
            ),
          ),
    );
  });
}
