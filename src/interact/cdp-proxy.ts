// The CDP proxy: a caller's WebSocket relayed, message by message, to the session's own DevTools
// endpoint (which listens on loopback only). The route authenticates the caller (the token in
// cdpUrl); this module only relays. Chromium's endpoint is reached without an Origin header
// (Chromium refuses WebSocket handshakes from origins it was not told to allow), so a browser-based
// client's Origin never reaches it: the token, not the origin, is the permission.
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';
import { keepAlive } from './keep-alive.ts';

/**
 * Largest message either way. CDP messages are large both ways: screenshots and response bodies
 * from Chromium, and from clients Playwright's injected script (hundreds of KiB, sent with
 * Runtime.evaluate). Playwright's own CDP transport allows 256 MiB.
 */
const MAX_PAYLOAD_BYTES = 256 * 1024 * 1024;
const UPSTREAM_OPEN_TIMEOUT_MS = 10_000;
// Backpressure: a side that is not reading (its socket buffer fills) stops us reading the other
// side once this much waits to be written; reading resumes when it is down to LOW again.
export const HIGH_WATER_BYTES = 8 * 1024 * 1024;
const LOW_WATER_BYTES = 1024 * 1024;
/** On shutdown: a client that does not answer the closing handshake within this time is cut. */
const CLOSE_GRACE_MS = 1_000;

/** Connects to Chromium's DevTools endpoint; rejects if it does not open in time. */
export function openUpstream(cdpEndpoint: string, timeoutMs = UPSTREAM_OPEN_TIMEOUT_MS): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    // No `origin` option: ws then sends no Origin header (see the top of this file).
    const upstream = new WebSocket(cdpEndpoint, {
      perMessageDeflate: false,
      maxPayload: MAX_PAYLOAD_BYTES,
      handshakeTimeout: timeoutMs,
    });
    upstream.once('open', () => {
      upstream.off('error', reject);
      resolve(upstream);
    });
    upstream.once('error', reject);
  });
}

/** Relays client connections to their sessions' upstreams; close() ends them all. */
export class CdpProxy {
  readonly #wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_PAYLOAD_BYTES });
  readonly #relays = new Set<{ client: WebSocket; upstream: WebSocket }>();

  /** Open relays (client connections). */
  get size(): number {
    return this.#relays.size;
  }

  /**
   * Completes the client's WebSocket handshake (an HTTP upgrade request whose socket the caller
   * has taken over) and relays it to `upstream`, already open. If the handshake fails (ws answers
   * the client 400 itself), the upstream is closed.
   */
  upgrade(request: IncomingMessage, socket: Duplex, head: Buffer, upstream: WebSocket): void {
    let upgraded = false;
    socket.once('close', () => {
      if (!upgraded) upstream.terminate();
    });
    upstream.once('close', () => {
      if (!upgraded) socket.destroy();
    });
    this.#wss.handleUpgrade(request, socket, head, (client) => {
      upgraded = true;
      keepAlive(client);
      const pair = { client, upstream };
      this.#relays.add(pair);
      relay(client, upstream).finally(() => this.#relays.delete(pair));
    });
  }

  /** Closes every client with 1001 (going away), its upstream following; cuts those slow to answer. */
  async close(): Promise<void> {
    const ends = [...this.#relays].map(
      ({ client }) =>
        new Promise<void>((resolve) => {
          if (client.readyState === WebSocket.CLOSED) return resolve();
          client.once('close', () => resolve());
          client.close(1001, 'server shutting down');
          setTimeout(() => client.terminate(), CLOSE_GRACE_MS).unref();
        }),
    );
    await Promise.all(ends);
    this.#wss.close();
  }
}

/**
 * Relays two open sockets to each other until both are closed: every message as it came (text or
 * binary), a close on one side closes the other with the same code and reason, an error on one
 * side (after which ws closes it) ends the other too.
 */
export function relay(a: WebSocket, b: WebSocket): Promise<void> {
  forward(a, b);
  forward(b, a);
  const closed = (ws: WebSocket) =>
    new Promise<void>((resolve) => {
      if (ws.readyState === WebSocket.CLOSED) resolve();
      else ws.once('close', () => resolve());
    });
  return Promise.all([closed(a), closed(b)]).then(() => undefined);
}

function forward(from: WebSocket, to: WebSocket): void {
  from.on('message', (data, isBinary) => {
    if (to.readyState !== WebSocket.OPEN) return;
    to.send(data as Buffer, { binary: isBinary }, () => {
      if (from.isPaused && to.bufferedAmount <= LOW_WATER_BYTES) from.resume();
    });
    if (to.bufferedAmount > HIGH_WATER_BYTES && !from.isPaused) from.pause();
  });
  from.on('close', (code, reason) => closeLike(to, code, reason));
  // ws closes a socket after its error (1006 when it could not close cleanly); the close does the rest.
  from.on('error', () => {});
}

/** Closes `ws` as its peer was closed: the same code when it may be sent, 1011 after an abnormal end. */
function closeLike(ws: WebSocket, code: number, reason: Buffer): void {
  if (ws.readyState === WebSocket.CLOSING || ws.readyState === WebSocket.CLOSED) return;
  if (ws.readyState === WebSocket.CONNECTING) return ws.terminate();
  if (code === 1005) return ws.close(); // the peer sent no code
  if (!sendableCloseCode(code)) return ws.close(1011, 'the other side of the CDP proxy closed abnormally');
  ws.close(code, reason);
}

// RFC 6455 7.4: 1004-1006 and 1015 are never sent in a close frame; ws refuses them.
function sendableCloseCode(code: number): boolean {
  return (code >= 1000 && code <= 1014 && ![1004, 1005, 1006].includes(code)) || (code >= 3000 && code <= 4999);
}
