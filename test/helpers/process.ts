// Node processes the tests start (the server, workers, the CLI) from the repository root, with only
// the given environment: their output as it comes, and waits on it (checked as output arrives).
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { Waiters } from './waiters.ts';

const root = new URL('../../', import.meta.url).pathname;

export interface NodeProcess {
  child: ChildProcess;
  stdout: string[];
  stderr: string[];
  exit: Promise<number | null>;
  /** Resolves with fn's first value other than undefined (tried now and on each output); fails on exit or after `ms`. */
  until<T>(what: string, fn: () => T | undefined, ms?: number): Promise<T>;
  /** The first line of stdout or stderr containing `text`. */
  line(text: string, ms?: number): Promise<string>;
  /** SIGKILL if still running; resolves once it has exited. */
  kill(): Promise<void>;
}

/** `node <script> <args>` with `env` plus PATH, HOME and LOG_LEVEL=info. */
export function startNode(script: string, args: string[], env: Record<string, string>): NodeProcess {
  const child = spawn(process.execPath, [script, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stdout: string[] = [];
  const stderr: string[] = [];
  const output = new Waiters();
  let closed = false;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout.push(d), output.notify()));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr.push(d), output.notify()));
  const exit = once(child, 'exit').then(([code]) => code as number | null);
  // Once the process is gone and its output read to the end, waits fail.
  void once(child, 'close').then(
    () => ((closed = true), output.notify()),
    () => undefined,
  );
  const printed = () => `stderr: ${stderr.join('')} stdout: ${stdout.join('')}`;
  const proc: NodeProcess = {
    child,
    stdout,
    stderr,
    exit,
    until<T>(what: string, fn: () => T | undefined, ms = 30_000): Promise<T> {
      const tried = () => {
        const value = fn();
        if (value === undefined && closed)
          throw new Error(`${what} did not happen: the process exited (${child.exitCode}); ${printed()}`);
        return value;
      };
      return output.until(tried, ms, () => new Error(`${what} did not happen within ${ms} ms; ${printed()}`));
    },
    line(text, ms) {
      return proc.until(
        `a line with "${text}"`,
        () => `${stdout.join('')}\n${stderr.join('')}`.split('\n').find((l) => l.includes(text)),
        ms,
      );
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exit;
      }
    },
  };
  return proc;
}
