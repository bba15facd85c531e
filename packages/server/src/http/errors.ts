import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorBody } from '@svc/schema';
import { SvcError } from '../domain/errors.js';
import { BUS_FAULT_MESSAGE, busFault } from '../bus/faults.js';
import { STORE_FAULT_MESSAGES, storeFault } from '../store/sql/faults.js';

/** A missing part's failure as its 503, with a message of ours: a driver's text never reaches a client. */
function unavailable(err: unknown): SvcError | null {
  const fault = storeFault(err);
  if (fault) return new SvcError(fault, STORE_FAULT_MESSAGES[fault]);
  if (busFault(err)) return new SvcError('bus_unavailable', BUS_FAULT_MESSAGE);
  return null;
}

/** The one place that turns any failure into the documented error body. */
export function toSvcError(err: FastifyError | SvcError | Error): SvcError {
  if (err instanceof SvcError) return err;
  const fe: Partial<FastifyError> = err;
  if (fe.validation && fe.validation.length > 0) {
    const v = fe.validation[0];
    const params: Record<string, unknown> = v.params ?? {};
    const where = fe.validationContext === 'body' ? 'body' : 'query';
    if (typeof params.additionalProperty === 'string') {
      const name = params.additionalProperty;
      return new SvcError(where === 'body' ? 'unknown_field' : 'unknown_parameter', `Unknown ${where === 'body' ? 'field' : 'parameter'} '${name}'.`, name);
    }
    if (typeof params.missingProperty === 'string') {
      const name = params.missingProperty;
      return new SvcError(where === 'body' ? 'missing_field' : 'missing_parameter', `'${name}' is required.`, name);
    }
    const path = (v.instancePath ?? '').replace(/^\//, '').replace(/\//g, '.');
    const name = path || where;
    return new SvcError(where === 'body' ? 'invalid_field' : 'invalid_parameter', `'${name}' ${v.message ?? 'is invalid'}.`, name);
  }
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new SvcError('payload_too_large', 'The request body is too large.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new SvcError('unsupported_media_type', 'Send the body as application/json.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new SvcError('invalid_json', 'The body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new SvcError('invalid_json', 'The body is not valid JSON.');
  }
  if (err instanceof SyntaxError || fe.statusCode === 400) {
    return new SvcError('invalid_request', err.message || 'The request is malformed.');
  }
  if (fe.statusCode === 413) return new SvcError('payload_too_large', 'The request body is too large.');
  if (fe.statusCode === 415) return new SvcError('unsupported_media_type', 'Send the body as application/json.');
  const away = unavailable(err);
  if (away) return away;
  return new SvcError('internal_error', 'Something went wrong on our side; the request id helps us find it.');
}

export function errorBody(e: SvcError, requestId: string): ErrorBody {
  return {
    error: {
      type: e.type,
      code: e.code,
      message: e.message,
      ...(e.param !== undefined ? { param: e.param } : {}),
      request_id: requestId,
    },
  };
}

export function sendError(reply: FastifyReply, request: FastifyRequest, e: SvcError): FastifyReply {
  // Set here too: framework errors (bad URL, over-long path parameter) skip the onRequest hooks.
  reply.header('X-Request-Id', request.id);
  for (const [k, v] of Object.entries(e.headers)) reply.header(k, v);
  return reply.code(e.status).type('application/json; charset=utf-8').send(errorBody(e, request.id));
}

/** Refusals Fastify makes before routing (its `frameworkErrors` option). */
export function frameworkError(err: FastifyError): SvcError {
  switch (err.code) {
    case 'FST_ERR_BAD_URL':
      return new SvcError('malformed_url', 'The URL is not valid: check its percent-encoding.');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new SvcError('uri_too_long', `A path segment is longer than ${MAX_PATH_PARAM_LENGTH} characters; no id is that long.`);
    default:
      return toSvcError(err);
  }
}

/** Above every id's schema maxLength, so the schema judges ids and only absurd ones stop here. */
export const MAX_PATH_PARAM_LENGTH = 512;

/** `onStoreFault` hears of every call that failed for want of the database (health/store-health.ts). */
export function registerErrorHandling(app: FastifyInstance, onStoreFault: () => void = () => undefined): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const e = toSvcError(err);
    if (e.code === 'store_unavailable') onStoreFault();
    // A missing part is logged once per request as a warning with its code; the driver's text stays in the log.
    if (e.status === 503) request.log.warn({ err, code: e.code }, 'request failed: a part is away');
    else if (e.status >= 500) request.log.error({ err }, 'request failed');
    return sendError(reply, request, e);
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(reply, request, new SvcError('route_not_found', `No route ${request.method} ${request.url.split('?')[0]}.`)),
  );
}
