import type { ErrorType } from '@svc/schema';

const STATUS: Record<ErrorType, number> = {
  invalid_request: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found: 404,
  conflict: 409,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limit_error: 429,
  api_error: 500,
  unavailable: 503,
};

/**
 * The one error class of svc. Domain code throws it; the HTTP error handler turns it into the
 * documented body `{"error": {type, code, message, param?, request_id}}`.
 */
export class SvcError extends Error {
  readonly status: number;
  constructor(
    readonly type: ErrorType,
    readonly code: string,
    message: string,
    readonly param?: string,
    readonly headers: Record<string, string> = {},
    /** Only for the HTTP-level refusals whose status says more than the type (408, 414, 431). */
    status?: number,
  ) {
    super(message);
    this.name = 'SvcError';
    this.status = status ?? STATUS[type];
  }
}

export const invalid = (code: string, message: string, param?: string) =>
  new SvcError('invalid_request', code, message, param);
export const notFound = (what: string, id: string, param?: string) =>
  new SvcError('not_found', 'resource_not_found', `No ${what} with id '${id}'.`, param);
export const conflict = (code: string, message: string, param?: string) => new SvcError('conflict', code, message, param);
