// `npx gleaner` end to end: bin/gleaner.js run as a real child process (on this Node 24) against the
// real service and the fixture site: scrape (stdout, -o FILE, --json), crawl (progress lines without
// a terminal; the progress bar with ETA on a pseudo-terminal from util-linux `script`), map, parse of
// a real DOCX, search, monitor create/list/run/checks, the embedded server, and the exit codes:
// 2 with the usage for bad arguments, 1 with the code for an API error, 3 for an unreachable server.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { buildDocx, documentTexts } from '../fixtures/site/documents.ts';
import type { FixtureSite } from '../fixtures/site/index.ts';
import { type TestService, startSiteAndService, stopSiteAndService } from '../helpers/service.ts';

const root = new URL('../../', import.meta.url).pathname;
const bin = join(root, 'bin/gleaner.js');
const ESC = '\x1b';
const SGR = new RegExp(`${ESC}\\[[0-9;]*m`);
const hasScript = spawnSync('sh', ['-c', 'command -v script'], { encoding: 'utf8' }).status === 0;

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `gleaner <args>` with only `env` (plus PATH and HOME); stdout and stderr are pipes, not terminals. */
function gleaner(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<Run> {
  return collect(spawn(process.execPath, [bin, ...args], { cwd: root, env: baseEnv(env) }), timeoutMs);
}

/** The same on a pseudo-terminal (`script`): stdout and stderr both arrive on the one terminal. */
function gleanerOnTty(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<Run> {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const command = [process.execPath, bin, ...args].map(quote).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: root,
    env: { ...baseEnv(env), TERM: 'xterm' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  return collect(child, timeoutMs);
}

function baseEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env };
}

function collect(child: ReturnType<typeof spawn>, timeoutMs: number): Promise<Run> {
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

const page = (title: string, body: string) =>
  `<!DOCTYPE html><html><head><title>${title}</title></head><body><main><h1>${title}</h1><p>${body}</p></main></body></html>`;

describe('gleaner CLI', () => {
  let site: FixtureSite;
  let svc: TestService;
  let dir: string;
  let remote: string[];

  before(async () => {
    ({ site, svc } = await startSiteAndService());
    dir = await mkdtemp(join(tmpdir(), 'gleaner-cli-'));
    remote = ['--api-url', svc.url, '--api-key', svc.key];
  });
  after(async () => {
    await stopSiteAndService(svc, site);
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  test('--help lists the commands and exit codes; bad arguments print the usage and exit 2', async () => {
    const help = await gleaner(['--help']);
    assert.equal(help.code, 0);
    for (const word of ['scrape URL', 'crawl URL', 'map URL', 'parse FILE', 'search QUERY', 'monitor create', 'serve'])
      assert.ok(help.stdout.includes(word), word);
    assert.match(help.stdout, /Exit codes:[\s\S]*\b3\b.*cannot reach/);

    for (const args of [
      [],
      ['frobnicate'],
      ['scrape'],
      ['scrape', site.url('/about'), '--bogus'],
      ['crawl', site.url('/'), '--limit', 'many'],
      ['monitor', 'explode'],
    ]) {
      const bad = await gleaner([...args, ...remote]);
      assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
      assert.match(bad.stderr, /^error: .+\n\nUsage: gleaner <command>/, args.join(' '));
      assert.equal(bad.stdout, '');
    }
  });

  test('scrape: markdown as is on stdout, without ANSI escapes off a terminal; -o FILE; --json', async () => {
    const plain = await gleaner(['scrape', site.url('/about'), ...remote]);
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^# About the .+\n/m);
    assert.match(plain.stdout, /fictional publication used to test web scrapers/);
    assert.ok(!plain.stdout.includes(ESC) && !plain.stderr.includes(ESC), 'no colours without a terminal');

    const file = join(dir, 'about.md');
    const toFile = await gleaner(['scrape', site.url('/about'), '-o', file, ...remote]);
    assert.equal(toFile.code, 0, toFile.stderr);
    assert.equal(toFile.stdout, '');
    assert.match(toFile.stderr, /Wrote \d+ bytes to .*about\.md/);
    assert.equal(await readFile(file, 'utf8'), plain.stdout);

    const json = await gleaner(
      ['scrape', site.url('/about'), '-f', 'markdown,links', '--no-only-main-content', '--json', ...remote],
      { GLEANER_API_KEY: svc.key },
    );
    assert.equal(json.code, 0, json.stderr);
    const res = JSON.parse(json.stdout);
    assert.equal(res.success, true);
    assert.match(res.data.markdown, /fictional publication/);
    assert.ok(res.data.links.includes(site.url('/docs/getting-started')), 'links of the whole page');
    assert.match(res.data.metadata.title, /^About\b/);

    // Several formats in text: each under its header.
    const both = await gleaner(['scrape', site.url('/about'), '-f', 'markdown,links', ...remote]);
    assert.match(both.stdout, /==> markdown <==\n[\s\S]*==> links <==\n[\s\S]*\/blog\//);
  });

  test('map and search: one URL per line, and --json parsed', async () => {
    const plain = await gleaner(['map', site.url('/'), ...remote]);
    assert.equal(plain.code, 0, plain.stderr);
    const lines = plain.stdout.trim().split('\n');
    assert.ok(lines.includes(site.url('/about')), plain.stdout);
    assert.ok(lines.every((l) => l.startsWith('http')));

    const json = await gleaner(['map', site.url('/'), '--limit', '3', '--json', ...remote]);
    assert.equal(json.code, 0, json.stderr);
    const res = JSON.parse(json.stdout);
    assert.equal(res.success, true);
    assert.equal(res.links.length, 3);

    // The own index holds what was scraped (the previous test's /about).
    await svc.settled();
    let hits: { url: string }[] = [];
    for (let i = 0; i < 20 && hits.length === 0; i++) {
      const found = await gleaner(['search', 'fictional publication', '--json', ...remote]);
      assert.equal(found.code, 0, found.stderr);
      hits = JSON.parse(found.stdout).data.web;
      if (hits.length === 0) await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(
      hits.some((h) => h.url === site.url('/about')),
      JSON.stringify(hits),
    );
    const text = await gleaner(['search', 'fictional', 'publication', ...remote]);
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /^1\. .+\n {3}http:\/\/127\.0\.0\.1:\d+\/about\n/m);
  });

  test('crawl without a terminal: plain progress lines on stderr, --json with every page', async () => {
    const run = await gleaner(['crawl', site.url('/'), '--limit', '5', '--json', ...remote]);
    assert.equal(run.code, 0, run.stderr);
    const res = JSON.parse(run.stdout);
    assert.equal(res.status, 'completed');
    assert.equal(res.data.length, 5);
    assert.equal(res.next, null);
    assert.ok(res.data.every((d: { markdown?: string }) => typeof d.markdown === 'string'));
    assert.match(run.stderr, /^Crawl [\w-]+ started$/m);
    assert.match(run.stderr, /^Crawl [\w-]+: 5\/5 pages \(completed\)$/m);
    assert.match(run.stderr, /^Crawl [\w-]+ completed: 5 pages in [\d.]+ s, 5 credits$/m);
    assert.ok(!run.stderr.includes(ESC) && !run.stderr.includes('\r'), 'no bar, no escapes without a terminal');
  });

  test(
    'crawl on a terminal: a bar redrawn with carriage returns, its ETA, and the summary',
    { skip: !hasScript },
    async () => {
      const run = await gleanerOnTty(['crawl', site.url('/'), '--limit', '8', ...remote]);
      assert.equal(run.code, 0, run.stdout);
      const out = run.stdout;
      assert.match(out, /\r.*█.* \d\/8 pages +\d+% {2}ETA (\d+s|--|done)/);
      assert.ok((out.match(/\r/g) ?? []).length >= 2, 'the bar is redrawn in place');
      assert.match(out, /8\/8 pages 100% {2}ETA done/);
      assert.ok(out.includes(`${ESC}[`), 'colours on a terminal');
      assert.match(out, /Crawl [\w-]+ .*completed.*: 8 pages in [\d.]+ s, 8 credits/);
      assert.ok(out.includes(site.url('/about')), 'the pages are listed');
      // NO_COLOR keeps the bar but drops the colours.
      const plain = await gleanerOnTty(['crawl', site.url('/'), '--limit', '2', ...remote], { NO_COLOR: '1' });
      assert.equal(plain.code, 0, plain.stdout);
      assert.match(plain.stdout, /\r.*2\/2 pages 100%/);
      assert.ok(!SGR.test(plain.stdout), 'no colour codes with NO_COLOR');
    },
  );

  test('parse: a real DOCX to markdown', async () => {
    const file = join(dir, 'handbook.docx');
    await writeFile(file, buildDocx());
    const run = await gleaner(['parse', file, ...remote]);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stdout, /^# Gleaner Project Handbook$/m);
    assert.match(run.stdout, /^This handbook describes how the \*\*Gleaner\*\* service turns web pages into/m);

    const json = await gleaner(['parse', file, '--json', ...remote]);
    assert.equal(json.code, 0, json.stderr);
    const res = JSON.parse(json.stdout);
    assert.equal(res.data.metadata.title, documentTexts.docx.title);
    assert.equal(res.data.metadata.sourceURL, 'handbook.docx');

    const missing = await gleaner(['parse', join(dir, 'nope.pdf'), ...remote]);
    assert.equal(missing.code, 2);
  });

  test('monitor: create, list, run --wait, checks with the diff of a changed page', async () => {
    site.mutable.set('/mutable/cli', { html: page('Prices', 'The price is 10 euros.') });
    const url = site.url('/mutable/cli');
    const created = await gleaner([
      'monitor',
      'create',
      url,
      '--name',
      'cli watch',
      '--schedule',
      'every 30 minutes',
      '--json',
      ...remote,
    ]);
    assert.equal(created.code, 0, created.stderr);
    const monitor = JSON.parse(created.stdout).data;
    assert.equal(monitor.name, 'cli watch');
    assert.equal(monitor.schedule.cron, '*/30 * * * *');

    const listed = await gleaner(['monitor', 'list', ...remote]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(
      listed.stdout,
      new RegExp(`^${monitor.id}\tcli watch\tactive\tevery 30 minutes\tlast run never$`, 'm'),
    );

    const first = await gleaner(['monitor', 'run', monitor.id, '--wait', '--json', ...remote]);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(JSON.parse(first.stdout).data.status, 'completed');

    site.mutable.set('/mutable/cli', { html: page('Prices', 'The price is 12 euros.') });
    const second = await gleaner(['monitor', 'run', monitor.id, '--wait', ...remote]);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^Check [\w-]+ completed\n1 pages: 0 same, 1 changed, 0 new, 0 removed, 0 errors\n$/);
    const checkId = /^Check ([\w-]+)/.exec(second.stdout)![1];

    const checks = await gleaner(['monitor', 'checks', monitor.id, ...remote]);
    assert.equal(checks.code, 0, checks.stderr);
    const rows = checks.stdout.trim().split('\n');
    assert.equal(rows.length, 2);
    assert.ok(rows[0].startsWith(`${checkId}\tcompleted\tmanual\t`), rows[0]);

    const detail = await gleaner(['monitor', 'checks', monitor.id, checkId, '--json', ...remote]);
    assert.equal(detail.code, 0, detail.stderr);
    const check = JSON.parse(detail.stdout).data;
    assert.equal(check.pages.length, 1);
    assert.equal(check.pages[0].status, 'changed');
    assert.match(check.pages[0].diff.text, /-The price is 10 euros\.\n\+The price is 12 euros\./);
    const text = await gleaner(['monitor', 'checks', monitor.id, checkId, ...remote]);
    assert.match(text.stdout, /^changed\thttp:\/\/127\.0\.0\.1:\d+\/mutable\/cli$/m);
    assert.match(text.stdout, /^\+The price is 12 euros\.$/m);
  });

  test('an API error exits 1 with its code; an unreachable server exits 3', async () => {
    const unauthorized = await gleaner(['scrape', site.url('/about'), '--api-url', svc.url], {
      GLEANER_API_KEY: 'fc-not-a-key-at-all',
    });
    assert.equal(unauthorized.code, 1);
    assert.match(unauthorized.stderr, /^error: UNAUTHORIZED \(HTTP 401\): .+/m);
    assert.equal(unauthorized.stdout, '');

    const notFound = await gleaner(['monitor', 'run', '00000000-0000-0000-0000-000000000000', ...remote]);
    assert.equal(notFound.code, 1);
    assert.match(notFound.stderr, /MONITOR_NOT_FOUND \(HTTP 404\)/);

    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const down = await gleaner(['scrape', site.url('/about')], {
      GLEANER_API_URL: `http://127.0.0.1:${port}`,
      GLEANER_API_KEY: svc.key,
    });
    assert.equal(down.code, 3);
    assert.match(
      down.stderr,
      new RegExp(`^error: cannot reach http://127\\.0\\.0\\.1:${port} \\(ECONNREFUSED\\)$`, 'm'),
    );
  });

  test('without an API URL, the command runs on an embedded server of its own', async () => {
    const dataDir = join(dir, 'embedded');
    const env = { DATA_DIR: dataDir, GLEANER_ALLOW_PRIVATE_NETWORK: 'true', GLEANER_MAX_CRAWL_DELAY: '0' };
    const run = await gleaner(['scrape', site.url('/about')], env);
    assert.equal(run.code, 0, run.stderr);
    assert.match(run.stderr, /started the embedded server on http:\/\/127\.0\.0\.1:\d+/);
    assert.match(run.stdout, /^# About the .+\n/m);
    // A second command reuses the database and its CLI key.
    const again = await gleaner(['monitor', 'list', '--json'], env);
    assert.equal(again.code, 0, again.stderr);
    assert.deepEqual(JSON.parse(again.stdout).data, []);
    const keys = await gleaner(['keys', 'list'], { DATA_DIR: dataDir });
    assert.equal(keys.code, 0, keys.stderr);
    assert.equal(keys.stdout.match(/gleaner CLI \(embedded server\)/g)?.length, 1, keys.stdout);
  });
});
