// A minimal MCP client for tests: spawns an MCP server speaking newline-delimited JSON-RPC 2.0 on
// stdin/stdout, initializes the session, lists and calls tools, and keeps every message (and the
// server's stderr) for failure reports. No MCP library: the exchange the test proves is on the wire.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';

export interface McpTool {
  name: string;
  description?: string;
  inputSchema?: { properties?: Record<string, unknown> };
}

export interface McpToolResult {
  content: { type: string; text?: string }[];
  isError?: boolean;
}

export interface McpStdioClient {
  child: ChildProcess;
  /** The server's `initialize` answer (serverInfo, capabilities, protocolVersion). */
  initialized: { serverInfo: { name: string; version: string }; protocolVersion: string };
  /** Every message sent (`> `) and received (`< `) and each stderr line (`! `), in order. */
  traffic: string[];
  request(method: string, params?: unknown, ms?: number): Promise<any>;
  listTools(): Promise<McpTool[]>;
  callTool(name: string, args: Record<string, unknown>, ms?: number): Promise<McpToolResult>;
  /** The last `n` traffic lines, for assertion messages. */
  recent(n?: number): string;
  /** SIGTERM, then SIGKILL if it has not exited within 2 s; resolves once it has exited. */
  close(): Promise<void>;
}

type Pending = { resolve: (v: any) => void; reject: (e: Error) => void; timer: NodeJS.Timeout };

/** Starts `command args` with exactly `env` in `cwd` and completes the MCP handshake. */
export async function startMcpStdio(
  command: string,
  args: string[],
  { env, cwd }: { env: Record<string, string>; cwd: string },
): Promise<McpStdioClient> {
  const child = spawn(command, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const traffic: string[] = [];
  const pending = new Map<number, Pending>();
  let nextId = 1;
  const exit = once(child, 'exit');
  const recent = (n = 40) => traffic.slice(-n).join('\n');
  const send = (message: object) => {
    const line = JSON.stringify({ jsonrpc: '2.0', ...message });
    traffic.push(`> ${line}`);
    child.stdin!.write(`${line}\n`);
  };

  createInterface({ input: child.stderr! }).on('line', (line) => traffic.push(`! ${line}`));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    traffic.push(`< ${line}`);
    let msg: any;
    try {
      msg = JSON.parse(line);
    } catch {
      return; // not a protocol message: kept in traffic only
    }
    if (msg.method !== undefined) {
      // A request from the server (ping is the only one a client must answer); notifications are only logged.
      if (msg.id !== undefined)
        send(
          msg.method === 'ping'
            ? { id: msg.id, result: {} }
            : { id: msg.id, error: { code: -32601, message: `${msg.method} is not supported` } },
        );
      return;
    }
    const waiter = pending.get(msg.id);
    if (!waiter) return;
    pending.delete(msg.id);
    clearTimeout(waiter.timer);
    if (msg.error) waiter.reject(new Error(`MCP error ${msg.error.code}: ${msg.error.message}`));
    else waiter.resolve(msg.result);
  });
  void exit.then(([code, signal]) => {
    for (const [id, waiter] of pending) {
      pending.delete(id);
      clearTimeout(waiter.timer);
      waiter.reject(new Error(`the MCP server exited (${code ?? signal}) before answering; ${recent()}`));
    }
  });

  const request = (method: string, params?: unknown, ms = 30_000): Promise<any> => {
    const id = nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        pending.delete(id);
        reject(new Error(`${method} unanswered within ${ms} ms; ${recent()}`));
      }, ms);
      pending.set(id, { resolve, reject, timer });
      send({ id, method, ...(params === undefined ? {} : { params }) });
    });
  };

  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const killer = setTimeout(() => child.kill('SIGKILL'), 2000);
    await exit;
    clearTimeout(killer);
  };

  try {
    const initialized = await request('initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'gleaner-tests', version: '0' },
    });
    send({ method: 'notifications/initialized' });
    return {
      child,
      initialized,
      traffic,
      request,
      recent,
      close,
      listTools: async () => (await request('tools/list', {})).tools,
      callTool: (name, args, ms) => request('tools/call', { name, arguments: args }, ms),
    };
  } catch (err) {
    await close();
    throw err;
  }
}
