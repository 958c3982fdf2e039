// The one JSON shape every route answers with when it fails: {success: false, code, error} plus
// `details` for validation problems. Errors themselves are defined in src/errors.ts.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { ApiError, BadRequestError, type HttpErrorCode, errorStatus } from '../errors.ts';

export interface ErrorBody {
  success: false;
  code: HttpErrorCode;
  error: string;
  details?: unknown;
}

interface ValidationIssue {
  path: string;
  message: string;
}

/** Zod issues from the type provider, as `body.formats.0: message`: the field is always named. */
function validationIssues(err: FastifyError): ValidationIssue[] {
  const context = err.validationContext === 'querystring' ? 'query' : (err.validationContext ?? 'body');
  return (err.validation ?? []).map((v) => {
    const segments = (v.instancePath ?? '').split('/').filter(Boolean);
    const keys = (v.params as { keys?: string[] } | undefined)?.keys;
    // Unknown keys: name each one, as `body.foo` (the issue itself sits on the parent object).
    if (keys?.length) segments.push(keys.join(','));
    return { path: [context, ...segments].join('.'), message: v.message ?? 'invalid' };
  });
}

// Fastify's own request errors, each mapped to one of our codes (answered with that code's status).
const fastifyCodes: Record<string, HttpErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_JSON_BODY: 'BAD_REQUEST',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'BAD_REQUEST',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'BAD_REQUEST',
};

export function sendError(
  reply: FastifyReply,
  status: number,
  body: ErrorBody,
  headers?: Record<string, string>,
): FastifyReply {
  if (headers) reply.headers(headers);
  return reply.code(status).type('application/json; charset=utf-8').send(body);
}

// Errors the router raises before any route or hook runs (Fastify's `frameworkErrors` option).
const routerCodes: Record<string, HttpErrorCode> = {
  FST_ERR_MAX_PARAM_LENGTH: 'URI_TOO_LONG',
  FST_ERR_BAD_URL: 'BAD_REQUEST',
};

/** Fastify's `frameworkErrors`: an over-long path parameter (414) or a malformed URL (400), in our shape. */
export const frameworkErrors: NonNullable<FastifyServerOptions['frameworkErrors']> = (err, request, reply) => {
  const code = routerCodes[err.code] ?? 'UNKNOWN_ERROR';
  const error =
    code === 'URI_TOO_LONG'
      ? 'A path parameter is longer than 100 characters'
      : code === 'BAD_REQUEST'
        ? `Malformed URL: ${request.url.split('?')[0]}`
        : 'An unexpected error occurred.';
  if (code === 'UNKNOWN_ERROR') request.log.error({ err }, 'router error');
  reply.header('x-request-id', request.id);
  sendError(reply, errorStatus(code), { success: false, code, error });
};

// Errors Node's HTTP parser reports on the socket, before there is a request to answer.
function clientError(err: NodeJS.ErrnoException): { code: HttpErrorCode; error: string } {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return { code: 'REQUEST_TIMEOUT', error: 'The request was not received in time' };
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') {
    return { code: 'HEADERS_TOO_LARGE', error: 'The request headers are larger than the server accepts' };
  }
  return { code: 'BAD_REQUEST', error: 'Malformed HTTP request' };
}

/** Fastify's `clientErrorHandler`: a timeout (408), headers too large (431) or a malformed request (400), in our shape; the socket is closed. */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const { code, error } = clientError(err);
  const status = errorStatus(code);
  const body = JSON.stringify({ success: false, code, error } satisfies ErrorBody);
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/** Deepest nesting of arrays and objects a JSON body may have (a JSON Schema 60 levels deep fits). */
export const MAX_JSON_DEPTH = 128;

const fixString = (s: string) => (s.isWellFormed() ? s : s.toWellFormed());

/**
 * A parsed JSON body made safe to keep: unpaired surrogates (a "\ud800" escape alone) in strings
 * and keys become U+FFFD, as they would in UTF-8; U+0000 (only possible as an escape, a raw one is
 * not JSON) and nesting deeper than MAX_JSON_DEPTH are refused. The store's JSON columns refuse
 * both characters, and code that recurses over a value (JSON.stringify of a stored crawl's
 * options) overflows the stack on deep ones: each was a 500. Walked without recursion.
 */
function safeJsonBody(body: unknown): { value: unknown; problem?: string } {
  const nul = 'A string of the JSON body contains U+0000 (\\u0000), which cannot be stored';
  if (typeof body === 'string') return body.includes('\0') ? { value: body, problem: nul } : { value: fixString(body) };
  const stack: [object, number][] = [];
  if (body !== null && typeof body === 'object') stack.push([body, 1]);
  while (stack.length) {
    const [node, depth] = stack.pop() as [Record<string, unknown>, number];
    if (depth > MAX_JSON_DEPTH)
      return { value: body, problem: `The JSON body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels` };
    for (const key of Object.keys(node)) {
      const child = node[key];
      if (typeof child === 'string') {
        if (child.includes('\0')) return { value: body, problem: nul };
        node[key] = fixString(child);
      } else if (child !== null && typeof child === 'object') stack.push([child, depth + 1]);
      if (key.includes('\0')) return { value: body, problem: nul };
      if (!key.isWellFormed()) {
        const value = node[key];
        delete node[key];
        Object.defineProperty(node, key.toWellFormed(), {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
    }
  }
  return { value: body };
}

/** JSON bodies, where an empty one (content-type: application/json and no body, as clients send on DELETE) is no body at all. */
function installJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    return parseJson(request, String(body), (err, parsed) => {
      if (err) return done(err, undefined);
      const { value, problem } = safeJsonBody(parsed);
      return problem ? done(new BadRequestError(problem), undefined) : done(null, value);
    });
  });
}

export function installErrorHandling(app: FastifyInstance): void {
  installJsonParser(app);
  app.setErrorHandler((err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (err instanceof ApiError) {
      const body: ErrorBody = { success: false, code: err.code, error: err.message };
      if (err.details !== undefined) body.details = err.details;
      if (err.statusCode >= 500) request.log.error({ err }, err.message);
      return sendError(reply, err.statusCode, body, err.headers);
    }
    if (hasZodFastifySchemaValidationErrors(err)) {
      const details = validationIssues(err);
      const error = `Invalid request: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`;
      return sendError(reply, errorStatus('BAD_REQUEST'), { success: false, code: 'BAD_REQUEST', error, details });
    }
    if (isResponseSerializationError(err)) {
      request.log.error({ err, issues: err.cause.issues }, 'response did not match its schema');
      return sendError(reply, errorStatus('UNKNOWN_ERROR'), {
        success: false,
        code: 'UNKNOWN_ERROR',
        error: 'An unexpected error occurred.',
      });
    }
    const known = err.code ? fastifyCodes[err.code] : undefined;
    if (known) return sendError(reply, errorStatus(known), { success: false, code: known, error: err.message });
    // Any other request error keeps its own 4xx status.
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
      return sendError(reply, err.statusCode, { success: false, code: 'BAD_REQUEST', error: err.message });
    }
    // Anything else is our fault: log the stack, never send it.
    request.log.error({ err }, 'unexpected error');
    return sendError(reply, errorStatus('UNKNOWN_ERROR'), {
      success: false,
      code: 'UNKNOWN_ERROR',
      error: `An unexpected error occurred. Request id: ${request.id}`,
    });
  });

  app.setNotFoundHandler((request, reply) =>
    sendError(reply, errorStatus('NOT_FOUND'), {
      success: false,
      code: 'NOT_FOUND',
      error: `Route ${request.method} ${request.url.split('?')[0]} not found`,
    }),
  );
}
