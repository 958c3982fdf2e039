// A webhook receiver on loopback for the crawl and batch tests: records every delivery and lets a
// test wait for a condition on them (checked as each delivery arrives, never on a timer).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Waiters } from './waiters.ts';

export interface Delivery {
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: string;
  body: any;
  /** body.type, e.g. crawl.page */
  type: string;
  /** The X-Firecrawl-Signature header. */
  signature: string;
  at: number;
}

export interface WebhookReceiver {
  /** http://127.0.0.1:port */
  origin: string;
  /** `${origin}/hook` */
  url: string;
  received: Delivery[];
  /** Resolves once `cond` holds (it is checked now and after each delivery); fails after `timeoutMs`. */
  until(what: string, cond: () => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts a receiver answering each delivery with `status(delivery)` (200 by default). */
export async function startWebhookReceiver(status: (d: Delivery) => number = () => 200): Promise<WebhookReceiver> {
  const received: Delivery[] = [];
  const deliveries = new Waiters();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body = JSON.parse(raw);
      const d: Delivery = {
        path: req.url ?? '',
        headers: req.headers,
        raw,
        body,
        type: body.type,
        signature: String(req.headers['x-firecrawl-signature']),
        at: Date.now(),
      };
      received.push(d);
      const code = status(d);
      res.writeHead(code).end(code === 200 ? 'ok' : 'try later');
      deliveries.notify();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    url: `${origin}/hook`,
    received,
    until(what, cond, timeoutMs = 20_000) {
      const timedOut = () =>
        new assert.AssertionError({
          message: `timed out waiting for ${what}: ${JSON.stringify(received.map((r) => [r.path, r.type, r.body.id]))}`,
        });
      return deliveries.until(cond, timeoutMs, timedOut).then(() => undefined);
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
