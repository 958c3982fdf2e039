// The long-lived process inside one session's sandbox (bwrap, see bwrap.ts): holds the CDP
// connection to the session's browser and runs each call the server sends on fd 3. Node code runs
// here (an AsyncFunction with page/context/browser in scope); python runs as a child that drives this
// process's page through gleaner_playwright.py; bash runs as a child with agent-browser on PATH.
// It also serves Chromium's endpoint on its own loopback (127.0.0.1:9222, the only network it has),
// relayed to the server's Unix socket, so agent-browser and connectOverCDP need no special address.
import net from 'node:net';
import { spawn, type ChildProcess } from 'node:child_process';
import { Console } from 'node:console';
import { closeSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { constants } from 'node:os';
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { toAsyncFunctionBody } from './last-expression.ts';
import { SANDBOX_CDP_PORT, SANDBOX_PATHS } from './protocol.ts';
import type { RunnerConfig, RunnerMessage, SandboxLanguage, ServerMessage } from './protocol.ts';

const config = JSON.parse(process.argv[2] ?? '{}') as RunnerConfig;
closeInheritedFds();
const control = new net.Socket({ fd: 3, readable: true, writable: true });
const send = (message: RunnerMessage) => control.write(`${JSON.stringify(message)}\n`);
const diagnostics = process.stderr.write.bind(process.stderr);

// ---- Output of the current run: forwarded as it comes (so a killed run keeps what it printed),
// up to maxOutputBytes per stream plus one chunk, from which the server sees it was truncated.
let current: { id: number; sent: { stdout: number; stderr: number } } | null = null;

function emit(stream: 'stdout' | 'stderr', chunk: string | Uint8Array): void {
  if (!current) return;
  const data = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
  if (current.sent[stream] > config.maxOutputBytes) return;
  current.sent[stream] += Buffer.byteLength(data);
  send({ type: 'out', id: current.id, stream, data });
}

function sink(stream: 'stdout' | 'stderr'): Writable {
  return new Writable({
    write(chunk: Buffer, _encoding, callback) {
      emit(stream, chunk);
      callback();
    },
  });
}

// Node code writes through `console` (a per-process Console on these sinks) or process.stdout.
const runConsole = new Console({ stdout: sink('stdout'), stderr: sink('stderr') });
for (const stream of ['stdout', 'stderr'] as const) {
  process[stream].write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    emit(stream, chunk);
    const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
    callback?.();
    return true;
  }) as typeof process.stdout.write;
}
// Work the caller's code left running must not take the runner down.
process.on('unhandledRejection', (reason) => emit('stderr', `Unhandled rejection: ${describe(reason)}\n`));
process.on('uncaughtException', (err) => emit('stderr', `Uncaught exception: ${describe(err)}\n`));

/**
 * bwrap hands on every descriptor the server had without close-on-exec (one it inherited from its
 * own parent, say): close those, keeping stdio and the control channel. Node's own descriptors
 * are all close-on-exec, which /proc/self/fdinfo shows (O_CLOEXEC, octal 02000000).
 */
function closeInheritedFds(): void {
  for (const name of readdirSync('/proc/self/fd')) {
    const fd = Number(name);
    if (fd <= 3) continue;
    try {
      const flags = /^flags:\s*([0-7]+)/m.exec(readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'))?.[1];
      if (flags && (parseInt(flags, 8) & 0o2000000) === 0) closeSync(fd);
    } catch {
      // the directory's own descriptor, gone already
    }
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

// ---- The browser, through the loopback relay

function serveCdp(): Promise<void> {
  const server = net.createServer((client) => {
    const upstream = net.connect(SANDBOX_PATHS.cdpSocket);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(SANDBOX_CDP_PORT, '127.0.0.1', () => resolve());
  });
}

let browser: Browser;

function sessionContext(): BrowserContext {
  const context = browser.contexts()[0];
  if (!context) throw new Error('The session browser has no context');
  return context;
}

/**
 * The session's current page: the last one open, a new one if none is. A round trip to the browser
 * first: events arrive in order on this connection, so a page closed before the call (the one
 * Playwright opens and closes to restore a profile's storage) is known closed after it.
 */
async function currentPage(): Promise<Page> {
  const context = sessionContext();
  await context.cookies('https://sync.invalid/');
  return (
    context
      .pages()
      .filter((p) => !p.isClosed())
      .at(-1) ?? (await context.newPage())
  );
}

// ---- Node

const AsyncFunction = async function () {}.constructor as new (
  ...args: string[]
) => (...args: unknown[]) => Promise<unknown>;
const requireInSandbox = createRequire(`${SANDBOX_PATHS.gleaner}/`);

async function runNode(code: string): Promise<Outcome> {
  let value: unknown;
  try {
    const fn = new AsyncFunction('page', 'context', 'browser', 'console', 'require', toAsyncFunctionBody(code));
    value = await fn(await currentPage(), sessionContext(), browser, runConsole, requireInSandbox);
  } catch (err) {
    if (err instanceof Error && err.stack) emit('stderr', `${err.stack}\n`);
    return { exitCode: 1, error: describe(err) };
  }
  return { exitCode: 0, result: jsonText(value) };
}

function jsonText(value: unknown): string | undefined {
  try {
    return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  } catch {
    return JSON.stringify(String(value)); // circular: its string form
  }
}

// ---- Children (python, bash)

interface Outcome {
  exitCode: number;
  result?: string;
  error?: string;
}

function collect(child: ChildProcess): void {
  for (const stream of ['stdout', 'stderr'] as const) {
    child[stream]?.setEncoding('utf8');
    child[stream]?.on('data', (data: string) => emit(stream, data));
  }
}

function exitOf(child: ChildProcess, name: string): Promise<Outcome> {
  return new Promise((resolve) => {
    child.on('error', (err) => resolve({ exitCode: 127, error: `${name} did not start: ${err.message}` }));
    child.on('close', (code, signal) => {
      const exitCode = code ?? 128 + (signal ? constants.signals[signal] : 0);
      resolve(exitCode === 0 ? { exitCode } : { exitCode, error: `${name} exited with code ${exitCode}` });
    });
  });
}

async function runBash(code: string): Promise<Outcome> {
  const child = spawn('bash', ['-c', code], { cwd: '/tmp', stdio: ['ignore', 'pipe', 'pipe'] });
  collect(child);
  return exitOf(child, 'bash');
}

async function runPython(code: string): Promise<Outcome> {
  const child = spawn('python3', [SANDBOX_PATHS.python], {
    cwd: '/tmp',
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    env: { ...process.env, PYTHONUNBUFFERED: '1', PYTHONDONTWRITEBYTECODE: '1' },
  });
  collect(child);
  const bridge = child.stdio[3] as net.Socket;
  let reported: Omit<Outcome, 'exitCode'> | undefined;
  bridge.on('error', () => {});
  bridge.write(`${JSON.stringify({ code })}\n`);
  // One call at a time: the python side blocks on each answer.
  const lines = createInterface({ input: bridge });
  const served = (async () => {
    for await (const line of lines) {
      const message = JSON.parse(line) as BridgeCall | { type: 'done'; result?: string; error?: string };
      if ('type' in message) {
        reported = { result: message.result, error: message.error };
        continue;
      }
      const answer = await callPlaywright(message).then(
        (value) => ({ id: message.id, value: toWire(value) }),
        (err: unknown) => ({
          id: message.id,
          error: describe(err),
          name: err instanceof Error ? err.name : 'Error',
        }),
      );
      if (!bridge.destroyed) bridge.write(`${JSON.stringify(answer)}\n`);
    }
  })().catch(() => {});
  const outcome = await exitOf(child, 'python');
  await served;
  if (outcome.exitCode === 0) return { exitCode: 0, result: reported?.result ?? undefined };
  return { exitCode: outcome.exitCode, error: reported?.error ?? outcome.error };
}

/** A Playwright call from python: from the page, through `chain`, to `method`. */
interface BridgeCall {
  id: number;
  chain: { name: string; args: unknown[]; kwargs: Record<string, unknown> }[];
  method: string;
  args: unknown[];
  kwargs: Record<string, unknown>;
}

const camel = (name: string) => name.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());

// Python keyword arguments are Playwright's options object (snake_case → camelCase) except the
// few that are positional in Node's API.
const POSITIONAL_KWARGS: Record<string, string[]> = { evaluate: ['arg'], nth: ['index'], waitForTimeout: ['timeout'] };

// Python's evaluate takes a function's source as a string and calls it; Node's calls only functions
// (a string is evaluated as an expression). A string that reads as a function becomes one here:
// making a function from its source runs none of it, and Playwright sends its source back as is.
const EXPRESSION_AT: Record<string, number> = {
  evaluate: 0,
  evaluateAll: 0,
  evaluateHandle: 0,
  waitForFunction: 0,
  evalOnSelector: 1,
  evalOnSelectorAll: 1,
};
const FUNCTION_SOURCE = /^\s*(async\s+)?(function\b|\([^)]*\)\s*=>|[\w$]+\s*=>)/;

function argumentsOf(method: string, args: unknown[], kwargs: Record<string, unknown>): unknown[] {
  const options: Record<string, unknown> = {};
  const positional = [...args];
  const at = EXPRESSION_AT[method];
  const source = at === undefined ? undefined : positional[at];
  if (typeof source === 'string' && FUNCTION_SOURCE.test(source)) {
    positional[at!] = new Function(`return (${source}\n);`)() as unknown;
  }
  for (const [key, value] of Object.entries(kwargs)) {
    if (POSITIONAL_KWARGS[method]?.includes(key)) positional.push(value);
    else options[camel(key)] = value;
  }
  return Object.keys(options).length ? [...positional, options] : positional;
}

async function callPlaywright(call: BridgeCall): Promise<unknown> {
  let target: Record<string, unknown> = (await currentPage()) as unknown as Record<string, unknown>;
  for (const step of [...call.chain, { name: call.method, args: call.args, kwargs: call.kwargs }]) {
    const name = camel(step.name);
    const member = target[name];
    if (name.startsWith('_') || member === undefined) throw new Error(`Playwright has no ${step.name}`);
    target = (
      typeof member === 'function'
        ? await (member as (...a: unknown[]) => unknown).apply(target, argumentsOf(name, step.args, step.kwargs))
        : member
    ) as Record<string, unknown>;
  }
  return target;
}

function toWire(value: unknown): unknown {
  if (value === undefined || value === null) return null;
  if (Buffer.isBuffer(value)) return { __bytes__: value.toString('base64') };
  if (['string', 'number', 'boolean'].includes(typeof value)) return value;
  if (Array.isArray(value)) return value.map(toWire);
  if (Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, toWire(v)]));
  }
  return null; // Playwright objects (a Response, an ElementHandle) do not cross
}

// ---- The loop

const runners: Record<SandboxLanguage, (code: string) => Promise<Outcome>> = {
  node: runNode,
  python: runPython,
  bash: runBash,
};

async function main(): Promise<void> {
  await serveCdp();
  browser = await chromium.connectOverCDP(`ws://127.0.0.1:${SANDBOX_CDP_PORT}${config.cdpPath}`);
  browser.on('disconnected', () => {
    diagnostics('gleaner runner: the browser disconnected\n');
    process.exit(3);
  });
  const lines = createInterface({ input: control });
  control.on('close', () => process.exit(0));
  send({ type: 'ready' });
  for await (const line of lines) {
    const message = JSON.parse(line) as ServerMessage;
    current = { id: message.id, sent: { stdout: 0, stderr: 0 } };
    const outcome = await runners[message.language](message.code);
    current = null;
    send({ type: 'done', id: message.id, ...outcome });
  }
}

main().catch((err: unknown) => {
  diagnostics(`gleaner runner: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(2);
});
