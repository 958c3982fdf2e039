// The one way Gleaner talks to an LLM: any OpenAI-compatible chat completions endpoint (OpenAI,
// Ollama, vLLM, LM Studio…) through the official `openai` SDK, configured by OPENAI_BASE_URL,
// OPENAI_API_KEY and MODEL_NAME.
//
// - complete(): one prompt → text.
// - chat(): one turn of a conversation the caller keeps (messages and OpenAI function tools) →
//   the assistant message (text and/or tool calls); the interact agent loop drives it.
// - extractJson(): one prompt → a JSON value valid for the caller's JSON Schema. The schema goes
//   as response_format json_schema (strict: false); an endpoint that answers 400 to it gets
//   json_object, then a plain instruction (with the schema in the system message), and that
//   choice is remembered for the process. The reply is parsed (fences and prose around it are
//   tolerated) and validated with ajv; an invalid reply gets ONE repair request carrying the
//   problems and the bad output, and is LLM_INVALID_OUTPUT if still invalid.
// - Each request is bounded by LLM_TIMEOUT_MS and the caller's signal (the caller's abort
//   rethrows its reason, so a scrape deadline stays the scrape's error). 429, 408, 409, 5xx and
//   unanswered requests are retried LLM_MAX_RETRIES times with exponential backoff (jittered,
//   capped) or the server's Retry-After; a Retry-After beyond maxRetryAfterMs is not waited for
//   (LLM_RATE_LIMITED at once). Timeouts are not retried: a model that took LLM_TIMEOUT_MS once
//   will likely do it again, and the caller's own deadline matters more.
// - Every answered request writes one token-ledger row (prompt + completion tokens as the
//   server reports them; estimated from characters/4 when it reports none) for the caller's team,
//   key and job, repair requests included, so /v1/team/token-usage/historical shows them. The
//   write is awaited and its failure fails the call: tokens that cannot be accounted for are not
//   handed out silently (a database that refuses this insert fails the job's own writes anyway).
// - Prompts and replies are never logged (pages may be private); models, sizes and timings are.
import { setTimeout as sleep } from 'node:timers/promises';
import OpenAI, { APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionFunctionTool,
  ChatCompletionMessage,
  ChatCompletionMessageParam,
} from 'openai/resources/chat/completions';
import type { LlmConfig } from '../config.ts';
import type { Queryable } from '../store/db-types.ts';
import { recordTokens } from '../store/usage.ts';
import { type JsonSchema, checkReply, compileSchema } from './json.ts';
import {
  LlmInvalidOutputError,
  LlmRateLimitedError,
  LlmTimeoutError,
  LlmUnavailableError,
  LlmUpstreamError,
} from '../errors.ts';

/** Whose tokens these are: one ledger row per request goes to this team, key and job. */
export interface UsageOwner {
  teamId: string;
  apiKeyId: string | null;
  jobId: string | null;
}

/** Tokens of all requests of one call (a repair or a format fallback adds requests). */
export interface LlmUsage {
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
  /** Requests answered by the endpoint (each is one ledger row). */
  requests: number;
  /** True when the endpoint reported no usage for some request and characters/4 stood in. */
  estimated: boolean;
}

export interface CompleteOptions {
  system?: string;
  prompt: string;
  /** Cap on the reply; default LLM_MAX_OUTPUT_TOKENS, else the endpoint's default. */
  maxOutputTokens?: number;
  signal?: AbortSignal;
  usage: UsageOwner;
}

export interface CompleteResult {
  text: string;
  /** The reply stopped at the output token cap. */
  truncated: boolean;
  model: string;
  usage: LlmUsage;
}

export interface ChatOptions {
  /** The whole conversation so far; the caller appends the reply and the tool results. */
  messages: ChatCompletionMessageParam[];
  /** Function tools the model may call; none: a plain chat turn. */
  tools?: ChatCompletionFunctionTool[];
  maxOutputTokens?: number;
  signal?: AbortSignal;
  usage: UsageOwner;
}

export interface ChatResult {
  /** The assistant message as the endpoint sent it: content, tool_calls, or both. */
  message: ChatCompletionMessage;
  /** 'stop', 'tool_calls', 'length'…; whatever the endpoint reported. */
  finishReason: string | undefined;
  model: string;
  usage: LlmUsage;
}

export interface ExtractJsonOptions {
  system?: string;
  prompt: string;
  /** The caller's JSON Schema; undefined: any JSON object. */
  schema?: JsonSchema;
  maxOutputTokens?: number;
  signal?: AbortSignal;
  usage: UsageOwner;
}

export interface ExtractJsonResult<T = unknown> {
  data: T;
  /** The first reply was invalid and the repair request fixed it. */
  repaired: boolean;
  model: string;
  usage: LlmUsage;
}

/** The logger calls the provider makes (pino and Fastify's logger fit). */
export interface LlmLog {
  debug(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface LlmProviderOptions {
  config: LlmConfig;
  /** Where the token ledger is written. */
  db: Queryable;
  log?: LlmLog;
  /** First retry delay; doubles per retry (jittered), capped at maxBackoffMs. Default 500. */
  retryBaseMs?: number;
  /** Default 8000. */
  maxBackoffMs?: number;
  /** Longest Retry-After waited for; a longer one is LLM_RATE_LIMITED at once. Default 30000. */
  maxRetryAfterMs?: number;
}

/** How a reply is asked to be JSON, best first. */
const JSON_SCHEMA = 2;
const JSON_OBJECT = 1;
const PLAIN = 0;
type JsonMode = typeof JSON_SCHEMA | typeof JSON_OBJECT | typeof PLAIN;
const modeNames = ['plain', 'json_object', 'json_schema'] as const;

// Per process: the JSON modes each endpoint and model answered 400 to (LM Studio, for one, takes
// json_schema but not json_object).
const refusedJsonModes = new Map<string, Set<JsonMode>>();

const OPENAI_URL = 'https://api.openai.com/v1';
/** A local Ollama or vLLM wants no key; the SDK wants one. */
const PLACEHOLDER_KEY = 'gleaner-no-key';
const REPAIR_OUTPUT_CHARS = 16_000;

const noLog: LlmLog = { debug: () => undefined, warn: () => undefined };

const estimateTokens = (text: string) => Math.ceil(text.length / 4);

function emptyUsage(): LlmUsage {
  return { promptTokens: 0, completionTokens: 0, totalTokens: 0, requests: 0, estimated: false };
}

/** Retry-After as milliseconds: `retry-after-ms`, or `retry-after` in seconds or as an HTTP date. */
function retryAfterMs(headers: Headers | undefined): number | undefined {
  const ms = Number(headers?.get('retry-after-ms') ?? NaN);
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

const short = (s: string, n = 300) => (s.length > n ? `${s.slice(0, n)}…` : s);

export class LlmProvider {
  /** False without OPENAI_BASE_URL or OPENAI_API_KEY: every call is LLM_UNAVAILABLE. */
  readonly available: boolean;
  /** The model every request names (MODEL_NAME); undefined when not available. */
  readonly model: string | undefined;
  readonly #config: LlmConfig;
  readonly #db: Queryable;
  readonly #log: LlmLog;
  readonly #client: OpenAI | undefined;
  readonly #modeKey: string;
  readonly #retryBaseMs: number;
  readonly #maxBackoffMs: number;
  readonly #maxRetryAfterMs: number;

  constructor(opts: LlmProviderOptions) {
    const c = opts.config;
    this.#config = c;
    this.#db = opts.db;
    this.#log = opts.log ?? noLog;
    this.#retryBaseMs = opts.retryBaseMs ?? 500;
    this.#maxBackoffMs = opts.maxBackoffMs ?? 8000;
    this.#maxRetryAfterMs = opts.maxRetryAfterMs ?? 30_000;
    this.available = c.configured && c.model !== undefined;
    this.model = this.available ? c.model : undefined;
    const baseURL = c.baseUrl ?? OPENAI_URL;
    this.#modeKey = `${baseURL} ${c.model}`;
    this.#client = this.available
      ? new OpenAI({
          // Every option explicit: the SDK would otherwise read OPENAI_* variables itself.
          baseURL,
          apiKey: c.apiKey ?? PLACEHOLDER_KEY,
          organization: null,
          project: null,
          // Retries and timeouts are ours (below), so their bounds are the configured ones.
          maxRetries: 0,
          timeout: c.timeoutMs,
        })
      : undefined;
  }

  /** One prompt, one text reply. */
  async complete(opts: CompleteOptions): Promise<CompleteResult> {
    const client = this.#require();
    const usage = emptyUsage();
    const messages = messagesOf(opts.system, opts.prompt);
    const completion = await this.#send(client, this.#body(messages, opts.maxOutputTokens), opts, usage);
    const choice = completion.choices?.[0];
    if (!choice) throw new LlmUpstreamError('The LLM endpoint answered without a choice.');
    return {
      text: choice.message?.content ?? '',
      truncated: choice.finish_reason === 'length',
      model: this.model as string,
      usage,
    };
  }

  /** One turn of a tool-using conversation: the assistant's next message. */
  async chat(opts: ChatOptions): Promise<ChatResult> {
    const client = this.#require();
    const usage = emptyUsage();
    const body = this.#body(opts.messages, opts.maxOutputTokens);
    if (opts.tools?.length) body.tools = opts.tools;
    const completion = await this.#send(client, body, opts, usage);
    const choice = completion.choices?.[0];
    if (!choice?.message) throw new LlmUpstreamError('The LLM endpoint answered without a choice.');
    return {
      message: choice.message,
      finishReason: choice.finish_reason ?? undefined,
      model: this.model as string,
      usage,
    };
  }

  /** One prompt, one JSON value valid for `schema` (any JSON object without one). */
  async extractJson<T = unknown>(opts: ExtractJsonOptions): Promise<ExtractJsonResult<T>> {
    const client = this.#require();
    compileSchema(opts.schema); // An unusable schema fails before any token is spent.
    const usage = emptyUsage();
    const wanted: JsonMode = opts.schema ? JSON_SCHEMA : JSON_OBJECT;
    const refused = refusedJsonModes.get(this.#modeKey) ?? new Set<JsonMode>();
    const usable = (from: number): JsonMode => {
      let m = from;
      while (m > PLAIN && refused.has(m as JsonMode)) m--;
      return m as JsonMode;
    };
    let mode = usable(wanted);

    // Asks with the best mode the endpoint takes; a 400 to response_format steps down a mode,
    // remembered for the process once a simpler mode got an answer.
    const ask = async (conversation: (m: JsonMode) => ChatCompletionMessageParam[]): Promise<string> => {
      const refusedNow: JsonMode[] = [];
      for (;;) {
        try {
          const body = this.#body(conversation(mode), opts.maxOutputTokens, jsonFormat(mode, opts.schema));
          const completion = await this.#send(client, body, opts, usage);
          if (refusedNow.length) {
            for (const m of refusedNow) refused.add(m);
            refusedJsonModes.set(this.#modeKey, refused);
            this.#log.warn(
              { model: this.model, refused: refusedNow.map((m) => modeNames[m]), mode: modeNames[mode] },
              'LLM endpoint refuses a structured output mode: not asking for it again',
            );
          }
          const message = completion.choices?.[0]?.message;
          return message?.content ?? (message?.refusal ? `(refused: ${message.refusal})` : '');
        } catch (err) {
          if (mode > PLAIN && isFormatRefusal(err)) {
            this.#log.warn(
              { model: this.model, mode: modeNames[mode], status: 400 },
              'LLM endpoint answered 400 to response_format: trying a simpler mode',
            );
            refusedNow.push(mode);
            mode = usable(mode - 1);
            continue;
          }
          throw err;
        }
      }
    };

    const first = (m: JsonMode) => messagesOf(joinSystem(opts.system, jsonInstruction(m, opts.schema)), opts.prompt);
    const reply = await ask(first);
    const checked = checkReply(reply, opts.schema);
    if (checked.ok) return { data: checked.value as T, repaired: false, model: this.model as string, usage };

    this.#log.warn(
      { model: this.model, problems: checked.problems.slice(0, 5) },
      'LLM reply invalid: sending one repair request',
    );
    const repair = (m: JsonMode): ChatCompletionMessageParam[] => [
      ...first(m),
      { role: 'assistant', content: short(reply, REPAIR_OUTPUT_CHARS) },
      { role: 'user', content: repairPrompt(checked.problems, opts.schema !== undefined) },
    ];
    const second = checkReply(await ask(repair), opts.schema);
    if (second.ok) return { data: second.value as T, repaired: true, model: this.model as string, usage };
    throw new LlmInvalidOutputError(second.problems);
  }

  #require(): OpenAI {
    if (!this.#client) throw new LlmUnavailableError();
    return this.#client;
  }

  #body(
    messages: ChatCompletionMessageParam[],
    maxOutputTokens: number | undefined,
    responseFormat?: ChatCompletionCreateParamsNonStreaming['response_format'],
  ): ChatCompletionCreateParamsNonStreaming {
    const maxTokens = maxOutputTokens ?? this.#config.maxOutputTokens;
    return {
      model: this.model as string,
      messages,
      // max_tokens rather than max_completion_tokens: Ollama, vLLM and older servers know it.
      ...(maxTokens !== undefined ? { max_tokens: maxTokens } : {}),
      ...(responseFormat ? { response_format: responseFormat } : {}),
    };
  }

  /** One request, with timeout and retries, and its tokens written to the ledger. */
  async #send(
    client: OpenAI,
    body: ChatCompletionCreateParamsNonStreaming,
    opts: { signal?: AbortSignal; usage: UsageOwner },
    usage: LlmUsage,
  ): Promise<ChatCompletion> {
    const { timeoutMs, maxRetries } = this.#config;
    const caller = opts.signal;
    for (let attempt = 0; ; attempt++) {
      caller?.throwIfAborted();
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = caller ? AbortSignal.any([caller, timeout]) : timeout;
      const started = Date.now();
      let completion: ChatCompletion;
      try {
        completion = await client.chat.completions.create(body, { signal, maxRetries: 0, timeout: timeoutMs });
      } catch (err) {
        if (caller?.aborted) throw caller.reason;
        if (timeout.aborted || err instanceof APIConnectionTimeoutError) throw new LlmTimeoutError(timeoutMs);
        const failure = classify(err);
        const waitMs = failure.retryAfterMs ?? this.#backoff(attempt);
        const canRetry = failure.retryable && attempt < maxRetries;
        if (canRetry && failure.retryAfterMs !== undefined && failure.retryAfterMs > this.#maxRetryAfterMs) {
          throw new LlmRateLimitedError(Math.ceil(failure.retryAfterMs / 1000));
        }
        if (!canRetry) throw failure.error;
        this.#log.warn(
          { model: body.model, status: failure.status, attempt: attempt + 1, waitMs: Math.round(waitMs) },
          'LLM request failed: retrying',
        );
        try {
          await sleep(waitMs, undefined, { signal: caller });
        } catch {
          throw caller?.reason;
        }
        continue;
      }
      await this.#account(completion, body, opts.usage, usage, Date.now() - started);
      return completion;
    }
  }

  #backoff(attempt: number): number {
    const base = Math.min(this.#retryBaseMs * 2 ** attempt, this.#maxBackoffMs);
    return base * (0.75 + Math.random() * 0.25);
  }

  async #account(
    completion: ChatCompletion,
    body: ChatCompletionCreateParamsNonStreaming,
    owner: UsageOwner,
    usage: LlmUsage,
    ms: number,
  ): Promise<void> {
    const reported = completion.usage;
    let promptTokens: number;
    let completionTokens: number;
    if (reported && Number.isFinite(reported.prompt_tokens) && Number.isFinite(reported.completion_tokens)) {
      promptTokens = reported.prompt_tokens;
      completionTokens = reported.completion_tokens;
    } else {
      promptTokens = body.messages.reduce((n, m) => n + estimateTokens(messageText(m)), 0);
      if (body.tools) promptTokens += estimateTokens(JSON.stringify(body.tools));
      const reply = completion.choices?.[0]?.message;
      completionTokens = estimateTokens(reply ? messageText(reply) : '');
      usage.estimated = true;
    }
    usage.promptTokens += promptTokens;
    usage.completionTokens += completionTokens;
    usage.totalTokens += promptTokens + completionTokens;
    usage.requests += 1;
    this.#log.debug(
      { model: body.model, promptTokens, completionTokens, ms, estimated: usage.estimated },
      'LLM request answered',
    );
    await recordTokens(this.#db, { ...owner, tokens: promptTokens + completionTokens });
  }
}

/** The text a message puts before the model: its content and the tool calls it carries. */
function messageText(m: ChatCompletionMessageParam | ChatCompletionMessage): string {
  const content = typeof m.content === 'string' ? m.content : m.content ? JSON.stringify(m.content) : '';
  const calls = 'tool_calls' in m && m.tool_calls?.length ? JSON.stringify(m.tool_calls) : '';
  return content + calls;
}

function messagesOf(system: string | undefined, prompt: string): ChatCompletionMessageParam[] {
  return [
    ...(system ? [{ role: 'system' as const, content: system }] : []),
    { role: 'user' as const, content: prompt },
  ];
}

function joinSystem(...parts: (string | undefined)[]): string {
  return parts.filter(Boolean).join('\n\n');
}

function jsonFormat(
  mode: JsonMode,
  schema: JsonSchema | undefined,
): ChatCompletionCreateParamsNonStreaming['response_format'] {
  if (mode === JSON_SCHEMA && schema)
    return { type: 'json_schema', json_schema: { name: 'extraction', schema, strict: false } };
  if (mode === JSON_OBJECT) return { type: 'json_object' };
  return undefined;
}

// json_object mode needs the word JSON in the messages; the plain mode needs the schema in them.
function jsonInstruction(mode: JsonMode, schema: JsonSchema | undefined): string {
  const base = 'Reply with JSON only: no prose, no code fences.';
  if (!schema) return `${base} The reply is one JSON object.`;
  if (mode === JSON_SCHEMA) return `${base} The reply must match the given JSON Schema.`;
  return `${base} The reply must match this JSON Schema:\n${JSON.stringify(schema)}`;
}

function repairPrompt(problems: string[], hasSchema: boolean): string {
  const list = problems
    .slice(0, 20)
    .map((p) => `- ${p}`)
    .join('\n');
  return `Your reply above is not usable:\n${list}\nReply again with the corrected JSON only${hasSchema ? ', matching the JSON Schema' : ' (one JSON object)'}: no prose, no code fences.`;
}

/** A 400 that is about response_format (not, say, a prompt longer than the context). */
function isFormatRefusal(err: unknown): boolean {
  if (!(err instanceof LlmUpstreamError) || err.upstreamStatus !== 400) return false;
  return !/context|too long|maximum.*tokens|max_tokens|token limit/i.test(err.message);
}

interface Failure {
  retryable: boolean;
  status: number | undefined;
  retryAfterMs: number | undefined;
  error: Error;
}

function classify(err: unknown): Failure {
  if (err instanceof APIError && !(err instanceof APIUserAbortError)) {
    const status = err.status;
    if (status === undefined) {
      // No answer: refused connection, reset, DNS.
      const cause = (err.cause as Error | undefined)?.message ?? err.message;
      return {
        retryable: true,
        status,
        retryAfterMs: undefined,
        error: new LlmUpstreamError(`Could not reach the LLM endpoint: ${short(cause)}`),
      };
    }
    const wait = retryAfterMs(err.headers);
    if (status === 429)
      return {
        retryable: true,
        status,
        retryAfterMs: wait,
        error: new LlmRateLimitedError(wait === undefined ? undefined : Math.ceil(wait / 1000)),
      };
    const retryable = status === 408 || status === 409 || status >= 500;
    return {
      retryable,
      status,
      retryAfterMs: retryable ? wait : undefined,
      error: new LlmUpstreamError(`The LLM endpoint answered ${status}: ${short(err.message)}`, status),
    };
  }
  // E.g. a 200 whose body is not JSON.
  return {
    retryable: false,
    status: undefined,
    retryAfterMs: undefined,
    error: new LlmUpstreamError(`The LLM request failed: ${short(String((err as Error)?.message ?? err))}`),
  };
}
