// The one JSON shape every route answers with when it fails: {success: false, code, error} plus
// `details` for validation problems. Errors themselves are defined in src/errors.ts.
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest, FastifyServerOptions } from 'fastify';
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod';
import { ApiError, type HttpErrorCode, errorStatus } from '../errors.ts';

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

/** JSON bodies, where an empty one (content-type: application/json and no body, as clients send on DELETE) is no body at all. */
function installJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'ignore');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (typeof body === 'string' && body.trim() === '') return done(null, undefined);
    return parseJson(request, String(body), done);
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
