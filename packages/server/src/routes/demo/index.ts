import { TEAM_SPORTS } from '@svc/schema';
import type { FastifyRequest } from 'fastify';
import type { Clock } from '../../domain/clock.js';
import { addressBucket } from '../../domain/client-address.js';
import { rateLimited } from '../../http/auth.js';
import type { RateLimiter } from '../../http/rate-limit.js';
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
  /** Counts each client address's calls (the shared rate windows: Redis across nodes, else this node's). */
  limiter: RateLimiter;
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
 * What one client address may do with the demo (docs/stream.md "A scoreboard in a public page"):
 * its endpoints need no key, and every visitor shares the demo key's 25 stream connections and
 * 1,000 requests a minute, so without these one client could take them all. A page mints a
 * token every 5 minutes and re-reads the board after confirmed events (at most a few times a
 * minute); a visitor with a few tabs open holds a few streams.
 */
export const DEMO_PER_ADDRESS = {
  /** `POST /demo/token` per minute. */
  tokensPerMinute: 20,
  /** `GET /demo/games` per minute. */
  gamesPerMinute: 120,
  /** Streams open at once with the demo's tokens, and stream opens per minute. */
  stream: { connections: 3, requestsPerMinute: 30 },
} as const;

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
  /** One call of this client address to `what`, within `perMinute` (429 rate_limited with Retry-After past it). */
  async function perAddress(request: FastifyRequest, what: string, perMinute: number): Promise<void> {
    const d = await deps.limiter.hit(`demo:${what}:${addressBucket(request.socket.remoteAddress)}`, perMinute);
    if (!d.allowed) throw rateLimited(d);
  }

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

  app.post('/demo/token', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    if (!deps.enabled) throw off();
    await perAddress(request, 'token', DEMO_PER_ADDRESS.tokensPerMinute);
    const p = await demoPrincipal();
    const data = deps.tokens.mint(p, { ttlS: DEMO_TOKEN_TTL_S, sports: null, leagues: null, games: null, perAddress: DEMO_PER_ADDRESS.stream }, deps.clock.now());
    return reply.code(201).header('Cache-Control', 'no-store').send({ data });
  });

  app.get('/demo/games', { config: { public: true }, schema: { hide: true } }, async (request, reply) => {
    if (!deps.enabled) throw off();
    await perAddress(request, 'games', DEMO_PER_ADDRESS.gamesPerMinute);
    const day = deps.today();
    const page = await deps.competitions.list({ sports: null, leagues: null, viewerKeyId: null }, { sports: TEAM_SPORTS, date: day }, { limit: 200 });
    return reply.header('Cache-Control', 'no-store').send({ data: page.data.map((c) => gameOf(c, day)) });
  });
};
