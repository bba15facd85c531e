import type { BoxScore, Leader, PlayerSeasonStats, Standings } from '@svc/schema';
import { decodeCursor, encodeCursor } from '../domain/cursor.js';
import { invalid } from '../domain/errors.js';
import { SvcError } from '../domain/errors.js';
import { countsInRecord, coversGame } from '../domain/corrections.js';
import { requireScope, type Principal } from '../domain/scopes.js';
import {
  DEFAULT_STAT,
  boxScore,
  crowdPlays,
  latest,
  leaders,
  liveScore,
  playerTotals,
  standings,
  type GameResult,
  type PlayFact,
  type SeasonPlay,
  type TableSport,
} from '../domain/standings/index.js';
import type { CompetitionRepo, SeasonGame } from '../store/reference/competitions.js';
import type { EventLog } from '../store/events/events.js';
import type { LeagueDirectory } from '../store/reference/league-directory.js';
import type { ReferenceRepo } from '../store/reference/reference.js';
import type { PlayTable } from '../store/reference/types.js';

/** The products that read standings, box scores and leaders: any one of them (docs/standings.md). */
export const VIEW_PRODUCTS = ['live', 'archive'] as const;

export function requireViewProduct(p: Principal): void {
  if (!VIEW_PRODUCTS.some((x) => p.products.includes(x))) {
    throw new SvcError('product_not_in_plan', 'Standings, box scores and leaders need the live or the archive product.');
  }
}

/**
 * `tier=provisional` counts the crowd's provisional events of games being played: live data, which
 * only the `live` product reads (docs/standings.md). The confirmed tables (the default) hold no
 * more than the competitions' scores, which every product lists.
 */
export function requireTierProduct(p: Principal, tier: 'confirmed' | 'provisional' | undefined): void {
  if (tier === 'provisional' && !p.products.includes('live')) {
    throw new SvcError('product_not_in_plan', 'Provisional standings count the crowd’s events of games being played: they need the live product.', 'tier');
  }
}

const TABLE_SPORTS: readonly TableSport[] = ['soccer', 'basketball'];
const tableSport = (sport: string): TableSport | undefined => TABLE_SPORTS.find((s) => s === sport);

export const playFact = (r: PlayTable): PlayFact => ({
  period: { unit: r.period_unit, num: r.period_num, label: r.period_label },
  competitor_id: r.competitor_id,
  player_id: r.player_id,
  event_type: r.event_type,
  points: r.points,
  state: JSON.parse(r.state),
  ts: r.ts,
});

/** A team's code, as events name it: the last part of its id (`team:wc:ARG` → `ARG`). */
const teamCode = (entityId: string): string => entityId.slice(entityId.lastIndexOf(':') + 1);

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/**
 * Standings, box scores, leaders and player totals, computed per request from what the store
 * holds (docs/decisions.md "Standings"): the rules are domain/standings/, this reads their inputs.
 */
export class StandingsService {
  constructor(
    private readonly competitions: CompetitionRepo,
    private readonly events: EventLog,
    private readonly reference: ReferenceRepo,
    private readonly leagues: LeagueDirectory,
    private readonly today: () => string,
    /** The local write generation (http/response-cache.ts): any write of this node moves it on. */
    private readonly generation: () => number = () => 0,
    private readonly now: () => number = () => Date.now(),
    /** How long a computed table may serve other nodes' writes late (the response cache's TTL). */
    private readonly ttlMs = 1000,
  ) {}

  /**
   * Computed tables shared by every key (the answer depends on the query alone once the key's
   * scope is checked), kept until this node writes anything or `ttlMs` passes: a cold key then
   * costs a map lookup instead of the season's reads (docs/decisions.md "Standings").
   */
  private memo = new Map<string, { at: number; generation: number; value: Standings }>();

  /** The league's sport with the caller's checks: unknown league 400, out of scope 403, a sport without tables 400. */
  private async tableLeague(p: Principal, league: string): Promise<TableSport> {
    const sport = await this.leagues.require(league);
    requireScope(p, sport, league, 'league');
    const ts = tableSport(sport);
    if (!ts) throw invalid('standings_unavailable', `League '${league}' is ${sport}: standings and leaders exist for soccer and basketball only.`, 'league');
    return ts;
  }

  private async seasonIds(league: string, season: string | undefined): Promise<string[]> {
    if (season === undefined) {
      const current = await this.reference.currentSeasonId(league, this.today());
      if (current === undefined) throw invalid('invalid_parameter', `League '${league}' has no season yet.`, 'season');
      return [current];
    }
    const ids = await this.reference.resolveSeasonIds(season, league);
    if (ids.length === 0) throw invalid('invalid_parameter', `League '${league}' has no season '${season}'; GET /v1/seasons?league=${league} lists them.`, 'season');
    return ids;
  }

  async standings(p: Principal, q: { league: string; season?: string; tier?: 'confirmed' | 'provisional'; live?: 'true' | 'false' }): Promise<Standings> {
    const sport = await this.tableLeague(p, q.league);
    const seasonIds = await this.seasonIds(q.league, q.season);
    const memoKey = `${seasonIds.join(',')}|${q.tier ?? 'confirmed'}|${q.live ?? 'true'}`;
    const generation = this.generation();
    const hit = this.memo.get(memoKey);
    if (hit && hit.generation === generation && this.now() - hit.at <= this.ttlMs) return hit.value;
    const value = await this.computeStandings(sport, seasonIds, q);
    if (this.memo.size >= 256) this.memo.clear();
    this.memo.set(memoKey, { at: this.now(), generation, value });
    return value;
  }

  private async computeStandings(sport: TableSport, seasonIds: string[], q: { tier?: 'confirmed' | 'provisional'; live?: 'true' | 'false' }): Promise<Standings> {
    const games = await this.competitions.seasonGames(seasonIds);
    const countLive = q.live !== 'false';
    const live = countLive ? games.filter((g) => g.status === 'live') : [];
    const facts = await this.events.scoringFacts(live.map((g) => `${g.sport}_${g.n}`));
    const results: GameResult[] = games.map((g) => {
      if (g.status !== 'live') return { id: g.id, group: g.group, status: g.status, sides: g.competitors };
      if (!countLive) return { id: g.id, group: g.group, status: 'scheduled', sides: g.competitors };
      const score = liveScore(
        facts.filter((f) => f.game_id === `${g.sport}_${g.n}`),
        q.tier ?? 'confirmed',
      );
      return { id: g.id, group: g.group, status: 'live', sides: g.competitors.map((c) => ({ entity_id: c.entity_id, score: score.get(teamCode(c.entity_id)) ?? 0 })) };
    });
    const grouped = games.some((g) => g.group !== null);
    const counted = games.filter((g) => (g.status === 'final' || (countLive && g.status === 'live')) && (!grouped || g.group !== null));
    const times: string[] = facts.map((f) => f.ts);
    const newestPlay = await this.competitions.newestPlayTs(counted.map((g) => g.id));
    if (newestPlay !== null) times.push(newestPlay);
    return { data: standings(sport, results), as_of: times.length > 0 ? latest(times) : seasonStart(games) };
  }

  /**
   * The box score of a competition the caller may read (checked by the route): from its official
   * plays, corrections and the plays they withdrew left out; a game no official source covers
   * from its confirmed crowd scores (docs/corrections.md).
   */
  async boxScore(c: { id: string; n: number; sport: string; status: string; date: string; start_time: string | null; competitors: readonly { entity_id: string; role: string }[] }): Promise<BoxScore> {
    const rows = await this.competitions.allPlays(c.id);
    const plays = coversGame(rows) ? rows.filter(countsInRecord).map(playFact) : crowdPlays(c.sport, c.competitors, await this.events.standingScores(`${c.sport}_${c.n}`));
    return boxScore(
      { competition_id: c.id, sport: c.sport, status: c.status, competitors: c.competitors, start: c.start_time ?? `${c.date}T00:00:00.000Z` },
      plays,
    );
  }

  async leaders(p: Principal, q: { league: string; season?: string; stat?: string; limit?: number; cursor?: string }): Promise<Page<Leader>> {
    const sport = await this.tableLeague(p, q.league);
    const after = q.cursor !== undefined ? decodeCursor(q.cursor, ['number', 'string']) : undefined;
    const seasonIds = await this.seasonIds(q.league, q.season);
    const games = new Map((await this.competitions.seasonGames(seasonIds)).map((g) => [g.id, g]));
    const plays = (await this.competitions.seasonPlayerPlays(seasonIds)).filter(countsInRecord).map((r) => seasonPlay(r, games.get(r.competition_id)));
    const all = leaders(playerTotals(plays).values(), q.stat ?? DEFAULT_STAT[sport] ?? 'points');
    const rest = after === undefined ? all : all.filter((l) => l.value < Number(after[0]) || (l.value === Number(after[0]) && l.player_id > String(after[1])));
    const limit = q.limit ?? 100;
    const data = rest.slice(0, limit);
    const last = data[data.length - 1];
    return { data, next_cursor: rest.length > limit && last ? encodeCursor([last.value, last.player_id]) : null };
  }

  async playerStats(p: Principal, playerId: string, q: { season?: string; limit?: number; cursor?: string }): Promise<Page<PlayerSeasonStats> | undefined> {
    const player = await this.reference.player(playerId);
    if (!player) return undefined;
    requireScope(p, player.sport, player.league);
    let seasonIds: string[] | undefined;
    if (q.season !== undefined) {
      seasonIds = await this.reference.resolveSeasonIds(q.season, player.league);
      if (seasonIds.length === 0) throw invalid('invalid_parameter', `League '${player.league}' has no season '${q.season}'.`, 'season');
    }
    const after = q.cursor !== undefined ? String(decodeCursor(q.cursor, ['string'])[0]) : undefined;
    const rows = (await this.competitions.playerPlays(playerId)).filter((r) => countsInRecord(r) && (!seasonIds || seasonIds.includes(r.season_id)));
    const owners = await this.competitions.competitorsOfMany([...new Set(rows.map((r) => r.competition_id))]);
    const bySeason = new Map<string, { league: string; label: string; plays: SeasonPlay[] }>();
    for (const r of rows) {
      let s = bySeason.get(r.season_id);
      if (!s) bySeason.set(r.season_id, (s = { league: r.league, label: r.season_label, plays: [] }));
      s.plays.push({ ...playFact(r), competitors: owners.get(r.competition_id) ?? [], order: `${r.date}|${r.competition_id}|${String(r.seq).padStart(8, '0')}` });
    }
    const all = [...bySeason.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .flatMap(([seasonId, s]) => {
        const t = playerTotals(s.plays).get(playerId);
        return t ? [{ seasonId, stats: { league: s.league, season: s.label, competitor_id: t.competitor_id, points: t.points, by_type: t.by_type } }] : [];
      })
      .filter((x) => after === undefined || x.seasonId > after);
    const limit = q.limit ?? 100;
    const data = all.slice(0, limit);
    const last = data[data.length - 1];
    return { data: data.map((x) => x.stats), next_cursor: all.length > limit && last ? encodeCursor([last.seasonId]) : null };
  }
}

function seasonPlay(r: PlayTable & { date: string }, game: SeasonGame | undefined): SeasonPlay {
  return { ...playFact(r), competitors: game?.competitors ?? [], order: `${r.date}|${r.competition_id}|${String(r.seq).padStart(8, '0')}` };
}

/** A season's first kick-off, for `as_of` before anything was played. */
function seasonStart(games: readonly SeasonGame[]): string {
  const first = games[0];
  if (!first) return new Date(0).toISOString();
  return first.start_time ?? `${first.date}T00:00:00.000Z`;
}
