import type { FastifyInstance, FastifyBaseLogger, RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Principal } from '../domain/scopes.js';
import { SvcError } from '../domain/errors.js';
import type { Services } from '../services.js';

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

export type RoutePlugin = (app: App, services: Services) => void;

/** Authenticated routes always have a principal; this states it once instead of in every handler. */
export function principal(request: { principal: Principal | null }): Principal {
  if (!request.principal) throw new SvcError('missing_api_key', 'Send your key as Authorization: Bearer <API_KEY>.');
  return request.principal;
}
