import Fastify from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { randomBase62 } from './domain/keys.js';
import { registerAuth } from './http/auth.js';
import { MAX_PATH_PARAM_LENGTH, frameworkError, registerErrorHandling, sendError } from './http/errors.js';
import { registerIdempotency } from './http/idempotency.js';
import { asyncApiDocument } from './openapi/asyncapi.js';
import { swaggerOptions } from './openapi/document.js';
import { clientErrorHandler } from './http/client-errors.js';
import { refuseUnstorableText } from './http/text.js';
import { serializerCompiler } from './http/serialization.js';
import { validatorCompiler } from './http/validation.js';
import { loggerOptions, type LogSettings } from './http/logging.js';
import { numericQueryParams, requireDecimalIntegers } from './http/numeric-params.js';
import { registerResponseCache } from './http/response-cache.js';
import { registerEtags } from './http/etag.js';
import { competitionRoutes } from './routes/competitions/index.js';
import { boxScoreRoutes } from './routes/competitions/boxscore.js';
import { leaderRoutes } from './routes/leaders/index.js';
import { playerStatsRoutes } from './routes/players/stats.js';
import { standingsRoutes } from './routes/standings/index.js';
import { gameRoutes } from './routes/games/index.js';
import { meRoutes } from './routes/me/index.js';
import { playerRoutes } from './routes/players/index.js';
import { seasonRoutes } from './routes/seasons/index.js';
import { teamRoutes } from './routes/teams/index.js';
import { venueRoutes } from './routes/venues/index.js';
import { reportRoutes } from './routes/reports/index.js';
import { postPlayRoutes } from './routes/competitions/post-plays.js';
import { postStatusRoutes } from './routes/competitions/post-status.js';
import { changeRoutes } from './routes/changes/index.js';
import { webhookRoutes } from './routes/webhooks/index.js';
import { replayRoutes } from './routes/replays/index.js';
import { reporterRoutes } from './routes/reporters/index.js';
import { notificationRoutes } from './routes/notifications/index.js';
import { exportRoutes } from './routes/export/index.js';
import { STREAM_LIMITS, StreamGateway } from './stream/gateway.js';
import { streamRoutes } from './routes/stream/index.js';
import { demoRoutes } from './routes/demo/index.js';
import { statusRoutes } from './routes/status/index.js';
import { docsRoutes } from './routes/docs/index.js';
import { webRoutes } from './routes/web/index.js';
import { healthRoutes } from './routes/health/index.js';
import { metricsRoutes, registerRequestMetrics } from './routes/metrics/index.js';
import type { App } from './routes/types.js';
import { readinessChecks } from './health/readiness.js';
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

const NoQuery = Type.Object({}, { additionalProperties: false });

/** Builds the HTTP app from its dependencies. Never listens: `main` does, tests use inject() or port 0. */
export async function buildApp(deps: AppDeps, opts: { log?: LogSettings } = {}): Promise<BuiltApp> {
  const services = createServices(deps);
  const nextRequestId = requestIds();
  const { requestTimeoutMs, headersTimeoutMs, keepAliveTimeoutMs, connectionTimeoutMs } = deps.config;
  const app: App = Fastify({
    // Slow clients are cut off on purpose (README "Configuration"): a body announced and never
    // sent, headers that never end, an idle keep-alive or a stalled socket each hold a connection.
    // Node enforces the header and request deadlines on a sweep; it runs often enough that a
    // deadline is late by at most a quarter of itself (or one second).
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    connectionTimeout: connectionTimeoutMs,
    http: { headersTimeout: headersTimeoutMs, connectionsCheckingInterval: Math.max(25, Math.min(1000, Math.floor(headersTimeoutMs / 4))) },
    logger: opts.log ? loggerOptions(opts.log) : false,
    bodyLimit: deps.config.bodyLimitBytes,
    genReqId: nextRequestId,
    routerOptions: { maxParamLength: MAX_PATH_PARAM_LENGTH },
    frameworkErrors: (err, request, reply) => {
      sendError(reply, request, frameworkError(err));
    },
    clientErrorHandler: clientErrorHandler(nextRequestId),
    requestIdHeader: false,
    // While draining, requests on open connections still reach their routes (the listener is
    // closed, so there are no new connections): /readyz answers 503 `draining` in the documented body.
    return503OnClosing: false,
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler());
  app.setSerializerCompiler(serializerCompiler());

  // A callback hook: no promise per request on the hottest path.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    // While draining, each answer closes its connection after it: a client's next request then
    // opens a connection to another node instead of racing the close of an idle one (serve.ts).
    if (services.lifecycle.draining) reply.header('Connection', 'close');
    done();
  });
  registerErrorHandling(app, () => services.storeHealth.fault());
  app.addHook('preValidation', refuseUnstorableText);
  // The REST channel's health on the status page: answers and 5xx of this node, by minute.
  app.addHook('onResponse', (_request, reply, done) => {
    services.status.requests.record(reply.statusCode);
    done();
  });
  // Every body is JSON; anything else is a 415 rather than a string the routes would misread.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRoute', (route) => {
    // The API reference's routes come from @fastify/swagger-ui, which takes no route config.
    if (route.url.startsWith('/docs')) route.config = { ...(route.config ?? {}), public: true };
    // Unknown query parameters are a 400 everywhere: a typo must never silently widen a query.
    if (route.url.startsWith('/v1/') && !route.schema?.querystring) {
      route.schema = { ...(route.schema ?? {}), querystring: NoQuery };
    }
    const numeric = numericQueryParams(route);
    if (numeric.length > 0) {
      const own = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
      route.preValidation = [requireDecimalIntegers(numeric), ...own];
    }
  });

  await app.register(
    swagger,
    swaggerOptions({
      title: 'svc — sports scoring data',
      version: '1.0.0',
      description:
        'Live and historical sports scoring data. Every request carries `Authorization: Bearer <API_KEY>`. Lists return `{data, next_cursor}`; errors return `{error: {type, code, message, param?, request_id}}`. The stream (`GET /v1/stream`, a WebSocket or server-sent events; browser pages authenticate with a stream token from `POST /v1/stream/tokens`) is described by the AsyncAPI document at `/v1/asyncapi.json`, for people at `/docs/stream`.',
    }),
  );
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { url: '/v1/openapi.json' }, logLevel: 'warn' });

  registerAuth(app, services.auth, services.limiter);
  registerIdempotency(app, services.idempotency, services.clock);
  registerResponseCache(app, services.cache, () => services.storeHealth.down);
  registerEtags(app);
  registerRequestMetrics(app, services.metrics);

  app.get('/v1/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  const asyncApi = asyncApiDocument();
  app.get('/v1/asyncapi.json', { config: { public: true }, schema: { hide: true } }, async () => asyncApi);

  // Each resource's routes in an encapsulated plugin, handed only what they use (docs/architecture.md).
  const s = services;
  const reference = { reference: s.reference, leagues: s.leagues };
  const competitions = { ...reference, competitions: s.competitions, today: s.today, now: () => s.clock.now() };
  await app.register(healthRoutes, { lifecycle: s.lifecycle, readiness: () => readinessChecks(s) });
  await app.register(metricsRoutes, { metrics: s.metrics });
  await app.register(webRoutes);
  await app.register(docsRoutes, { asyncApi });
  await app.register(statusRoutes, { status: s.status });
  await app.register(meRoutes, { prefix: '/v1' });
  await app.register(teamRoutes, { prefix: '/v1', ...reference });
  await app.register(playerRoutes, { prefix: '/v1', ...reference });
  await app.register(venueRoutes, { prefix: '/v1', ...reference });
  await app.register(seasonRoutes, { prefix: '/v1', ...reference });
  await app.register(competitionRoutes, { prefix: '/v1', ...competitions, settledDays: s.settledDays });
  await app.register(gameRoutes, { prefix: '/v1', ...competitions });
  const views = { views: s.views, competitions: s.competitions, today: s.today };
  await app.register(standingsRoutes, { prefix: '/v1', ...views });
  await app.register(boxScoreRoutes, { prefix: '/v1', ...views });
  await app.register(leaderRoutes, { prefix: '/v1', ...views });
  await app.register(playerStatsRoutes, { prefix: '/v1', ...views });
  await app.register(reportRoutes, { prefix: '/v1', ingest: s.live.ingest });
  await app.register(postPlayRoutes, { prefix: '/v1', official: s.live.official });
  await app.register(postStatusRoutes, { prefix: '/v1', schedule: s.live.schedule });
  await app.register(changeRoutes, { prefix: '/v1', changes: s.changes });
  await app.register(webhookRoutes, { prefix: '/v1/webhooks', manage: s.webhooks.manage });
  await app.register(replayRoutes, { prefix: '/v1/replays', replays: s.replays.service });
  await app.register(reporterRoutes, { prefix: '/v1/reporters', reporters: s.live.reporters });
  await app.register(notificationRoutes, { prefix: '/v1', manage: s.webhooks.manage });
  await app.register(exportRoutes, { prefix: '/v1', ...competitions, exports: s.exports, exportSlots: s.exportSlots, changes: s.changes });
  // The stream shares the HTTP server: upgrades go to the gateway straight from it, event-stream
  // requests through the stream's route (docs/stream.md).
  const gateway = new StreamGateway({
    auth: services.auth,
    activeKeys: (ids) => services.keys.activeIds(ids),
    limiter: services.limiter,
    bus: services.bus,
    events: services.events,
    counter: services.connections,
    clock: services.clock,
    leagueSport: (l) => services.leagues.sportOf(l),
    draining: () => services.lifecycle.draining,
    tokens: services.streamTokens,
    limits: deps.streamLimits,
  });
  await app.register(streamRoutes, {
    gateway,
    tokens: services.streamTokens,
    clock: services.clock,
    leagueSport: (l) => services.leagues.sportOf(l),
    maxSubscriptionsPerSocket: { ...STREAM_LIMITS, ...deps.streamLimits }.maxSubscriptionsPerSocket,
  });
  await app.register(demoRoutes, {
    enabled: deps.config.env === 'sandbox',
    limiter: services.limiter,
    keys: services.keys,
    tokens: services.streamTokens,
    competitions: services.competitions,
    today: services.today,
    clock: services.clock,
  });
  gateway.attach(app.server);
  services.metrics.readFrom({ streamConnections: () => gateway.connections });
  // preClose, not onClose: the HTTP server's close waits for every socket, upgraded ones included,
  // so the stream clients must be told to go (1001) before it, or shutdown waits for them.
  app.addHook('preClose', async () => {
    await gateway.close();
  });
  app.addHook('onClose', async () => {
    services.storeHealth.close();
    await services.replays.driver.stop();
    await services.exports.close();
    await services.live.ingest.close();
    await services.connections.close();
    await services.exportSlots.close();
    await services.webhooks.tester.close();
  });
  return { app, services, gateway };
}
