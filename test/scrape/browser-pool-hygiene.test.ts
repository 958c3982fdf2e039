// Browser pool hygiene (issue 22): a killed Chromium leaves no process behind (its whole process
// group ends, alive or zombie); contexts are closed on every
// path a fetch can take (success, error status, timeout, blocked target, failing action, a crash);
// a browser whose processes hold more than recycleAboveMb is replaced once its pages are done.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BrowserEngine, type BrowserFetchRequest, chromiumAvailable } from '../../src/scrape/engines/browser.ts';
import { processGroupRssMb } from '../../src/scrape/engines/browser/browser-pool.ts';
import { type FixtureSite, startFixtureSite } from '../fixtures/site/index.ts';

let site: FixtureSite;
const engines: BrowserEngine[] = [];

const req = (path: string, extra: Partial<BrowserFetchRequest> = {}): BrowserFetchRequest => ({
  url: /^[a-z]+:/.test(path) ? path : site.url(path),
  timeoutMs: 15_000,
  skipTlsVerification: true,
  mobile: false,
  ...extra,
});

function engine(opts: Partial<ConstructorParameters<typeof BrowserEngine>[0]> = {}): BrowserEngine {
  const e = new BrowserEngine({ allowPrivateNetwork: true, ...opts });
  engines.push(e);
  return e;
}

/** Processes (pid → state letter) whose process group is `pgid`, zombies included. */
function groupMembers(pgid: number): Map<number, string> {
  const out = new Map<number, string>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid) out.set(Number(entry), state);
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await sleep(50);
  }
  return check();
}

const linux = process.platform === 'linux';

before(async () => {
  site = await startFixtureSite();
});

after(async () => {
  await Promise.all(engines.map((e) => e.close()));
  await site.close();
});

describe('browser pool hygiene', { skip: (!chromiumAvailable() || !linux) && 'needs Chromium on Linux' }, () => {
  test('a killed browser leaves no process of its group behind, alive or zombie', async () => {
    const e = engine();
    assert.equal((await e.fetch(req('/articles/1'))).status, 200);
    const pid = e.browserPid!;
    const members = groupMembers(pid);
    assert.ok(members.size > 1, `Chromium runs several processes in its group (${members.size})`);
    process.kill(pid, 'SIGKILL');
    // The next fetch finds the browser dead and gets a new one; the old group is ended.
    assert.equal((await e.fetch(req('/about'))).status, 200);
    assert.notEqual(e.browserPid, pid);
    const gone = await until(() => groupMembers(pid).size === 0, 5000);
    assert.ok(gone, `left of the killed browser: ${JSON.stringify([...groupMembers(pid)])}`);
    assert.equal(e.stats().crashes, 1);
  });

  test('contexts are closed on every path: success, error status, timeout, blocked, failing action, crash', async () => {
    const e = engine({ selectorTimeoutMs: 500 });
    const outcomes = await Promise.allSettled([
      e.fetch(req('/articles/2')),
      e.fetch(req('/status/500')),
      e.fetch(req('/slow?ms=5000', { timeoutMs: 1500 })),
      e.fetch(req('http://169.254.169.254/latest/')),
      e.fetch(req('/about', { actions: [{ type: 'click', selector: '#does-not-exist' }] })),
    ]);
    assert.deepEqual(
      outcomes.map((o) => o.status),
      ['fulfilled', 'fulfilled', 'rejected', 'rejected', 'rejected'],
    );
    assert.ok(await until(() => e.stats().openContexts === 0, 3000), `open: ${e.stats().openContexts}`);
    // A crash in the middle of a page: the retry's context is closed too.
    const pending = e.fetch(req('/slow?ms=800'));
    await sleep(300);
    // The browser the page went to (its pid is known once the launch has been seen in /proc).
    assert.ok(await until(() => e.browserPid !== undefined, 5000), 'a browser is running the page');
    process.kill(e.browserPid!, 'SIGKILL');
    assert.equal((await pending).status, 200);
    assert.ok(await until(() => e.stats().openContexts === 0, 3000), `open: ${e.stats().openContexts}`);
    assert.equal(e.stats().activePages, 0);
  });

  test('a browser above recycleAboveMb is replaced once its pages are done; 0 never', async () => {
    const e = engine({ recycleAboveMb: 1 });
    assert.equal((await e.fetch(req('/articles/3'))).status, 200);
    assert.deepEqual([e.stats().launches, e.stats().memoryRecycles], [1, 1], 'retired when its page was done');
    assert.equal((await e.fetch(req('/about'))).status, 200);
    assert.deepEqual([e.stats().launches, e.stats().memoryRecycles], [2, 2], 'the next page got a new browser');
    assert.ok(await until(() => e.browserPids.length === 0, 5000), `still running: ${e.browserPids}`);

    const never = engine({ recycleAboveMb: 0 });
    for (const path of ['/articles/1', '/about', '/articles/2']) await never.fetch(req(path));
    assert.deepEqual([never.stats().launches, never.stats().memoryRecycles], [1, 0]);
    // What the limit is compared with: every process of the group (a live Chromium holds tens of MB).
    const rss = processGroupRssMb(never.browserPid!);
    assert.ok(rss > 20 && rss < 4096, `${rss} MB`);
  });
});
