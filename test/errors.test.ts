// The registry of error codes (src/errors.ts) keeps docs/errors.md, the classes and every code
// written in src/ in step: as Fastify's test that keeps lib/errors.js and docs/Reference/Errors.md aligned.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { errorsDocPath, renderErrorsDoc } from '../scripts/errors-doc.ts';
import {
  BadRequestError,
  BlockedUrlError,
  BrowserUnavailableError,
  ConflictError,
  ConnectionError,
  DnsResolutionError,
  DocumentError,
  FfmpegUnavailableError,
  ForbiddenError,
  InsufficientCreditsError,
  LlmInvalidOutputError,
  InteractPromptTimeoutError,
  LlmInvalidSchemaError,
  LlmRateLimitedError,
  LlmTimeoutError,
  LlmUnavailableError,
  LlmUpstreamError,
  MediaFetchError,
  MediaTooLargeError,
  MediaUnsupportedError,
  NotFoundError,
  RateLimitedError,
  ResponseTooLargeError,
  ScrapeActionError,
  ScrapeTimeoutError,
  SiteError,
  TlsError,
  TooManyRedirectsError,
  UnauthorizedError,
  UnsupportedFileError,
  allErrorCodes,
  errorCodeGroups,
  errorCodes,
  httpErrorCodes,
} from '../src/errors.ts';

const srcDir = new URL('../src/', import.meta.url).pathname;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const CODE = String.raw`'([A-Z][A-Z0-9_]*)'`;
/** Where src/ writes a code: an error's first argument (after an HTTP status, as before the registry), the
 * code argument of NotFoundError and ConflictError, a `code:` or `code =` field, a `code` variable's
 * value or default, and a job record's `error:`. */
const codePatterns = [
  new RegExp(String.raw`\b(?:new\s+\w*Error|super)\(\s*(?:\d{3}\s*,\s*)?${CODE}`, 'g'),
  new RegExp(String.raw`\bnew\s+(?:NotFoundError|ConflictError)\((?:[^()]|\([^()]*\))*?,\s*${CODE}\s*\)`, 'g'),
  new RegExp(String.raw`\bcode\??\s*(?::|=(?!=))\s*${CODE}`, 'g'),
  new RegExp(String.raw`\b(?:const|let)\s+code\b[^;]*?${CODE}`, 'g'),
  new RegExp(String.raw`\berror:[^,}\n]*?${CODE}`, 'g'),
];
/** Node's own system-error codes (errno names), which src/ sets on errors that imitate Node's. */
const NODE_ERRNO = /^E[A-Z]+$/;

test('docs/errors.md is the one the registry generates (npm run docs:errors)', () => {
  const written = readFileSync(errorsDocPath, 'utf8');
  assert.equal(written, renderErrorsDoc(), 'docs/errors.md is stale: run npm run docs:errors');
});

test('the registry: each code in one group, a status of 4xx/5xx or null, a one-line meaning', () => {
  const grouped = errorCodeGroups.flatMap((g) => Object.keys(g.codes));
  assert.equal(new Set(grouped).size, grouped.length, 'a code is in two groups');
  assert.deepEqual(grouped, allErrorCodes);
  for (const code of allErrorCodes) {
    const { status, meaning } = errorCodes[code];
    const validStatus = status === null || (Number.isInteger(status) && status >= 400 && status < 600);
    assert.ok(validStatus, `${code}: status ${status}`);
    const oneLine = meaning.length > 10 && !meaning.includes('\n') && !meaning.endsWith('.');
    assert.ok(oneLine, `${code}: meaning "${meaning}"`);
  }
  assert.deepEqual(
    httpErrorCodes,
    allErrorCodes.filter((c) => errorCodes[c].status !== null),
  );
});

test('every code src/ writes is in the registry, and every registry code is written in src/', () => {
  const found = new Map<string, string>();
  const quoted = new Set<string>();
  for (const file of sourceFiles(srcDir)) {
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/'([A-Z][A-Z0-9_]*)'/g)) quoted.add(m[1]);
    for (const re of codePatterns) {
      for (const m of text.matchAll(re)) {
        if (!NODE_ERRNO.test(m[1])) found.set(m[1], file.slice(srcDir.length));
      }
    }
  }
  const unknown = [...found].filter(([code]) => !(code in errorCodes)).map(([code, file]) => `${code} (src/${file})`);
  assert.deepEqual(unknown, [], 'codes missing from the registry in src/errors.ts');
  // Guards the scan itself: it finds codes of every kind of site above.
  const kinds = ['BATCH_SCRAPE_NOT_RUNNING', 'CRAWL_NOT_FOUND', 'NOT_READY', 'PARSE_QUEUE_FULL', 'DOCUMENT_TIMEOUT'];
  kinds.push('ROBOTS_DISALLOWED', 'INTERNAL_ERROR', 'UNKNOWN_ERROR', 'SSRF_BLOCKED');
  for (const code of kinds) {
    assert.ok(found.has(code), `the scan did not find ${code}`);
  }
  assert.ok(found.size >= 50, `the scan found only ${found.size} codes`);
  // The registry's keys are not quoted: a code quoted nowhere in src/ is one nothing reports.
  assert.deepEqual(
    allErrorCodes.filter((c) => !quoted.has(c)),
    [],
    'registry codes nothing in src/ uses',
  );
});

test('each class answers with the code and status it always had', () => {
  const cases: [Error & { code: string; statusCode?: number }, string, number][] = [
    [new BadRequestError('x'), 'BAD_REQUEST', 400],
    [new UnauthorizedError(), 'UNAUTHORIZED', 401],
    [new InsufficientCreditsError(1, 0), 'INSUFFICIENT_CREDITS', 402],
    [new ForbiddenError(), 'FORBIDDEN', 403],
    [new NotFoundError(), 'NOT_FOUND', 404],
    [new NotFoundError('x', 'CRAWL_NOT_FOUND'), 'CRAWL_NOT_FOUND', 404],
    [new ConflictError('x', 'BATCH_SCRAPE_NOT_RUNNING'), 'BATCH_SCRAPE_NOT_RUNNING', 409],
    [new RateLimitedError(3, 'scrape'), 'RATE_LIMITED', 429],
    [new ScrapeTimeoutError(1, 'u'), 'SCRAPE_TIMEOUT', 408],
    [new BlockedUrlError('x'), 'SCRAPE_BLOCKED_URL', 403],
    [new DnsResolutionError('h'), 'SCRAPE_DNS_RESOLUTION_ERROR', 502],
    [new ConnectionError('u', 'r'), 'SCRAPE_CONNECTION_ERROR', 502],
    [new TlsError('u', 'r'), 'SCRAPE_SSL_ERROR', 502],
    [new TooManyRedirectsError('u', 5), 'SCRAPE_TOO_MANY_REDIRECTS', 502],
    [new ResponseTooLargeError('u', 1), 'SCRAPE_RESPONSE_TOO_LARGE', 502],
    [new SiteError('u', 'r'), 'SCRAPE_SITE_ERROR', 502],
    [new UnsupportedFileError('t'), 'SCRAPE_UNSUPPORTED_FILE_ERROR', 415],
    [new BrowserUnavailableError('x'), 'BROWSER_UNAVAILABLE', 503],
    [new ScrapeActionError(0, 'click', 'r'), 'SCRAPE_ACTION_ERROR', 400],
    [new FfmpegUnavailableError('ffmpeg', '/x'), 'MEDIA_FFMPEG_UNAVAILABLE', 503],
    [new MediaTooLargeError('u', 1, 'MEDIA_MAX_BYTES'), 'SCRAPE_MEDIA_TOO_LARGE', 502],
    [new MediaFetchError('u', 404), 'SCRAPE_MEDIA_FETCH_FAILED', 502],
    [new MediaUnsupportedError('u', 'r'), 'SCRAPE_MEDIA_UNSUPPORTED', 422],
    [new LlmUnavailableError(), 'LLM_UNAVAILABLE', 503],
    [new LlmTimeoutError(1), 'LLM_TIMEOUT', 504],
    [new LlmRateLimitedError(2), 'LLM_RATE_LIMITED', 503],
    [new LlmUpstreamError('x'), 'LLM_ERROR', 502],
    [new LlmInvalidOutputError(['p']), 'LLM_INVALID_OUTPUT', 502],
    [new LlmInvalidSchemaError('r'), 'LLM_INVALID_SCHEMA', 400],
    [new InteractPromptTimeoutError(1000), 'INTERACT_PROMPT_TIMEOUT', 408],
  ];
  for (const [err, code, status] of cases) {
    assert.equal(err.code, code, err.name);
    assert.equal(err.statusCode, status, err.name);
    assert.equal(errorCodes[code as keyof typeof errorCodes].status, status, code);
  }
  const doc = new DocumentError('DOCUMENT_CORRUPT', 'x');
  assert.equal(doc.code, 'DOCUMENT_CORRUPT');
  assert.equal('statusCode' in doc, false, 'a DocumentError has no HTTP status of its own');
});
