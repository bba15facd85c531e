import { TEAM_SPORTS } from '@svc/schema';
import type { Clock } from '../../domain/clock.js';
import { SvcError } from '../../domain/errors.js';
import type { Principal } from '../../domain/scopes.js';
import type { CompetitionRepo } from '../../store/reference/competitions.js';
import { principalOf, type KeyRepo } from '../../store/accounts/keys.js';
import type { StreamTokens } from '../../stream/tokens.js';
import { gameOf } from '../games/index.js';
import type { RoutePlugin } from '../types.js';
import { loadAsset, securePage } from '../web/index.js';

export interface DemoDeps {
  /** The demo is served in the sandbox only: in production its routes are 404s. */
  enabled: boolean;
  keys: KeyRepo;
  tokens: StreamTokens;
  competitions: CompetitionRepo;
  today: () => string;
  clock: Clock;
}

/** The key the demo's endpoint mints with: found by this name, created live-only on first use. */
export const DEMO_SCOREBOARD_KEY = 'demo scoreboard (sandbox, live only)';
/** The demo's tokens live 5 minutes; the page renews them as they expire. */
const DEMO_TOKEN_TTL_S = 300;

/**
 * The demo scoreboard (docs/stream.md "A scoreboard in a public page"): `/demo`, a public page of
 * today's games that holds no API key, and the two small endpoints a web developer's own back end
 * would have: `POST /demo/token` mints a stream token and `GET /demo/games` lists today's games.
 * They act as a key of their own, kept on the server: a sandbox key with the `live` product only
 * (so what a visitor can get is a token for the stream, nothing else), created on first use and
 * found again by name; revoking it ends the demo's streams and the next visit creates another.
 * Served in the sandbox only: a production deployment answers 404 on every demo route.
 */
export const demoRoutes: RoutePlugin<DemoDeps> = async (app, deps) => {
  let keyId: string | null = null;
  async function demoPrincipal(): Promise<Principal> {
    if (keyId) {
      const k = await deps.keys.findById(keyId);
      if (k && !k.revoked_at) return principalOf(k);
    }
    const found = (await deps.keys.list()).find((k) => k.name === DEMO_SCOREBOARD_KEY && !k.revoked_at);
    const record = found ?? (await deps.keys.create({ name: DEMO_SCOREBOARD_KEY, plan: 'pro', products: ['live'] }, new Date(deps.clock.now()))).record;
    keyId = record.id;
    return principalOf(record);
  }
  const off = () => new SvcError('route_not_found', 'The demo is served by sandbox deployments only.');

  for (const [url, file] of [
    ['/demo', 'demo/index.html'],
    ['/ui/scoreboard.js', 'demo/scoreboard.js'],
  ] as const) {
    const asset = loadAsset(file);
    app.get(url, { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
      if (!deps.enabled) throw off();
      securePage(reply, asset.type).header('Cache-Control', 'no-cache').header('ETag', asset.etag);
      if (request.headers['if-none-match'] === asset.etag) return reply.code(304).send();
      return reply.send(asset.body);
    });
  }

  app.post('/demo/token', { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
    if (!deps.enabled) throw off();
    const p = await demoPrincipal();
    const data = deps.tokens.mint(p, { ttlS: DEMO_TOKEN_TTL_S, sports: null, leagues: null, games: null }, deps.clock.now());
    return reply.code(201).header('Cache-Control', 'no-store').send({ data });
  });

  app.get('/demo/games', { config: { public: true }, schema: { hide: true } }, async (_request, reply) => {
    if (!deps.enabled) throw off();
    const day = deps.today();
    const page = await deps.competitions.list({ sports: null, leagues: null, viewerKeyId: null }, { sports: TEAM_SPORTS, date: day }, { limit: 200 });
    return reply.header('Cache-Control', 'no-store').send({ data: page.data.map((c) => gameOf(c, day)) });
  });
};
