import type { ErrorCode, ErrorType } from './schema.js';

/** The `error` member of the API's error body. Unknown types and codes (a newer server) are kept verbatim. */
export interface ErrorDetail {
  type?: ErrorType | (string & {}) | undefined;
  code?: ErrorCode | (string & {}) | undefined;
  message?: string | undefined;
  param?: string | undefined;
  request_id?: string | undefined;
}

/** Base of every error this package throws. */
export class SvcError extends Error {
  override readonly name: string = 'SvcError';
}

/**
 * An answer of the API other than 2xx: the documented error body
 * `{"error": {"type", "code", "message", "param"?, "request_id"}}` and the response headers.
 */
export class APIError extends SvcError {
  override readonly name: string = 'APIError';
  /** HTTP status, or undefined for errors raised on the stream (close codes, frames). */
  readonly status: number | undefined;
  readonly type: ErrorDetail['type'];
  readonly code: ErrorDetail['code'];
  readonly param: string | undefined;
  readonly requestId: string | undefined;
  /** Response headers, lower-case names. */
  readonly headers: Record<string, string>;
  /** The parsed body as the server sent it, when it was JSON. */
  readonly error: unknown;

  constructor(
    status: number | undefined,
    body: ErrorDetail | undefined,
    message: string | undefined,
    headers: Record<string, string> = {},
  ) {
    super(APIError.describe(status, body, message));
    this.status = status;
    this.type = body?.type;
    this.code = body?.code;
    this.param = body?.param;
    this.requestId = body?.request_id ?? headers['x-request-id'];
    this.headers = headers;
    this.error = body;
  }

  private static describe(status: number | undefined, body: ErrorDetail | undefined, message: string | undefined): string {
    const text = body?.message ?? message ?? 'no message';
    const code = body?.code ? ` ${body.code}` : '';
    return status === undefined ? `${code.trim() || 'error'}: ${text}` : `${status}${code}: ${text}`;
  }

  /** The subclass for a status, so callers can `catch (e) { if (e instanceof NotFoundError) … }`. */
  static generate(
    status: number,
    body: ErrorDetail | undefined,
    message: string | undefined,
    headers: Record<string, string>,
  ): APIError {
    switch (status) {
      case 400:
        return new BadRequestError(status, body, message, headers);
      case 401:
        return new AuthenticationError(status, body, message, headers);
      case 403:
        return new PermissionDeniedError(status, body, message, headers);
      case 404:
        return new NotFoundError(status, body, message, headers);
      case 409:
        return new ConflictError(status, body, message, headers);
      case 429:
        return new RateLimitError(status, body, message, headers);
      default:
        return status >= 500 ? new InternalServerError(status, body, message, headers) : new APIError(status, body, message, headers);
    }
  }
}

export class BadRequestError extends APIError {
  override readonly name: string = 'BadRequestError';
}
export class AuthenticationError extends APIError {
  override readonly name: string = 'AuthenticationError';
}
export class PermissionDeniedError extends APIError {
  override readonly name: string = 'PermissionDeniedError';
}
export class NotFoundError extends APIError {
  override readonly name: string = 'NotFoundError';
}
export class ConflictError extends APIError {
  override readonly name: string = 'ConflictError';
}
export class RateLimitError extends APIError {
  override readonly name: string = 'RateLimitError';
  /** Seconds the server asked to wait (`Retry-After`), undefined when it did not say. */
  readonly retryAfter: number | undefined;
  constructor(...args: ConstructorParameters<typeof APIError>) {
    super(...args);
    this.retryAfter = parseRetryAfter(this.headers['retry-after']);
  }
}
export class InternalServerError extends APIError {
  override readonly name: string = 'InternalServerError';
}

/** The request never got an answer: refused, reset, DNS, TLS. */
export class APIConnectionError extends SvcError {
  override readonly name: string = 'APIConnectionError';
  constructor(message = 'Connection error.', options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** No answer within `timeoutMs`. */
export class APITimeoutError extends APIConnectionError {
  override readonly name: string = 'APITimeoutError';
  constructor(message = 'Request timed out.') {
    super(message);
  }
}

/** The caller's own AbortSignal fired. */
export class APIUserAbortError extends SvcError {
  override readonly name: string = 'APIUserAbortError';
  constructor(message = 'Request was aborted.') {
    super(message);
  }
}

/** A record whose `schema` is not one this client version understands. */
export class SchemaMismatchError extends SvcError {
  override readonly name: string = 'SchemaMismatchError';
  readonly expected: string;
  readonly received: unknown;
  constructor(expected: string, received: unknown) {
    super(`unsupported schema ${JSON.stringify(received)}: this client reads ${expected}; upgrade @svc/client`);
    this.expected = expected;
    this.received = received;
  }
}

export type WebhookVerificationFailure =
  | 'missing_header'
  | 'missing_timestamp'
  | 'missing_signature'
  | 'timestamp_out_of_tolerance'
  | 'signature_mismatch'
  | 'malformed';

export class WebhookVerificationError extends SvcError {
  override readonly name: string = 'WebhookVerificationError';
  readonly reason: WebhookVerificationFailure;
  constructor(reason: WebhookVerificationFailure) {
    super(`webhook signature verification failed: ${reason}`);
    this.reason = reason;
  }
}

/** `Retry-After` as seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The `error` member of an error body, keeping only the documented string fields. */
export function errorDetail(body: unknown): ErrorDetail | undefined {
  if (!isRecord(body) || !isRecord(body.error)) return undefined;
  const e = body.error;
  const str = (name: string): string | undefined => (typeof e[name] === 'string' ? e[name] : undefined);
  return { type: str('type'), code: str('code'), message: str('message'), param: str('param'), request_id: str('request_id') };
}

/** The error for an HTTP answer: `body` is the parsed JSON (if any), `text` the raw body. */
export function errorFromStatus(status: number, body: unknown, text: string, headers: Record<string, string>): APIError {
  const detail = errorDetail(body);
  return APIError.generate(status, detail, detail ? undefined : text, headers);
}
