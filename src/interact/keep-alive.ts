// Pings a caller's WebSocket while it is open: proxies in between cut connections that stay
// silent (a CDP client between commands, a live view of a still page), and a caller that vanished
// without closing (no pong to the previous ping) is cut here rather than held open.
import type { WebSocket } from 'ws';

export const PING_INTERVAL_MS = 30_000;

export function keepAlive(ws: WebSocket, intervalMs = PING_INTERVAL_MS): void {
  let answered = true;
  ws.on('pong', () => (answered = true));
  const timer = setInterval(() => {
    if (!answered) return ws.terminate();
    answered = false;
    ws.ping();
  }, intervalMs);
  timer.unref();
  ws.once('close', () => clearInterval(timer));
}
