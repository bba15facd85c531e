import Fastify, { type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { randomBase62 } from './domain/keys.js';
import { registerAuth } from './http/auth.js';
import { registerErrorHandling } from './http/errors.js';
import { registerResponseCache } from './http/response-cache.js';
import { competitionRoutes } from './routes/competitions/index.js';
import { gameRoutes } from './routes/games/index.js';
import { meRoutes } from './routes/me/index.js';
import { playerRoutes } from './routes/players/index.js';
import { seasonRoutes } from './routes/seasons/index.js';
import { teamRoutes } from './routes/teams/index.js';
import { venueRoutes } from './routes/venues/index.js';
import { reportRoutes } from './routes/reports/index.js';
import { postPlayRoutes } from './routes/competitions/post-plays.js';
import { webhookRoutes } from './routes/webhooks/index.js';
import { notificationRoutes } from './routes/notifications/index.js';
import { exportRoutes } from './routes/export/index.js';
import { StreamGateway } from './stream/gateway.js';
import { statusRoutes } from './routes/status/index.js';
import { healthRoutes } from './routes/health/index.js';
import { metricsRoutes } from './routes/metrics/index.js';
import { SvcError } from './domain/errors.js';
import type { App, RoutePlugin } from './routes/types.js';
import { createServices, type AppDeps, type Services } from './services.js';

export interface BuiltApp {
  app: App;
  services: Services;
  gateway: StreamGateway;
}

/** Unique and cheap: a random per-process prefix and a counter (ids need not be secret). */
function requestIds(): () => string {
  const prefix = `req_${randomBase62(10)}`;
  let n = 0;
  return () => `${prefix}${(n++).toString(36).padStart(8, '0')}`;
}

/** Read endpoints whose answer depends only on the URL and the key's grants. */
const CACHEABLE = ['/v1/teams', '/v1/players', '/v1/venues', '/v1/seasons', '/v1/competitions', '/v1/games'];

const NoQuery = Type.Object({}, { additionalProperties: false });

const ROUTES: RoutePlugin[] = [statusRoutes, reportRoutes, postPlayRoutes, meRoutes, teamRoutes, playerRoutes, venueRoutes, seasonRoutes, competitionRoutes, gameRoutes, webhookRoutes, notificationRoutes, exportRoutes];

/** Builds the HTTP app from its dependencies. Never listens: `main` does, tests use inject() or port 0. */
export async function buildApp(deps: AppDeps, opts: { logger?: FastifyServerOptions['logger'] } = {}): Promise<BuiltApp> {
  const services = createServices(deps);
  const app: App = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: deps.config.bodyLimitBytes,
    genReqId: requestIds(),
    requestIdHeader: false,
    // While draining, requests on open connections still reach their routes (the listener is
    // closed, so there are no new connections): /readyz answers 503 `draining` in the documented body.
    return503OnClosing: false,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // A callback hook: no promise per request on the hottest path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    done();
  });
  registerErrorHandling(app);
  // Every body is JSON; anything else is a 415 rather than a string the routes would misread.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...(route.config ?? {}), public: true };
    // Ingestion runs at reporter speed; a log line per report would drown everything else.
    if (route.method === 'POST' && (route.url === '/v1/reports' || route.url === '/v1/competitions/:id/plays')) route.logLevel = 'warn';
    if (route.method === 'GET' && CACHEABLE.some((prefix) => route.url.startsWith(prefix))) {
      route.config = { ...(route.config ?? {}), cache: true };
    }
    // Unknown query parameters are a 400 everywhere: a typo must never silently widen a query.
    if (route.url.startsWith('/v1/') && !route.schema?.querystring) {
      route.schema = { ...(route.schema ?? {}), querystring: NoQuery };
    }
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'svc — sports scoring data',
        version: '1.0.0',
        description:
          'Live and historical sports scoring data. Every request carries `Authorization: Bearer <API_KEY>`. Lists return `{data, next_cursor}`; errors return `{error: {type, code, message, param?, request_id}}`.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { url: '/v1/openapi.json' }, logLevel: 'warn' });

  registerAuth(app, services.auth, services.limiter);
  registerResponseCache(app, services.cache);
  metricsRoutes(app, services);

  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  healthRoutes(app, services);

  for (const route of ROUTES) route(app, services);
  // The stream shares the HTTP server; a GET without an upgrade gets a clear answer.
  app.get('/v1/stream', { config: { product: 'live' }, schema: { hide: true, querystring: Type.Object({}, { additionalProperties: true }) } }, async () => {
    throw new SvcError('invalid_request', 'upgrade_required', 'GET /v1/stream is a WebSocket: send Connection: Upgrade.');
  });
  const gateway = new StreamGateway({
    auth: services.auth,
    bus: services.bus,
    events: services.events,
    counter: services.connections,
    clock: services.clock,
    leagueSport: (l) => services.leagues.sportOf(l),
    limits: deps.streamLimits,
  });
  gateway.attach(app.server);
  services.metrics.readFrom({ streamConnections: () => gateway.connections });
  // Streams close before the server does: the server's close waits for every socket, and an
  // upgraded one ends only when its stream does.
  app.addHook('preClose', async () => gateway.close());
  app.addHook('onClose', async () => services.connections.close());
  return { app, services, gateway };
}
