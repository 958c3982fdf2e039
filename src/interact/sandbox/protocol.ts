// The JSON lines between the server (sandbox.ts) and the runner inside the sandbox (runner.ts), on the
// runner's fd 3, and the runner's fixed layout inside the sandbox. Types only, plus constants.

export type SandboxLanguage = 'node' | 'python' | 'bash';

/** argv[2] of the runner, as JSON. */
export interface RunnerConfig {
  /** Path of Chromium's browser endpoint (`/devtools/browser/ID`). */
  cdpPath: string;
  /** Output bytes a run may send per stream before the rest is dropped. */
  maxOutputBytes: number;
}

export type ServerMessage = { type: 'run'; id: number; language: SandboxLanguage; code: string };

export type RunnerMessage =
  | { type: 'ready' }
  | { type: 'out'; id: number; stream: 'stdout' | 'stderr'; data: string }
  | { type: 'done'; id: number; exitCode: number; result?: string; error?: string };

/** Where the sandbox's pieces are mounted (see bwrap.ts). */
export const SANDBOX_PATHS = {
  gleaner: '/opt/gleaner',
  runner: '/opt/gleaner/runner.ts',
  python: '/opt/gleaner/gleaner_playwright.py',
  bin: '/opt/gleaner/bin',
  node: '/opt/node/bin/node',
  agentBrowser: '/opt/agent-browser/agent-browser',
  /** The directory holding the server's CDP socket. */
  cdpDir: '/run/gleaner',
  cdpSocket: '/run/gleaner/cdp.sock',
} as const;

/** The port the runner serves Chromium's endpoint on, on the sandbox's own loopback. */
export const SANDBOX_CDP_PORT = 9222;
