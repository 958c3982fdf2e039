// The interact sandbox against a real Chromium: node, python and bash calls on one session's page,
// timeouts that kill the sandbox and leave the page as it was, output caps, and canaries proving
// the code cannot see the server's environment, files or loopback services.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { SandboxUnavailableError } from '../../src/errors.ts';
import { CHROMIUM_ARGS } from '../../src/scrape/engines/browser/browser-pool.ts';
import { Sandbox, type SandboxLanguage, type SandboxResult } from '../../src/interact/sandbox/sandbox.ts';

const SECRET = `canary-secret-${process.pid}`;
const FORM = '<!doctype html><title>Form page</title><input id="name"><p id="para">Hello there</p>';

let context: BrowserContext;
let cdpEndpoint: string;
let profileDir: string;
let dataDir: string;
let sandbox: Sandbox;
let site: http.Server;
let siteUrl: string;
let canary: http.Server;
let canaryPort: number;
let canaryHits = 0;
const canaryFiles: string[] = [];
const logged: string[] = [];

function listen(server: http.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
}

async function run(language: SandboxLanguage, code: string, timeoutMs = 30_000): Promise<SandboxResult> {
  return sandbox.run({ language, code, timeoutMs });
}

/** A call that must succeed: its result, or a failure with everything it printed. */
async function ok(language: SandboxLanguage, code: string): Promise<SandboxResult> {
  const result = await run(language, code);
  assert.equal(result.exitCode, 0, `${language} failed: ${result.error}\n${result.stdout}\n${result.stderr}`);
  return result;
}

/** The runners alive on this machine (their bwrap'd node's command line names the runner file). */
function runnerProcesses(): number {
  const out = execFileSync('ps', ['-eo', 'args'], { encoding: 'utf8' });
  return out.split('\n').filter((line) => line.startsWith('/opt/node/bin/node') && line.includes('runner.ts')).length;
}

before(async () => {
  process.env.GLEANER_CANARY_SECRET = SECRET; // before start: the runner must not inherit it
  site = http.createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end(FORM));
  siteUrl = `http://127.0.0.1:${await listen(site)}/form`;
  canary = http.createServer((_req, res) => {
    canaryHits++;
    res.end('canary');
  });
  canaryPort = await listen(canary);
  dataDir = await mkdtemp(join(tmpdir(), 'gleaner-data-'));
  canaryFiles.push(join(dataDir, 'canary.txt'), join(import.meta.dirname, `.canary-${process.pid}.txt`));
  for (const file of canaryFiles) await writeFile(file, SECRET);
  profileDir = await mkdtemp(join(tmpdir(), 'gleaner-profile-'));
  context = await chromium.launchPersistentContext(profileDir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: [...CHROMIUM_ARGS, '--remote-debugging-port=0'],
  });
  const [port, path] = (await readFile(join(profileDir, 'DevToolsActivePort'), 'utf8')).split('\n');
  cdpEndpoint = `ws://127.0.0.1:${port}${path}`;
  sandbox = await Sandbox.start({ cdpEndpoint, sessionDir: dataDir, log: (m) => logged.push(m) });
});

after(async () => {
  await sandbox?.close();
  await context?.close();
  site?.close();
  canary?.close();
  delete process.env.GLEANER_CANARY_SECRET;
  for (const file of canaryFiles) await rm(file, { force: true });
  await rm(profileDir, { recursive: true, force: true });
  await rm(dataDir, { recursive: true, force: true });
});

describe('interact sandbox: node', () => {
  it('keeps the page between calls: a value set in one call is read back in the next', async () => {
    await ok('node', `await page.goto(${JSON.stringify(siteUrl)}); await page.fill('#name', 'from node call 1')`);
    const read = await ok('node', `await page.inputValue('#name')`);
    assert.equal(read.result, '"from node call 1"');
    // The same page the server's own connection sees.
    assert.equal(await context.pages().at(-1)!.inputValue('#name'), 'from node call 1');
  });

  it("answers the last expression's value, objects included, and prints console output", async () => {
    assert.equal((await ok('node', 'const x = 1; x + 1')).result, '2');
    assert.equal((await ok('node', 'await page.title()')).result, '"Form page"');
    const object = await ok('node', `const t = await page.title();\n({ title: t, n: [1, 'b'], nested: { ok: true } })`);
    assert.deepEqual(JSON.parse(object.result!), { title: 'Form page', n: [1, 'b'], nested: { ok: true } });
    assert.equal((await ok('node', 'let y = 3;')).result, undefined);
    const printed = await ok('node', "console.log('to', 'stdout', 42); console.error('to stderr'); 'done' // trailing");
    assert.equal(printed.stdout, 'to stdout 42\n');
    assert.equal(printed.stderr, 'to stderr\n');
    assert.equal(printed.result, '"done"');
  });

  it('reports what the code threw, with a non-zero exit code', async () => {
    const thrown = await run('node', "await page.title(); throw new Error('boom from the caller')");
    assert.notEqual(thrown.exitCode, 0);
    assert.equal(thrown.error, 'boom from the caller');
    assert.equal(thrown.killed, false);
    const syntax = await run('node', 'const = 1');
    assert.notEqual(syntax.exitCode, 0);
    assert.match(syntax.error!, /SyntaxError/);
  });
});

describe('interact sandbox: python', () => {
  it('reads what node set, keeps its own changes for the next call, and answers its last expression', async () => {
    await ok('node', `await page.fill('#name', 'set by node')`);
    const read = await ok('python', "v = await page.input_value('#name')\nprint('python sees', v)\nv");
    assert.equal(read.stdout, 'python sees set by node\n');
    assert.equal(read.result, '"set by node"');
    await ok('python', "await page.fill('#name', 'set by python')");
    assert.equal((await ok('python', "await page.locator('#name').input_value()")).result, '"set by python"');
    assert.equal((await ok('node', `await page.inputValue('#name')`)).result, '"set by python"');
  });

  it("speaks Playwright's python names: url, title, evaluate, locators, screenshot bytes", async () => {
    const code = [
      'print(page.url)',
      'print(await page.title())',
      "print(await page.evaluate('(a) => a * 2', 21))",
      "print(await page.evaluate('document.title'))",
      "print(await page.locator('#para').evaluate('el => el.id'))",
      "print(await page.locator('p').first.inner_text())",
      "print(await page.locator('input, p').count())",
      "print(await page.get_by_text('Hello there').text_content())",
      'shot = await page.screenshot()',
      'print(shot[:8] == bytes([137, 80, 78, 71, 13, 10, 26, 10]))',
      "await page.wait_for_selector('#para', timeout=5000)",
    ].join('\n');
    const result = await ok('python', code);
    assert.equal(result.stdout, `${siteUrl}\nForm page\n42\nForm page\npara\nHello there\n2\nHello there\nTrue\n`);
  });

  it('reports an exception with a non-zero exit code and its traceback on stderr', async () => {
    const result = await run('python', "await page.title()\nraise ValueError('python boom')");
    assert.notEqual(result.exitCode, 0);
    assert.equal(result.error, 'ValueError: python boom');
    assert.match(result.stderr, /Traceback/);
    const missing = await run('python', "await page.click('#nothing-here', timeout=300)");
    assert.match(missing.error!, /TimeoutError/);
  });
});

describe('interact sandbox: bash', () => {
  it('drives the same page with agent-browser, keeping state between calls', async () => {
    const title = await ok('bash', 'agent-browser get title');
    assert.equal(title.stdout.trim(), 'Form page');
    await ok('bash', "agent-browser fill '#name' 'set by bash'");
    const value = await ok('bash', "agent-browser get value '#name'");
    assert.equal(value.stdout.trim(), 'set by bash');
    assert.equal((await ok('node', `await page.inputValue('#name')`)).result, '"set by bash"');
    const tools = await ok('bash', 'echo \'{"a": [1, 2]}\' | jq -c .a | sed s/1/one/');
    assert.equal(tools.stdout, '[one,2]\n');
  });

  it('reports a non-zero exit', async () => {
    const result = await run('bash', 'echo partial; echo oops >&2; exit 3');
    assert.equal(result.exitCode, 3);
    assert.equal(result.stdout, 'partial\n');
    assert.equal(result.stderr, 'oops\n');
    assert.match(result.error!, /exited with code 3/);
  });
});

describe('interact sandbox: timeouts', () => {
  const loops: [SandboxLanguage, string][] = [
    ['node', "console.log('looping'); while (true) {}"],
    ['python', "print('looping')\nwhile True:\n    pass"],
    ['bash', 'echo looping; while :; do :; done'],
  ];
  for (const [language, code] of loops) {
    it(`${language}: an endless loop is killed at its timeout, and the next call sees the same page`, async () => {
      await ok('node', `await page.fill('#name', 'before the ${language} loop')`);
      const started = Date.now();
      const result = await run(language, code, 2000);
      const elapsed = Date.now() - started;
      assert.equal(result.killed, true);
      assert.ok(elapsed >= 2000 && elapsed < 4000, `killed after ${elapsed} ms`);
      assert.match(result.error!, /Timed out after 2000 ms/);
      assert.equal(result.stdout, 'looping\n'); // what it printed before, kept
      const after = await ok(
        language === 'bash' ? 'node' : language,
        `await page.${language === 'python' ? 'input_value' : 'inputValue'}('#name')`,
      );
      assert.equal(after.result, `"before the ${language} loop"`);
      assert.equal(runnerProcesses(), 1, 'the killed runner is gone, a single fresh one runs');
    });
  }

  it('an aborted call is killed like a timed-out one', async () => {
    const started = Date.now();
    const result = await sandbox.run({
      language: 'node',
      code: 'while (true) {}',
      timeoutMs: 60_000,
      signal: AbortSignal.timeout(500),
    });
    assert.equal(result.killed, true);
    assert.match(result.error!, /Aborted/);
    assert.ok(Date.now() - started < 3000);
    assert.equal((await ok('node', '1 + 1')).result, '2');
  });
});

describe('interact sandbox: output cap', () => {
  it('keeps maxOutputBytes of each stream and says it truncated', async () => {
    const small = await Sandbox.start({ cdpEndpoint, maxOutputBytes: 1000, log: (m) => logged.push(m) });
    try {
      const node = await small.run({
        language: 'node',
        code: "console.log('x'.repeat(5000)); 'ok'",
        timeoutMs: 10_000,
      });
      assert.equal(node.stdout, 'x'.repeat(1000));
      assert.equal(node.truncated, true);
      assert.equal(node.result, '"ok"');
      const bash = await small.run({ language: 'bash', code: 'yes | head -c 100000 >&2', timeoutMs: 10_000 });
      assert.equal(bash.stderr.length, 1000);
      assert.equal(bash.truncated, true);
      const python = await small.run({ language: 'python', code: "print('y' * 999)", timeoutMs: 10_000 });
      assert.equal(python.truncated, false);
      assert.equal(python.stdout, `${'y'.repeat(999)}\n`);
    } finally {
      await small.close();
    }
  });
});

describe('interact sandbox: isolation', () => {
  it("cannot read the server's environment", async () => {
    assert.equal(process.env.GLEANER_CANARY_SECRET, SECRET);
    const node = await ok('node', 'JSON.stringify(process.env)');
    assert.doesNotMatch(node.result!, new RegExp(SECRET));
    assert.deepEqual(Object.keys(JSON.parse(JSON.parse(node.result!))).sort(), [
      'HOME',
      'LANG',
      'PATH',
      'PWD',
      'TMPDIR',
    ]);
    const python = await ok('python', "import os\nprint(os.environ.get('GLEANER_CANARY_SECRET'))\nsorted(os.environ)");
    assert.equal(python.stdout, 'None\n');
    const bash = await ok('bash', 'env; cat /proc/1/environ /proc/self/environ 2>/dev/null | tr "\\0" "\\n"');
    assert.doesNotMatch(bash.stdout, new RegExp(SECRET));
    assert.doesNotMatch(bash.stdout, /DATABASE_URL|OPENAI/);
  });

  it('cannot read files of the data directory or the source tree', async () => {
    for (const file of canaryFiles) {
      const path = JSON.stringify(file);
      const node = await run('node', `require('node:fs').readFileSync(${path}, 'utf8')`);
      assert.match(node.error!, /ENOENT/);
      const python = await run('python', `print(open(${path}).read())`);
      assert.match(python.error!, /FileNotFoundError/);
      const bash = await run('bash', `cat ${path}`);
      assert.notEqual(bash.exitCode, 0);
      assert.doesNotMatch(bash.stdout, new RegExp(SECRET));
    }
    const listing = await ok('bash', 'ls / /opt/gleaner; test -e /work || test -e /root || echo no-home-no-tree');
    assert.match(listing.stdout, /no-home-no-tree/);
    assert.doesNotMatch(listing.stdout, /package\.json|src|test/);
  });

  it('cannot reach a loopback service of the host, while the browser is reachable', async () => {
    const url = `http://127.0.0.1:${canaryPort}/`;
    const node = await run('node', `await fetch(${JSON.stringify(url)}).then((r) => r.text())`);
    assert.notEqual(node.exitCode, 0);
    assert.match(node.error!, /fetch failed/);
    const bash = await run('bash', `curl -sS --max-time 5 ${url}`);
    assert.notEqual(bash.exitCode, 0);
    assert.match(bash.stderr, /Couldn't connect|Failed to connect/);
    const python = await run(
      'python',
      `import urllib.request\nurllib.request.urlopen(${JSON.stringify(url)}, timeout=5).read()`,
    );
    assert.match(python.error!, /URLError|Connection refused/);
    assert.equal(canaryHits, 0);
    // The browser, through the relay: a page load and agent-browser, from the same calls' namespace.
    assert.equal((await ok('node', `(await page.goto(${JSON.stringify(siteUrl)})).status()`)).result, '200');
    assert.equal((await ok('bash', 'agent-browser get title')).stdout.trim(), 'Form page');
  });

  it('hands on no descriptor of the server', async () => {
    assert.equal((await ok('bash', 'ls /proc/$$/fd; exit 0')).stdout, '0\n1\n2\n');
  });

  it('a call over memoryMb is killed by the cgroup, and the sandbox goes on', async (t) => {
    if (logged.some((m) => /cgroup/.test(m))) return t.skip(`no cgroup here: ${logged.join('; ')}`);
    const small = await Sandbox.start({ cdpEndpoint, memoryMb: 256 });
    try {
      const hog = await small.run({
        language: 'python',
        code: "x = b'x' * (600 * 1024 * 1024)\nprint('allocated')",
        timeoutMs: 20_000,
      });
      assert.notEqual(hog.exitCode, 0);
      assert.equal(hog.stdout, '');
      assert.equal((await small.run({ language: 'node', code: '1+1', timeoutMs: 10_000 })).result, '2');
    } finally {
      await small.close();
    }
  });

  it('runs as nobody in its own namespaces', async () => {
    const id = await ok(
      'bash',
      'id -u; hostname; ip -o link 2>/dev/null | wc -l || true; cat /proc/net/dev | tail -n +3 | cut -d: -f1',
    );
    const [uid, hostname, ...rest] = id.stdout
      .trim()
      .split('\n')
      .map((s) => s.trim());
    assert.equal(uid, '65534');
    assert.equal(hostname, 'sandbox');
    assert.deepEqual(
      rest.filter((l) => /^[a-z]/.test(l)),
      ['lo'],
    ); // its network: its own loopback only
  });
});

describe('interact sandbox: start', () => {
  it("without bwrap, start() throws SANDBOX_UNAVAILABLE naming Debian's bubblewrap package", async () => {
    await assert.rejects(
      Sandbox.start({ cdpEndpoint, bwrap: '/nonexistent/bwrap' }),
      (err: unknown) =>
        err instanceof SandboxUnavailableError &&
        err.code === 'SANDBOX_UNAVAILABLE' &&
        err.statusCode === 503 &&
        /bubblewrap/.test(err.message),
    );
  });

  it('a warm runner answers `1+1` quickly (median of 50 calls)', async () => {
    await ok('node', '1+1');
    const times: number[] = [];
    for (let i = 0; i < 50; i++) {
      const started = performance.now();
      assert.equal((await run('node', '1+1')).result, '2');
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    const median = times[25]!;
    console.log(
      `interact sandbox: node 1+1 on a warm runner, median ${median.toFixed(2)} ms, max ${times.at(-1)!.toFixed(2)} ms`,
    );
    assert.ok(median < 20, `median ${median} ms`);
  });
});
