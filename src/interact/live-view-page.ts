// The live view page: one static document for both views (the stream's hello says whether this
// one is interactive), so nothing of the request is ever written into it. It opens the stream at
// `<its own path>/stream` with its own query (the token), draws each JPEG frame into the <img>,
// and on an interactive view sends mouse and keyboard input as fractions of the image (live-input.ts).
import { createHash } from 'node:crypto';

const STYLE = `
html, body { margin: 0; height: 100%; background: #111; overflow: hidden; }
body { display: flex; align-items: center; justify-content: center; }
#screen { display: block; max-width: 100vw; max-height: 100vh; user-select: none; -webkit-user-drag: none; outline: none; }
body.interactive #screen { cursor: default; }
#status { position: fixed; left: 8px; bottom: 8px; font: 12px system-ui, sans-serif; color: #ddd;
  background: rgba(0, 0, 0, 0.6); padding: 2px 6px; border-radius: 3px; pointer-events: none; }
#status:empty { display: none; }
`;

const SCRIPT = `
(() => {
  'use strict';
  const img = document.getElementById('screen');
  const status = document.getElementById('status');
  const streamUrl = new URL(location.pathname.replace(/\\/+$/, '') + '/stream' + location.search, location.href);
  streamUrl.protocol = location.protocol === 'https:' ? 'wss:' : 'ws:';
  let ws;
  let interactive = false;
  let shownUrl;
  let attempts = 0;
  let frames = 0;

  function connect() {
    status.textContent = 'Connecting…';
    ws = new WebSocket(streamUrl);
    ws.binaryType = 'blob';
    ws.onmessage = (e) => {
      if (typeof e.data !== 'string') return show(e.data);
      const m = JSON.parse(e.data);
      if (m.type === 'hello') {
        attempts = 0;
        interactive = m.interactive === true;
        document.body.classList.toggle('interactive', interactive);
        status.textContent = frames ? '' : 'Waiting for the first frame…';
      } else if (m.type === 'ended') {
        status.textContent = 'The session has ended';
      }
    };
    ws.onclose = (e) => {
      if (e.code === 1000) return void (status.textContent = 'The session has ended');
      // The session may be gone (the upgrade is then refused): a few tries, further apart each time.
      if (++attempts > 5) return void (status.textContent = 'Disconnected');
      status.textContent = 'Reconnecting…';
      setTimeout(connect, 500 * 2 ** attempts);
    };
  }

  function show(blob) {
    const url = URL.createObjectURL(blob);
    img.onload = () => {
      if (shownUrl) URL.revokeObjectURL(shownUrl);
      shownUrl = url;
      frames++;
      img.dataset.frames = String(frames);
      if (frames === 1) status.textContent = '';
    };
    img.src = url;
  }

  function send(message) {
    if (interactive && ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
  }
  function modifiers(e) {
    return (e.altKey ? 1 : 0) | (e.ctrlKey ? 2 : 0) | (e.metaKey ? 4 : 0) | (e.shiftKey ? 8 : 0);
  }
  function at(e) {
    const r = img.getBoundingClientRect();
    const clamp = (v) => Math.min(1, Math.max(0, v));
    return { x: clamp((e.clientX - r.left) / r.width), y: clamp((e.clientY - r.top) / r.height) };
  }
  const BUTTONS = ['left', 'middle', 'right', 'back', 'forward'];
  function mouse(action, e) {
    send({ type: 'mouse', action, ...at(e), button: action === 'move' ? 'none' : BUTTONS[e.button] || 'none',
      buttons: e.buttons, clickCount: action === 'move' ? 0 : Math.min(3, Math.max(1, e.detail || 1)),
      modifiers: modifiers(e) });
  }

  img.addEventListener('mousedown', (e) => { e.preventDefault(); img.focus(); mouse('down', e); });
  img.addEventListener('mouseup', (e) => { e.preventDefault(); mouse('up', e); });
  // Moves are sent at most once an animation frame, the latest one.
  let move;
  img.addEventListener('mousemove', (e) => {
    if (!move) requestAnimationFrame(() => { mouse('move', move); move = undefined; });
    move = e;
  });
  img.addEventListener('contextmenu', (e) => e.preventDefault());
  img.addEventListener('wheel', (e) => {
    if (!interactive) return;
    e.preventDefault();
    const scale = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? 800 : 1;
    send({ type: 'wheel', ...at(e), deltaX: e.deltaX * scale, deltaY: e.deltaY * scale, modifiers: modifiers(e) });
  }, { passive: false });

  function key(action, e) {
    if (!interactive || e.isComposing) return;
    e.preventDefault();
    const typing = !e.ctrlKey && !e.metaKey && action === 'down';
    const text = typing ? (e.key.length === 1 ? e.key : e.key === 'Enter' ? '\\r' : undefined) : undefined;
    send({ type: 'key', action, key: e.key, code: e.code, keyCode: e.keyCode, text, modifiers: modifiers(e) });
  }
  window.addEventListener('keydown', (e) => key('down', e));
  window.addEventListener('keyup', (e) => key('up', e));
  window.addEventListener('paste', (e) => {
    const text = e.clipboardData && e.clipboardData.getData('text/plain');
    if (text) { e.preventDefault(); send({ type: 'text', text }); }
  });

  connect();
})();
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

export const LIVE_VIEW_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Live view</title>
<style>${STYLE}</style>
</head>
<body>
<img id="screen" alt="" tabindex="0" draggable="false">
<div id="status"></div>
<script>${SCRIPT}</script>
</body>
</html>
`;

/**
 * The page's Content-Security-Policy: its own inline style and script only (by hash), frames as
 * blob: images, the stream on its own origin. Framing is allowed: a live view is meant to be
 * embedded in the caller's own page.
 */
export const LIVE_VIEW_CSP = [
  "default-src 'none'",
  `script-src ${sha256(SCRIPT)}`,
  `style-src ${sha256(STYLE)}`,
  'img-src blob:',
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');
