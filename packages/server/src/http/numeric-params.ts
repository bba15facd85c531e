import type { FastifyRequest, RouteOptions, preValidationHookHandler } from 'fastify';
import { invalid } from '../domain/errors.js';

/**
 * ajv's type coercion reads a query string the way JavaScript's `+x` does, so `Infinity`,
 * `1e1000`, `0x10`, `+5` or ` 5` all pass as integers, and `Infinity` slips past `maximum` into
 * the handlers. Integer query parameters are therefore checked as text before coercion: one
 * value, decimal digits, an optional minus sign; the schema then judges the range.
 */
const DECIMAL_INTEGER = /^-?[0-9]{1,15}$/;

const fieldOf = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? Reflect.get(value, key) : undefined);

/** The query parameters a route's schema declares as integers or numbers. */
export function numericQueryParams(route: Pick<RouteOptions, 'schema'>): string[] {
  const props = fieldOf(route.schema?.querystring, 'properties');
  if (typeof props !== 'object' || props === null) return [];
  return Object.keys(props).filter((name) => {
    const type = fieldOf(fieldOf(props, name), 'type');
    return type === 'integer' || type === 'number';
  });
}

/** A preValidation hook refusing any of `names` that is not a single plain decimal integer. */
export function requireDecimalIntegers(names: readonly string[]): preValidationHookHandler {
  return (request: FastifyRequest, _reply, done) => {
    const query = request.query;
    if (typeof query === 'object' && query !== null) {
      for (const name of names) {
        const value: unknown = Reflect.get(query, name);
        if (value === undefined) continue;
        if (Array.isArray(value)) return done(invalid('invalid_parameter', `'${name}' must be given once.`, name));
        // `-0` too: it reads as 0, and passes where 0 is the minimum (`wait`).
        if (typeof value !== 'string' || !DECIMAL_INTEGER.test(value) || /^-0+$/.test(value)) {
          return done(invalid('invalid_parameter', `'${name}' must be a whole number written in decimal digits.`, name));
        }
      }
    }
    done();
  };
}
