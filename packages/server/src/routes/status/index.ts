import { Type } from '@sinclair/typebox';
import type { RoutePlugin } from '../types.js';
import { renderStatusPage } from './page.js';

const SportHealth = Type.Object({
  sport: Type.String(),
  status: Type.Union([Type.Literal('operational'), Type.Literal('idle'), Type.Literal('degraded')]),
  live_games: Type.Integer(),
  events_last_5m: Type.Integer(),
  last_event_at: Type.Union([Type.String(), Type.Null()]),
  confirmation_p50_ms: Type.Union([Type.Integer(), Type.Null()]),
});
const StatusBody = Type.Object({
  data: Type.Object({ status: Type.String(), generated_at: Type.String(), uptime_target: Type.String(), sports: Type.Array(SportHealth) }),
});

/** Public status: no key, no scope — it shows feed health, never data. */
export const statusRoutes: RoutePlugin = (app, s) => {
  const current = async () => {
    const rows = await s.db.kysely
      .selectFrom('competitions')
      .select(['sport', (eb) => eb.fn.countAll<number>().as('n')])
      .where('status', '=', 'live')
      .groupBy('sport')
      .execute();
    const sports = s.health.report(new Map(rows.map((r) => [r.sport, Number(r.n)])));
    const overall = sports.some((x) => x.status === 'degraded') ? 'degraded' : 'operational';
    return { status: overall, generated_at: new Date(s.clock.now()).toISOString(), uptime_target: '99.9%', sports };
  };
  app.get('/v1/status', { config: { public: true }, schema: { tags: ['status'], summary: 'Service and per-sport feed health (public)', security: [], response: { 200: StatusBody } } }, async () => ({
    data: await current(),
  }));
  app.get('/status', { config: { public: true }, schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/html; charset=utf-8').send(renderStatusPage(await current())),
  );
};
