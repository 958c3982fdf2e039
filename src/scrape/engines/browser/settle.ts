// The smart wait: after the document is parsed (and after each action that may change the page),
// wait until the page has settled: no request of the page in flight and none started for
// `quietMs`, and no node added, removed or text changed in the DOM for `quietMs` (attribute
// changes, e.g. animations, do not count). Quiet is not enough when a script renders the content
// late, so once quiet the page is also looked at (SHELL), and the wait goes on while:
//   - it is still an app shell, an empty mount point (#root, #app, #__next...) or a visible
//     loading indicator ("Loading...", aria-busy, role=progressbar, a spinner or skeleton class)
//     on a page with little text, or under 200 characters of visible text beside scripts, and it
//     has work pending: a fetch or XMLHttpRequest in flight, or a short timer (setTimeout up to
//     5 s; not setInterval) or animation frame it scheduled during load (counted in the page by
//     an init script, SETTLE_PROBE); an empty mount or a loading indicator is also waited for
//     `shellGraceMs` with nothing pending;
//   - or, on any page, a timer or frame callback of the page already added text and more work of
//     that kind is pending (timers due within SOON_MS): content built in steps.
// A page that is neither (static pages) stops at the first quiet, as before. Pages that never
// settle (polling, streams, tickers, shells that never fill) stop waiting at `maxMs`; the whole
// wait is always capped by the fetch's deadline. Without the init script (a page it was not
// installed in) the shell test and the grace still apply.
import type { Page, Request } from 'playwright-core';

export interface SettleOptions {
  /** Quiet period for both network and DOM (ms). */
  quietMs: number;
  /** Longest settle wait (ms), deadline permitting. */
  maxMs: number;
  /**
   * How long a page showing an empty mount point or a loading indicator is waited for even with
   * no timer, frame or request pending (ms from the start of the wait). Default 1000; 0: none.
   */
  shellGraceMs?: number;
}

const DEFAULT_SHELL_GRACE_MS = 1000;
// On a page that is no longer a shell, only timers due within this are waited for, and only once
// a timer or frame callback added text (a page built in steps).
const SOON_MS = 1500;

/** Counts the page's requests in flight and remembers when the network last changed. */
export class NetworkTracker {
  readonly #inFlight = new Set<Request>();
  #lastActivity = Date.now();
  readonly #page: Page;
  readonly #onRequest = (r: Request) => {
    this.#inFlight.add(r);
    this.#lastActivity = Date.now();
  };
  readonly #onDone = (r: Request) => {
    this.#inFlight.delete(r);
    this.#lastActivity = Date.now();
  };

  constructor(page: Page) {
    this.#page = page;
    page.on('request', this.#onRequest);
    page.on('requestfinished', this.#onDone);
    page.on('requestfailed', this.#onDone);
  }

  get inFlight(): number {
    return this.#inFlight.size;
  }

  get lastActivity(): number {
    return this.#lastActivity;
  }

  /** Resolves true once nothing has been in flight for quietMs, false at `until` (epoch ms). */
  async waitQuiet(quietMs: number, until: number): Promise<boolean> {
    for (;;) {
      const now = Date.now();
      if (this.#inFlight.size === 0 && now - this.#lastActivity >= quietMs) return true;
      if (now >= until || this.#page.isClosed()) return false;
      const due = this.#inFlight.size === 0 ? this.#lastActivity + quietMs - now : 25;
      await sleep(Math.max(5, Math.min(due, until - now, 50)));
    }
  }

  dispose(): void {
    this.#page.off('request', this.#onRequest);
    this.#page.off('requestfinished', this.#onDone);
    this.#page.off('requestfailed', this.#onDone);
  }
}

// An init script (every document of a fetch's page, before the page's own scripts; main frame
// only) that counts, in the page, what may still render content: setTimeout callbacks with a delay
// up to 5 s and requestAnimationFrame callbacks (two frames deep: an animation loop is not waited
// for) scheduled before the load event or within 2 s of it, and fetch / XMLHttpRequest calls in
// flight (with a fetched body still being read). It also notes whether such a timer or frame
// callback added text to the DOM. The wait reads it through window[Symbol.for('gleaner.settle')],
// which also holds the original timer functions (the wait's own timers must not count). The
// wrappers are Proxies of the originals: same name and length, native-looking source.
export const SETTLE_PROBE = `(() => {
  const KEY = Symbol.for('gleaner.settle');
  if (window !== window.top || window[KEY]) return;
  const MAX_DELAY = 5000, AFTER_LOAD = 2000, MAX_FRAME_DEPTH = 2;
  const now = () => performance.now();
  const setT = window.setTimeout, clearT = window.clearTimeout, raf = window.requestAnimationFrame;
  const timers = new Map(), frames = new Map();
  let loadAt = -1, rendered = false, frameDepth = 0;
  window.addEventListener('load', () => { loadAt = now(); }, { once: true, capture: true });
  const tracking = () => loadAt < 0 || now() < loadAt + AFTER_LOAD;
  const mo = new MutationObserver(() => {});
  const showsText = (records) => records.some((r) =>
    r.type === 'characterData' ? /\\S/.test(r.target.data || '') : Array.from(r.addedNodes).some((n) => /\\S/.test(n.textContent || '')));
  function run(fn, self, args) {
    let watching = false;
    try { mo.observe(document, { subtree: true, childList: true, characterData: true }); watching = true; } catch {}
    try {
      return fn.apply(self, args);
    } finally {
      if (watching) { if (showsText(mo.takeRecords())) rendered = true; mo.disconnect(); }
    }
  }
  window.setTimeout = new Proxy(setT, {
    apply(target, self, args) {
      const fn = args[0], delay = Math.max(0, Number(args[1]) || 0);
      if (typeof fn !== 'function' || delay > MAX_DELAY || !tracking()) return Reflect.apply(target, self, args);
      const a = Array.from(args);
      let id;
      a[0] = function () { timers.delete(id); return run(fn, this, arguments); };
      id = Reflect.apply(target, self, a);
      timers.set(id, now() + delay);
      return id;
    },
  });
  window.clearTimeout = new Proxy(clearT, {
    apply(target, self, args) { timers.delete(args[0]); return Reflect.apply(target, self, args); },
  });
  window.requestAnimationFrame = new Proxy(raf, {
    apply(target, self, args) {
      const fn = args[0];
      if (typeof fn !== 'function' || !tracking()) return Reflect.apply(target, self, args);
      const depth = frameDepth + 1;
      let id;
      id = Reflect.apply(target, self, [function () {
        frames.delete(id);
        const outer = frameDepth;
        frameDepth = depth;
        try { return depth <= MAX_FRAME_DEPTH ? run(fn, this, arguments) : fn.apply(this, arguments); } finally { frameDepth = outer; }
      }]);
      if (depth <= MAX_FRAME_DEPTH) frames.set(id, now());
      return id;
    },
  });
  window.cancelAnimationFrame = new Proxy(window.cancelAnimationFrame, {
    apply(target, self, args) { frames.delete(args[0]); return Reflect.apply(target, self, args); },
  });
  // fetch and XMLHttpRequest in flight, seen at once (the engine's request events can come later).
  let requests = 0;
  const counted = () => {
    requests++;
    let done = false;
    return () => { if (!done) { done = true; requests--; } };
  };
  if (typeof window.fetch === 'function') {
    window.fetch = new Proxy(window.fetch, {
      apply(target, self, args) {
        const p = Reflect.apply(target, self, args);
        const end = counted();
        p.then(end, end);
        return p;
      },
    });
  }
  // A response's body is read after fetch resolves (json(), text()...): in flight until it is read.
  const RP = window.Response && window.Response.prototype;
  if (RP) {
    for (const name of ['json', 'text', 'arrayBuffer', 'blob', 'formData', 'bytes']) {
      if (typeof RP[name] !== 'function') continue;
      RP[name] = new Proxy(RP[name], {
        apply(target, self, args) {
          const p = Reflect.apply(target, self, args);
          const end = counted();
          p.then(end, end);
          return p;
        },
      });
    }
  }
  if (window.XMLHttpRequest) {
    const proto = window.XMLHttpRequest.prototype;
    proto.send = new Proxy(proto.send, {
      apply(target, self, args) {
        const end = counted();
        try {
          self.addEventListener('loadend', end, { once: true });
          return Reflect.apply(target, self, args);
        } catch (err) { end(); throw err; }
      },
    });
  }
  Object.defineProperty(window, KEY, {
    value: Object.freeze({
      setTimeout: setT.bind(window),
      clearTimeout: clearT.bind(window),
      // ms until each pending timer is due (overdue by over 1 s: ignored), frames pending (under 1 s
      // old), requests in flight, whether a timer or frame callback added text.
      pending() {
        const t = now(), dues = [];
        for (const due of timers.values()) if (t <= due + 1000) dues.push(Math.max(0, Math.round(due - t)));
        let f = 0;
        for (const at of frames.values()) if (t - at < 1000) f++;
        return { dues: dues.sort((x, y) => x - y).slice(0, 20), frames: f, requests, rendered };
      },
    }),
  });
})();`;

/** Installs SETTLE_PROBE in the page's future documents (call before navigating). */
export async function installSettleProbe(page: Page): Promise<void> {
  await page.addInitScript({ content: SETTLE_PROBE });
}

/** What the page looks like once quiet. */
interface PageState {
  /** 0: content; 1: little text beside scripts; 2: an empty mount point or a loading indicator. */
  shell: 0 | 1 | 2;
  /** ms until each pending timer of the probe is due (none without the probe). */
  dues: number[];
  /** Animation frames pending. */
  frames: number;
  /** fetch and XMLHttpRequest calls in flight. */
  requests: number;
  /** A timer or frame callback of the page added text. */
  rendered: boolean;
}

// Runs in the page: how much the page still looks like an app shell (PageState.shell). Text is
// counted (visible text nodes, scripts and styles aside) only up to MANY characters.
const SHELL = `() => {
  const body = document.body;
  if (!body) return 0;
  const MANY = 2000, FEW = 200, MAX_NODES = 5000;
  const SKIP = /^(SCRIPT|STYLE|NOSCRIPT|TEMPLATE)$/;
  const LOADING = /^(loading|please wait|one moment|fetching|chargement|cargando|caricamento|carregando|wird geladen|lädt|загрузка|読み込み中|加载中|載入中)(?![a-z])/i;
  const LOADING_ONLY = /^\\S+( \\S+)?[\\s.!…]*$/;
  const SPINNER = /^(.*[-_])?(spinner|spin|loader|loading|skeleton|shimmer)([-_].*)?$/i;
  const seen = new Map();
  const visible = (el) => {
    let v = seen.get(el);
    if (v === undefined) {
      v = el.checkVisibility ? el.checkVisibility({ opacityProperty: true, visibilityProperty: true, checkOpacity: true, checkVisibilityCSS: true }) : el.getClientRects().length > 0;
      seen.set(el, v);
    }
    return v;
  };
  let text = 0, loading = false, nodes = 0;
  const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n && text < MANY; n = walker.nextNode()) {
    if (++nodes > MAX_NODES) return 0;
    const el = n.parentElement;
    if (!el || SKIP.test(el.tagName)) continue;
    const t = n.data.trim();
    if (!t || !visible(el)) continue;
    text += t.length;
    if (!loading && t.length <= 40 && LOADING.test(t) && (/(\\.\\.\\.|…)$/.test(t) || LOADING_ONLY.test(t))) loading = true;
  }
  if (text >= MANY) return 0;
  if (!loading) {
    const marked = document.querySelectorAll('[aria-busy="true"],[role="progressbar"],[class*="spin" i],[class*="load" i],[class*="skeleton" i],[class*="shimmer" i]');
    for (let i = 0; i < marked.length && i < 50 && !loading; i++) {
      const el = marked[i];
      const busy = el.getAttribute('aria-busy') === 'true' || el.getAttribute('role') === 'progressbar' || Array.from(el.classList).some((c) => SPINNER.test(c));
      if (busy && visible(el)) loading = true;
    }
  }
  if (loading) return 2;
  const mounts = document.querySelectorAll('#root,#app,#__next,#__nuxt,#___gatsby,#svelte,#app-root,#main-app,[data-reactroot],[data-v-app],[ng-version],app-root');
  for (const el of mounts) {
    if (!(el.innerText || '').trim() && !el.querySelector('img,svg,video,canvas,iframe,picture,object,embed,input,button,select,textarea')) return 2;
  }
  return text < FEW && document.querySelector('script') ? 1 : 0;
}`;

// Runs in the page: resolves after \`quiet\` ms without a content mutation, or at \`max\`: whether it
// was quiet, and then the page's state (PageState). Its own timers are the page's originals.
const DOM_QUIET = `([quiet, max]) => new Promise((resolve) => {
  const probe = window[Symbol.for('gleaner.settle')];
  const st = probe ? probe.setTimeout : setTimeout, ct = probe ? probe.clearTimeout : clearTimeout;
  let timer;
  const obs = new MutationObserver(() => { ct(timer); timer = st(() => end(true), quiet); });
  const cap = st(() => end(false), max);
  function end(v) {
    obs.disconnect(); ct(timer); ct(cap);
    if (!v) return resolve({ quiet: false });
    let state;
    try {
      const p = probe ? probe.pending() : { dues: [], frames: 0, requests: 0, rendered: false };
      state = { shell: (${SHELL})(), dues: p.dues, frames: p.frames, requests: p.requests, rendered: p.rendered };
    } catch {}
    resolve({ quiet: true, state });
  }
  obs.observe(document, { subtree: true, childList: true, characterData: true });
  timer = st(() => end(true), quiet);
})`;

async function domQuiet(page: Page, quietMs: number, maxMs: number): Promise<{ quiet: boolean; state?: PageState }> {
  if (maxMs <= 0) return { quiet: false };
  try {
    return (await page.evaluate(`(${DOM_QUIET})(${JSON.stringify([quietMs, Math.ceil(maxMs)])})`)) as {
      quiet: boolean;
      state?: PageState;
    };
  } catch (err) {
    if (page.isClosed()) throw err;
    // The document was replaced (navigation) while waiting: not settled yet.
    await sleep(25);
    return { quiet: false };
  }
}

/** Whether a quiet page is still to be waited for (see the file comment). */
function stillRendering(s: PageState, elapsedMs: number, leftMs: number, graceMs: number): boolean {
  const dues = s.shell ? s.dues : s.rendered ? s.dues.filter((d) => d <= SOON_MS) : [];
  // A timer due after the cap cannot help.
  if (dues.some((d) => d < leftMs)) return true;
  if ((s.shell || s.rendered) && (s.frames > 0 || s.requests > 0)) return true;
  return s.shell === 2 && elapsedMs < graceMs;
}

/** Waits for the page to settle (see the file comment); returns the time spent (ms). */
export async function settle(
  page: Page,
  tracker: NetworkTracker,
  opts: SettleOptions,
  deadline: number,
): Promise<number> {
  const started = Date.now();
  const until = Math.min(deadline, started + opts.maxMs);
  const graceMs = opts.shellGraceMs ?? DEFAULT_SHELL_GRACE_MS;
  while (Date.now() < until) {
    const [netQuiet, dom] = await Promise.all([
      tracker.waitQuiet(opts.quietMs, until),
      domQuiet(page, opts.quietMs, until - Date.now()),
    ]);
    if (page.isClosed()) break;
    if (!netQuiet || !dom.quiet || tracker.inFlight > 0 || Date.now() - tracker.lastActivity < opts.quietMs) continue;
    // Quiet: done, unless the page still looks like it is rendering its content.
    const now = Date.now();
    if (!dom.state || !stillRendering(dom.state, now - started, until - now, graceMs)) break;
  }
  return Date.now() - started;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
