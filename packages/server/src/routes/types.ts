import type { FastifyInstance, FastifyBaseLogger, RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression } from 'fastify';
import type { FastifyPluginAsyncTypebox, TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Principal } from '../domain/scopes.js';
import { SvcError } from '../domain/errors.js';
import type { CompetitionRepo } from '../store/reference/competitions.js';
import type { LeagueDirectory } from '../store/reference/league-directory.js';
import type { ReferenceRepo } from '../store/reference/reference.js';
import type { SettledDays } from '../store/reference/settled-days.js';
import type { StandingsService } from '../standings/service.js';

export type App = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/**
 * A resource's routes, as a Fastify plugin: app.ts registers it with `app.register(plugin,
 * { prefix, ...deps })`, so it runs in its own encapsulated context and is handed only the parts
 * it declares in `Deps`, never the whole composition root.
 */
export type RoutePlugin<Deps extends object = Record<never, never>> = FastifyPluginAsyncTypebox<Deps>;

/** What the reference-data routes read. */
export interface ReferenceDeps {
  reference: ReferenceRepo;
  leagues: LeagueDirectory;
}

/** What the competition and game routes read. */
export interface CompetitionDeps extends ReferenceDeps {
  competitions: CompetitionRepo;
  today: () => string;
  /** The service's clock (ms): what `today` means in a `tz`. */
  now: () => number;
}

/** What the competition routes read besides: lists of settled days come from memory. */
export interface CompetitionListDeps extends CompetitionDeps {
  settledDays: SettledDays;
}

/** What the standings, box score, leaders and player-stats routes read (docs/standings.md). */
export interface ViewDeps {
  views: StandingsService;
  competitions: CompetitionRepo;
  today: () => string;
}

/** Authenticated routes always have a principal; this states it once instead of in every handler. */
export function principal(request: { principal: Principal | null }): Principal {
  if (!request.principal) throw new SvcError('missing_api_key', 'Send your key as Authorization: Bearer <API_KEY>.');
  return request.principal;
}
