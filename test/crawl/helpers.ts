// Shared by the crawl tests: an HttpEngine that reaches the fixture site on loopback, including
// its *.localhost host names (which the system resolver here does not know), and refuses to
// resolve any other name, so no test can send traffic off this machine; plus a tiny scripted
// HTTP server for answers the fixture site does not give.
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpEngine, type HttpEngineOptions } from '../../src/scrape/engines/http.ts';

export async function loopbackResolver(hostname: string): Promise<{ address: string; family: number }[]> {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  if (name === 'localhost' || name.endsWith('.localhost')) return [{ address: '127.0.0.1', family: 4 }];
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (tests resolve loopback names only)`), {
    code: 'ENOTFOUND',
  });
}

export function loopbackEngine(opts: Partial<HttpEngineOptions> = {}): HttpEngine {
  return new HttpEngine({
    allowPrivateNetwork: true,
    maxBytes: 10 * 1024 * 1024,
    ssrf: { resolver: loopbackResolver },
    ...opts,
  });
}

export interface Scripted {
  origin: string;
  hits: { path: string; at: number }[];
  close(): Promise<void>;
}

/** A loopback server answering with `handler`; every request is recorded. */
export async function scriptedServer(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Scripted> {
  const hits: { path: string; at: number }[] = [];
  const server: Server = createServer((req, res) => {
    hits.push({ path: req.url ?? '/', at: Date.now() });
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    hits,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
