// One viewer's WebSocket on a live view. Server to viewer: `{"type":"hello","interactive":bool}`
// first, `{"type":"viewport","width","height"}` when the page's viewport changes, every frame as a
// binary message (the JPEG's bytes), `{"type":"refused"}` / `{"type":"invalid"}` answering input
// that is not dispatched, `{"type":"ended"}` before closing when the session's browser closes.
// Viewer to server: input messages (live-input.ts), dispatched only on an interactive view: the
// read-only view's permission is enforced here, whatever its page does.
import { WebSocket } from 'ws';
import { keepAlive } from './keep-alive.ts';
import { liveInput } from './live-input.ts';
import type { LiveView, Viewport } from './live-view.ts';
import type { LiveAccess } from './session-tokens.ts';

/** A viewer with this much unsent skips frames (it gets the latest one once it has caught up). */
const VIEWER_BUFFER_BYTES = 512 * 1024;
/** Input waiting for dispatch beyond which mouse moves are dropped (clicks and keys never are). */
const MAX_QUEUED_INPUT = 32;

export function attachViewerSocket(
  view: LiveView,
  ws: WebSocket,
  access: LiveAccess,
  onError: (err: unknown) => void = () => {},
): void {
  const json = (message: object) => {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
  };
  keepAlive(ws);
  json({ type: 'hello', interactive: access === 'interactive' });

  let viewport: Viewport | undefined;
  let skipped: { jpeg: Buffer; viewport: Viewport } | undefined;
  const send = (jpeg: Buffer, frameViewport: Viewport) => {
    if (ws.readyState !== WebSocket.OPEN) return;
    if (ws.bufferedAmount > VIEWER_BUFFER_BYTES) {
      skipped = { jpeg, viewport: frameViewport };
      return;
    }
    skipped = undefined;
    if (viewport?.width !== frameViewport.width || viewport?.height !== frameViewport.height) {
      viewport = frameViewport;
      json({ type: 'viewport', ...viewport });
    }
    ws.send(jpeg, { binary: true }, () => {
      if (skipped && ws.bufferedAmount <= VIEWER_BUFFER_BYTES) send(skipped.jpeg, skipped.viewport);
    });
  };
  const unwatch = view.watch({
    frame: send,
    ended: () => {
      json({ type: 'ended' });
      ws.close(1000, 'session ended');
    },
  });
  ws.on('close', unwatch);

  let queued = 0;
  let dispatches = Promise.resolve();
  ws.on('message', (data, isBinary) => {
    if (access !== 'interactive') return json({ type: 'refused', reason: 'this live view is read-only' });
    let parsed;
    try {
      parsed = isBinary ? undefined : liveInput.safeParse(JSON.parse(data.toString()));
    } catch {
      parsed = undefined;
    }
    if (!parsed?.success) return json({ type: 'invalid', error: parsed?.error.issues[0]?.message ?? 'not JSON' });
    const input = parsed.data;
    if (queued >= MAX_QUEUED_INPUT && input.type === 'mouse' && input.action === 'move') return;
    queued++;
    // One at a time, in order: a click's down must reach the page before its up.
    dispatches = dispatches
      .then(() => view.input(input))
      .catch(onError)
      .finally(() => queued--);
  });
}
