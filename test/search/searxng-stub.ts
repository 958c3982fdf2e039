// A scripted stand-in for SearXNG's JSON API (GET /search?q&format=json&categories&pageno…) on a
// loopback port: the public internet does not exist here. Answers per category in SearXNG's
// result format, records every request, and misbehaves on demand (status, delay, not JSON).
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StubResult {
  url: string;
  title: string;
  content: string;
  publishedDate?: string | null;
  img_src?: string;
  thumbnail?: string;
  resolution?: string;
}

export interface SearxngStub {
  url: string;
  /** The query string of every request, in order. */
  requests: URLSearchParams[];
  /** Results of a category's page (1-based); default: none. */
  results: (category: string, pageno: number, q: string) => StubResult[];
  /** The next answers' status (200) and delay (ms), and whether the body is broken. */
  status: number;
  delayMs: number;
  broken: boolean;
  close(): Promise<void>;
}

export async function startSearxngStub(): Promise<SearxngStub> {
  const stub: Omit<SearxngStub, 'url' | 'close'> = {
    requests: [],
    results: () => [],
    status: 200,
    delayMs: 0,
    broken: false,
  };
  const server: Server = createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://stub');
    if (u.pathname !== '/search') {
      res.writeHead(404).end();
      return;
    }
    stub.requests.push(u.searchParams);
    const send = () => {
      if (stub.status !== 200) {
        res.writeHead(stub.status, { 'content-type': 'text/html' }).end('<h1>Forbidden</h1>');
        return;
      }
      if (stub.broken) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"results": [');
        return;
      }
      const q = u.searchParams.get('q') ?? '';
      const results = stub.results(
        u.searchParams.get('categories') ?? 'general',
        Number(u.searchParams.get('pageno') ?? 1),
        q,
      );
      // The shape SearXNG answers (searx/webapp.py): query, results, answers, suggestions…
      const body = {
        query: q,
        number_of_results: results.length,
        results: results.map((r) => ({ engine: 'stub', engines: ['stub'], score: 1, category: 'general', ...r })),
        answers: [],
        corrections: [],
        infoboxes: [],
        suggestions: [],
        unresponsive_engines: [],
      };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (stub.delayMs) setTimeout(send, stub.delayMs);
    else send();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(stub, {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
}
