import Fastify, { type FastifyServerOptions } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { randomBase62 } from './domain/keys.js';
import { registerAuth } from './http/auth.js';
import { registerErrorHandling } from './http/errors.js';
import { competitionRoutes } from './routes/competitions/index.js';
import { gameRoutes } from './routes/games/index.js';
import { meRoutes } from './routes/me/index.js';
import { playerRoutes } from './routes/players/index.js';
import { seasonRoutes } from './routes/seasons/index.js';
import { teamRoutes } from './routes/teams/index.js';
import { venueRoutes } from './routes/venues/index.js';
import type { App, RoutePlugin } from './routes/types.js';
import { createServices, type AppDeps, type Services } from './services.js';

export interface BuiltApp {
  app: App;
  services: Services;
}

const ROUTES: RoutePlugin[] = [meRoutes, teamRoutes, playerRoutes, venueRoutes, seasonRoutes, competitionRoutes, gameRoutes];

/** Builds the HTTP app from its dependencies. Never listens: `main` does, tests use inject() or port 0. */
export async function buildApp(deps: AppDeps, opts: { logger?: FastifyServerOptions['logger'] } = {}): Promise<BuiltApp> {
  const services = createServices(deps);
  const app: App = Fastify({
    logger: opts.logger ?? false,
    bodyLimit: deps.config.bodyLimitBytes,
    genReqId: () => `req_${randomBase62(20)}`,
    requestIdHeader: false,
    disableRequestLogging: false,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true, allErrors: false } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', request.id);
  });
  registerErrorHandling(app);

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
  app.addHook('onRoute', (route) => {
    if (route.url.startsWith('/docs')) route.config = { ...(route.config ?? {}), public: true };
  });

  registerAuth(app, services.auth, services.limiter);

  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  app.get('/healthz', { config: { public: true }, schema: { hide: true } }, async () => ({ ok: true }));

  for (const route of ROUTES) route(app, services);
  return { app, services };
}
