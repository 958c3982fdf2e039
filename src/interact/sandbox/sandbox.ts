// One session's sandbox, on the server side: the relay from a Unix socket (the only way out of the
// sandbox) to Chromium's debugging port, and the long-lived runner process under bwrap that runs
// the calls one at a time. A call that outlives its timeout (or is aborted) kills the runner's
// whole sandbox; the next call starts a fresh runner, and the page is as the browser kept it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import { SandboxUnavailableError } from '../../errors.ts';
import { bwrapArgs, probeBwrap, sandboxMounts, type SandboxMounts } from './bwrap.ts';
import { runnerLimits, type RunnerLimits } from './limits.ts';
import { SANDBOX_PATHS } from './protocol.ts';
import type { RunnerConfig, RunnerMessage, SandboxLanguage, ServerMessage } from './protocol.ts';

export type { SandboxLanguage } from './protocol.ts';

export interface SandboxOptions {
  /** Chromium's own endpoint, `ws://127.0.0.1:PORT/devtools/browser/ID` (LiveBrowser.cdpEndpoint). */
  cdpEndpoint: string;
  /** Where the sandbox's private directory (its /tmp and HOME) is made; the OS temp dir if not given. */
  sessionDir?: string;
  /** Memory of the whole sandbox (cgroup when one can be made; the runner's V8 heap gets half). Default 1024. */
  memoryMb?: number;
  /** Bytes kept of stdout and of stderr per call. Default 1 MiB. */
  maxOutputBytes?: number;
  /** The bwrap executable. Default `bwrap` on PATH. */
  bwrap?: string;
  /** Notes on limits that could not be applied here. Default console.warn. */
  log?: (message: string) => void;
}

export interface SandboxRun {
  language: SandboxLanguage;
  code: string;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface SandboxResult {
  stdout: string;
  stderr: string;
  exitCode: number;
  /** node and python: JSON text of the last expression's value (absent when undefined / None). */
  result?: string;
  /** Why the call failed: what it threw, its exit code, or that it was killed. */
  error?: string;
  /** The call outlived its timeout or was aborted, and the sandbox was killed. */
  killed: boolean;
  /** stdout or stderr was cut at maxOutputBytes. */
  truncated: boolean;
}

const LANGUAGES: readonly SandboxLanguage[] = ['node', 'python', 'bash'];
const RUNNER_START_TIMEOUT_MS = 20_000;
const KILLED_EXIT_CODE = 128 + 9;

interface Runner {
  child: ChildProcess;
  limits: RunnerLimits;
  /** Messages of the call in progress. */
  onMessage: ((message: RunnerMessage) => void) | null;
  /** Resolves once the process is gone (and its cgroups removed). */
  gone: Promise<void>;
  exited: boolean;
  stderr: string;
}

type ResolvedOptions = Required<Omit<SandboxOptions, 'sessionDir'>>;
interface SandboxDirs {
  /** The sandbox's private directory (removed on close); its `tmp` is the sandbox's /tmp. */
  root: string;
  tmp: string;
  /** The CDP socket's directory. */
  cdp: string;
}

export class Sandbox {
  readonly #opts: ResolvedOptions;
  readonly #mounts: SandboxMounts;
  readonly #cdpPath: string;
  readonly #dirs: SandboxDirs;
  readonly #relay: net.Server;
  readonly #relayed = new Set<net.Socket>();
  #runner: Runner | null = null;
  #starting: Promise<Runner> | null = null;
  #queue: Promise<unknown> = Promise.resolve();
  #nextId = 1;
  #closed = false;

  private constructor(
    opts: ResolvedOptions,
    mounts: SandboxMounts,
    cdpPath: string,
    dirs: SandboxDirs,
    relay: net.Server,
  ) {
    this.#opts = opts;
    this.#mounts = mounts;
    this.#cdpPath = cdpPath;
    this.#dirs = dirs;
    this.#relay = relay;
  }

  /** Checks bwrap, makes the session's directories and relay, and starts the runner (ready to run). */
  static async start(options: SandboxOptions): Promise<Sandbox> {
    const opts = {
      cdpEndpoint: options.cdpEndpoint,
      memoryMb: options.memoryMb ?? 1024,
      maxOutputBytes: options.maxOutputBytes ?? 1024 * 1024,
      bwrap: options.bwrap ?? 'bwrap',
      log: options.log ?? ((message: string) => console.warn(message)),
    };
    const endpoint = new URL(opts.cdpEndpoint);
    if (endpoint.protocol !== 'ws:' || !endpoint.port || !endpoint.pathname.startsWith('/devtools/browser/')) {
      throw new TypeError(`Not a Chromium browser endpoint: ${opts.cdpEndpoint}`);
    }
    await probeBwrap(opts.bwrap);
    const root = await mkdtemp(join(options.sessionDir ?? tmpdir(), 'sandbox-'));
    // The socket's path must stay under the 108 bytes of sun_path: its own short directory.
    const cdp = await mkdtemp(join(tmpdir(), 'gleaner-cdp-'));
    const dirs = { root, tmp: join(root, 'tmp'), cdp };
    await mkdir(dirs.tmp, { mode: 0o700 });
    const relay = await relayTo(Number(endpoint.port), join(cdp, 'cdp.sock'));
    const sandbox = new Sandbox(opts, sandboxMounts(), endpoint.pathname, dirs, relay);
    relay.on('connection', (socket) => {
      sandbox.#relayed.add(socket);
      socket.on('close', () => sandbox.#relayed.delete(socket));
    });
    try {
      await sandbox.#ensureRunner();
    } catch (err) {
      await sandbox.close();
      throw err;
    }
    return sandbox;
  }

  /** Runs one call; calls on the same sandbox run one after another. */
  run(call: SandboxRun): Promise<SandboxResult> {
    if (!LANGUAGES.includes(call.language)) {
      return Promise.reject(new TypeError(`Unknown language: ${String(call.language)}`));
    }
    if (!(call.timeoutMs > 0)) {
      return Promise.reject(new RangeError(`timeoutMs must be positive, not ${call.timeoutMs}`));
    }
    const result = this.#queue.then(() => this.#runOne(call));
    this.#queue = result.catch(() => {});
    return result;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const runner = this.#runner ?? (await this.#starting?.catch(() => null));
    if (runner) await this.#kill(runner);
    this.#relay.close();
    for (const socket of this.#relayed) socket.destroy();
    await rm(this.#dirs.root, { recursive: true, force: true });
    await rm(this.#dirs.cdp, { recursive: true, force: true });
  }

  async #runOne(call: SandboxRun): Promise<SandboxResult> {
    if (this.#closed) throw new Error('The sandbox is closed');
    const output = { stdout: new Capped(this.#opts.maxOutputBytes), stderr: new Capped(this.#opts.maxOutputBytes) };
    const finish = (rest: Pick<SandboxResult, 'exitCode' | 'result' | 'error' | 'killed'>): SandboxResult => ({
      stdout: output.stdout.text(),
      stderr: output.stderr.text(),
      ...rest,
      truncated: output.stdout.truncated || output.stderr.truncated,
    });
    if (call.signal?.aborted) return finish({ exitCode: KILLED_EXIT_CODE, error: 'Aborted', killed: true });
    const runner = await this.#ensureRunner();
    const id = this.#nextId++;
    return new Promise<SandboxResult>((resolve) => {
      let settled = false;
      const settle = (result: SandboxResult) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        call.signal?.removeEventListener('abort', onAbort);
        runner.onMessage = null;
        resolve(result);
      };
      const kill = (error: string) => {
        void this.#kill(runner);
        settle(finish({ exitCode: KILLED_EXIT_CODE, error, killed: true }));
      };
      const timer = setTimeout(
        () => kill(`Timed out after ${call.timeoutMs} ms: the sandbox was killed (the page keeps its state)`),
        call.timeoutMs,
      );
      const onAbort = () => kill('Aborted: the sandbox was killed (the page keeps its state)');
      call.signal?.addEventListener('abort', onAbort, { once: true });
      runner.onMessage = (message) => {
        if (message.type === 'out' && message.id === id) output[message.stream].add(message.data);
        if (message.type === 'done' && message.id === id) {
          const { exitCode, result, error } = message;
          settle(finish({ exitCode, result, error, killed: false }));
        }
      };
      void runner.gone.then(() => {
        const why = runner.stderr.trim().split('\n').at(-1) || 'no message';
        settle(
          finish({ exitCode: runner.child.exitCode ?? 1, error: `The sandbox runner exited: ${why}`, killed: false }),
        );
      });
      const message: ServerMessage = { type: 'run', id, language: call.language, code: call.code };
      control(runner).write(`${JSON.stringify(message)}\n`);
    });
  }

  #ensureRunner(): Promise<Runner> {
    if (this.#runner && !this.#runner.exited) return Promise.resolve(this.#runner);
    this.#starting ??= this.#startRunner().finally(() => (this.#starting = null));
    return this.#starting;
  }

  async #startRunner(): Promise<Runner> {
    const limits = runnerLimits(
      randomBytes(6).toString('hex'),
      { memoryMb: this.#opts.memoryMb, maxProcesses: 256, maxFileBytes: 512 * 1024 * 1024 },
      this.#opts.log,
    );
    const config: RunnerConfig = { cdpPath: this.#cdpPath, maxOutputBytes: this.#opts.maxOutputBytes };
    const command = [
      ...limits.prefix,
      this.#opts.bwrap,
      ...bwrapArgs(this.#mounts, { tmpDir: this.#dirs.tmp, cdpDir: this.#dirs.cdp }),
      SANDBOX_PATHS.node,
      `--max-old-space-size=${Math.max(64, Math.floor(this.#opts.memoryMb / 2))}`,
      '--disable-warning=ExperimentalWarning',
      SANDBOX_PATHS.runner,
      JSON.stringify(config),
    ];
    // detached: its own process group, killed as one.
    const child = spawn(command[0]!, command.slice(1), {
      stdio: ['ignore', 'ignore', 'pipe', 'pipe'],
      detached: true,
      env: {},
    });
    const runner: Runner = { child, limits, onMessage: null, gone: null!, exited: false, stderr: '' };
    runner.gone = new Promise<void>((resolve) => child.once('close', () => resolve())).then(async () => {
      runner.exited = true;
      await limits.remove();
    });
    child.on('error', () => {}); // reported through `close` and the missing ready
    child.stderr!.setEncoding('utf8').on('data', (data: string) => {
      runner.stderr = (runner.stderr + data).slice(-8192);
    });
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('no ready message in time')), RUNNER_START_TIMEOUT_MS);
      void runner.gone.then(() => reject(new Error('it exited')));
      const lines = createInterface({ input: control(runner) });
      lines.on('line', (line) => {
        let message: RunnerMessage;
        try {
          message = JSON.parse(line) as RunnerMessage;
        } catch {
          return; // not the runner's: the caller's code wrote to fd 3
        }
        if (message.type === 'ready') {
          clearTimeout(timer);
          resolve();
        } else runner.onMessage?.(message);
      });
      control(runner).on('error', () => {});
    });
    try {
      await ready;
    } catch (err) {
      await this.#kill(runner);
      throw new SandboxUnavailableError(
        `The sandbox runner did not start (${(err as Error).message}): ${runner.stderr.trim() || 'no message'}`,
      );
    }
    this.#runner = runner;
    return runner;
  }

  async #kill(runner: Runner): Promise<void> {
    if (!runner.exited && runner.child.pid) {
      try {
        process.kill(-runner.child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    if (this.#runner === runner) this.#runner = null;
    await runner.gone;
  }
}

function control(runner: Runner): net.Socket {
  return runner.child.stdio[3] as net.Socket;
}

/** Keeps the first `max` bytes of a stream. */
class Capped {
  readonly #max: number;
  readonly #chunks: Buffer[] = [];
  #bytes = 0;
  truncated = false;
  constructor(max: number) {
    this.#max = max;
  }
  add(data: string): void {
    const chunk = Buffer.from(data);
    const room = this.#max - this.#bytes;
    if (chunk.length > room) this.truncated = true;
    if (room <= 0) return;
    this.#chunks.push(chunk.subarray(0, room));
    this.#bytes += Math.min(room, chunk.length);
  }
  text(): string {
    return Buffer.concat(this.#chunks).toString('utf8');
  }
}

/** A Unix socket whose every connection is piped to Chromium's debugging port, and nowhere else. */
function relayTo(port: number, socketPath: string): Promise<net.Server> {
  const server = net.createServer((inside) => {
    const browser = net.connect({ host: '127.0.0.1', port });
    inside.pipe(browser).pipe(inside);
    inside.on('error', () => browser.destroy());
    browser.on('error', () => inside.destroy());
    inside.on('close', () => browser.destroy());
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve(server));
  });
}
