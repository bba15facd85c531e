import { ERROR_CODES, type ErrorCode, type ErrorCodeOf, type ErrorType } from '@svc/schema';

/**
 * The one error class of svc. Domain code throws it with a code of the catalogue in
 * `@svc/schema`, which fixes its type and status; the HTTP error handler turns it into the
 * documented body `{"error": {type, code, message, param?, request_id}}`.
 */
export class SvcError extends Error {
  readonly type: ErrorType;
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly param?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'SvcError';
    this.type = ERROR_CODES[code].type;
    this.status = ERROR_CODES[code].status;
  }
}

export const invalid = (code: ErrorCodeOf<'invalid_request'>, message: string, param?: string) => new SvcError(code, message, param);
export const notFound = (what: string, id: string, param?: string) => new SvcError('resource_not_found', `No ${what} with id '${id}'.`, param);
export const conflict = (code: ErrorCodeOf<'conflict'>, message: string, param?: string) => new SvcError(code, message, param);
