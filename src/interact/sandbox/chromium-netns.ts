// Runs inside a session browser's jail (chromium-jail.ts), in a network namespace that holds only
// its own loopback: the browser's one way out is its SSRF guard proxy, and the server's one way
// in is its DevTools port. Both cross the namespace as Unix sockets in the session directory:
//   - 127.0.0.1:GUARD_PORT here (the port of --proxy-server) → SESSION/guard.sock (the guard proxy);
//   - SESSION/cdp.sock → 127.0.0.1:DEVTOOLS_PORT here (read from the profile's DevToolsActivePort).
// A page, or a caller's CDP command making a context without the proxy, reaches nothing else.
// Then it runs Chromium with its own stdio, fds 3 and 4 included (Playwright's pipe), and ends with it.
//
// argv: SESSION_DIR CHROMIUM_EXECUTABLE ...CHROMIUM_ARGS
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';

const [sessionDir, chromium, ...args] = process.argv.slice(2);
const proxyArg = args.find((a) => a.startsWith('--proxy-server='));
const guardPort = proxyArg ? Number(new URL(proxyArg.slice('--proxy-server='.length)).port) : NaN;
const udd = args.find((a) => a.startsWith('--user-data-dir='))?.slice('--user-data-dir='.length);
if (!Number.isInteger(guardPort) || !udd) {
  process.stderr.write('chromium-netns: --proxy-server with a port and --user-data-dir are required\n');
  process.exit(2);
}

function pipe(a: net.Socket, b: net.Socket): void {
  a.pipe(b).pipe(a);
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
}

const guard = net.createServer((socket) => pipe(socket, net.connect(join(sessionDir, 'guard.sock'))));
const devtools = net.createServer((socket) => {
  let port: number;
  try {
    port = Number(readFileSync(join(udd, 'DevToolsActivePort'), 'utf8').split('\n')[0]);
  } catch {
    socket.destroy();
    return;
  }
  pipe(socket, net.connect(port, '127.0.0.1'));
});

guard.listen(guardPort, '127.0.0.1', () => {
  devtools.listen(join(sessionDir, 'cdp.sock'), () => {
    const child = spawn(chromium, args, { stdio: ['inherit', 'inherit', 'inherit', 'inherit', 'inherit'] });
    child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => child.kill(signal));
  });
});
