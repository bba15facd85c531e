import { CreateStreamTokenBody, ErrorBody, One, STREAM_PATH, STREAM_TOKEN_TTL, STREAM_TOKENS_PATH, StreamToken } from '@svc/schema';
import { Type } from '@sinclair/typebox';
import type { Clock } from '../../domain/clock.js';
import { SvcError, invalid } from '../../domain/errors.js';
import type { StreamGateway } from '../../stream/gateway.js';
import { validateSubscriptions } from '../../stream/protocol.js';
import type { StreamTokens } from '../../stream/tokens.js';
import { errorResponses } from '../common.js';
import { principal, type RoutePlugin } from '../types.js';

export interface StreamRouteDeps {
  gateway: StreamGateway;
  tokens: StreamTokens;
  clock: Clock;
  leagueSport: (league: string) => Promise<string | undefined>;
  maxSubscriptionsPerSocket: number;
}

const tags = ['stream'];

/** A list the body names: left out is "not narrowed", an empty one would be a token that sees nothing. */
function named(list: string[] | undefined, field: string): string[] | null {
  if (list === undefined) return null;
  if (list.length === 0) throw invalid('invalid_field', `'${field}' names at least one; leave it out to keep the key's.`, field);
  return [...new Set(list)];
}

/**
 * GET /v1/stream as an event stream (the WebSocket upgrade never reaches a route: gateway.ts
 * takes it from the HTTP server), and POST /v1/stream/tokens (docs/stream.md).
 */
export const streamRoutes: RoutePlugin<StreamRouteDeps> = async (app, deps) => {
  // Public to the auth hook: the gateway's handshake authenticates it as it does an upgrade (a key
  // or a stream token), so both transports pass one boundary and are metered once.
  app.get(
    STREAM_PATH,
    { config: { public: true }, schema: { hide: true, querystring: Type.Object({}, { additionalProperties: true }) } },
    async (request, reply) => {
      // A HEAD (which Fastify routes here too) has no body to stream.
      if (request.method !== 'GET') throw new SvcError('upgrade_required', 'GET /v1/stream is a WebSocket or an event stream (Accept: text/event-stream).');
      const start = await deps.gateway.openEventStream(request.raw, request.id);
      reply.hijack();
      start();
    },
  );

  app.post(
    STREAM_TOKENS_PATH,
    {
      config: { product: 'live' },
      schema: {
        tags,
        summary: 'Mint a stream token for a browser page',
        body: CreateStreamTokenBody,
        response: { 201: One(StreamToken), ...errorResponses, 403: ErrorBody },
      },
    },
    async (request, reply) => {
      const p = principal(request);
      const body = request.body;
      const sports = named(body.sports, 'sports');
      const leagues = named(body.leagues, 'leagues');
      const games = named(body.games, 'games');
      // The same checks as a stream's selection: known names, inside the key's scope (a 403 when
      // not), so a token is never wider than its key.
      await validateSubscriptions(p, { sports: sports ?? [], leagues: leagues ?? [], games: games ?? [] }, deps.leagueSport, deps.maxSubscriptionsPerSocket).catch(
        (err: unknown) => {
          // Named as the body's fields, not as the stream's query parameters.
          if (err instanceof SvcError && err.param !== undefined) {
            const field = `${err.param}s`;
            throw err.code === 'invalid_parameter' ? invalid('invalid_field', err.message, field) : new SvcError(err.code, err.message, field);
          }
          throw err;
        },
      );
      const data = deps.tokens.mint(p, { ttlS: body.ttl_s ?? STREAM_TOKEN_TTL.default, sports, leagues, games }, deps.clock.now());
      return reply.code(201).header('Cache-Control', 'no-store').send({ data });
    },
  );
};
