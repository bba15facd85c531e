import { MAX_RUNNING_REPLAYS, REPLAY_SPEED, TEAM_SPORTS, parseGameId, type CreateReplayInput, type Replay } from '@svc/schema';
import { isoDate, isoTime, type Clock } from '../domain/clock.js';
import { conflict, invalid, notFound, SvcError } from '../domain/errors.js';
import { randomBase62 } from '../domain/keys.js';
import { requireScope, visibleTo, type Principal } from '../domain/scopes.js';
import type { GameDirectory } from '../live/games.js';
import type { OfficialFeed } from '../live/official.js';
import type { CompetitionRepo } from '../store/reference/competitions.js';
import type { Page, PageRequest } from '../store/sql/page.js';
import { ReplayRepo, replayRecord } from '../store/accounts/replays.js';
import type { ReplayTable } from '../store/accounts/types.js';
import { closeReplayGame } from './close.js';
import type { ReplayDriver } from './driver.js';

export interface ReplayServiceDeps {
  clock: Clock;
  replays: ReplayRepo;
  competitions: CompetitionRepo;
  games: GameDirectory;
  official: OfficialFeed;
  driver: ReplayDriver;
}

/**
 * The rules of sandbox replays (docs/replays.md): who may replay what, the per-key limit, and
 * cancellation. Throws SvcError; no HTTP here.
 */
export class ReplayService {
  constructor(private readonly deps: ReplayServiceDeps) {}

  async create(p: Principal, input: CreateReplayInput): Promise<Replay> {
    sandboxOnly(p);
    const speed = input.speed ?? REPLAY_SPEED.default;
    const { competitions, clock } = this.deps;
    const parsed = parseGameId(input.game_id);
    const source = parsed && TEAM_SPORTS.some((s) => s === parsed.sport) ? await competitions.getByGame(parsed.sport, parsed.n) : undefined;
    // As a report naming a game: 400 with the parameter, and another key's replay does not exist either.
    if (!source || !visibleTo(source.ownerKeyId, p.keyId)) throw invalid('unknown_game', `No game '${input.game_id}'.`, 'game_id');
    requireScope(p, source.sport, source.league, 'game_id');
    const home = source.competitors.find((c) => c.role === 'home' && c.entity_type === 'team');
    const away = source.competitors.find((c) => c.role === 'away' && c.entity_type === 'team');
    // Every game (a team sport's competition) is two teams; a record that is not cannot be played.
    if (!home || !away || source.competitors.length !== 2) throw invalid('unknown_game', `Game '${input.game_id}' is not a game between two teams.`, 'game_id');
    if (source.status !== 'final') throw conflict('game_not_final', `Game '${input.game_id}' is ${source.status}; only final games can be replayed.`, 'game_id');

    const nowMs = clock.now();
    const now = isoTime(nowMs);
    const id = `rpl_${randomBase62(24)}`;
    let row: ReplayTable | undefined;
    await competitions.createOwnedGame(
      source.sport,
      (n) => ({
        competition: {
          id: `${source.sport}_${source.league}_${n}`,
          sport: source.sport,
          league: source.league,
          // The source's season, left as it is: the replay's game is its key's alone (docs/replays.md).
          season_id: source.season_id,
          n,
          date: isoDate(nowMs),
          start_time: now,
          status: 'scheduled',
          venue_id: source.venue,
          name: `Replay of ${source.name ?? input.game_id}`.slice(0, 200),
          synthetic: 1,
          source_key: `replay:${id}`,
          owner_key_id: p.keyId,
        },
        competitors: [home, away].map((c, idx) => ({
          competition_id: `${source.sport}_${source.league}_${n}`,
          idx,
          entity_type: 'team',
          entity_id: c.entity_id,
          role: c.role,
          score: 0,
        })),
      }),
      async (trx, game) => {
        // Counted under the lock every new game is numbered under: two requests cannot both take the last place.
        if ((await ReplayRepo.activeCount(trx, p.keyId)) >= MAX_RUNNING_REPLAYS) {
          throw conflict('replay_limit', `This key already runs ${MAX_RUNNING_REPLAYS} replays; cancel one (DELETE /v1/replays/:id) or wait for one to finish.`);
        }
        row = {
          id,
          key_id: p.keyId,
          game_id: `${source.sport}_${game.n}`,
          competition_id: game.competitionId,
          source_game_id: `${source.sport}_${source.n}`,
          source_competition_id: source.id,
          speed,
          status: 'scheduled',
          reason: null,
          created_at: now,
          started_at: null,
          finished_at: null,
          driver: null,
          driver_until: null,
        };
        await ReplayRepo.insert(trx, row);
      },
    );
    if (!row) throw new Error('replay row not written');
    // This node starts it at once; should it stop first, any node's next tick takes it over.
    void this.deps.driver.drive(id).catch(() => undefined);
    return replayRecord(row);
  }

  async list(p: Principal, page: PageRequest): Promise<Page<Replay>> {
    sandboxOnly(p);
    return this.deps.replays.list(p.keyId, page);
  }

  async get(p: Principal, id: string): Promise<Replay> {
    sandboxOnly(p);
    const row = await this.deps.replays.get(p.keyId, id);
    if (!row) throw notFound('replay', id, 'id');
    return replayRecord(row);
  }

  /**
   * Cancels a replay not over yet and ends its game with a `final` play, so it does not stay
   * live; a replay already over is answered as it is.
   */
  async cancel(p: Principal, id: string): Promise<Replay> {
    sandboxOnly(p);
    const { replays, clock, driver, games, official } = this.deps;
    const row = await replays.get(p.keyId, id);
    if (!row) throw notFound('replay', id, 'id');
    if (await replays.end(id, 'cancelled', 'cancelled by its key', isoTime(clock.now()))) {
      await driver.halt(id);
      await closeReplayGame(games, official, row.competition_id, 'replay cancelled');
    }
    const after = await replays.get(p.keyId, id);
    if (!after) throw notFound('replay', id, 'id');
    return replayRecord(after);
  }
}

/** Replays are for testing integrations: a production (`svc_live_…`) key gets a 403. */
function sandboxOnly(p: Principal): void {
  if (p.environment !== 'sandbox') throw new SvcError('sandbox_only', 'Replays take a sandbox key (svc_test_…); production keys cannot start or read them.');
}
