// A typed client of the v2 API for tests (the idea of Firecrawl's __tests__/snips/v2/lib.ts): one
// function per call, request bodies typed by the contract (src/contract/); the *Raw forms take any
// body, for validation and error cases. Answers come back whole (status, json, text) to assert on;
// reads of what a scrape stores after its answer first wait for that storage (Service.settled).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import type { batchScrapeRequest } from '../../src/contract/batch.ts';
import type { crawlRequest } from '../../src/contract/crawl.ts';
import type { extractRequest } from '../../src/contract/extract.ts';
import type { mapRequest } from '../../src/contract/map.ts';
import type { monitorCreateRequest, monitorUpdateRequest } from '../../src/contract/monitor.ts';
import type { parseOptions } from '../../src/contract/parse.ts';
import type { scrapeRequest } from '../../src/contract/scrape.ts';
import type { searchRequest } from '../../src/contract/search.ts';

export type ScrapeBody = z.input<typeof scrapeRequest>;
export type ScrapeFormatBody = NonNullable<ScrapeBody['formats']>[number];
export type CrawlBody = z.input<typeof crawlRequest>;
export type BatchScrapeBody = z.input<typeof batchScrapeRequest>;
export type MapBody = z.input<typeof mapRequest>;
export type SearchBody = z.input<typeof searchRequest>;
export type ExtractBody = z.input<typeof extractRequest>;
export type ParseOptionsBody = z.input<typeof parseOptions>;
export type MonitorBody = z.input<typeof monitorCreateRequest>;
export type MonitorUpdateBody = z.input<typeof monitorUpdateRequest>;

export interface ParseUploadOptions {
  /** The file part's content type (default application/octet-stream). */
  type?: string;
  optionsAs?: 'field' | 'json-blob' | 'raw';
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** The parsed body; undefined when it is not JSON. */
  json: any;
  text: string;
}

/** A bare request: method, path, JSON body (a string is sent as is), extra headers. */
export type Call = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<ApiResponse>;

/** What a client talks to: a started service (its storage after an answer is waited for before reads), or any URL. */
export interface ApiTarget {
  url: string;
  key?: string;
  settled?: () => Promise<void>;
}

/** A document of a crawl or batch status page (the fields tests look at). */
export interface JobDoc {
  markdown?: string;
  html?: string;
  links?: string[];
  rawHtml?: string;
  metadata: { sourceURL: string; url: string; statusCode: number; scrapeId: string; title?: string };
}

/** A fetch Response as tests read it. */
async function answer(res: Response): Promise<ApiResponse> {
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, json, text };
}

/** The client of `target` calling with `key` (the target's own by default; none: unauthenticated). */
export function apiClient(target: ApiTarget, key: string | undefined = target.key) {
  const call: Call = async (method, path, body, headers = {}) => {
    const res = await fetch(target.url + path, {
      method,
      headers: {
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return answer(res);
  };
  /** Reads of what a scrape stores after its answer wait for that storage first (in this process). */
  const settled = async () => target.settled?.();

  /** Polls a crawl or batch status until it is no longer scraping. */
  async function waitForJob(kind: 'crawl' | 'batch', id: string, timeoutMs: number): Promise<any> {
    const path = kind === 'crawl' ? `/v2/crawl/${id}` : `/v2/batch/scrape/${id}`;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const res = await call('GET', path);
      assert.equal(res.status, 200, res.text);
      if (res.json.status !== 'scraping') return res.json;
      if (Date.now() > deadline)
        assert.fail(`${kind} ${id} still running: ${JSON.stringify({ ...res.json, data: res.json.data.length })}`);
      await sleep(100);
    }
  }

  /** Every document of a crawl or batch, following `next` (with an optional page size). */
  async function docsOf(kind: 'crawl' | 'batch', id: string, limit?: number): Promise<JobDoc[]> {
    const base = kind === 'crawl' ? `/v2/crawl/${id}` : `/v2/batch/scrape/${id}`;
    const out: JobDoc[] = [];
    let path: string | null = `${base}${limit ? `?limit=${limit}` : ''}`;
    for (let i = 0; path && i < 1000; i++) {
      const res = await call('GET', path);
      assert.equal(res.status, 200, res.text);
      if (limit) assert.ok(res.json.data.length <= limit);
      out.push(...res.json.data);
      if (!res.json.next) break;
      assert.ok(res.json.next.startsWith(`${target.url}${base}?skip=`), res.json.next);
      if (res.json.data.length === 0) break;
      path = res.json.next.slice(target.url.length);
    }
    return out;
  }

  /** A started job's answer: 200, success, the status URL; its json ({id, url, invalidURLs?}). */
  function started(res: ApiResponse, statusPath: string): any {
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.success, true);
    assert.equal(res.json.url, `${target.url}${statusPath}/${res.json.id}`);
    return res.json;
  }

  /**
   * POST /v2/parse of `file` (none: no file part) named `fileName`; `options` (any value) as the
   * options field, as a JSON file part, or sent raw (not JSON-encoded).
   */
  async function parseRaw(
    file: Uint8Array | undefined,
    fileName: string,
    options?: unknown,
    opts: ParseUploadOptions = {},
  ): Promise<ApiResponse> {
    const form = new FormData();
    if (file) form.append('file', new Blob([file], { type: opts.type ?? 'application/octet-stream' }), fileName);
    if (options !== undefined) {
      const text = opts.optionsAs === 'raw' ? String(options) : JSON.stringify(options);
      if (opts.optionsAs === 'json-blob')
        form.append('options', new Blob([text], { type: 'application/json' }), 'options.json');
      else form.append('options', text);
    }
    const res = await fetch(`${target.url}/v2/parse`, {
      method: 'POST',
      headers: key ? { authorization: `Bearer ${key}` } : {},
      body: form,
    });
    return answer(res);
  }

  return Object.assign(call, {
    scrape: (body: ScrapeBody) => call('POST', '/v2/scrape', body),
    scrapeRaw: (body: unknown) => call('POST', '/v2/scrape', body),
    async getScrape(id: string) {
      await settled();
      return call('GET', `/v2/scrape/${id}`);
    },

    crawl: (body: CrawlBody) => call('POST', '/v2/crawl', body),
    crawlRaw: (body: unknown) => call('POST', '/v2/crawl', body),
    /** Starts a crawl (asserting the answer); its id. */
    async startCrawl(body: CrawlBody): Promise<string> {
      return started(await call('POST', '/v2/crawl', body), '/v2/crawl').id as string;
    },
    crawlStatus: (id: string, query = '') => call('GET', `/v2/crawl/${id}${query}`),
    waitForCrawl: (id: string, timeoutMs = 30_000) => waitForJob('crawl', id, timeoutMs),
    crawlDocs: (id: string, limit?: number) => docsOf('crawl', id, limit),
    crawlErrors: (id: string) => call('GET', `/v2/crawl/${id}/errors`),
    cancelCrawl: (id: string) => call('DELETE', `/v2/crawl/${id}`),

    batchScrape: (body: BatchScrapeBody, headers?: Record<string, string>) =>
      call('POST', '/v2/batch/scrape', body, headers),
    batchScrapeRaw: (body: unknown, headers?: Record<string, string>) =>
      call('POST', '/v2/batch/scrape', body, headers),
    /** Starts a batch scrape (asserting the answer); {id, invalidURLs}. */
    async startBatch(
      body: BatchScrapeBody,
      headers?: Record<string, string>,
    ): Promise<{ id: string; invalidURLs?: string[] }> {
      return started(await call('POST', '/v2/batch/scrape', body, headers), '/v2/batch/scrape');
    },
    batchStatus: (id: string, query = '') => call('GET', `/v2/batch/scrape/${id}${query}`),
    waitForBatch: (id: string, timeoutMs = 30_000) => waitForJob('batch', id, timeoutMs),
    batchDocs: (id: string, limit?: number) => docsOf('batch', id, limit),
    batchErrors: (id: string) => call('GET', `/v2/batch/scrape/${id}/errors`),
    cancelBatch: (id: string) => call('DELETE', `/v2/batch/scrape/${id}`),

    map: (body: MapBody) => call('POST', '/v2/map', body),
    mapRaw: (body: unknown) => call('POST', '/v2/map', body),

    /** POST /v2/search, after the storage (and index entries) of scrapes answered so far. */
    async search(body: SearchBody) {
      await settled();
      return call('POST', '/v2/search', body);
    },
    searchRaw: (body: unknown) => call('POST', '/v2/search', body),

    extract: (body: ExtractBody) => call('POST', '/v2/extract', body),
    extractRaw: (body: unknown) => call('POST', '/v2/extract', body),
    /** Starts an extract (asserting 200 and success); {id, invalidURLs}. */
    async startExtract(body: ExtractBody): Promise<{ id: string; invalidURLs?: string[] }> {
      const res = await call('POST', '/v2/extract', body);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.success, true);
      return res.json;
    },
    /** Polls an extract until it is no longer processing: its last status and every status seen on the way. */
    async waitForExtract(id: string, timeoutMs = 60_000): Promise<{ final: any; seen: string[] }> {
      const deadline = Date.now() + timeoutMs;
      const seen: string[] = [];
      for (;;) {
        const res = await call('GET', `/v2/extract/${id}`);
        assert.equal(res.status, 200, res.text);
        if (seen.at(-1) !== res.json.status) seen.push(res.json.status);
        if (res.json.status !== 'processing') return { final: res.json, seen };
        if (Date.now() > deadline) assert.fail(`extract ${id} still processing`);
        await sleep(50);
      }
    },

    createMonitor: (body: MonitorBody) => call('POST', '/v2/monitor', body),
    createMonitorRaw: (body: unknown) => call('POST', '/v2/monitor', body),
    /** Creates a monitor (asserting 200 and success); the monitor. */
    async startMonitor(body: MonitorBody): Promise<any> {
      const res = await call('POST', '/v2/monitor', body);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.success, true);
      return res.json.data;
    },
    listMonitors: (query = '') => call('GET', `/v2/monitor${query}`),
    getMonitor: (id: string) => call('GET', `/v2/monitor/${id}`),
    updateMonitor: (id: string, body: MonitorUpdateBody) => call('PATCH', `/v2/monitor/${id}`, body),
    updateMonitorRaw: (id: string, body: unknown) => call('PATCH', `/v2/monitor/${id}`, body),
    deleteMonitor: (id: string) => call('DELETE', `/v2/monitor/${id}`),
    runMonitor: (id: string) => call('POST', `/v2/monitor/${id}/run`, {}),
    monitorChecks: (id: string, query = '') => call('GET', `/v2/monitor/${id}/checks${query}`),
    monitorCheck: (id: string, checkId: string, query = '') =>
      call('GET', `/v2/monitor/${id}/checks/${checkId}${query}`),
    /** Polls a check until it is no longer queued or running; the check with its first page of pages. */
    async waitForCheck(id: string, checkId: string, timeoutMs = 30_000): Promise<any> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const res = await call('GET', `/v2/monitor/${id}/checks/${checkId}`);
        assert.equal(res.status, 200, res.text);
        if (!['queued', 'running'].includes(res.json.data.status)) return res.json.data;
        if (Date.now() > deadline) assert.fail(`check ${checkId} still ${res.json.data.status}`);
        await sleep(100);
      }
    },
    /** Runs a check now (asserting 200) and waits for its end; the finished check. */
    async runCheck(id: string, timeoutMs = 30_000): Promise<any> {
      const res = await call('POST', `/v2/monitor/${id}/run`, {});
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.data.status, 'queued');
      return this.waitForCheck(id, res.json.data.id, timeoutMs);
    },
    /** Every page of a check, following `next` (with an optional page size and query). */
    async checkPages(id: string, checkId: string, query = ''): Promise<any[]> {
      const out: any[] = [];
      let path: string | null = `/v2/monitor/${id}/checks/${checkId}${query}`;
      for (let i = 0; path && i < 1000; i++) {
        const res = await call('GET', path);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.json.next, res.json.data.next);
        out.push(...res.json.data.pages);
        path = res.json.next ? res.json.next.slice(target.url.length) : null;
      }
      return out;
    },

    /** POST /v2/parse of `file` named `fileName` (multipart), with `options`. */
    parse: (file: Uint8Array, fileName: string, options?: ParseOptionsBody, opts: ParseUploadOptions = {}) =>
      parseRaw(file, fileName, options, opts),
    parseRaw,

    /** POST /v2/scrape/{jobId}/interact (code or prompt). */
    interact: (jobId: string, body: Record<string, unknown>) => call('POST', `/v2/scrape/${jobId}/interact`, body),
    /** DELETE /v2/scrape/{jobId}/interact, bodiless. */
    stopInteract: (jobId: string) => call('DELETE', `/v2/scrape/${jobId}/interact`),
    createBrowser: (body: Record<string, unknown> = {}) => call('POST', '/v2/browser', body),
    executeBrowser: (id: string, body: Record<string, unknown>) => call('POST', `/v2/browser/${id}/execute`, body),
    listBrowsers: (query = '') => call('GET', `/v2/browser${query}`),
    deleteBrowser: (id: string) => call('DELETE', `/v2/browser/${id}`),

    /** The team's creditsUsed (asserting 200), once the storage of earlier scrapes is done. */
    async creditsUsed(): Promise<number> {
      await settled();
      const res = await call('GET', '/v2/team/credit-usage');
      assert.equal(res.status, 200);
      return res.json.data.creditsUsed;
    },
    /** GET /v2/team/activity with `query` (e.g. "?endpoint=scrape") once earlier scrapes are stored. */
    async activity(query = '') {
      await settled();
      return call('GET', `/v2/team/activity${query}`);
    },
  });
}

export type Api = ReturnType<typeof apiClient>;
