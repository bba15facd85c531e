import { CompetitionRepo } from '../store/reference/competitions.js';
import type { Db } from '../store/sql/db.js';
import { ReferenceRepo } from '../store/reference/reference.js';
import { hashSeed } from './random.js';
import { gameTimes, type PeriodRef, type SimSport } from './timeline.js';

export type Role = 'home' | 'away';

export interface TeamSide {
  entityId: string;
  /** The team code: the `team` of reports and events. */
  code: string;
  /** The team's latest roster, for the official plays' `player_id`. */
  players: string[];
}

/** Today's game the simulator plays out. */
export interface TargetGame {
  competitionId: string;
  gameId: string;
  sport: SimSport;
  date: string;
  home: TeamSide;
  away: TeamSide;
}

export interface ReplayPlay {
  /** Game seconds after kick-off / tip-off. */
  at: number;
  period: PeriodRef;
  role: Role;
  competitorId: string;
  team: string;
  playerId: string | null;
  eventType: string;
  points: number;
  clock: string | null;
  /** When the play happened in the source game (its `ts`). */
  ts: string;
}

export interface Replay {
  target: TargetGame;
  /** The archived competition whose plays are replayed. */
  sourceId: string;
  plays: ReplayPlay[];
  /** Game seconds from kick-off to the final play. */
  duration: number;
}

/** Archived games a sport's replays are taken from: real World Cup matches with goals, synthetic basketball. */
const SOURCE_LEAGUE: Record<SimSport, string> = { soccer: 'wc', basketball: 'sbl' };

export async function sourcePool(db: Db, sport: SimSport): Promise<string[]> {
  // A 0-0 replay would show nothing; a replay is there to be watched.
  return new CompetitionRepo(db).finalsWithScoring(SOURCE_LEAGUE[sport]);
}

/** The same target always replays the same source, whatever the order games are started in. */
export function pickSource(pool: readonly string[], targetCompetitionId: string): string | undefined {
  return pool.length ? pool[hashSeed(targetCompetitionId) % pool.length] : undefined;
}

const teamCode = (entityId: string): string => entityId.slice(entityId.lastIndexOf(':') + 1);

export async function loadTarget(db: Db, competitionId: string): Promise<TargetGame | undefined> {
  const competitions = new CompetitionRepo(db);
  const c = await competitions.row(competitionId);
  if (!c || (c.sport !== 'soccer' && c.sport !== 'basketball')) return undefined;
  const competitors = await competitions.competitorRows(competitionId);
  const home = competitors.find((x) => x.role === 'home' && x.entity_type === 'team');
  const away = competitors.find((x) => x.role === 'away' && x.entity_type === 'team');
  if (!home || !away || competitors.length !== 2) return undefined;
  const rosters = await new ReferenceRepo(db).latestRosters([home.entity_id, away.entity_id]);
  const players = (teamId: string): string[] => rosters.get(teamId) ?? [];
  const side = (entityId: string): TeamSide => ({ entityId, code: teamCode(entityId), players: players(entityId) });
  return {
    competitionId: c.id,
    gameId: `${c.sport}_${c.n}`,
    sport: c.sport,
    date: c.date,
    home: side(home.entity_id),
    away: side(away.entity_id),
  };
}

/**
 * The source's plays re-cast for the target: the source's home side becomes the target's home
 * team (and away likewise). A scorer is kept when the team is the same; otherwise a player of
 * the target's roster stands in, chosen by a hash of the original so the choice is stable.
 */
export async function loadReplay(db: Db, target: TargetGame, sourceId: string): Promise<Replay> {
  const competitions = new CompetitionRepo(db);
  const roleOf = new Map((await competitions.competitorRows(sourceId)).map((c) => [c.entity_id, c.role]));
  const rows = await competitions.allPlays(sourceId);
  const usable = rows.filter((r) => {
    const role = roleOf.get(r.competitor_id);
    return role === 'home' || role === 'away';
  });
  const times = gameTimes(
    target.sport,
    usable.map((r) => ({ period: { unit: r.period_unit, num: r.period_num, label: r.period_label }, clock: r.clock })),
  );
  const plays = usable.map((r, i): ReplayPlay => {
    const role: Role = roleOf.get(r.competitor_id) === 'home' ? 'home' : 'away';
    const side = target[role];
    let playerId: string | null = null;
    if (r.player_id !== null) {
      if (r.competitor_id === side.entityId) playerId = r.player_id;
      else if (side.players.length) playerId = side.players[hashSeed(r.player_id) % side.players.length];
    }
    return {
      at: times[i],
      period: { unit: r.period_unit, num: r.period_num, label: r.period_label },
      role,
      competitorId: side.entityId,
      team: side.code,
      playerId,
      eventType: r.event_type,
      points: r.points,
      clock: r.clock,
      ts: r.ts,
    };
  });
  // The final play ends the replay; an archived game always has one, but do not rely on it.
  if (!plays.some((p) => p.eventType === 'final')) {
    const last = plays.length ? plays[plays.length - 1].at : 0;
    const lastTs = plays.length ? Date.parse(plays[plays.length - 1].ts) : Number.NaN;
    plays.push({
      at: last + 60,
      period: { unit: 'fulltime', num: 1, label: 'Full time' },
      role: 'home',
      competitorId: target.home.entityId,
      team: target.home.code,
      playerId: null,
      eventType: 'final',
      points: 0,
      clock: null,
      ts: new Date(Number.isNaN(lastTs) ? 0 : lastTs + 60_000).toISOString(),
    });
  }
  return { target, sourceId, plays, duration: plays[plays.length - 1].at };
}
