// The CLI's HTTP client (`npx gleaner scrape|crawl|map|parse|search|monitor`): JSON requests to a
// Gleaner (or Firecrawl v2) server with a bearer key, its errors sorted by the CLI's exit codes,
// and the embedded server an API command starts in-process when no API URL is given.
import { createHash } from 'node:crypto';
import type { Db } from './store/db-types.ts';

/** The CLI's exit codes (docs/cli.md). */
export const EXIT = { ok: 0, api: 1, usage: 2, unreachable: 3 } as const;

/** Bad arguments: the message and the usage are printed, exit 2. */
export class UsageError extends Error {}

/** The API answered an error (HTTP status >= 400, or success: false): exit 1. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** No answer from the server (refused, unknown host, timed out), or the embedded one did not start: exit 3. */
export class UnreachableError extends Error {}

export interface ApiClient {
  /** Base URL, no trailing slash. */
  readonly url: string;
  /** `method path` with a JSON body (or a FormData); the parsed JSON answer, ApiError on an error status. */
  request<T = any>(method: string, path: string, body?: unknown): Promise<T>;
}

export function apiClient(baseUrl: string, apiKey: string | undefined): ApiClient {
  const url = baseUrl.replace(/\/+$/, '');
  return {
    url,
    async request(method, path, body) {
      const headers: Record<string, string> = { accept: 'application/json' };
      if (apiKey) headers.authorization = `Bearer ${apiKey}`;
      let payload: string | FormData | undefined;
      if (body instanceof FormData) payload = body;
      else if (body !== undefined) {
        headers['content-type'] = 'application/json';
        payload = JSON.stringify(body);
      }
      const target = /^https?:\/\//.test(path) ? sameOrigin(path, url) : `${url}${path}`;
      let res: Response;
      try {
        res = await fetch(target, { method, headers, body: payload });
      } catch (err) {
        const cause = (err as { cause?: { code?: string; message?: string } }).cause;
        const why = cause?.code ?? cause?.message ?? (err as Error).message;
        throw new UnreachableError(`cannot reach ${url} (${why})`);
      }
      const text = await res.text();
      let json: any;
      try {
        json = text ? JSON.parse(text) : {};
      } catch {
        if (!res.ok) throw new ApiError(res.status, `HTTP_${res.status}`, text.slice(0, 300) || res.statusText);
        throw new ApiError(res.status, 'INVALID_RESPONSE', `${method} ${path}: the answer is not JSON`);
      }
      if (!res.ok || json?.success === false) {
        const code = typeof json?.code === 'string' ? json.code : `HTTP_${res.status}`;
        const message = typeof json?.error === 'string' ? json.error : res.statusText;
        throw new ApiError(res.status, code, message);
      }
      return json;
    },
  };
}

/**
 * A URL the server handed out (a `next` page) on the origin the client talks to: the key is never
 * sent elsewhere, and an embedded server answers even when PUBLIC_URL names another origin.
 */
function sameOrigin(link: string, base: string): string {
  const target = new URL(link);
  const origin = new URL(base);
  if (target.origin === origin.origin) return link;
  return `${origin.origin}${target.pathname}${target.search}`;
}

export interface Embedded {
  url: string;
  apiKey: string;
  /** Where its data is (the data directory, or "Postgres"). */
  store: string;
  stop(): Promise<void>;
}

/**
 * Starts the service in this process on a free loopback port, with the configuration of the
 * environment (DATA_DIR or DATABASE_URL…); silent, since its log would mix with the command's
 * output. The key: `apiKey` (ensured for the default team, as GLEANER_API_KEY is), else one
 * derived from the default team's webhook secret, so that repeated commands reuse one key row.
 */
export async function startEmbedded(env: NodeJS.ProcessEnv, apiKey: string | undefined): Promise<Embedded> {
  // Loaded here, not at the top: a command on a remote server starts faster without the service.
  const { loadConfig } = await import('./config.ts');
  let config;
  try {
    config = loadConfig({ ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent', GLEANER_API_KEY: apiKey });
  } catch (err) {
    throw new UnreachableError(`cannot start the embedded server: ${(err as Error).message}`);
  }
  try {
    const { preparePgliteDataDir } = await import('./store/db.ts');
    if (!config.databaseUrl) await preparePgliteDataDir(config.dataDir);
    const { startService } = await import('./service.ts');
    const service = await startService(config);
    let key = apiKey;
    if (!key)
      key = await embeddedKey(service.db, config.defaultTeam).catch(async (err) => {
        await service.stop().catch(() => undefined);
        throw err;
      });
    return {
      url: service.url,
      apiKey: key,
      store: config.databaseUrl ? 'Postgres' : config.dataDir,
      stop: () => service.stop(),
    };
  } catch (err) {
    if (err instanceof UnreachableError) throw err;
    throw new UnreachableError(`cannot start the embedded server: ${(err as Error).message}`);
  }
}

/** The default team's CLI key: the same for every command on this database; created when missing. */
async function embeddedKey(db: Db, teamName: string): Promise<string> {
  const { createApiKey, ensureTeam, findCallerByKey, hashKey } = await import('./store/teams.ts');
  const team = await ensureTeam(db, teamName);
  const key = `fc-cli-${createHash('sha256').update(`gleaner-cli:${team.webhookSecret}`).digest('hex').slice(0, 32)}`;
  if (!(await findCallerByKey(db, key))) {
    const { rows } = await db.query('SELECT 1 FROM api_keys WHERE key_hash = $1', [hashKey(key)]);
    if (rows.length > 0) throw new Error('the embedded CLI key was revoked; set GLEANER_API_KEY');
    await createApiKey(db, team.id, { key, name: 'gleaner CLI (embedded server)' });
  }
  return key;
}
