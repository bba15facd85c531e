import { ERROR_CODES, type ErrorCode, type ErrorCodeOf, type ErrorType } from '@svc/schema';

/**
 * The one error class of svc. Domain code throws it with a code of the catalogue in
 * `@svc/schema`, which fixes its type and status; the HTTP error handler turns it into the
 * documented body `{"error": {type, code, message, param?, request_id}}`.
 */
export class SvcError extends Error {
  readonly type: ErrorType;
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'SvcError';
    this.type = ERROR_CODES[code].type;
    this.status = ERROR_CODES[code].status;
    // A part that is away reconnects by itself within seconds: every 503 says when to try again
    // (docs/decisions.md, "Errors"), unless its thrower knows better.
    this.headers = this.status === 503 && !('Retry-After' in headers) ? { ...headers, 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_S) } : headers;
  }
}

/** Seconds a 503 asks a client to wait before retrying. */
export const UNAVAILABLE_RETRY_AFTER_S = 1;

export const invalid = (code: ErrorCodeOf<'invalid_request'>, message: string, param?: string) => new SvcError(code, message, param);
export const notFound = (what: string, id: string, param?: string) => new SvcError('resource_not_found', `No ${what} with id '${id}'.`, param);
export const conflict = (code: ErrorCodeOf<'conflict'>, message: string, param?: string) => new SvcError(code, message, param);
