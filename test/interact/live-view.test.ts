// The live view (src/interact/live-view*.ts behind GET /v2/browser/:id/live and its stream) with
// a real session Chromium and, as the viewer, a second Chromium launched on its own: the page
// shows the session's frames (pixels of the session's colour; a screenshot is kept under
// test-artifacts/); it follows the session to a new page and back when that page closes; the
// interactive page forwards a click at the position of a button drawn in the session and typing
// into a field; the read-only view refuses the same input sent straight to its stream; wrong
// tokens and unknown sessions are the same 404, and no API key is asked.
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { type Browser, type Page, chromium } from 'playwright-core';
import { WebSocket } from 'ws';
import { type BrowserSessionUrls, type LiveSession, browserSessionUrls } from '../../src/api/routes/live.ts';
import { LiveView, type LiveViewer } from '../../src/interact/live-view.ts';
import { SessionTokens } from '../../src/interact/session-tokens.ts';
import { CHROMIUM_ARGS, chromiumExecutable } from '../../src/scrape/engines/browser/browser-pool.ts';
import { Waiters } from '../helpers/waiters.ts';
import { type LiveApp, type TestLiveBrowser, launchLiveBrowser, startLiveApp } from './live-session.ts';

// Functions run in the browser (page.evaluate) use its globals; this project's types have no DOM.
declare const window: any;
declare const document: any;

const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url);
const PINK = [230, 20, 120];
const TEAL = [20, 160, 150];
// The session page: one colour all over, a button and a text field at known places (CSS pixels).
const BUTTON = { left: 200, top: 150, width: 300, height: 160 };
const FIELD = { left: 700, top: 150, width: 300, height: 60 };
const SESSION_PAGE = `<!doctype html>
<style>
  html, body { margin: 0; height: 100%; background: rgb(${PINK}); }
  button { position: absolute; left: ${BUTTON.left}px; top: ${BUTTON.top}px; width: ${BUTTON.width}px;
    height: ${BUTTON.height}px; background: white; border: 0; font-size: 40px; }
  input { position: absolute; left: ${FIELD.left}px; top: ${FIELD.top}px; width: ${FIELD.width}px;
    height: ${FIELD.height}px; font-size: 30px; }
</style>
<button id="button">Press</button><input id="field">
<script>
  window.clicks = 0;
  document.getElementById('button').addEventListener('click', () => window.clicks++);
</script>`;

/** The viewer page's <img> (its frames, natural size, place on the page) and the colour at a point of it. */
async function viewerImage(viewer: Page, at = { x: 0.95, y: 0.95 }) {
  return viewer.evaluate((at) => {
    const img = document.getElementById('screen');
    const canvas = document.createElement('canvas');
    canvas.width = img.naturalWidth;
    canvas.height = img.naturalHeight;
    const g = canvas.getContext('2d')!;
    g.drawImage(img, 0, 0);
    const pixel = [
      ...g.getImageData(Math.floor(at.x * img.naturalWidth), Math.floor(at.y * img.naturalHeight), 1, 1).data,
    ];
    const box = img.getBoundingClientRect();
    return {
      frames: Number(img.dataset.frames ?? 0),
      naturalWidth: img.naturalWidth,
      naturalHeight: img.naturalHeight,
      box: { x: box.x, y: box.y, width: box.width, height: box.height },
      rgb: pixel.slice(0, 3),
    };
  }, at);
}

const near = (rgb: number[], want: number[]) => rgb.every((v, i) => Math.abs(v - want[i]) <= 12);

/** Waits until the viewer shows a frame whose corner is `rgb` (JPEG: within a few levels). */
async function waitForColour(viewer: Page, rgb: number[]): Promise<void> {
  await viewer.waitForFunction(
    (want) => {
      const img = document.getElementById('screen');
      if (!img.naturalWidth) return false;
      const canvas = document.createElement('canvas');
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const g = canvas.getContext('2d')!;
      g.drawImage(img, 0, 0);
      const d = g.getImageData(Math.floor(img.naturalWidth * 0.95), Math.floor(img.naturalHeight * 0.95), 1, 1).data;
      return want.every((v, i) => Math.abs(v - d[i]) <= 12);
    },
    rgb,
    { timeout: 15_000 },
  );
}

/** A stream socket read as JSON messages (frames counted), to send input straight to the server. */
function streamClient(url: string) {
  const ws = new WebSocket(url);
  const messages: any[] = [];
  let frames = 0;
  const arrivals = new Waiters();
  ws.on('message', (data, isBinary) => {
    if (isBinary) frames++;
    else messages.push(JSON.parse(data.toString()));
    arrivals.notify();
  });
  return {
    ws,
    messages,
    get frames() {
      return frames;
    },
    until<T>(fn: () => T | undefined | false) {
      return arrivals.until(
        fn,
        15_000,
        () => new Error(`timed out; got ${JSON.stringify(messages)}, ${frames} frames`),
      );
    },
  };
}

describe('live view', () => {
  let browser: TestLiveBrowser;
  let live: LiveApp;
  let urls: BrowserSessionUrls;
  let viewerBrowser: Browser;
  let session: Page;
  const tokens = SessionTokens.make();

  before(async () => {
    browser = await launchLiveBrowser();
    live = await startLiveApp(new Map<string, LiveSession>([['s1', { browser, tokens }]]));
    urls = browserSessionUrls(live.url, 's1', tokens);
    session = await browser.page();
    await session.setContent(SESSION_PAGE);
    viewerBrowser = await chromium.launch({
      executablePath: chromiumExecutable(),
      headless: true,
      args: CHROMIUM_ARGS,
    });
    await mkdir(ARTIFACTS, { recursive: true });
  });
  after(async () => {
    await viewerBrowser?.close();
    await live?.app.close();
    await browser?.close();
  });

  test("the read-only page shows the session's frames", async () => {
    // A viewer smaller than the session's 1280x720: the frame is shown scaled down.
    const viewer = await viewerBrowser.newPage({ viewport: { width: 1000, height: 700 } });
    try {
      const res = await viewer.goto(urls.liveViewUrl);
      assert.equal(res?.status(), 200);
      assert.match(res?.headers()['content-security-policy'] ?? '', /script-src 'sha256-/);
      await waitForColour(viewer, PINK);
      const img = await viewerImage(viewer);
      assert.ok(img.frames >= 1);
      assert.deepEqual([img.naturalWidth, img.naturalHeight], [1280, 720], "the session's viewport, at most 1280x800");
      assert.ok(near(img.rgb, PINK), `corner ${img.rgb}`);
      const button = await viewerImage(viewer, { x: (BUTTON.left + 10) / 1280, y: (BUTTON.top + 10) / 720 });
      assert.ok(near(button.rgb, [255, 255, 255]), `the button is drawn: ${button.rgb}`);
      assert.ok(Math.abs(img.box.width - 1000) < 1 && Math.abs(img.box.height - 562.5) < 1, JSON.stringify(img.box));
      await viewer.screenshot({ path: new URL('live-view.png', ARTIFACTS).pathname });
      assert.equal(await viewer.locator('body').getAttribute('class'), null, 'not marked interactive');
    } finally {
      await viewer.close();
    }
  });

  test("it follows the session's current page: a new one, then back when it closes", async () => {
    const viewer = await viewerBrowser.newPage();
    let popup: Awaited<ReturnType<typeof browser.context.newPage>> | undefined;
    try {
      await viewer.goto(urls.liveViewUrl);
      await waitForColour(viewer, PINK);
      popup = await browser.context.newPage();
      await popup.setContent(`<body style="margin:0;height:100vh;background:rgb(${TEAL})"></body>`);
      await waitForColour(viewer, TEAL);
      await popup.close();
      await waitForColour(viewer, PINK);
      assert.equal(await browser.page(), session);
    } finally {
      // Closed whatever happened: a popup left open would be what the next tests' viewers show.
      await popup?.close().catch(() => {});
      await viewer.close();
    }
  });

  test('the interactive page forwards a click on the drawn button and typing into the field', async () => {
    await session.evaluate(() => (window.clicks = 0));
    const viewer = await viewerBrowser.newPage({ viewport: { width: 1000, height: 700 } });
    try {
      await viewer.goto(urls.interactiveLiveViewUrl);
      await viewer.waitForSelector('body.interactive');
      await waitForColour(viewer, PINK);
      const { box } = await viewerImage(viewer);
      // Where a session position is on the viewer's (scaled) image.
      const onViewer = (x: number, y: number) =>
        [box.x + (x / 1280) * box.width, box.y + (y / 720) * box.height] as const;
      await viewer.mouse.click(...onViewer(BUTTON.left + BUTTON.width / 2, BUTTON.top + BUTTON.height / 2));
      await session.waitForFunction(() => window.clicks === 1, undefined, { timeout: 15_000 });

      await viewer.mouse.click(...onViewer(FIELD.left + 20, FIELD.top + FIELD.height / 2));
      await session.waitForFunction(() => document.activeElement?.id === 'field', undefined, { timeout: 15_000 });
      await viewer.keyboard.type('Hi there!');
      await viewer.keyboard.press('Backspace');
      await session.waitForFunction(() => document.getElementById('field').value === 'Hi there', undefined, {
        timeout: 15_000,
      });
      // A click outside the button does not count.
      await viewer.mouse.click(...onViewer(50, 600));
      await viewer.mouse.click(...onViewer(BUTTON.left + 5, BUTTON.top + 5));
      await session.waitForFunction(() => window.clicks === 2, undefined, { timeout: 15_000 });
      await viewer.screenshot({ path: new URL('live-view-interactive.png', ARTIFACTS).pathname });
    } finally {
      await viewer.close();
    }
  });

  test("the read-only view's stream refuses input; the interactive one's dispatches it", async () => {
    await session.evaluate(() => (window.clicks = 0));
    const streamUrl = (url: string) => url.replace(/^http/, 'ws').replace('/live?', '/live/stream?');
    const center = { x: (BUTTON.left + BUTTON.width / 2) / 1280, y: (BUTTON.top + BUTTON.height / 2) / 720 };
    const click = [
      { type: 'mouse', action: 'down', ...center, button: 'left', buttons: 1, clickCount: 1 },
      { type: 'mouse', action: 'up', ...center, button: 'left', buttons: 0, clickCount: 1 },
    ];

    const readOnly = streamClient(streamUrl(urls.liveViewUrl));
    await readOnly.until(() => readOnly.frames > 0);
    assert.deepEqual(readOnly.messages[0], { type: 'hello', interactive: false });
    for (const m of click) readOnly.ws.send(JSON.stringify(m));
    await readOnly.until(() => readOnly.messages.filter((m) => m.type === 'refused').length === 2);

    const interactive = streamClient(streamUrl(urls.interactiveLiveViewUrl));
    await interactive.until(() => interactive.frames > 0);
    assert.deepEqual(interactive.messages[0], { type: 'hello', interactive: true });
    interactive.ws.send(JSON.stringify({ type: 'mouse', action: 'down', x: 2, y: 0 }));
    await interactive.until(() => interactive.messages.find((m) => m.type === 'invalid'));
    for (const m of click) interactive.ws.send(JSON.stringify(m));
    await session.waitForFunction(() => window.clicks >= 1, undefined, { timeout: 15_000 });
    assert.equal(await session.evaluate(() => window.clicks), 1, "only the interactive stream's click");
    readOnly.ws.close();
    interactive.ws.close();
  });

  test('a wrong token or an unknown session: the same 404, page and stream; no key asked', async () => {
    const page = (id: string, token: string) => fetch(`${live.url}/v2/browser/${id}/live?token=${token}`);
    const wrong = await page('s1', tokens.cdp);
    const unknown = await page('nope', tokens.view);
    const none = await fetch(`${live.url}/v2/browser/s1/live`);
    assert.deepEqual([wrong.status, unknown.status, none.status], [404, 404, 404]);
    assert.deepEqual(await wrong.json(), await unknown.json());
    const refused = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${live.url.replace(/^http/, 'ws')}/v2/browser/s1/live/stream?token=${tokens.cdp}`);
      ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      ws.once('open', () => resolve(101));
      ws.once('error', () => {});
    });
    assert.equal(refused, 404);
  });
});

describe('LiveView', () => {
  /** A viewer that keeps what it is sent. */
  function recorder(arrivals: Waiters) {
    const frames: Buffer[] = [];
    let ended = false;
    const viewer: LiveViewer = {
      frame: (jpeg) => {
        frames.push(jpeg);
        arrivals.notify();
      },
      ended: () => {
        ended = true;
        arrivals.notify();
      },
    };
    return {
      viewer,
      frames,
      get ended() {
        return ended;
      },
    };
  }
  const timedOut = (what: string) => () => new Error(`timed out: ${what}`);

  test('one screencast for all viewers, restarted for a viewer after the last left; ended when the browser closes', async () => {
    const browser = await launchLiveBrowser();
    try {
      const page = await browser.page();
      await page.setContent(`<body style="margin:0;height:100vh;background:rgb(${TEAL})"><p id="n">0</p></body>`);
      const view = new LiveView(browser, { onError: (err) => assert.fail(err as Error) });
      const arrivals = new Waiters();
      const a = recorder(arrivals);
      const b = recorder(arrivals);
      const stopA = view.watch(a.viewer);
      await arrivals.until(() => a.frames.length > 0, 15_000, timedOut('a first frame'));
      const stopB = view.watch(b.viewer);
      assert.equal(b.frames[0], a.frames.at(-1), 'a viewer joining gets the last frame at once');
      // A change makes a new frame; both viewers get the very same one.
      await page.evaluate(() => (document.getElementById('n')!.textContent = 'changed'));
      const before = b.frames.length;
      await arrivals.until(() => b.frames.length > before, 15_000, timedOut('the frame of the change'));
      assert.ok(a.frames.includes(b.frames.at(-1)!), 'the same frame object: one screencast');
      assert.equal(view.viewers, 2);
      assert.deepEqual(view.viewport, { width: 1280, height: 720 });

      stopA();
      stopB();
      assert.equal(view.viewers, 0);
      await view.settled();
      assert.equal(view.viewport, undefined, 'nothing kept once nobody watches');
      // The next viewer starts a new screencast: its first frame is a new one.
      const c = recorder(arrivals);
      view.watch(c.viewer);
      await arrivals.until(() => c.frames.length > 0, 15_000, timedOut('a frame after the restart'));
      assert.ok(!b.frames.includes(c.frames[0]));

      await browser.close();
      await arrivals.until(() => c.ended, 15_000, timedOut('ended'));
      assert.equal(view.viewers, 0);
      assert.ok(!a.ended && !b.ended, 'viewers that left are not told');
    } finally {
      await browser.close().catch(() => {});
    }
  });
});
