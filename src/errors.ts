// Every error Gleaner reports, in one ground-floor module that every layer imports (the model:
// Fastify's lib/errors.js): the registry of codes (code -> HTTP status, meaning), then the classes,
// whose status comes from their code. The API layer (src/api/error-handler.ts) only maps them to
// {success: false, code, error}; docs/errors.md is generated from the registry (npm run docs:errors).

// ---- The registry: every code, grouped as docs/errors.md lists them. `status: null` is a code
// that is never an HTTP status (a crawl page's record, a WebSocket message, or never sent at all).

interface ErrorCodeSpec {
  status: number | null;
  meaning: string;
}

const requestErrors = {
  BAD_REQUEST: {
    status: 400,
    meaning: 'Invalid request (`details`: [{path, message}] per field); other 4xx request errors keep their status',
  },
  UNAUTHORIZED: { status: 401, meaning: 'No API key, or not a valid one: send "Authorization: Bearer <key>"' },
  INSUFFICIENT_CREDITS: {
    status: 402,
    meaning: "The team's credits left this billing period do not cover the request (also a crawl page's code)",
  },
  FORBIDDEN: { status: 403, meaning: 'The resource belongs to another team' },
  NOT_FOUND: { status: 404, meaning: 'No such route or resource' },
  REQUEST_TIMEOUT: {
    status: 408,
    meaning: 'The client did not send the whole request (headers and body) in time; the connection is closed',
  },
  IDEMPOTENCY_KEY_REUSED: { status: 409, meaning: 'The idempotency key was already used with a different request' },
  IDEMPOTENCY_KEY_IN_USE: {
    status: 409,
    meaning: 'A request with this idempotency key is still being started; retry shortly',
  },
  PAYLOAD_TOO_LARGE: { status: 413, meaning: 'The request body is larger than the server accepts (BODY_LIMIT_BYTES)' },
  URI_TOO_LONG: {
    status: 414,
    meaning: 'A path segment (an id...) is longer than the router accepts (100 characters)',
  },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, meaning: "The request's Content-Type is not one the route accepts" },
  RATE_LIMITED: {
    status: 429,
    meaning: "Too many requests of the route's class for the team; Retry-After says when to retry",
  },
  HEADERS_TOO_LARGE: {
    status: 431,
    meaning: "The request's headers are larger than the server accepts; the connection is closed",
  },
  UNKNOWN_ERROR: {
    status: 500,
    meaning: "Unexpected failure (logged with the request id); also a job's or crawl page's code when it has none",
  },
  NOT_READY: { status: 503, meaning: 'GET /ready: the database is unreachable' },
} as const satisfies Record<string, ErrorCodeSpec>;

const jobErrors = {
  SCRAPE_NOT_FOUND: { status: 404, meaning: 'GET /v2/scrape/{id}: no stored document of this scrape for this team' },
  CRAWL_NOT_FOUND: { status: 404, meaning: "No such crawl for this team (another team's id reads as missing)" },
  BATCH_SCRAPE_NOT_FOUND: {
    status: 404,
    meaning: "No such batch scrape for this team (another team's id reads as missing)",
  },
  BATCH_SCRAPE_NOT_RUNNING: { status: 409, meaning: 'appendToId names a batch scrape that is no longer running' },
  EXTRACT_NOT_FOUND: { status: 404, meaning: "No such extract for this team (another team's id, or an expired one)" },
  FILE_NOT_FOUND: { status: 404, meaning: 'No such stored file (screenshot, media...), or it has expired' },
  CRAWL_FAILED: {
    status: null,
    meaning: '`npx gleaner crawl`: the crawl it watched ended failed (exit code 1; the crawl status holds the reason)',
  },
  CRAWL_CANCELLED: {
    status: null,
    meaning: '`npx gleaner crawl`: the crawl it watched was cancelled (exit code 1)',
  },
  JOB_INTERRUPTED: {
    status: null,
    meaning:
      "A scrape, map, search or parse whose process stopped before it answered (a crash or kill): its job record is closed as failed with this code (the client's connection was cut; retry)",
  },
  ROBOTS_DISALLOWED: {
    status: null,
    meaning: "A crawl page's record: robots.txt disallows the page (listed in robotsBlocked)",
  },
  ROBOTS_UNREACHABLE: {
    status: null,
    meaning: "A crawl page's record: the site's robots.txt could not be read, so the page was not fetched (RFC 9309)",
  },
  INTERNAL_ERROR: {
    status: null,
    meaning: "A status WebSocket's error message: streaming failed (the socket closes with 1011); GET the status",
  },
} as const satisfies Record<string, ErrorCodeSpec>;

const scrapeErrors = {
  SCRAPE_ACTION_ERROR: {
    status: 400,
    meaning: 'One of the actions failed on the page; the message names its index and type',
  },
  SCRAPE_BLOCKED_URL: {
    status: 403,
    meaning: 'The target is a private or local address (allowed with GLEANER_ALLOW_PRIVATE_NETWORK=true)',
  },
  SCRAPE_NO_CACHED_DATA: { status: 404, meaning: 'minAge: no cached copy of the page at least that old' },
  SCRAPE_LOCKDOWN_CACHE_MISS: {
    status: 404,
    meaning: 'lockdown serves from the cache only, and the page has no cached copy',
  },
  SCRAPE_TIMEOUT: { status: 408, meaning: 'The scrape took longer than its timeout' },
  MAP_TIMEOUT: {
    status: 408,
    meaning: 'POST /v2/map: `timeout` expired before the start page (with sitemap "only", robots.txt) was read',
  },
  SCRAPE_UNSUPPORTED_FILE_ERROR: {
    status: 415,
    meaning: 'The target answered a content type (or document type) Gleaner cannot read',
  },
  SCRAPE_MEDIA_UNSUPPORTED: {
    status: 422,
    meaning: 'Formats audio and video: not media, or an encrypted, live or otherwise unsupported stream',
  },
  SCRAPE_DNS_RESOLUTION_ERROR: { status: 502, meaning: "The target's host name does not resolve" },
  SCRAPE_CONNECTION_ERROR: { status: 502, meaning: 'No connection to the target could be made' },
  SCRAPE_SSL_ERROR: { status: 502, meaning: "The target's TLS certificate or handshake failed" },
  SCRAPE_TOO_MANY_REDIRECTS: { status: 502, meaning: 'The target redirected more times than allowed' },
  SCRAPE_RESPONSE_TOO_LARGE: {
    status: 502,
    meaning: "The target's response is larger than allowed (SCRAPE_MAX_BYTES)",
  },
  SCRAPE_SITE_ERROR: {
    status: 502,
    meaning: 'The site failed to answer (connection reset, browser navigation error...)',
  },
  SCRAPE_MEDIA_TOO_LARGE: {
    status: 502,
    meaning: 'The media or its MP3 is over MEDIA_MAX_BYTES (MEDIA_ZDR_MAX_BYTES under zero data retention)',
  },
  SCRAPE_MEDIA_FETCH_FAILED: { status: 502, meaning: 'A media URL (file, playlist, segment) answered an error status' },
  BROWSER_UNAVAILABLE: {
    status: 503,
    meaning: 'The request needs the browser engine, and Chromium is not installed or does not start',
  },
  MEDIA_FFMPEG_UNAVAILABLE: {
    status: 503,
    meaning: 'Formats audio and video need ffmpeg and ffprobe, and one is not installed (FFMPEG_PATH, FFPROBE_PATH)',
  },
} as const satisfies Record<string, ErrorCodeSpec>;

const parseErrors = {
  PARSE_UNSUPPORTED_OPTIONS: {
    status: 400,
    meaning: 'POST /v2/parse: options an upload cannot have (the message names them)',
  },
  PARSE_TIMEOUT: { status: 408, meaning: 'POST /v2/parse: parsing took longer than `timeout`' },
  FILE_TOO_LARGE: { status: 413, meaning: 'POST /v2/parse: the upload is over 50 MiB' },
  UNSUPPORTED_FILE_TYPE: {
    status: 415,
    meaning: 'POST /v2/parse: a file type Gleaner does not parse (the message names it)',
  },
  PARSE_QUEUE_FULL: {
    status: 503,
    meaning: 'POST /v2/parse: every parser thread is busy and the queue is full; retry later',
  },
} as const satisfies Record<string, ErrorCodeSpec>;

// The DocumentError codes, raised inside the parse threads; src/documents/convert.ts maps them to
// answers (the last two to the route's own code: PARSE_* for POST /v2/parse, SCRAPE_* for a scrape).
const documentErrors = {
  DOCUMENT_CORRUPT: {
    status: 422,
    meaning: 'The bytes are not a valid file of the detected type (corrupt, truncated)',
  },
  DOCUMENT_ENCRYPTED: {
    status: 422,
    meaning: 'Password-protected or encrypted content that cannot be read without a key',
  },
  DOCUMENT_TOO_LARGE: {
    status: 413,
    meaning: 'Decompressed content over the bound (zip bomb guard) or too many parts',
  },
  DOCUMENT_UNSUPPORTED: {
    status: null,
    meaning: 'Not a type Gleaner parses; answered as UNSUPPORTED_FILE_TYPE (parse) or SCRAPE_UNSUPPORTED_FILE_ERROR',
  },
  DOCUMENT_TIMEOUT: {
    status: null,
    meaning: 'Parsing took longer than allowed, or was aborted; answered as PARSE_TIMEOUT or SCRAPE_TIMEOUT',
  },
} as const satisfies Record<string, ErrorCodeSpec>;

const llmErrors = {
  LLM_INVALID_SCHEMA: { status: 400, meaning: 'The JSON Schema given for extraction cannot be compiled' },
  LLM_ERROR: { status: 502, meaning: 'The LLM endpoint failed (5xx after the retries, 4xx, unreachable)' },
  LLM_INVALID_OUTPUT: {
    status: 502,
    meaning: "The model's reply did not match the schema, also after a repair request",
  },
  LLM_UNAVAILABLE: {
    status: 503,
    meaning: 'No LLM is configured (set OPENAI_BASE_URL or OPENAI_API_KEY; MODEL_NAME picks the model)',
  },
  LLM_RATE_LIMITED: { status: 503, meaning: 'The LLM endpoint kept rate limiting requests' },
  LLM_TIMEOUT: { status: 504, meaning: 'The LLM did not answer within LLM_TIMEOUT_MS' },
} as const satisfies Record<string, ErrorCodeSpec>;

const monitorErrors = {
  MONITOR_NOT_FOUND: { status: 404, meaning: "No such monitor for this team (another team's id reads as missing)" },
  MONITOR_CHECK_NOT_FOUND: {
    status: 404,
    meaning: 'No such check of this monitor (or it was pruned by retentionDays)',
  },
  MONITOR_PAUSED: { status: 409, meaning: 'POST /v2/monitor/{id}/run: the monitor is paused (resume it first)' },
  MONITOR_CHECK_RUNNING: {
    status: 409,
    meaning: "POST /v2/monitor/{id}/run: the monitor's previous check is still queued or running",
  },
} as const satisfies Record<string, ErrorCodeSpec>;

const searchErrors = {
  SEARCH_BACKEND_ERROR: {
    status: 502,
    meaning:
      'POST /v2/search: the search backend (SearXNG) failed or is unreachable for every requested source (one source failing is a warning)',
  },
  SEARCH_TIMEOUT: { status: 408, meaning: 'POST /v2/search: no backend answered within `timeout`' },
} as const satisfies Record<string, ErrorCodeSpec>;

const agentErrors = {
  AGENT_NOT_FOUND: { status: 404, meaning: "No such agent for this team (another team's id, or an expired one)" },
  AGENT_INVALID_OUTPUT: {
    status: null,
    meaning:
      "An agent's error: its answer did not match the request's `schema`, also after one retry with the problems",
  },
  AGENT_CREDITS_EXHAUSTED: {
    status: null,
    meaning: "An agent's error: `maxCredits` was reached before the agent found anything to answer from",
  },
  AGENT_NOTHING_FOUND: {
    status: null,
    meaning: "An agent's error: no page could be read (nothing matched in the index, the given URLs failed)",
  },
  AGENT_FAILED: {
    status: null,
    meaning: "An agent's error: the LLM or the job failed (the message carries the underlying code)",
  },
} as const satisfies Record<string, ErrorCodeSpec>;

const interactErrors = {
  BROWSER_SESSION_NOT_FOUND: {
    status: 404,
    meaning: 'No such browser session (or interact job) for this team',
  },
  BROWSER_SESSION_DESTROYED: {
    status: 410,
    meaning: 'The browser session was stopped (DELETE, idle expiry, ttl): it cannot run code again',
  },
  INTERACT_REPLAY_UNAVAILABLE: {
    status: 409,
    meaning:
      'POST /v2/scrape/{id}/interact: the scrape cannot be replayed (zero data retention or lockdown, a failed scrape, or its replay expired)',
  },
  BROWSER_SESSION_LIMIT: {
    status: 429,
    meaning:
      'Too many live browser sessions (BROWSER_SESSIONS_PER_TEAM for the team, BROWSER_SESSIONS_MAX per process)',
  },
  BROWSER_SESSION_BUSY: {
    status: 409,
    meaning: 'The browser session is being stopped or is still starting in another request',
  },
  BROWSER_SESSION_ELSEWHERE: {
    status: 503,
    meaning: 'The browser session lives in another API process: send its requests to that process (sticky routing)',
  },
  INTERACT_EXECUTION_FAILED: {
    status: 502,
    meaning:
      "The session's browser or sandbox failed while running the code or prompt (not an error of the code itself)",
  },
  SANDBOX_UNAVAILABLE: {
    status: 503,
    meaning:
      "Running code needs the bubblewrap sandbox (`bwrap`, Debian's `bubblewrap` package) and it is missing or fails",
  },
  INTERACT_PROMPT_TIMEOUT: {
    status: 408,
    meaning: "A browser session's prompt was not done within its `timeout` (the page stays as the agent left it)",
  },
} as const satisfies Record<string, ErrorCodeSpec>;

// Errors of the process itself, outside the classes below: logged or printed at start-up, or mapped
// to one of the codes above before an answer (SSRF_BLOCKED -> SCRAPE_BLOCKED_URL).
const processErrors = {
  CONFIG_INVALID: { status: null, meaning: 'An environment variable has an invalid value (printed at start-up)' },
  DATA_DIR_LOCKED: { status: null, meaning: 'The embedded database directory is in use by another process' },
  PGLITE_THREAD_STOPPED: { status: null, meaning: 'The embedded database thread stopped' },
  SSRF_BLOCKED: {
    status: null,
    meaning: 'A connection to a private or local address was refused (answered as SCRAPE_BLOCKED_URL)',
  },
  INVALID_URL: { status: null, meaning: 'A target URL the guarded connection cannot use (answered as BAD_REQUEST)' },
} as const satisfies Record<string, ErrorCodeSpec>;

/** The groups, in the order docs/errors.md lists them. */
export const errorCodeGroups = [
  { title: 'Requests', codes: requestErrors },
  { title: 'Jobs: scrapes, crawls, batch scrapes, extracts and stored files', codes: jobErrors },
  { title: 'Scrapes and maps: why fetching a target failed', codes: scrapeErrors },
  { title: 'Uploads (POST /v2/parse)', codes: parseErrors },
  { title: 'Documents (DocumentError, inside the parser threads)', codes: documentErrors },
  { title: 'LLM', codes: llmErrors },
  { title: 'Monitors', codes: monitorErrors },
  { title: 'Search', codes: searchErrors },
  { title: 'Agents (POST /v2/agent)', codes: agentErrors },
  { title: 'Browser sessions (interact, /v2/browser)', codes: interactErrors },
  { title: 'The process (never in an answer)', codes: processErrors },
] as const;

/** The registry: every code Gleaner reports -> its HTTP status and meaning. */
export const errorCodes = {
  ...requestErrors,
  ...jobErrors,
  ...scrapeErrors,
  ...parseErrors,
  ...documentErrors,
  ...llmErrors,
  ...monitorErrors,
  ...searchErrors,
  ...agentErrors,
  ...interactErrors,
  ...processErrors,
} as const;

export type ErrorCode = keyof typeof errorCodes;
/** The codes an HTTP answer can carry (those with a status). */
export type HttpErrorCode = {
  [C in ErrorCode]: (typeof errorCodes)[C]['status'] extends number ? C : never;
}[ErrorCode];
/** The codes answered with `status`. */
export type ErrorCodeWithStatus<S extends number> = {
  [C in HttpErrorCode]: (typeof errorCodes)[C]['status'] extends S ? C : never;
}[HttpErrorCode];
/** The codes an agent records as its error (never an HTTP status). */
export type AgentErrorCode = Exclude<keyof typeof agentErrors, 'AGENT_NOT_FOUND'>;
/** The codes of DocumentError. */
export type DocumentErrorCode = keyof typeof documentErrors;

/** Every code, in registry order. */
export const allErrorCodes = Object.keys(errorCodes) as ErrorCode[];
/** The codes an HTTP answer can carry, in registry order (the OpenAPI Error schema's enum). */
export const httpErrorCodes = allErrorCodes.filter((c): c is HttpErrorCode => errorCodes[c].status !== null);

export function errorStatus(code: HttpErrorCode): number {
  return errorCodes[code].status;
}

/** "404 CRAWL_NOT_FOUND": a code as API descriptions name it, its status from the registry. */
function describeErrorCode(code: HttpErrorCode, note?: string): string {
  return `${errorStatus(code)} ${code}${note ? ` (${note})` : ''}`;
}

/** A list of codes for an API description: "400 BAD_REQUEST, 402 INSUFFICIENT_CREDITS (note)". */
export function describeErrorCodes(codes: readonly (HttpErrorCode | readonly [HttpErrorCode, string])[]): string {
  return codes.map((c) => (typeof c === 'string' ? describeErrorCode(c) : describeErrorCode(c[0], c[1]))).join(', ');
}

// ---- Request and API errors

export class ApiError extends Error {
  readonly statusCode: number;
  readonly code: HttpErrorCode;
  readonly details?: unknown;
  readonly headers?: Record<string, string>;
  constructor(
    code: HttpErrorCode,
    message: string,
    extra: { details?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = new.target.name;
    this.statusCode = errorStatus(code);
    this.code = code;
    this.details = extra.details;
    this.headers = extra.headers;
  }
}

export class BadRequestError extends ApiError {
  constructor(message: string, details?: unknown) {
    super('BAD_REQUEST', message, { details });
  }
}

export class UnauthorizedError extends ApiError {
  constructor(message = 'Unauthorized: send a valid API key as "Authorization: Bearer <key>"') {
    super('UNAUTHORIZED', message, { headers: { 'www-authenticate': 'Bearer' } });
  }
}

export class InsufficientCreditsError extends ApiError {
  constructor(needed: number, remaining: number) {
    super(
      'INSUFFICIENT_CREDITS',
      `Payment required: this request needs ${needed} credit(s) and the team has ${remaining} left this billing period.`,
    );
  }
}

export class ForbiddenError extends ApiError {
  constructor(message = 'Forbidden: this resource belongs to another team') {
    super('FORBIDDEN', message);
  }
}

export class NotFoundError extends ApiError {
  constructor(message = 'Not found', code: ErrorCodeWithStatus<404> = 'NOT_FOUND') {
    super(code, message);
  }
}

export class ConflictError extends ApiError {
  constructor(message: string, code: ErrorCodeWithStatus<409>) {
    super(code, message);
  }
}

export class RateLimitedError extends ApiError {
  constructor(retryAfterSeconds: number, limitClass: string) {
    super('RATE_LIMITED', `Rate limit exceeded for ${limitClass} requests; retry after ${retryAfterSeconds} s.`, {
      headers: { 'retry-after': String(retryAfterSeconds) },
    });
  }
}

// ---- Scrape errors: why a scrape of a target failed. A target that answers (even 404 or 500) is not an error: its status goes to metadata.statusCode.

export class ScrapeError extends ApiError {
  constructor(code: HttpErrorCode, message: string, details?: unknown) {
    super(code, message, { details });
  }
}

export class ScrapeTimeoutError extends ScrapeError {
  constructor(timeoutMs: number, url: string) {
    super('SCRAPE_TIMEOUT', `Scrape of ${url} timed out after ${timeoutMs} ms`);
  }
}

export class BlockedUrlError extends ScrapeError {
  /** `field`: the request body's field that named the target (refused before any job exists). */
  constructor(message: string, field?: string) {
    const why = `${message}. Private and local addresses are refused unless GLEANER_ALLOW_PRIVATE_NETWORK=true.`;
    super(
      'SCRAPE_BLOCKED_URL',
      field ? `body.${field}: ${why}` : why,
      field ? [{ path: `body.${field}`, message }] : undefined,
    );
  }
}

export class DnsResolutionError extends ScrapeError {
  constructor(host: string) {
    super('SCRAPE_DNS_RESOLUTION_ERROR', `DNS resolution failed for ${host}`);
  }
}

export class ConnectionError extends ScrapeError {
  constructor(url: string, reason: string) {
    super('SCRAPE_CONNECTION_ERROR', `Could not connect to ${url}: ${reason}`);
  }
}

export class TlsError extends ScrapeError {
  constructor(url: string, reason: string) {
    super('SCRAPE_SSL_ERROR', `TLS error for ${url}: ${reason}`);
  }
}

export class TooManyRedirectsError extends ScrapeError {
  constructor(url: string, max: number) {
    super('SCRAPE_TOO_MANY_REDIRECTS', `More than ${max} redirects starting at ${url}`);
  }
}

export class ResponseTooLargeError extends ScrapeError {
  constructor(url: string, maxBytes: number) {
    super('SCRAPE_RESPONSE_TOO_LARGE', `The response of ${url} exceeds ${maxBytes} bytes`);
  }
}

export class SiteError extends ScrapeError {
  constructor(url: string, reason: string) {
    super('SCRAPE_SITE_ERROR', `The site failed to answer ${url}: ${reason}`);
  }
}

export class UnsupportedFileError extends ScrapeError {
  constructor(contentType: string) {
    super('SCRAPE_UNSUPPORTED_FILE_ERROR', `Unsupported content type: ${contentType}`);
  }
}

/** The browser engine cannot run: Chromium is not installed where expected, or does not start. */
export class BrowserUnavailableError extends ScrapeError {
  constructor(message: string) {
    super('BROWSER_UNAVAILABLE', message);
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
    super('SCRAPE_ACTION_ERROR', `Action ${index} (${type}) failed: ${reason}`);
    this.actionIndex = index;
    this.actionType = type;
  }
}

/** ffmpeg or ffprobe (the audio and video formats) cannot run: not installed where expected. */
export class FfmpegUnavailableError extends ScrapeError {
  constructor(program: string, path: string) {
    super(
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
    super('SCRAPE_MEDIA_TOO_LARGE', `The media ${url} exceeds ${maxBytes} bytes, ${why}`);
  }
}

/** A media URL (file, playlist, segment, key) answered with an error status. */
export class MediaFetchError extends ScrapeError {
  constructor(url: string, status: number) {
    super('SCRAPE_MEDIA_FETCH_FAILED', `The media ${url} could not be downloaded: the server answered ${status}`);
  }
}

/** The media cannot be read or assembled: not a media file, encrypted or live streams, DASH features not handled. */
export class MediaUnsupportedError extends ScrapeError {
  constructor(url: string, reason: string) {
    super('SCRAPE_MEDIA_UNSUPPORTED', `The media ${url} cannot be used: ${reason}`);
  }
}

// ---- LLM errors: features usually catch LlmUnavailableError first and fall back to a deterministic extractor.

export class LlmError extends ApiError {
  constructor(code: HttpErrorCode, message: string, extra: { headers?: Record<string, string> } = {}) {
    super(code, message, extra);
  }
}

/** No endpoint is configured (neither OPENAI_BASE_URL nor OPENAI_API_KEY). */
export class LlmUnavailableError extends LlmError {
  /** `feature`: what needs the LLM (e.g. "Prompt mode"), named in the message. */
  constructor(feature?: string) {
    const settings =
      'set OPENAI_BASE_URL (any OpenAI-compatible endpoint) or OPENAI_API_KEY, and MODEL_NAME for a model other than the default.';
    super(
      'LLM_UNAVAILABLE',
      feature ? `${feature} needs an LLM and none is configured: ${settings}` : `No LLM is configured: ${settings}`,
    );
  }
}

/** A request to the endpoint took longer than LLM_TIMEOUT_MS. */
export class LlmTimeoutError extends LlmError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super('LLM_TIMEOUT', `The LLM did not answer within ${timeoutMs} ms.`);
    this.timeoutMs = timeoutMs;
  }
}

/** The endpoint kept answering 429 (after the retries), or asked to wait longer than we do. */
export class LlmRateLimitedError extends LlmError {
  readonly retryAfterSeconds: number | undefined;
  constructor(retryAfterSeconds: number | undefined) {
    const wait = retryAfterSeconds === undefined ? '' : `; it asks to retry after ${retryAfterSeconds} s`;
    super('LLM_RATE_LIMITED', `The LLM endpoint is rate limiting requests${wait}.`, {
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
    super('LLM_ERROR', message);
    this.upstreamStatus = upstreamStatus;
  }
}

/** The model's reply was not valid JSON for the schema, also after one repair request. */
export class LlmInvalidOutputError extends LlmError {
  /** Validation problems of the last reply, e.g. `/price: must be number`. */
  readonly problems: string[];
  constructor(problems: string[]) {
    super(
      'LLM_INVALID_OUTPUT',
      `The LLM's reply did not match the schema, also after a repair request: ${problems.slice(0, 5).join('; ')}`,
    );
    this.problems = problems;
  }
}

/** The caller's JSON Schema cannot be compiled (a caller error: routes should check it first with checkJsonSchema). */
export class LlmInvalidSchemaError extends LlmError {
  constructor(reason: string) {
    super('LLM_INVALID_SCHEMA', `The JSON Schema is invalid: ${reason}`);
  }
}

// ---- Agents: why an agent job failed (recorded in its status, never an HTTP answer).

export class AgentError extends Error {
  readonly code: AgentErrorCode;
  constructor(code: AgentErrorCode, message: string) {
    super(message);
    this.name = 'AgentError';
    this.code = code;
  }
}

// ---- Interact: live browser sessions.

/** A prompt's agent loop ran past the caller's `timeout`. */
export class SearchBackendError extends ApiError {
  constructor(message: string) {
    super('SEARCH_BACKEND_ERROR', message);
  }
}

export class SearchTimeoutError extends ApiError {
  constructor(timeoutMs: number) {
    super('SEARCH_TIMEOUT', `No search backend answered within ${timeoutMs} ms`);
  }
}

export class InteractPromptTimeoutError extends ApiError {
  readonly timeoutMs: number;
  constructor(timeoutMs: number) {
    super('INTERACT_PROMPT_TIMEOUT', `The prompt was not done within its timeout of ${timeoutMs} ms.`);
    this.timeoutMs = timeoutMs;
  }
}

/**
 * Code cannot run: `bwrap` (Debian's `bubblewrap` package) is missing or cannot make its namespaces.
 * Code never runs outside the sandbox, so there is no fallback.
 */
export class SandboxUnavailableError extends ApiError {
  constructor(message: string) {
    super('SANDBOX_UNAVAILABLE', message);
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

export class DocumentError extends Error {
  readonly code: DocumentErrorCode;
  constructor(code: DocumentErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DocumentError';
    this.code = code;
  }
}
