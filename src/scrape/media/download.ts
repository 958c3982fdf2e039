// Downloads for one media item (its file, or its playlists and every segment) through the HTTP
// engine, so each request and redirect hop passes the SSRF guard, within the scrape's deadline and
// under one size cap counted over everything downloaded for the item.
import { createWriteStream } from 'node:fs';
import type { Writable } from 'node:stream';
import type { HttpEngine } from '../engines/http.ts';
import { MediaFetchError, MediaTooLargeError, ResponseTooLargeError } from '../errors.ts';

export interface MediaDownloadOptions {
  http: HttpEngine;
  /** The scrape's deadline. */
  signal: AbortSignal;
  /** When the deadline runs out (epoch ms): each request gets the time left. */
  deadlineAt: number;
  /** MEDIA_MAX_BYTES: the most downloaded for this item, all requests together. */
  maxBytes: number;
  /** The page the media belongs to: sent as Referer; the caller's headers go only to its origin. */
  pageUrl: string;
  headers?: Record<string, string>;
  proxy: 'basic' | 'enhanced';
  skipTlsVerification: boolean;
  mobile: boolean;
  languages?: string[];
}

export interface Downloaded {
  /** Final URL, after redirects. */
  url: string;
  contentType: string;
  size: number;
}

export class MediaDownloader {
  readonly #o: MediaDownloadOptions;
  /** Stops this item's downloads still in flight (a segment fetched ahead when another failed). */
  readonly #stop = new AbortController();
  #used = 0;
  /** The URL the item was asked as: named by the size error, whichever part overflowed. */
  readonly #item: string;

  constructor(item: string, options: MediaDownloadOptions) {
    this.#item = item;
    this.#o = options;
  }

  /** Abandons the downloads still in flight. */
  stop(): void {
    this.#stop.abort();
  }

  /** Bytes downloaded so far for this item. */
  get used(): number {
    return this.#used;
  }

  /** Streams `url` into the file at `path`. */
  async toFile(url: string, path: string): Promise<Downloaded> {
    const to = createWriteStream(path);
    try {
      const res = await this.#get(url, to);
      return { url: res.url, contentType: res.contentType, size: res.size };
    } finally {
      to.destroy();
    }
  }

  /** `url`'s body in memory (playlists, segments). */
  async toBuffer(url: string): Promise<Downloaded & { body: Buffer }> {
    const res = await this.#get(url);
    return { url: res.url, contentType: res.contentType, size: res.size, body: res.body ?? Buffer.alloc(0) };
  }

  async #get(url: string, to?: Writable) {
    const o = this.#o;
    const remaining = o.maxBytes - this.#used;
    if (remaining <= 0) throw new MediaTooLargeError(this.#item, o.maxBytes, 'MEDIA_MAX_BYTES');
    const sameOrigin = new URL(url).origin === new URL(o.pageUrl).origin;
    let res;
    try {
      res = await o.http.download(
        {
          url,
          headers: { accept: '*/*', referer: o.pageUrl, ...(sameOrigin ? o.headers : {}) },
          timeoutMs: Math.max(1, o.deadlineAt - Date.now()),
          signal: AbortSignal.any([o.signal, this.#stop.signal]),
          skipTlsVerification: o.skipTlsVerification,
          mobile: o.mobile,
          languages: o.languages,
          proxy: o.proxy,
        },
        { maxBytes: remaining, ...(to ? { to } : {}) },
      );
    } catch (err) {
      if (err instanceof ResponseTooLargeError) throw new MediaTooLargeError(this.#item, o.maxBytes, 'MEDIA_MAX_BYTES');
      throw err;
    }
    if (res.status < 200 || res.status > 299) throw new MediaFetchError(url, res.status);
    this.#used += res.size;
    // Segments downloaded side by side each had the room left when they started.
    if (this.#used > o.maxBytes) throw new MediaTooLargeError(this.#item, o.maxBytes, 'MEDIA_MAX_BYTES');
    return res;
  }
}
