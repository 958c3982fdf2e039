// A small OpenAI-compatible chat completions server for tests: POST /v1/chat/completions answers
// from a queue of scripted replies (JSON content, any text, tool calls, an HTTP error with headers,
// a hang, or a reply computed from the request), and records every request body so tests assert on what was sent.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** One function tool call of a scripted reply; arguments other than a string are sent as JSON. */
export interface FakeToolCall {
  name: string;
  arguments?: unknown;
  /** Default `call_<n>`. */
  id?: string;
}

export type Scripted =
  /** 200 with this value as the message content (JSON text). */
  | { json: unknown; usage?: FakeUsage | null }
  /** 200 with this text as the message content; usage null: the server reports none. */
  | { content: string; usage?: FakeUsage | null; finishReason?: string }
  /** 200 with an assistant message calling these tools (finish_reason tool_calls), with optional text. */
  | { toolCalls: FakeToolCall[]; content?: string | null; usage?: FakeUsage | null }
  /** The reply is decided from the request's body (e.g. a ref read from the last tool message). */
  | { from: (body: any) => Scripted }
  /** An error status with an OpenAI-style error body. */
  | { status: number; message?: string; headers?: Record<string, string> }
  /** Never answers (the client's timeout must end it). */
  | { hang: true };

export interface RecordedRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
  at: number;
}

export interface FakeLlm {
  /** Base URL to use as OPENAI_BASE_URL, e.g. http://127.0.0.1:34567/v1 */
  baseUrl: string;
  requests: RecordedRequest[];
  /** Queues replies, answered in order, one per request. */
  script(...replies: Scripted[]): void;
  /** response_format types answered 400 (not consuming the queue), like a server without them. */
  refuseFormats: Set<string>;
  /** Replies still queued. */
  pending(): number;
  close(): Promise<void>;
}

export const DEFAULT_USAGE: FakeUsage = { prompt_tokens: 11, completion_tokens: 7 };

export async function startFakeLlm(): Promise<FakeLlm> {
  const queue: Scripted[] = [];
  const requests: RecordedRequest[] = [];
  const refuseFormats = new Set<string>();
  let counter = 0;

  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const completion = (
    body: any,
    content: string | null,
    usage: FakeUsage | null | undefined,
    finishReason = 'stop',
    toolCalls?: FakeToolCall[],
  ) => ({
    id: `chatcmpl-${++counter}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body?.model ?? 'unknown',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content,
          ...(toolCalls
            ? {
                tool_calls: toolCalls.map((c) => ({
                  id: c.id ?? `call_${++counter}`,
                  type: 'function',
                  function: {
                    name: c.name,
                    arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments ?? {}),
                  },
                })),
              }
            : {}),
        },
        finish_reason: finishReason,
      },
    ],
    ...(usage === null
      ? {}
      : {
          usage: {
            ...(usage ?? DEFAULT_USAGE),
            total_tokens: (usage ?? DEFAULT_USAGE).prompt_tokens + (usage ?? DEFAULT_USAGE).completion_tokens,
          },
        }),
  });

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = undefined;
      }
      requests.push({ path: req.url ?? '', headers: req.headers, body, at: Date.now() });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        return send(res, 404, {
          error: { message: `no route ${req.method} ${req.url}`, type: 'invalid_request_error' },
        });
      }
      const format = body?.response_format?.type;
      if (format && refuseFormats.has(format)) {
        return send(res, 400, {
          error: {
            message: `response_format type ${format} is not supported`,
            type: 'invalid_request_error',
            param: 'response_format',
          },
        });
      }
      let next = queue.shift();
      while (next && 'from' in next) next = next.from(body);
      if (!next)
        return send(res, 500, { error: { message: 'fake LLM: no scripted reply left', type: 'server_error' } });
      if ('hang' in next) return; // The socket stays open until the client gives up or close().
      if ('status' in next) {
        return send(
          res,
          next.status,
          { error: { message: next.message ?? `scripted ${next.status}`, type: 'scripted' } },
          next.headers,
        );
      }
      if ('json' in next) return send(res, 200, completion(body, JSON.stringify(next.json), next.usage));
      if ('toolCalls' in next) {
        return send(res, 200, completion(body, next.content ?? null, next.usage, 'tool_calls', next.toolCalls));
      }
      return send(res, 200, completion(body, next.content, next.usage, next.finishReason));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    refuseFormats,
    script: (...replies) => void queue.push(...replies),
    pending: () => queue.length,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
