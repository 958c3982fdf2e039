// The live view of one session: one CDP screencast of the session's current page, shared by every
// viewer (started by the first, stopped when the last leaves), and the viewers' input dispatched
// to that page. It follows the session's current page: a page opened later (a popup, a new tab)
// becomes the one shown; when the shown page closes, the most recent page left is.
import type { CDPSession, Page } from 'playwright-core';
import type { LiveBrowser } from './live-browser.ts';
import type { LiveInput } from './live-input.ts';

/** What the screencast asks of Chromium: JPEG frames of at most this size, every frame. */
export const SCREENCAST = { format: 'jpeg', quality: 60, maxWidth: 1280, maxHeight: 800, everyNthFrame: 1 } as const;

/** How long a new screencast may stay silent before a screenshot stands in as its first frame. */
const STAND_IN_AFTER_MS = 500;
/** At most this many stand-ins (every STAND_IN_AFTER_MS) while the screencast is not painting. */
const STAND_IN_TRIES = 20;

/** The shown page's viewport in CSS pixels (input positions are scaled to it). */
export interface Viewport {
  width: number;
  height: number;
}

/** Where a live view sends what it shows (a viewer's connection). */
export interface LiveViewer {
  /** A JPEG frame; `viewport` is the page's viewport it shows. */
  frame(jpeg: Buffer, viewport: Viewport): void;
  /** The session's browser closed: nothing more will come. */
  ended(): void;
}

interface Shown {
  page: Page;
  cdp: CDPSession;
}

export class LiveView {
  readonly #browser: LiveBrowser;
  readonly #onError: (err: unknown) => void;
  readonly #viewers = new Set<LiveViewer>();
  /** The page to show (the session's current page while someone watches). */
  #target: Page | undefined;
  /** The page whose screencast runs, and its CDP session. */
  #shown: Shown | undefined;
  /** Screencast changes, one at a time and in order. */
  #changes: Promise<void> = Promise.resolve();
  #last: { jpeg: Buffer; viewport: Viewport } | undefined;
  #ended = false;
  /** Pages whose close is listened to already. */
  readonly #followed = new WeakSet<Page>();
  /** Frames each screencast has sent: once it sends a second, it is painting and needs no stand-in. */
  readonly #screencastFrames = new WeakMap<CDPSession, number>();

  constructor(browser: LiveBrowser, { onError = () => {} }: { onError?: (err: unknown) => void } = {}) {
    this.#browser = browser;
    this.#onError = onError;
    browser.context.on('page', (page) => {
      if (this.#viewers.size === 0) return;
      this.#target = page;
      this.#reconcile();
    });
    browser.context.on('close', () => {
      this.#ended = true;
      for (const viewer of this.#viewers) viewer.ended();
      this.#viewers.clear();
    });
  }

  get viewers(): number {
    return this.#viewers.size;
  }

  /** The viewport of the last frame (undefined before the first). */
  get viewport(): Viewport | undefined {
    return this.#last?.viewport;
  }

  /**
   * Adds a viewer: it gets the last frame at once (a still page sends no new ones), then every
   * frame. Returns the function that removes it.
   */
  watch(viewer: LiveViewer): () => void {
    if (this.#ended) {
      viewer.ended();
      return () => {};
    }
    this.#viewers.add(viewer);
    if (this.#last) viewer.frame(this.#last.jpeg, this.#last.viewport);
    if (this.#viewers.size === 1) {
      this.#target = undefined; // chosen afresh: the session's current page
      this.#reconcile();
    }
    return () => {
      if (this.#viewers.delete(viewer) && this.#viewers.size === 0) this.#reconcile();
    };
  }

  /** Resolves when the screencast changes asked so far are done (it runs or stopped as the viewers want). */
  settled(): Promise<void> {
    return this.#changes;
  }

  /** Dispatches a viewer's input to the shown page; positions are fractions of the viewport. */
  async input(event: LiveInput): Promise<void> {
    const shown = this.#shown;
    const viewport = this.#last?.viewport;
    if (!shown || !viewport) return; // nothing shown yet: nothing to aim at
    const at = (e: { x: number; y: number }) => ({ x: e.x * viewport.width, y: e.y * viewport.height });
    switch (event.type) {
      case 'mouse': {
        const type = { down: 'mousePressed', up: 'mouseReleased', move: 'mouseMoved' } as const;
        await shown.cdp.send('Input.dispatchMouseEvent', {
          type: type[event.action],
          ...at(event),
          button: event.button,
          buttons: event.buttons,
          clickCount: event.clickCount,
          modifiers: event.modifiers,
        });
        return;
      }
      case 'wheel':
        await shown.cdp.send('Input.dispatchMouseEvent', {
          type: 'mouseWheel',
          ...at(event),
          deltaX: event.deltaX,
          deltaY: event.deltaY,
          modifiers: event.modifiers,
        });
        return;
      case 'key':
        // As Playwright presses keys: keyDown with the text it types, rawKeyDown for keys that type nothing.
        await shown.cdp.send('Input.dispatchKeyEvent', {
          type: event.action === 'up' ? 'keyUp' : event.text ? 'keyDown' : 'rawKeyDown',
          key: event.key,
          code: event.code,
          windowsVirtualKeyCode: event.keyCode,
          nativeVirtualKeyCode: event.keyCode,
          text: event.action === 'up' ? undefined : event.text,
          unmodifiedText: event.action === 'up' ? undefined : event.text,
          modifiers: event.modifiers,
        });
        return;
      case 'text':
        await shown.cdp.send('Input.insertText', { text: event.text });
        return;
    }
  }

  /** Brings the screencast in line with what is wanted: the target page's while anyone watches, none otherwise. */
  #reconcile(): void {
    this.#changes = this.#changes
      .then(async () => {
        if (this.#viewers.size > 0 && (!this.#target || this.#target.isClosed())) {
          this.#target = this.#browser.context.pages().at(-1) ?? (this.#shown ? undefined : await this.#browser.page());
        }
        const wanted = this.#viewers.size > 0 && !this.#ended ? this.#target : undefined;
        if (this.#shown?.page === wanted) return;
        const shown = this.#shown;
        this.#shown = undefined;
        this.#last = undefined; // another page's, or stale once nobody watches
        if (shown) await this.#stop(shown);
        if (wanted && !wanted.isClosed()) await this.#start(wanted);
      })
      .catch((err) => {
        // A page closing mid-change fails its CDP calls: its close event brings the next change.
        if (!this.#ended && !this.#target?.isClosed()) this.#onError(err);
      });
  }

  async #start(page: Page): Promise<void> {
    // A tab in the background paints nothing, so its screencast sends no frame: the page shown is
    // brought to the front (after a popup closed, the page beneath may still count as hidden).
    await page.bringToFront().catch(() => {});
    const cdp = await this.#browser.context.newCDPSession(page);
    // Shown before the screencast starts: its first frame may come before the call's answer.
    this.#shown = { page, cdp };
    cdp.on('Page.screencastFrame', ({ data, metadata, sessionId }) => {
      // Acked at once: Chromium sends the next frame only after the ack. A viewer that cannot
      // keep up skips frames (live-view-socket.ts) rather than slowing everyone's.
      cdp.send('Page.screencastFrameAck', { sessionId }).catch(() => {});
      if (this.#shown?.cdp !== cdp) return;
      this.#screencastFrames.set(cdp, (this.#screencastFrames.get(cdp) ?? 0) + 1);
      const frame = {
        jpeg: Buffer.from(data, 'base64'),
        viewport: { width: metadata.deviceWidth, height: metadata.deviceHeight },
      };
      this.#show(frame);
    });
    if (!this.#followed.has(page)) {
      this.#followed.add(page);
      page.once('close', () => {
        if (this.#target !== page) return;
        this.#target = undefined;
        this.#reconcile();
      });
    }
    await cdp.send('Page.startScreencast', SCREENCAST);
    this.#standInFrame(cdp);
  }

  #show(frame: { jpeg: Buffer; viewport: Viewport }): void {
    this.#last = frame;
    for (const viewer of this.#viewers) viewer.frame(frame.jpeg, frame.viewport);
  }

  /**
   * A still page may send no frame when its screencast (re)starts, and a new viewer would see nothing until
   * something moves; and a new page's screencast may send one blank frame before its content paints, then
   * nothing. Until the screencast has sent two frames, a screenshot of the viewport stands in every moment (for a
   * few seconds at most): the viewer sees the page as it is painted.
   */
  #standInFrame(cdp: CDPSession, tries = STAND_IN_TRIES): void {
    setTimeout(() => {
      if (this.#shown?.cdp !== cdp || this.#painting(cdp) || tries <= 0) return;
      Promise.all([
        cdp.send('Page.getLayoutMetrics'),
        cdp.send('Page.captureScreenshot', { format: 'jpeg', quality: SCREENCAST.quality, optimizeForSpeed: true }),
      ])
        .then(([metrics, shot]) => {
          if (this.#shown?.cdp !== cdp || this.#painting(cdp)) return;
          const { clientWidth: width, clientHeight: height } = metrics.cssLayoutViewport;
          this.#show({ jpeg: Buffer.from(shot.data, 'base64'), viewport: { width, height } });
          this.#standInFrame(cdp, tries - 1);
        })
        .catch(() => this.#standInFrame(cdp, tries - 1)); // a page gone or changed stops it at the next check
    }, STAND_IN_AFTER_MS).unref();
  }

  #painting(cdp: CDPSession): boolean {
    return (this.#screencastFrames.get(cdp) ?? 0) >= 2;
  }

  async #stop({ page, cdp }: Shown): Promise<void> {
    if (page.isClosed()) return; // its CDP session went with it
    await cdp.send('Page.stopScreencast').catch(() => {});
    await cdp.detach().catch(() => {});
  }
}
