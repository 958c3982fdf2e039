// Why a scrape of a target failed, as named errors with stable codes. A target that answers
// (even 404 or 500) is not an error: its status goes to metadata.statusCode.
import { ApiError } from '../api/errors.ts';

export class ScrapeError extends ApiError {
  constructor(status: number, code: string, message: string) {
    super(status, code, message);
  }
}

export class ScrapeTimeoutError extends ScrapeError {
  constructor(timeoutMs: number, url: string) {
    super(408, 'SCRAPE_TIMEOUT', `Scrape of ${url} timed out after ${timeoutMs} ms`);
  }
}

export class BlockedUrlError extends ScrapeError {
  constructor(message: string) {
    super(403, 'SCRAPE_BLOCKED_URL', `${message}. Private and local addresses are refused unless GLEANER_ALLOW_PRIVATE_NETWORK=true.`);
  }
}

export class DnsResolutionError extends ScrapeError {
  constructor(host: string) {
    super(502, 'SCRAPE_DNS_RESOLUTION_ERROR', `DNS resolution failed for ${host}`);
  }
}

export class ConnectionError extends ScrapeError {
  constructor(url: string, reason: string) {
    super(502, 'SCRAPE_CONNECTION_ERROR', `Could not connect to ${url}: ${reason}`);
  }
}

export class TlsError extends ScrapeError {
  constructor(url: string, reason: string) {
    super(502, 'SCRAPE_SSL_ERROR', `TLS error for ${url}: ${reason}`);
  }
}

export class TooManyRedirectsError extends ScrapeError {
  constructor(url: string, max: number) {
    super(502, 'SCRAPE_TOO_MANY_REDIRECTS', `More than ${max} redirects starting at ${url}`);
  }
}

export class ResponseTooLargeError extends ScrapeError {
  constructor(url: string, maxBytes: number) {
    super(502, 'SCRAPE_RESPONSE_TOO_LARGE', `The response of ${url} exceeds ${maxBytes} bytes`);
  }
}

export class SiteError extends ScrapeError {
  constructor(url: string, reason: string) {
    super(502, 'SCRAPE_SITE_ERROR', `The site failed to answer ${url}: ${reason}`);
  }
}

export class UnsupportedFileError extends ScrapeError {
  constructor(contentType: string) {
    super(415, 'SCRAPE_UNSUPPORTED_FILE_ERROR', `Unsupported content type: ${contentType}`);
  }
}

/** The browser engine cannot run: Chromium is not installed where expected, or does not start. */
export class BrowserUnavailableError extends ScrapeError {
  constructor(message: string) {
    super(503, 'BROWSER_UNAVAILABLE', message);
  }
}

/**
 * One of the request's actions failed on the page (no element matches its selector in time, a
 * script threw, an unknown key...). 400: the request asked for something this page does not
 * allow; the message names the action's index in `actions` (0-based) and its type.
 */
export class ScrapeActionError extends ScrapeError {
  readonly actionIndex: number;
  readonly actionType: string;
  constructor(index: number, type: string, reason: string) {
    super(400, 'SCRAPE_ACTION_ERROR', `Action ${index} (${type}) failed: ${reason}`);
    this.actionIndex = index;
    this.actionType = type;
  }
}

/** ffmpeg or ffprobe (the audio and video formats) cannot run: not installed where expected. */
export class FfmpegUnavailableError extends ScrapeError {
  constructor(program: string, path: string) {
    super(
      503,
      'MEDIA_FFMPEG_UNAVAILABLE',
      `The audio and video formats need ${program}, which is not installed at "${path}": install Debian's ffmpeg package (apt-get install ffmpeg), or set ${program === 'ffprobe' ? 'FFPROBE_PATH' : 'FFMPEG_PATH'}`,
    );
  }
}

/** The media (a file, or the sum of a stream's playlists and segments) is larger than allowed. */
export class MediaTooLargeError extends ScrapeError {
  constructor(url: string, maxBytes: number, variable: 'MEDIA_MAX_BYTES' | 'MEDIA_ZDR_MAX_BYTES') {
    const why =
      variable === 'MEDIA_ZDR_MAX_BYTES'
        ? `the most returned inline under zeroDataRetention (${variable})`
        : `the media size cap (${variable})`;
    super(502, 'SCRAPE_MEDIA_TOO_LARGE', `The media ${url} exceeds ${maxBytes} bytes, ${why}`);
  }
}

/** A media URL (file, playlist, segment, key) answered with an error status. */
export class MediaFetchError extends ScrapeError {
  constructor(url: string, status: number) {
    super(502, 'SCRAPE_MEDIA_FETCH_FAILED', `The media ${url} could not be downloaded: the server answered ${status}`);
  }
}

/** The media cannot be read or assembled: not a media file, encrypted or live streams, DASH features not handled. */
export class MediaUnsupportedError extends ScrapeError {
  constructor(url: string, reason: string) {
    super(422, 'SCRAPE_MEDIA_UNSUPPORTED', `The media ${url} cannot be used: ${reason}`);
  }
}
