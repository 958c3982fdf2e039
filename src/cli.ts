// The command line: `npx gleaner <command>` (bin/gleaner.js) or `npm run gleaner -- <command>`
// (docs/cli.md). API commands (scrape, crawl, map, parse, search, monitor) talk to a server, the one
// of --api-url / GLEANER_API_URL or an embedded one started for the command (src/cli-commands.ts,
// src/cli-client.ts); `keys` and `teams` work on the configured database (DATA_DIR or DATABASE_URL;
// with the embedded database, stop the server first); `serve` runs the server as `npm start` does.
import { parseArgs } from 'node:util';
import {
  type ApiClient,
  ApiError,
  EXIT,
  UnreachableError,
  UsageError,
  apiClient,
  startEmbedded,
} from './cli-client.ts';
import { type CommandOptions, InterruptedError, paint, planApiCommand } from './cli-commands.ts';
import type { Db } from './store/db-types.ts';

const usage = `Usage: gleaner <command> [options]      (or: npm run gleaner -- <command> [options])

API commands (a server at --api-url / GLEANER_API_URL, else an embedded one for the command):
  scrape URL [-f FORMATS] [--only-main-content | --no-only-main-content] [-o FILE]
                                  scrape a page; prints its markdown (-f markdown,links,html,summary…)
  crawl URL [--limit N] [-f FORMATS] [-o FILE]
                                  crawl a site with a live progress bar; prints each page's URL and title
  map URL [--limit N] [--search TERM]
                                  list a site's URLs
  parse FILE [-f FORMATS] [-o FILE]
                                  convert a document (PDF, DOCX, XLSX, PPTX, HTML…); prints its markdown
  search QUERY... [--limit N]     search the pages scraped so far (and the web with SearXNG)
  monitor create URL... [--name NAME] [--schedule TEXT|CRON] [--goal TEXT]
  monitor list [--limit N]        list monitors
  monitor run MONITOR_ID [--wait] run a check now (--wait: until it finishes)
  monitor checks MONITOR_ID [CHECK_ID]
                                  list a monitor's checks, or one check's pages and diffs

Admin commands (on the database of DATA_DIR or DATABASE_URL; stop an embedded-database server first):
  keys create --team NAME [--name LABEL]   create an API key (printed once; the team is created if new)
  keys list [--team NAME]                  list keys (id, team, name, preview, state)
  keys revoke KEY_ID_OR_KEY                revoke a key
  teams list                               list teams with their credit quota
  teams quota --team NAME --credits N      set the monthly credit quota (N or "unlimited")
  teams secret --team NAME                 print the team's webhook signing secret

Server:
  serve                                    start the server in this process (as npm start)

Options:
  --api-url URL      the server (env GLEANER_API_URL); none: start the embedded server for the command
  --api-key KEY      its API key (env GLEANER_API_KEY)
  --json             print the API's JSON answer instead of text
  -o, --output FILE  write the result to FILE instead of stdout
  -f, --formats LIST comma-separated formats (scrape, crawl, parse, monitor create)
  --limit N          most pages (crawl), links (map), results (search), entries (monitor list, checks)
  -h, --help         this help;  -V, --version: the version

Colours only when stdout is a terminal and NO_COLOR is unset.

Exit codes:
  0   success
  1   the API answered an error (its code and message are printed), or the database failed (keys, teams)
  2   bad arguments (the usage is printed)
  3   cannot reach the server (or start the embedded one)
  130 interrupted (Ctrl-C; a running crawl is cancelled)
`;

type Out = (line: string) => void;

export async function runCli(argv: string[], db: Db, out: Out): Promise<void> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { team: { type: 'string' }, name: { type: 'string' }, credits: { type: 'string' } },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const { positionals, values } = parsed;
  // Loaded here, not at the top: the API commands and --help start faster without the store.
  const { createApiKey, ensureTeam, findTeamByName, listApiKeys, listTeams, revokeApiKey, setCreditQuota } =
    await import('./store/teams.ts');
  const [group, action, arg] = positionals;
  const command = `${group ?? ''} ${action ?? ''}`.trim();
  switch (command) {
    case 'keys create': {
      if (!values.team) throw new UsageError('keys create needs --team NAME');
      const team = await ensureTeam(db, values.team);
      const created = await createApiKey(db, team.id, { name: values.name });
      out(`Created key ${created.id} for team "${team.name}". Store it now; it is not shown again:`);
      out(created.key);
      return;
    }
    case 'keys list': {
      const keys = await listApiKeys(db, values.team);
      for (const k of keys) {
        const state = k.revokedAt ? `revoked ${k.revokedAt.toISOString()}` : 'active';
        out([k.id, k.teamName, k.name, k.preview, state].join('\t'));
      }
      if (keys.length === 0) out('No keys.');
      return;
    }
    case 'keys revoke': {
      if (!arg) throw new UsageError('keys revoke needs a key id or the key itself');
      const revoked = await revokeApiKey(db, arg);
      if (revoked.length === 0) throw new UsageError(`No active key matches ${arg}`);
      for (const k of revoked) out(`Revoked ${k.id} (${k.preview}) of team "${k.teamName}"`);
      return;
    }
    case 'teams list': {
      for (const t of await listTeams(db)) out([t.id, t.name, t.creditQuota ?? 'unlimited'].join('\t'));
      return;
    }
    case 'teams quota': {
      if (!values.team || !values.credits) throw new UsageError('teams quota needs --team NAME --credits N|unlimited');
      const team = await findTeamByName(db, values.team);
      if (!team) throw new UsageError(`No team named ${values.team}`);
      const quota = values.credits === 'unlimited' ? null : Number(values.credits);
      if (quota !== null && !(Number.isInteger(quota) && quota >= 0))
        throw new UsageError('--credits must be a whole number >= 0 or "unlimited"');
      await setCreditQuota(db, team.id, quota);
      out(`Team "${team.name}": monthly credit quota ${quota ?? 'unlimited'}`);
      return;
    }
    case 'teams secret': {
      if (!values.team) throw new UsageError('teams secret needs --team NAME');
      const team = await findTeamByName(db, values.team);
      if (!team) throw new UsageError(`No team named ${values.team}`);
      out(team.webhookSecret);
      return;
    }
    default:
      throw new UsageError(command ? `Unknown command: ${command}` : 'No command given');
  }
}

const API_COMMANDS = new Set(['scrape', 'crawl', 'map', 'parse', 'search', 'monitor']);

const options = {
  json: { type: 'boolean' },
  'api-url': { type: 'string' },
  'api-key': { type: 'string' },
  output: { type: 'string', short: 'o' },
  formats: { type: 'string', short: 'f' },
  'only-main-content': { type: 'boolean' },
  limit: { type: 'string' },
  name: { type: 'string' },
  team: { type: 'string' },
  credits: { type: 'string' },
  schedule: { type: 'string' },
  goal: { type: 'string' },
  search: { type: 'string' },
  wait: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'V' },
} as const;

function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, allowNegative: true, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

function commandOptions(values: ReturnType<typeof parseCommandLine>['values']): CommandOptions {
  let limit: number | undefined;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a whole number >= 1`);
  }
  const formats = values.formats
    ?.split(',')
    .map((f) => f.trim())
    .filter(Boolean);
  if (formats && formats.length === 0) throw new UsageError('--formats needs at least one format');
  return {
    json: values.json ?? false,
    output: values.output,
    formats,
    onlyMainContent: values['only-main-content'],
    limit,
    name: values.name,
    schedule: values.schedule,
    goal: values.goal,
    search: values.search,
    wait: values.wait ?? false,
  };
}

async function runApi(command: string, args: string[], values: ReturnType<typeof parseCommandLine>['values']) {
  const opts = commandOptions(values);
  const task = await planApiCommand(command, args, opts);
  const io = { stdout: process.stdout, stderr: process.stderr, env: process.env };
  const apiUrl = values['api-url'] ?? (process.env.GLEANER_API_URL || undefined);
  const apiKey = values['api-key'] ?? (process.env.GLEANER_API_KEY || undefined);
  let client: ApiClient;
  let stop: (() => Promise<void>) | undefined;
  if (apiUrl) {
    if (!/^https?:\/\/[^/]/.test(apiUrl) || !URL.canParse(apiUrl))
      throw new UsageError(`--api-url is not an http(s) URL: ${apiUrl}`);
    client = apiClient(apiUrl, apiKey);
  } else {
    const embedded = await startEmbedded(process.env, apiKey);
    process.stderr.write(
      `${paint(process.stderr, process.env).dim(`gleaner: no API URL given (--api-url, GLEANER_API_URL): started the embedded server on ${embedded.url} (data: ${embedded.store}) for this command`)}\n`,
    );
    client = apiClient(embedded.url, embedded.apiKey);
    stop = embedded.stop;
  }
  try {
    await task(client, io);
  } finally {
    await stop?.();
  }
  // The embedded server's parts may keep timers or threads alive: the command is over.
  if (stop) process.exit(process.exitCode ?? EXIT.ok);
}

/** `gleaner serve`: the server in this process, as src/server.ts runs it (npm start). */
async function serve(): Promise<void> {
  const { loadConfigOrExit } = await import('./config.ts');
  const config = loadConfigOrExit();
  const { preparePgliteDataDir } = await import('./store/db.ts');
  if (!config.databaseUrl) await preparePgliteDataDir(config.dataDir);
  const { startService, stopOnSignals } = await import('./service.ts');
  const service = await startService(config);
  service.app.log.info({ url: service.url, database: service.db.kind }, 'gleaner ready');
  stopOnSignals(service);
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseCommandLine(argv);
  const [command, ...args] = positionals;
  if (values.version) {
    const { version } = await import('./version.ts');
    process.stdout.write(`gleaner ${version}\n`);
    return;
  }
  if (!command || values.help) {
    if (!command && !values.help) throw new UsageError('No command given');
    process.stdout.write(usage);
    return;
  }
  if (API_COMMANDS.has(command)) return runApi(command, args, values);
  if (command === 'serve') {
    if (args.length > 0) throw new UsageError(`Unexpected argument: ${args[0]}`);
    return serve();
  }
  if (command === 'keys' || command === 'teams') {
    const [{ loadConfig }, { openStore }] = await Promise.all([import('./config.ts'), import('./runtime.ts')]);
    const db = await openStore(loadConfig());
    try {
      await runCli(argv, db, (line) => process.stdout.write(`${line}\n`));
    } finally {
      await db.close();
    }
    return;
  }
  throw new UsageError(`Unknown command: ${command}`);
}

/** Prints what went wrong and sets the exit code (docs/cli.md). */
function fail(err: unknown): void {
  const c = paint(process.stderr, process.env);
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof UsageError) {
    process.stderr.write(`${c.red('error:')} ${message}\n\n${usage}`);
    process.exitCode = EXIT.usage;
  } else if (err instanceof ApiError) {
    process.stderr.write(
      `${c.red('error:')} ${c.bold(err.code)}${err.status >= 400 ? ` (HTTP ${err.status})` : ''}: ${message}\n`,
    );
    process.exitCode = EXIT.api;
  } else if (err instanceof UnreachableError) {
    process.stderr.write(`${c.red('error:')} ${message}\n`);
    process.exitCode = EXIT.unreachable;
  } else if (err instanceof InterruptedError) {
    process.stderr.write(`${message}\n`);
    process.exitCode = 130;
  } else {
    process.stderr.write(`${message}\n`);
    process.exitCode = EXIT.api;
  }
}

/** Runs the command line (`argv` without node and the script); bin/gleaner.js calls this. */
export function run(argv: string[]): Promise<void> {
  return main(argv).catch((err) => {
    fail(err);
    // An embedded server that was running may hold the process open.
    process.exit();
  });
}

if (import.meta.main) void run(process.argv.slice(2));
