// Downloads for one media item (its file, or its playlists and every segment) through the HTTP
// engine, so each request and redirect hop passes the SSRF guard, within the scrape's deadline and
// under one size cap counted over everything downloaded for the item.
import { createWriteStream } from 'node:fs';
import { Writable } from 'node:stream';
import type { HttpEngine } from '../engines/http.ts';
import { MediaFetchError, MediaTooLargeError, ResponseTooLargeError } from '../../errors.ts';

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

  /** Streams `url` into the file at `path`. */
  async toFile(url: string, path: string): Promise<Downloaded> {
    const file = createWriteStream(path);
    try {
      const res = await this.#get(url, file);
      return { url: res.url, contentType: res.contentType, size: res.size };
    } finally {
      file.destroy();
    }
  }

  /** `url`'s body in memory (playlists, segments). */
  async toBuffer(url: string): Promise<Downloaded & { body: Buffer }> {
    const chunks: Buffer[] = [];
    const res = await this.#get(url, undefined, chunks);
    return { url: res.url, contentType: res.contentType, size: res.size, body: Buffer.concat(chunks) };
  }

  // The bytes are counted as they arrive, against the item's one budget: downloads side by side
  // (segments fetched ahead) stop as soon as they overflow it together, not after.
  async #get(url: string, file?: Writable, chunks?: Buffer[]) {
    const o = this.#o;
    const remaining = o.maxBytes - this.#used;
    if (remaining <= 0) throw new MediaTooLargeError(this.#item, o.maxBytes, 'MEDIA_MAX_BYTES');
    const tooLarge = () => new MediaTooLargeError(this.#item, o.maxBytes, 'MEDIA_MAX_BYTES');
    const sink = new Writable({
      write: (chunk: Buffer, _enc, done) => {
        this.#used += chunk.length;
        if (this.#used > o.maxBytes) return done(tooLarge());
        if (file) file.write(chunk, done);
        else {
          chunks?.push(chunk);
          done();
        }
      },
      final: (done) => (file ? file.end(done) : done()),
    });
    let res;
    try {
      res = await o.http.download(
        {
          url,
          headers: { accept: '*/*', referer: o.pageUrl },
          // On every hop, redirects included: a same-origin media URL redirecting to a CDN must
          // not carry the caller's cookies or Authorization there.
          ...(o.headers ? { originHeaders: { origin: new URL(o.pageUrl).origin, headers: o.headers } } : {}),
          timeoutMs: Math.max(1, o.deadlineAt - Date.now()),
          signal: AbortSignal.any([o.signal, this.#stop.signal]),
          skipTlsVerification: o.skipTlsVerification,
          mobile: o.mobile,
          languages: o.languages,
          proxy: o.proxy,
        },
        // The declared Content-Length is checked against the room left before any byte is read.
        { maxBytes: remaining, to: sink },
      );
    } catch (err) {
      if (err instanceof ResponseTooLargeError) throw tooLarge();
      throw err;
    }
    if (res.status < 200 || res.status > 299) throw new MediaFetchError(url, res.status);
    return res;
  }
}
