// Why an LLM call failed, as named errors with stable codes. They are ApiErrors, so a route that
// lets one through answers with its status and code; features usually catch LlmUnavailableError
// first and fall back to a deterministic extractor.
import { ApiError } from '../api/errors.ts';

export class LlmError extends ApiError {
  constructor(status: number, code: string, message: string, extra: { headers?: Record<string, string> } = {}) {
    super(status, code, message, extra);
  }
}

/** No endpoint is configured (neither OPENAI_BASE_URL nor OPENAI_API_KEY). */
export class LlmUnavailableError extends LlmError {
  constructor() {
    super(503, 'LLM_UNAVAILABLE', 'No LLM is configured: set OPENAI_BASE_URL (any OpenAI-compatible endpoint) or OPENAI_API_KEY.');
  }
}

/** A request to the endpoint took longer than LLM_TIMEOUT_MS. */
export class LlmTimeoutError extends LlmError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super(504, 'LLM_TIMEOUT', `The LLM did not answer within ${timeoutMs} ms.`);
    this.timeoutMs = timeoutMs;
  }
}

/** The endpoint kept answering 429 (after the retries), or asked to wait longer than we do. */
export class LlmRateLimitedError extends LlmError {
  readonly retryAfterSeconds: number | undefined;
  constructor(retryAfterSeconds: number | undefined) {
    const wait = retryAfterSeconds === undefined ? '' : `; it asks to retry after ${retryAfterSeconds} s`;
    super(503, 'LLM_RATE_LIMITED', `The LLM endpoint is rate limiting requests${wait}.`, {
      headers: retryAfterSeconds === undefined ? undefined : { 'retry-after': String(retryAfterSeconds) },
    });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Any other failure of the endpoint: 5xx after the retries, 4xx, unreachable. */
export class LlmUpstreamError extends LlmError {
  /** HTTP status of the endpoint's answer; undefined when it did not answer. */
  readonly upstreamStatus: number | undefined;
  constructor(message: string, upstreamStatus?: number) {
    super(502, 'LLM_ERROR', message);
    this.upstreamStatus = upstreamStatus;
  }
}

/** The model's reply was not valid JSON for the schema, also after one repair request. */
export class LlmInvalidOutputError extends LlmError {
  /** Validation problems of the last reply, e.g. `/price: must be number`. */
  readonly problems: string[];
  constructor(problems: string[]) {
    super(502, 'LLM_INVALID_OUTPUT', `The LLM's reply did not match the schema, also after a repair request: ${problems.slice(0, 5).join('; ')}`);
    this.problems = problems;
  }
}

/** The caller's JSON Schema cannot be compiled (a caller error: routes should check it first with checkJsonSchema). */
export class LlmInvalidSchemaError extends LlmError {
  constructor(reason: string) {
    super(400, 'LLM_INVALID_SCHEMA', `The JSON Schema is invalid: ${reason}`);
  }
}
