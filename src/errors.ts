// Every error Gleaner reports, in one ground-floor module that every layer imports (the model:
// Fastify's lib/errors.js). Each is a named class with a stable code and an HTTP status; the API
// layer (src/api/error-handler.ts) only maps them to {success: false, code, error}.

// ---- Request and API errors

export class ApiError extends Error {
  readonly statusCode: number;
  readonly code: string;
  readonly details?: unknown;
  readonly headers?: Record<string, string>;
  constructor(statusCode: number, code: string, message: string, extra: { details?: unknown; headers?: Record<string, string> } = {}) {
    super(message);
    this.name = new.target.name;
    this.statusCode = statusCode;
    this.code = code;
    this.details = extra.details;
    this.headers = extra.headers;
  }
}

export class BadRequestError extends ApiError {
  constructor(message: string, details?: unknown) {
    super(400, 'BAD_REQUEST', message, { details });
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message = 'Unauthorized: send a valid API key as "Authorization: Bearer <key>"') {
    super(401, 'UNAUTHORIZED', message, { headers: { 'www-authenticate': 'Bearer' } });
  }
}

export class InsufficientCreditsError extends ApiError {
  constructor(needed: number, remaining: number) {
    super(
      402,
      'INSUFFICIENT_CREDITS',
      `Payment required: this request needs ${needed} credit(s) and the team has ${remaining} left this billing period.`,
    );
  }
}

export class ForbiddenError extends ApiError {
  constructor(message = 'Forbidden: this resource belongs to another team') {
    super(403, 'FORBIDDEN', message);
  }
}

export class NotFoundError extends ApiError {
  constructor(message = 'Not found', code = 'NOT_FOUND') {
    super(404, code, message);
  }
}

export class ConflictError extends ApiError {
  constructor(message: string, code: string) {
    super(409, code, message);
  }
}

export class RateLimitedError extends ApiError {
  constructor(retryAfterSeconds: number, limitClass: string) {
    super(429, 'RATE_LIMITED', `Rate limit exceeded for ${limitClass} requests; retry after ${retryAfterSeconds} s.`, {
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}

// ---- Scrape errors: why a scrape of a target failed. A target that answers (even 404 or 500) is not an error: its status goes to metadata.statusCode.

export class ScrapeError extends ApiError {
  constructor(status: number, code: string, message: string) {
    super(status, code, message);
  }
}

export class ScrapeTimeoutError extends ScrapeError {
  constructor(timeoutMs: number, url: string) {
    super(408, 'SCRAPE_TIMEOUT', `Scrape of ${url} timed out after ${timeoutMs} ms`);
  }
}

export class BlockedUrlError extends ScrapeError {
  constructor(message: string) {
    super(403, 'SCRAPE_BLOCKED_URL', `${message}. Private and local addresses are refused unless GLEANER_ALLOW_PRIVATE_NETWORK=true.`);
  }
}

export class DnsResolutionError extends ScrapeError {
  constructor(host: string) {
    super(502, 'SCRAPE_DNS_RESOLUTION_ERROR', `DNS resolution failed for ${host}`);
  }
}

export class ConnectionError extends ScrapeError {
  constructor(url: string, reason: string) {
    super(502, 'SCRAPE_CONNECTION_ERROR', `Could not connect to ${url}: ${reason}`);
  }
}

export class TlsError extends ScrapeError {
  constructor(url: string, reason: string) {
    super(502, 'SCRAPE_SSL_ERROR', `TLS error for ${url}: ${reason}`);
  }
}

export class TooManyRedirectsError extends ScrapeError {
  constructor(url: string, max: number) {
    super(502, 'SCRAPE_TOO_MANY_REDIRECTS', `More than ${max} redirects starting at ${url}`);
  }
}

export class ResponseTooLargeError extends ScrapeError {
  constructor(url: string, maxBytes: number) {
    super(502, 'SCRAPE_RESPONSE_TOO_LARGE', `The response of ${url} exceeds ${maxBytes} bytes`);
  }
}

export class SiteError extends ScrapeError {
  constructor(url: string, reason: string) {
    super(502, 'SCRAPE_SITE_ERROR', `The site failed to answer ${url}: ${reason}`);
  }
}

export class UnsupportedFileError extends ScrapeError {
  constructor(contentType: string) {
    super(415, 'SCRAPE_UNSUPPORTED_FILE_ERROR', `Unsupported content type: ${contentType}`);
  }
}

/** The browser engine cannot run: Chromium is not installed where expected, or does not start. */
export class BrowserUnavailableError extends ScrapeError {
  constructor(message: string) {
    super(503, 'BROWSER_UNAVAILABLE', message);
  }
}

/**
 * One of the request's actions failed on the page (no element matches its selector in time, a
 * script threw, an unknown key...). 400: the request asked for something this page does not
 * allow; the message names the action's index in `actions` (0-based) and its type.
 */
export class ScrapeActionError extends ScrapeError {
  readonly actionIndex: number;
  readonly actionType: string;
  constructor(index: number, type: string, reason: string) {
    super(400, 'SCRAPE_ACTION_ERROR', `Action ${index} (${type}) failed: ${reason}`);
    this.actionIndex = index;
    this.actionType = type;
  }
}

/** ffmpeg or ffprobe (the audio and video formats) cannot run: not installed where expected. */
export class FfmpegUnavailableError extends ScrapeError {
  constructor(program: string, path: string) {
    super(
      503,
      'MEDIA_FFMPEG_UNAVAILABLE',
      `The audio and video formats need ${program}, which is not installed at "${path}": install Debian's ffmpeg package (apt-get install ffmpeg), or set ${program === 'ffprobe' ? 'FFPROBE_PATH' : 'FFMPEG_PATH'}`,
    );
  }
}

/** The media (a file, or the sum of a stream's playlists and segments) is larger than allowed. */
export class MediaTooLargeError extends ScrapeError {
  constructor(url: string, maxBytes: number, variable: 'MEDIA_MAX_BYTES' | 'MEDIA_ZDR_MAX_BYTES') {
    const why =
      variable === 'MEDIA_ZDR_MAX_BYTES'
        ? `the most returned inline under zeroDataRetention (${variable})`
        : `the media size cap (${variable})`;
    super(502, 'SCRAPE_MEDIA_TOO_LARGE', `The media ${url} exceeds ${maxBytes} bytes, ${why}`);
  }
}

/** A media URL (file, playlist, segment, key) answered with an error status. */
export class MediaFetchError extends ScrapeError {
  constructor(url: string, status: number) {
    super(502, 'SCRAPE_MEDIA_FETCH_FAILED', `The media ${url} could not be downloaded: the server answered ${status}`);
  }
}

/** The media cannot be read or assembled: not a media file, encrypted or live streams, DASH features not handled. */
export class MediaUnsupportedError extends ScrapeError {
  constructor(url: string, reason: string) {
    super(422, 'SCRAPE_MEDIA_UNSUPPORTED', `The media ${url} cannot be used: ${reason}`);
  }
}

// ---- LLM errors: features usually catch LlmUnavailableError first and fall back to a deterministic extractor.

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

/** POST /v2/parse: an upload that cannot be parsed as asked (the code says why: 400, 408, 413, 415, 422, 503). */
export class ParseError extends ApiError {}

/** The document parser threads are all busy and their queue is full (POST /v2/parse answers 503). */
export class ParsePoolBusyError extends Error {
  readonly code = 'PARSE_QUEUE_FULL';
  constructor(message: string) {
    super(message);
    this.name = 'ParsePoolBusyError';
  }
}

// ---- Storage errors

/** The embedded database's data directory is held by another process. */
export class DataDirLockedError extends Error {
  readonly code = 'DATA_DIR_LOCKED';
  constructor(dir: string, pid: number) {
    super(
      `The data directory ${dir} is in use by process ${pid} (an embedded PGlite database allows one process). ` +
        'Stop that process first, or point DATABASE_URL at a Postgres server to share data between processes.',
    );
    this.name = 'DataDirLockedError';
  }
}

/** The thread that runs the embedded database stopped (crashed or closed); its statements fail. */
export class PgliteThreadError extends Error {
  readonly code = 'PGLITE_THREAD_STOPPED';
  constructor(reason: string) {
    super(`The embedded database thread stopped: ${reason}`);
    this.name = 'PgliteThreadError';
  }
}

// ---- Document parsing errors: thrown inside the parse threads, where no HTTP status applies; src/documents/convert.ts maps them to statuses.

export type DocumentErrorCode =
  /** The bytes are not a valid file of the detected type (corrupt, truncated). */
  | 'DOCUMENT_CORRUPT'
  /** Password-protected or encrypted content that cannot be read without a key. */
  | 'DOCUMENT_ENCRYPTED'
  /** Decompressed content over the bound (zip bomb guard) or too many parts. */
  | 'DOCUMENT_TOO_LARGE'
  /** A type Gleaner does not parse (the message names it). */
  | 'DOCUMENT_UNSUPPORTED'
  /** Parsing took longer than allowed, or was aborted. */
  | 'DOCUMENT_TIMEOUT';

export class DocumentError extends Error {
  readonly code: DocumentErrorCode;
  constructor(code: DocumentErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DocumentError';
    this.code = code;
  }
}
