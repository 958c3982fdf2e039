// A session's Chromium runs in a jail of its own. The caller drives that browser (its code in the
// sandbox, its CDP client through cdpUrl), and a browser can open file:// URLs: unjailed, it would
// show the server's source, data directory and /proc/self/environ. Under bubblewrap it sees /usr,
// the few /etc entries a browser needs (fonts, certificates, its own configuration), an empty
// /tmp, a clean environment and its own profile directory, as uid 65534 in its own user, PID, IPC
// and UTS namespaces, and in a network namespace of its own: its only way out is its SSRF guard
// proxy, its only way in its DevTools port, both as Unix sockets in the session directory
// (chromium-netns.ts, run by the Node binary inside the jail, relays them and starts Chromium).
// So no page and no CDP command (a context made with `proxyServer: "direct://"`) reaches a host
// the guard would refuse.
//
// Playwright launches the executable it is given with the pipe on fds 3 and 4, which bwrap and
// the relay pass on; the jail is a small shell script standing in for Chromium that execs bwrap.
// The session directory is the profile's parent: SESSION/profile, SESSION/guard.sock, SESSION/cdp.sock.
import { realpathSync } from 'node:fs';
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { probeBwrap } from './bwrap.ts';

/** /etc entries a browser reads; the rest of /etc (shadow, service configuration) stays out. */
const ETC = [
  '/etc/fonts',
  '/etc/chromium',
  '/etc/chromium.d',
  '/etc/alternatives',
  '/etc/ssl',
  '/etc/ca-certificates',
  '/etc/localtime',
  '/etc/ld.so.cache',
];

const jails = new Map<string, Promise<string>>();

/** The path of an executable that runs `chromium` jailed; SandboxUnavailableError without bwrap. */
export function jailedChromium(chromium: string, bwrap = 'bwrap'): Promise<string> {
  const key = `${bwrap}\0${chromium}`;
  let jail = jails.get(key);
  if (!jail) {
    jail = writeJail(chromium, bwrap);
    jails.set(key, jail);
    jail.catch(() => jails.delete(key));
  }
  return jail;
}

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

const RELAY = join(dirname(fileURLToPath(import.meta.url)), 'chromium-netns.ts');

async function writeJail(chromium: string, bwrap: string): Promise<string> {
  await probeBwrap(bwrap);
  const node = realpathSync(process.execPath);
  const dir = await mkdtemp(join(tmpdir(), 'gleaner-chromium-'));
  const path = join(dir, 'chromium');
  const etc = ETC.map((p) => `--ro-bind-try ${p} ${p}`).join(' ');
  await writeFile(
    path,
    `#!/bin/sh
# Written by Gleaner (src/interact/sandbox/chromium-jail.ts): ${chromium} in a bubblewrap jail.
udd=
for a in "$@"; do case "$a" in --user-data-dir=*) udd="\${a#--user-data-dir=}";; esac; done
[ -n "$udd" ] || { echo "chromium jail: no --user-data-dir" >&2; exit 2; }
session=$(dirname "$udd")
exec ${quote(bwrap)} --die-with-parent --unshare-user --unshare-pid --unshare-ipc --unshare-uts --unshare-net \\
  --uid 65534 --gid 65534 \\
  --ro-bind /usr /usr --symlink usr/lib /lib --symlink usr/lib64 /lib64 --symlink usr/bin /bin --symlink usr/sbin /sbin \\
  ${etc} \\
  --proc /proc --dev /dev --tmpfs /tmp --bind "$session" "$session" \\
  --ro-bind ${quote(node)} /opt/node --ro-bind ${quote(RELAY)} /opt/chromium-netns.ts \\
  --clearenv --setenv HOME "$udd" --setenv PATH /usr/bin:/bin --setenv LANG C.UTF-8 \\
  /opt/node /opt/chromium-netns.ts "$session" ${quote(chromium)} "$@"
`,
  );
  await chmod(path, 0o700);
  return path;
}
