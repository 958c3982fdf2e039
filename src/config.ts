// Typed configuration, read once from the environment and validated at start-up.
// A wrong value stops start-up with a message naming the variable (ConfigError).
import { availableParallelism } from 'node:os';
import { z } from 'zod';

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const rateLimitClasses = ['scrape', 'crawl', 'map', 'search', 'extract', 'status', 'account', 'browser'] as const;
export type RateLimitClass = (typeof rateLimitClasses)[number];

/** Requests per minute per team for each route class; 0 switches the class off. */
const defaultRateLimits: Record<RateLimitClass, number> = {
  scrape: 600,
  crawl: 120,
  map: 300,
  search: 300,
  extract: 120,
  status: 3000,
  account: 600,
  browser: 120,
};

// "scrape=100,crawl=10": only named classes change; unknown names are an error.
const rateLimitList = z.string().transform((text, ctx) => {
  const limits = { ...defaultRateLimits };
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, value] = part.split('=').map((s) => s.trim());
    const perMinute = Number(value);
    if (!(rateLimitClasses as readonly string[]).includes(name) || !Number.isInteger(perMinute) || perMinute < 0) {
      ctx.addIssue({
        code: 'custom',
        message: `"${part}" is not CLASS=N with CLASS one of ${rateLimitClasses.join(', ')} and N a whole number >= 0`,
      });
      return z.NEVER;
    }
    limits[name as RateLimitClass] = perMinute;
  }
  return limits;
});

/** The audio and video formats (src/scrape/formats/media.ts). */
export interface MediaConfig {
  /** Most bytes downloaded for one media item (a file, or a stream's playlists and segments together). */
  maxBytes: number;
  /** Largest media returned inline (a data: URL) under zero data retention, where nothing is stored. */
  zdrMaxBytes: number;
  /** ffmpeg and ffprobe: a name looked up on PATH, or a path. */
  ffmpegPath: string;
  ffprobePath: string;
  /** ffmpeg and ffprobe processes running at once in this process; more wait within their scrape's timeout. */
  maxProcesses: number;
}

export const DEFAULT_MEDIA_CONFIG: MediaConfig = {
  maxBytes: 100 * 1024 * 1024,
  zdrMaxBytes: 10 * 1024 * 1024,
  ffmpegPath: 'ffmpeg',
  ffprobePath: 'ffprobe',
  maxProcesses: 2,
};

const schemaName = z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, 'lowercase letters, digits and _ only');

const envSchema = z.object({
  PORT: z.coerce.number().int().min(0).max(65535).default(3002),
  HOST: z.string().min(1).default('127.0.0.1'),
  DATA_DIR: z.string().min(1).default('./data'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATABASE_SCHEMA: schemaName.default('public'),
  GLEANER_QUEUE_SCHEMA: schemaName.optional(),
  GLEANER_WORKERS: z.coerce.number().int().min(0).max(1000).default(8),
  GLEANER_JOB_HEARTBEAT_SECONDS: z.coerce.number().int().min(10).max(3600).default(10),
  GLEANER_API_KEY: z.string().min(8, 'at least 8 characters').optional(),
  GLEANER_DEFAULT_TEAM: z.string().min(1).default('default'),
  GLEANER_ALLOW_PRIVATE_NETWORK: booleanFlag.default(false),
  GLEANER_RATE_LIMITS: rateLimitList.default(defaultRateLimits),
  GLEANER_WEBHOOK_RETRY_DELAYS: z
    .string()
    .regex(/^\s*\d+(\.\d+)?\s*(,\s*\d+(\.\d+)?\s*)*$/, 'a comma-separated list of seconds, e.g. 60,300,900')
    .default('60,300,900'),
  GLEANER_TEAM_MAX_CONCURRENCY: z.coerce.number().int().min(1).max(10000).default(10),
  GLEANER_HOST_MAX_CONCURRENCY: z.coerce.number().int().min(0).max(10000).default(8),
  GLEANER_CRAWL_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(32),
  GLEANER_HOST_MIN_INTERVAL_MS: z.coerce.number().int().min(0).max(600000).default(0),
  GLEANER_MAX_CRAWL_DELAY: z.coerce.number().min(0).max(3600).default(60),
  PROXY_URL: z.url({ protocol: /^https?$/ }).optional(),
  PROXY_ENHANCED_URL: z.url({ protocol: /^https?$/ }).optional(),
  GLEANER_PARSE_WORKERS: z.coerce.number().int().min(1).max(64).optional(),
  SCRAPE_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(25 * 1024 * 1024),
  MEDIA_MAX_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_MEDIA_CONFIG.maxBytes),
  MEDIA_ZDR_MAX_BYTES: z.coerce.number().int().min(1024).default(DEFAULT_MEDIA_CONFIG.zdrMaxBytes),
  FFMPEG_PATH: z.string().min(1).default(DEFAULT_MEDIA_CONFIG.ffmpegPath),
  FFPROBE_PATH: z.string().min(1).default(DEFAULT_MEDIA_CONFIG.ffprobePath),
  FFMPEG_MAX_PROCESSES: z.coerce.number().int().min(1).max(64).default(DEFAULT_MEDIA_CONFIG.maxProcesses),
  CHROMIUM_PATH: z.string().min(1).default('/usr/bin/chromium'),
  BROWSER_MAX_PAGES: z.coerce.number().int().min(1).max(64).default(4),
  BROWSER_RECYCLE_AFTER: z.coerce.number().int().min(1).default(500),
  BROWSER_RECYCLE_MB: z.coerce.number().int().min(0).default(1536),
  BROWSER_SESSIONS_PER_TEAM: z.coerce.number().int().min(1).max(1000).default(10),
  BROWSER_SESSIONS_MAX: z.coerce.number().int().min(1).max(1000).default(32),
  BROWSER_SESSION_SPARES: z.coerce.number().int().min(0).max(8).default(1),
  INTERACT_IDLE_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(86_400).default(600),
  INTERACT_REPLAY_TTL_HOURS: z.coerce
    .number()
    .min(0.01)
    .max(24 * 30)
    .default(24),
  GLEANER_ADBLOCK_LISTS: z.string().optional(),
  PUBLIC_URL: z.url({ protocol: /^https?$/ }).optional(),
  FILE_TTL_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 365)
    .default(24 * 7),
  REQUEST_RECEIVE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(3_600_000).default(60_000),
  BODY_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(10 * 1024 * 1024),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600000).default(10000),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  OPENAI_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  OPENAI_API_KEY: z.string().min(1).optional(),
  MODEL_NAME: z.string().min(1).max(200).optional(),
  LLM_TIMEOUT_MS: z.coerce.number().int().min(1000).max(600000).default(60000),
  LLM_MAX_RETRIES: z.coerce.number().int().min(0).max(10).default(2),
  LLM_MAX_OUTPUT_TOKENS: z.coerce.number().int().min(16).max(1_000_000).optional(),
  SEARXNG_URL: z.url({ protocol: /^https?$/ }).optional(),
  SEARXNG_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
  GLEANER_SEARCH_INDEX: booleanFlag.default(true),
  SEARCH_WEB_BACKEND: z.enum(['index', 'searxng']).optional(),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  SMTP_FROM: z
    .string()
    .regex(
      /^[^@\s<>]+@[^@\s<>]+$|^[^<>]*<[^@\s<>]+@[^@\s<>]+>$/,
      'an address, e.g. gleaner@example.com or "Gleaner <gleaner@example.com>"',
    )
    .optional(),
});

/** Model used when an endpoint or key is set without MODEL_NAME. */
export const DEFAULT_MODEL = 'gpt-4o-mini';

/** The OpenAI-compatible endpoint behind the AI formats (src/llm/provider.ts). */
export interface LlmConfig {
  /** True when OPENAI_BASE_URL or OPENAI_API_KEY is set; otherwise AI formats use deterministic extractors. */
  configured: boolean;
  /** Unset with only a key: OpenAI's own endpoint. */
  baseUrl: string | undefined;
  /** Unset with only a base URL (a local Ollama or vLLM needs none). */
  apiKey: string | undefined;
  /** Unset exactly when not configured. */
  model: string | undefined;
  /** Bound on each request to the endpoint (a repair request has its own). */
  timeoutMs: number;
  /** Retries of a request answered 429 or 5xx, or not answered at all. */
  maxRetries: number;
  /** Cap on completion tokens per request; unset: the endpoint's default. */
  maxOutputTokens: number | undefined;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  databaseSchema: string;
  /** Schema of the job queue's tables (pg-boss), beside databaseSchema. */
  queueSchema: string;
  /** Jobs of each queue this process runs at once; 0: none (API only). */
  workers: number;
  /** An active job whose process stops sending heartbeats for this long is retried elsewhere. */
  jobHeartbeatSeconds: number;
  apiKey: string | undefined;
  defaultTeam: string;
  allowPrivateNetwork: boolean;
  rateLimits: Record<RateLimitClass, number>;
  teamMaxConcurrency: number;
  /** Crawl requests to one host at once in this process; 0: no cap (src/crawl/politeness.ts). */
  hostMaxConcurrency: number;
  /** Crawl and batch-scrape pages this process runs at once (src/crawl/frontier.ts); only with workers > 0. */
  crawlConcurrency: number;
  /** Least time between two crawl request starts to one host, across every process. */
  hostMinIntervalMs: number;
  /** Largest robots.txt Crawl-delay applied, in seconds; 0: Crawl-delay is ignored. */
  maxCrawlDelaySeconds: number;
  /** Seconds before each retry of a failed webhook delivery (one retry per entry). */
  webhookRetryDelays: number[];
  proxyUrl: string | undefined;
  enhancedProxyUrl: string | undefined;
  /** Worker threads parsing uploaded documents (POST /v2/parse), started lazily. */
  parseWorkers: number;
  scrapeMaxBytes: number;
  media: MediaConfig;
  chromiumPath: string;
  browserMaxPages: number;
  /** Browser sessions (src/interact/): limits, warm spares, idle expiry of interact sessions, replay window. */
  sessions: {
    perTeam: number;
    perProcess: number;
    spares: number;
    interactIdleMs: number;
    replayTtlMs: number;
  };
  browserRecycleAfter: number;
  /** Resident memory of a Chromium (all its processes) above which it is replaced, in MB; 0: never. */
  browserRecycleMb: number;
  /** Extra ad-block filter list files (EasyList syntax). */
  adblockLists: string[];
  /** Base of URLs handed out for stored files; unset: the origin each request arrived at. */
  publicUrl: string | undefined;
  fileTtlMs: number;
  bodyLimitBytes: number;
  /** Longest a client may take to send a request (headers and body); slower connections get 408 and are closed. */
  requestReceiveTimeoutMs: number;
  shutdownTimeoutMs: number;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  llm: LlmConfig;
  /** POST /v2/search backends (src/search/). */
  search: {
    /** Index every stored scrape and crawl page in Postgres full-text search (the own index, for `web`). */
    index: boolean;
    /** A SearXNG instance (its JSON API) for web, news and images; unset: the own index answers web alone. */
    searxngUrl: string | undefined;
    /** Bound on one SearXNG request. */
    searxngTimeoutMs: number;
    /** Who answers `web`: the own index, or SearXNG (the default when SEARXNG_URL is set). */
    webBackend: 'index' | 'searxng';
  };
  /** smtp(s)://[user:pass@]host:port for monitor emails (src/monitor/email.ts); unset: emails are not sent. */
  smtpUrl: string | undefined;
  /** Sender of monitor emails. */
  smtpFrom: string;
}

/** Sender used when SMTP_FROM is unset. */
export const DEFAULT_SMTP_FROM = 'Gleaner <gleaner@localhost>';

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  readonly variables: string[];
  constructor(message: string, variables: string[]) {
    super(message);
    this.name = 'ConfigError';
    this.variables = variables;
  }
}

/** Reads configuration from `env` (process.env by default); empty strings count as unset. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const present = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    const variables = parsed.error.issues.map((i) => String(i.path[0]));
    const lines = parsed.error.issues.map(
      (i) => `  ${String(i.path[0])}=${JSON.stringify(present[String(i.path[0])])}: ${i.message}`,
    );
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`, variables);
  }
  const e = parsed.data;
  const queueSchema =
    e.GLEANER_QUEUE_SCHEMA ?? (e.DATABASE_SCHEMA === 'public' ? 'pgboss' : `${e.DATABASE_SCHEMA}_pgboss`);
  if (queueSchema.length > 63 || queueSchema === e.DATABASE_SCHEMA) {
    const why =
      queueSchema.length > 63 ? `"${queueSchema}" is longer than 63 characters` : 'it must differ from DATABASE_SCHEMA';
    throw new ConfigError(`Invalid configuration:\n  GLEANER_QUEUE_SCHEMA=${JSON.stringify(queueSchema)}: ${why}`, [
      'GLEANER_QUEUE_SCHEMA',
    ]);
  }
  const llmConfigured = e.OPENAI_BASE_URL !== undefined || e.OPENAI_API_KEY !== undefined;
  if (e.MODEL_NAME !== undefined && !llmConfigured) {
    // A model without an endpoint would silently fall back to the deterministic extractors.
    throw new ConfigError(
      `Invalid configuration:\n  MODEL_NAME=${JSON.stringify(e.MODEL_NAME)}: set OPENAI_BASE_URL (e.g. http://127.0.0.1:11434/v1 for Ollama) or OPENAI_API_KEY too`,
      ['MODEL_NAME'],
    );
  }
  if (e.SMTP_FROM !== undefined && e.SMTP_URL === undefined) {
    // A sender without a server would look configured while no email is ever sent.
    throw new ConfigError(
      `Invalid configuration:\n  SMTP_FROM=${JSON.stringify(e.SMTP_FROM)}: set SMTP_URL (e.g. smtp://user:pass@mail.example.com:587) too`,
      ['SMTP_FROM'],
    );
  }
  if (e.SEARCH_WEB_BACKEND === 'searxng' && e.SEARXNG_URL === undefined) {
    // Web search would silently have no backend at all.
    throw new ConfigError(
      `Invalid configuration:\n  SEARCH_WEB_BACKEND="searxng": set SEARXNG_URL (e.g. http://127.0.0.1:8888) too`,
      ['SEARCH_WEB_BACKEND'],
    );
  }
  return {
    port: e.PORT,
    host: e.HOST,
    dataDir: e.DATA_DIR,
    databaseUrl: e.DATABASE_URL,
    databaseSchema: e.DATABASE_SCHEMA,
    queueSchema,
    workers: e.GLEANER_WORKERS,
    jobHeartbeatSeconds: e.GLEANER_JOB_HEARTBEAT_SECONDS,
    apiKey: e.GLEANER_API_KEY,
    defaultTeam: e.GLEANER_DEFAULT_TEAM,
    allowPrivateNetwork: e.GLEANER_ALLOW_PRIVATE_NETWORK,
    rateLimits: e.GLEANER_RATE_LIMITS,
    teamMaxConcurrency: e.GLEANER_TEAM_MAX_CONCURRENCY,
    hostMaxConcurrency: e.GLEANER_HOST_MAX_CONCURRENCY,
    crawlConcurrency: e.GLEANER_CRAWL_CONCURRENCY,
    hostMinIntervalMs: e.GLEANER_HOST_MIN_INTERVAL_MS,
    maxCrawlDelaySeconds: e.GLEANER_MAX_CRAWL_DELAY,
    webhookRetryDelays: e.GLEANER_WEBHOOK_RETRY_DELAYS.split(',').map((d) => Number(d.trim())),
    proxyUrl: e.PROXY_URL,
    enhancedProxyUrl: e.PROXY_ENHANCED_URL,
    parseWorkers: e.GLEANER_PARSE_WORKERS ?? Math.min(4, Math.max(1, availableParallelism() - 1)),
    scrapeMaxBytes: e.SCRAPE_MAX_BYTES,
    media: {
      maxBytes: e.MEDIA_MAX_BYTES,
      zdrMaxBytes: e.MEDIA_ZDR_MAX_BYTES,
      ffmpegPath: e.FFMPEG_PATH,
      ffprobePath: e.FFPROBE_PATH,
      maxProcesses: e.FFMPEG_MAX_PROCESSES,
    },
    chromiumPath: e.CHROMIUM_PATH,
    browserMaxPages: e.BROWSER_MAX_PAGES,
    sessions: {
      perTeam: e.BROWSER_SESSIONS_PER_TEAM,
      perProcess: e.BROWSER_SESSIONS_MAX,
      spares: e.BROWSER_SESSION_SPARES,
      interactIdleMs: e.INTERACT_IDLE_TIMEOUT_SECONDS * 1000,
      replayTtlMs: e.INTERACT_REPLAY_TTL_HOURS * 3_600_000,
    },
    browserRecycleAfter: e.BROWSER_RECYCLE_AFTER,
    browserRecycleMb: e.BROWSER_RECYCLE_MB,
    adblockLists: (e.GLEANER_ADBLOCK_LISTS ?? '')
      .split(',')
      .map((f) => f.trim())
      .filter(Boolean),
    publicUrl: e.PUBLIC_URL?.replace(/\/+$/, ''),
    fileTtlMs: e.FILE_TTL_HOURS * 3_600_000,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    requestReceiveTimeoutMs: e.REQUEST_RECEIVE_TIMEOUT_MS,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    logLevel: e.LOG_LEVEL,
    llm: {
      configured: llmConfigured,
      baseUrl: e.OPENAI_BASE_URL?.replace(/\/+$/, ''),
      apiKey: e.OPENAI_API_KEY,
      model: llmConfigured ? (e.MODEL_NAME ?? DEFAULT_MODEL) : undefined,
      timeoutMs: e.LLM_TIMEOUT_MS,
      maxRetries: e.LLM_MAX_RETRIES,
      maxOutputTokens: e.LLM_MAX_OUTPUT_TOKENS,
    },
    search: {
      index: e.GLEANER_SEARCH_INDEX,
      searxngUrl: e.SEARXNG_URL?.replace(/\/+$/, ''),
      searxngTimeoutMs: e.SEARXNG_TIMEOUT_MS,
      webBackend: e.SEARCH_WEB_BACKEND ?? (e.SEARXNG_URL ? 'searxng' : 'index'),
    },
    smtpUrl: e.SMTP_URL,
    smtpFrom: e.SMTP_FROM ?? DEFAULT_SMTP_FROM,
  };
}

/** loadConfig for entry points: a wrong value prints the message and exits with code 2. */
export function loadConfigOrExit(env: Record<string, string | undefined> = process.env): Config {
  try {
    return loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}
