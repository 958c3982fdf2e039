// The CLI's API commands (`npx gleaner scrape|crawl|map|parse|search|monitor`, docs/cli.md): each
// sends its request through the client (src/cli-client.ts) and prints the answer: with --json the
// API's JSON as it came (a crawl: the final status with every page), else plain text (markdown as
// is); colours only on a terminal without NO_COLOR, the crawl's progress bar on a terminal too.
import { readFile, writeFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ApiClient, ApiError, UsageError } from './cli-client.ts';
import type { Monitor, MonitorCheck, MonitorCheckPage, MonitorSummary } from './contract/monitor.ts';

export interface CommandOptions {
  json: boolean;
  /** -o FILE: the output goes there instead of stdout. */
  output?: string;
  formats?: string[];
  onlyMainContent?: boolean;
  limit?: number;
  name?: string;
  schedule?: string;
  goal?: string;
  search?: string;
  wait: boolean;
}

/** Where output goes: stdout (the result), stderr (notes, progress, errors). */
export interface Io {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
}

export interface Paint {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

/** ANSI colours when `stream` is a terminal and NO_COLOR is unset; otherwise text as is. */
export function paint(stream: NodeJS.WriteStream, env: NodeJS.ProcessEnv): Paint {
  const on = Boolean(stream.isTTY) && !env.NO_COLOR;
  const sgr = (open: number, close: number) => (s: string) => (on ? `\x1b[${open}m${s}\x1b[${close}m` : s);
  return {
    bold: sgr(1, 22),
    dim: sgr(2, 22),
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
  };
}

/** Stopped by Ctrl-C (exit 130). */
export class InterruptedError extends Error {}

/** A command whose arguments were checked: run it on a server. */
export type Task = (api: ApiClient, io: Io) => Promise<void>;

/** Checks the command's arguments (UsageError) before any server is started or reached. */
export async function planApiCommand(command: string, args: string[], opts: CommandOptions): Promise<Task> {
  switch (command) {
    case 'scrape': {
      const url = one(args, 'scrape needs a URL');
      return (api, io) => scrape(url, opts, api, new Output(opts, io));
    }
    case 'crawl': {
      const url = one(args, 'crawl needs a URL');
      return (api, io) => crawl(url, opts, api, new Output(opts, io), io);
    }
    case 'map': {
      const url = one(args, 'map needs a URL');
      return (api, io) => map(url, opts, api, new Output(opts, io));
    }
    case 'parse': {
      const file = one(args, 'parse needs a FILE');
      let bytes: Buffer;
      try {
        bytes = await readFile(file);
      } catch (err) {
        throw new UsageError(`cannot read ${file}: ${(err as Error).message}`);
      }
      return (api, io) => parse(file, bytes, opts, api, new Output(opts, io));
    }
    case 'search': {
      if (args.length === 0) throw new UsageError('search needs a QUERY');
      return (api, io) => search(args.join(' '), opts, api, new Output(opts, io));
    }
    case 'monitor':
      return planMonitor(args, opts);
    default:
      throw new UsageError(`Unknown command: ${command}`);
  }
}

function one(args: string[], missing: string): string {
  if (args.length === 0) throw new UsageError(missing);
  if (args.length > 1) throw new UsageError(`Unexpected argument: ${args[1]}`);
  return args[0];
}

/** The command's result: to -o FILE or stdout, as JSON or text. */
class Output {
  readonly opts: CommandOptions;
  readonly io: Io;
  readonly color: Paint;
  readonly note: Paint;
  constructor(opts: CommandOptions, io: Io) {
    this.opts = opts;
    this.io = io;
    this.color = opts.output ? paint({ isTTY: false } as NodeJS.WriteStream, io.env) : paint(io.stdout, io.env);
    this.note = paint(io.stderr, io.env);
  }
  /** The API's JSON with --json, else `text()`. */
  async result(json: unknown, text: () => string): Promise<void> {
    const body = this.opts.json ? `${JSON.stringify(json, null, 2)}\n` : withNewline(text());
    if (this.opts.output) {
      await writeFile(this.opts.output, body);
      this.info(`Wrote ${Buffer.byteLength(body)} bytes to ${this.opts.output}`);
    } else this.io.stdout.write(body);
  }
  info(line: string): void {
    this.io.stderr.write(`${line}\n`);
  }
  warn(warning: unknown): void {
    if (typeof warning === 'string' && warning) this.io.stderr.write(`${this.note.yellow('warning:')} ${warning}\n`);
  }
}

const withNewline = (s: string): string => (s === '' || s.endsWith('\n') ? s : `${s}\n`);

function scrapeOptions(opts: CommandOptions): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  if (opts.formats) options.formats = opts.formats;
  if (opts.onlyMainContent !== undefined) options.onlyMainContent = opts.onlyMainContent;
  return options;
}

/** A document's requested formats as text: one bare, several each under a `==> format <==` header. */
function renderDocument(doc: Record<string, unknown>, formats: string[] | undefined, color: Paint): string {
  const names = formats ?? ['markdown'];
  const parts = names.map((name) => {
    const value = doc[name === 'question' || name === 'query' ? 'answer' : name];
    const text =
      value === undefined
        ? ''
        : typeof value === 'string'
          ? value
          : Array.isArray(value) && value.every((v) => typeof v === 'string')
            ? value.join('\n')
            : JSON.stringify(value, null, 2);
    return { name, text: withNewline(text) };
  });
  if (parts.length === 1) return parts[0].text;
  return parts.map((p) => `${color.bold(`==> ${p.name} <==`)}\n${p.text}`).join('\n');
}

async function scrape(url: string, opts: CommandOptions, api: ApiClient, out: Output): Promise<void> {
  const res = await api.request('POST', '/v2/scrape', { url, ...scrapeOptions(opts) });
  out.warn(res.warning ?? res.data?.warning);
  await out.result(res, () => renderDocument(res.data ?? {}, opts.formats, out.color));
}

async function parse(file: string, bytes: Buffer, opts: CommandOptions, api: ApiClient, out: Output): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(bytes)]), basename(file));
  const options = scrapeOptions(opts);
  if (Object.keys(options).length > 0) form.append('options', JSON.stringify(options));
  const res = await api.request('POST', '/v2/parse', form);
  out.warn(res.warning ?? res.data?.warning);
  await out.result(res, () => renderDocument(res.data ?? {}, opts.formats, out.color));
}

async function map(url: string, opts: CommandOptions, api: ApiClient, out: Output): Promise<void> {
  const body: Record<string, unknown> = { url };
  if (opts.limit !== undefined) body.limit = opts.limit;
  if (opts.search) body.search = opts.search;
  const res = await api.request<{ links: { url: string; title?: string }[]; warning?: string }>(
    'POST',
    '/v2/map',
    body,
  );
  out.warn(res.warning);
  await out.result(res, () => res.links.map((l) => l.url).join('\n'));
}

async function search(query: string, opts: CommandOptions, api: ApiClient, out: Output): Promise<void> {
  const body: Record<string, unknown> = { query };
  if (opts.limit !== undefined) body.limit = opts.limit;
  const res = await api.request('POST', '/v2/search', body);
  out.warn(res.warning);
  const c = out.color;
  await out.result(res, () => {
    const blocks: string[] = [];
    for (const [source, results] of Object.entries((res.data ?? {}) as Record<string, any[]>)) {
      for (const r of results ?? []) {
        const lines = [`${c.bold(`${r.position ?? blocks.length + 1}. ${r.title || r.url}`)}`, `   ${c.cyan(r.url)}`];
        const text = r.description ?? r.snippet;
        if (text) lines.push(`   ${text}`);
        if (source !== 'web') lines[0] += c.dim(` (${source})`);
        blocks.push(lines.join('\n'));
      }
    }
    return blocks.length ? blocks.join('\n\n') : 'No results.';
  });
}

// ---------------------------------------------------------------------------------------------
// crawl
// ---------------------------------------------------------------------------------------------

interface CrawlStatus {
  status: 'scraping' | 'completed' | 'failed' | 'cancelled';
  total: number;
  completed: number;
  creditsUsed: number;
  next?: string | null;
  data: Record<string, any>[];
  [key: string]: unknown;
}

const POLL_MS = 400;

async function crawl(url: string, opts: CommandOptions, api: ApiClient, out: Output, io: Io): Promise<void> {
  const body: Record<string, unknown> = { url };
  if (opts.limit !== undefined) body.limit = opts.limit;
  const options = scrapeOptions(opts);
  if (Object.keys(options).length > 0) body.scrapeOptions = options;
  const started = await api.request<{ id: string; warning?: string }>('POST', '/v2/crawl', body);
  out.warn(started.warning);
  const id = started.id;
  const progress = new Progress(io, out.note, id);
  let interrupted = false;
  const onInterrupt = () => {
    interrupted = true;
    progress.clear();
    out.info(`Cancelling crawl ${id}…`);
    api.request('DELETE', `/v2/crawl/${id}`).catch(() => undefined);
  };
  process.once('SIGINT', onInterrupt);
  let status: CrawlStatus;
  try {
    for (;;) {
      status = await api.request<CrawlStatus>('GET', `/v2/crawl/${id}?limit=1`);
      progress.update(status);
      if (status.status !== 'scraping') break;
      await sleep(POLL_MS);
    }
  } finally {
    process.removeListener('SIGINT', onInterrupt);
    progress.end();
  }
  // Every page, following `next` from the start.
  const pages: Record<string, any>[] = [];
  let last: CrawlStatus = status;
  for (let next: string | null | undefined = `/v2/crawl/${id}`; next; next = last.next) {
    last = await api.request<CrawlStatus>('GET', next);
    pages.push(...last.data);
  }
  const seconds = ((Date.now() - progress.startedAt) / 1000).toFixed(1);
  const state = last.status === 'completed' ? out.note.green(last.status) : out.note.red(last.status);
  out.info(
    `Crawl ${id} ${state}: ${pages.length} page${pages.length === 1 ? '' : 's'} in ${seconds} s, ${last.creditsUsed} credits`,
  );
  await out.result({ ...last, next: null, data: pages }, () =>
    pages
      .map((p) => [p.metadata?.sourceURL ?? p.metadata?.url, p.metadata?.title].filter(Boolean).join('\t'))
      .join('\n'),
  );
  if (interrupted) throw new InterruptedError(`crawl ${id} cancelled`);
  if (last.status === 'failed') throw new ApiError(200, 'CRAWL_FAILED', String(last.error ?? `crawl ${id} failed`));
  if (last.status === 'cancelled') throw new ApiError(200, 'CRAWL_CANCELLED', `crawl ${id} was cancelled`);
}

/** On a terminal: a bar redrawn in place (carriage return) with the ETA; otherwise a line per change. */
class Progress {
  readonly startedAt = Date.now();
  private readonly tty: boolean;
  private readonly io: Io;
  private readonly color: Paint;
  private readonly id: string;
  private shown = '';
  private drawn = false;
  constructor(io: Io, color: Paint, id: string) {
    this.io = io;
    this.color = color;
    this.id = id;
    this.tty = Boolean(io.stderr.isTTY);
    if (!this.tty) io.stderr.write(`Crawl ${id} started\n`);
  }
  update(s: CrawlStatus): void {
    const { completed, total } = s;
    if (!this.tty) {
      const line = `Crawl ${this.id}: ${completed}/${total} pages (${s.status})`;
      if (line !== this.shown) this.io.stderr.write(`${line}\n`);
      this.shown = line;
      return;
    }
    const width = 30;
    const ratio = total > 0 ? Math.min(1, completed / total) : 0;
    const filled = Math.round(ratio * width);
    const bar = this.color.green('█'.repeat(filled)) + this.color.dim('░'.repeat(width - filled));
    const elapsed = Date.now() - this.startedAt;
    const eta =
      s.status !== 'scraping'
        ? 'done'
        : completed > 0 && total > completed
          ? duration(((total - completed) * elapsed) / completed)
          : '--';
    this.io.stderr.write(
      `\r${bar} ${completed}/${total} pages ${String(Math.round(ratio * 100)).padStart(3)}%  ETA ${eta}  ${this.color.dim(duration(elapsed))}\x1b[K`,
    );
    this.drawn = true;
  }
  /** Wipes the bar's line (before a message). */
  clear(): void {
    if (this.tty && this.drawn) this.io.stderr.write('\r\x1b[K');
    this.drawn = false;
  }
  end(): void {
    if (this.tty && this.drawn) this.io.stderr.write('\n');
    this.drawn = false;
  }
}

function duration(ms: number): string {
  const s = Math.round(ms / 1000);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

// ---------------------------------------------------------------------------------------------
// monitor
// ---------------------------------------------------------------------------------------------

const terminalCheck = (status: string) => status !== 'queued' && status !== 'running';

function summaryText(s: MonitorSummary | null | undefined): string {
  if (!s) return 'no pages';
  return `${s.totalPages} pages: ${s.same} same, ${s.changed} changed, ${s.new} new, ${s.removed} removed, ${s.error} errors`;
}

function planMonitor(args: string[], opts: CommandOptions): Task {
  const [action, ...rest] = args;
  if (action === 'create') {
    if (rest.length === 0) throw new UsageError('monitor create needs one or more URLs');
  } else if (action === 'list') {
    if (rest.length > 0) throw new UsageError(`Unexpected argument: ${rest[0]}`);
  } else if (action === 'run') one(rest, 'monitor run needs a MONITOR_ID');
  else if (action === 'checks') {
    if (rest.length === 0) throw new UsageError('monitor checks needs a MONITOR_ID');
    if (rest.length > 2) throw new UsageError(`Unexpected argument: ${rest[2]}`);
  } else
    throw new UsageError(action ? `Unknown command: monitor ${action}` : 'monitor needs create, list, run or checks');
  return (api, io) => monitor(action, rest, opts, api, new Output(opts, io));
}

/** `monitor ACTION REST…`, its arguments checked by planMonitor. */
async function monitor(
  action: string,
  rest: string[],
  opts: CommandOptions,
  api: ApiClient,
  out: Output,
): Promise<void> {
  const c = out.color;
  switch (action) {
    case 'create': {
      const text = opts.schedule ?? 'hourly';
      const cron = /^\S+(\s+\S+){4}$/.test(text) && /^[\d*/,\-\s]+$/.test(text);
      const body: Record<string, unknown> = {
        name: opts.name ?? new URL(rest[0], 'https://invalid').hostname,
        schedule: cron ? { cron: text } : { text },
        targets: [
          { type: 'scrape', urls: rest, ...(opts.formats ? { scrapeOptions: { formats: opts.formats } } : {}) },
        ],
      };
      if (opts.goal) body.goal = opts.goal;
      const res = await api.request<{ data: Monitor }>('POST', '/v2/monitor', body);
      const m = res.data;
      return out.result(res, () =>
        [
          `Created monitor ${c.bold(m.id)} "${m.name}"`,
          `schedule: ${m.schedule.cron} (${m.schedule.timezone})${m.schedule.text ? `, "${m.schedule.text}"` : ''}`,
          `next run: ${m.nextRunAt ?? 'none'}`,
        ].join('\n'),
      );
    }
    case 'list': {
      const res = await api.request<{ data: Monitor[] }>('GET', `/v2/monitor?limit=${opts.limit ?? 100}`);
      return out.result(res, () =>
        res.data.length === 0
          ? 'No monitors.'
          : res.data
              .map((m) =>
                [
                  m.id,
                  m.name,
                  m.status,
                  m.schedule.text ?? m.schedule.cron,
                  `last run ${m.lastRunAt ?? 'never'}`,
                  m.lastCheckSummary ? summaryText(m.lastCheckSummary) : '',
                ]
                  .filter(Boolean)
                  .join('\t'),
              )
              .join('\n'),
      );
    }
    case 'run': {
      const id = rest[0];
      const res = await api.request<{ data: MonitorCheck }>('POST', `/v2/monitor/${encodeURIComponent(id)}/run`);
      let check = res.data;
      let answer: unknown = res;
      if (opts.wait) {
        while (!terminalCheck(check.status)) {
          await sleep(500);
          const detail = await api.request<{ data: MonitorCheck }>(
            'GET',
            `/v2/monitor/${encodeURIComponent(id)}/checks/${check.id}?limit=1`,
          );
          check = detail.data;
          answer = { success: true, data: check };
        }
      }
      return out.result(answer, () =>
        [`Check ${c.bold(check.id)} ${check.status}`, terminalCheck(check.status) ? summaryText(check.summary) : '']
          .filter(Boolean)
          .join('\n'),
      );
    }
    case 'checks': {
      const [id, checkId] = rest.map(encodeURIComponent);
      if (!checkId) {
        const res = await api.request<{ data: MonitorCheck[] }>(
          'GET',
          `/v2/monitor/${id}/checks?limit=${opts.limit ?? 25}`,
        );
        return out.result(res, () =>
          res.data.length === 0
            ? 'No checks.'
            : res.data
                .map((k) => [k.id, k.status, k.trigger, k.createdAt, summaryText(k.summary)].join('\t'))
                .join('\n'),
        );
      }
      // One check with all its pages (following `next`).
      let res = await api.request<{ data: MonitorCheck & { pages: MonitorCheckPage[] }; next: string | null }>(
        'GET',
        `/v2/monitor/${id}/checks/${checkId}`,
      );
      const check = res.data;
      const pages = [...check.pages];
      while (res.next) {
        res = await api.request('GET', res.next);
        pages.push(...res.data.pages);
      }
      const statusColor = (s: string) =>
        s === 'changed' ? c.yellow(s) : s === 'new' ? c.green(s) : s === 'error' || s === 'removed' ? c.red(s) : s;
      return out.result({ success: true, data: { ...check, pages, next: null } }, () => {
        const lines = [`Check ${c.bold(check.id)} ${check.status} (${check.trigger}): ${summaryText(check.summary)}`];
        for (const p of pages) {
          lines.push(`${statusColor(p.status)}\t${p.url}${p.error ? `\t${p.error}` : ''}`);
          if (p.diff?.text) lines.push(colorDiff(p.diff.text, c));
        }
        return lines.join('\n');
      });
    }
    default:
      throw new UsageError(`Unknown command: monitor ${action}`);
  }
}

function colorDiff(diff: string, c: Paint): string {
  return diff
    .split('\n')
    .map((l) =>
      l.startsWith('+') && !l.startsWith('+++') ? c.green(l) : l.startsWith('-') && !l.startsWith('---') ? c.red(l) : l,
    )
    .join('\n');
}
