import type { EventFields } from '../store/events/json.js';
import type { CompetitionTable, PlayTable, SeasonTable } from '../store/reference/types.js';

export interface Period {
  unit: string;
  num: number;
  label: string;
}

export const fullTime = (label = 'Full time'): Period => ({ unit: 'fulltime', num: 1, label });

export interface PlayInput {
  seq: number;
  period: Period;
  competitorId: string;
  playerId: string | null;
  eventType: string;
  points: number;
  clock: string | null;
  state: Record<string, number>;
  source: string;
  ts: string;
}

export function playRow(competitionId: string, p: PlayInput): PlayTable {
  return {
    competition_id: competitionId,
    seq: p.seq,
    period_unit: p.period.unit,
    period_num: p.period.num,
    period_label: p.period.label,
    competitor_id: p.competitorId,
    player_id: p.playerId,
    event_type: p.eventType,
    points: p.points,
    clock: p.clock,
    state: JSON.stringify(p.state),
    source: p.source,
    ts: p.ts,
  };
}

/** The confirmed event an official scoring play stands for (archive events need no crowd). */
export function scoreEvent(c: CompetitionTable, play: PlayTable, team: string): EventFields {
  return {
    type: 'score',
    tier: 'confirmed',
    game_id: `${c.sport}_${c.n}`,
    competition_id: c.id,
    sport: c.sport,
    league: c.league,
    season_id: c.season_id,
    team,
    event_type: play.event_type,
    points: play.points,
    clock: play.clock,
    ts: play.ts,
    agreement: 1,
    reporters: 0,
    latency_ms: 0,
    probability: 1,
    provisional_id: null,
    retracted_id: null,
  };
}

/** Events in the order they happened, so the global event sequence reads like a timeline. */
export function sortEvents(events: EventFields[]): EventFields[] {
  return [...events].sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
}

export const addMinutes = (iso: string, minutes: number): string => new Date(Date.parse(iso) + minutes * 60_000).toISOString();

export interface SeasonMeta {
  sport: string;
  synthetic: number;
  source: string;
}

/** One season row per season id in use, spanning its first to last competition date. */
export function seasonRows(competitions: CompetitionTable[], meta: (league: string) => SeasonMeta): SeasonTable[] {
  const span = new Map<string, { league: string; start: string; end: string }>();
  for (const c of competitions) {
    const s = span.get(c.season_id);
    if (!s) span.set(c.season_id, { league: c.league, start: c.date, end: c.date });
    else {
      if (c.date < s.start) s.start = c.date;
      if (c.date > s.end) s.end = c.date;
    }
  }
  return [...span.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([id, s]) => {
      const m = meta(s.league);
      return {
        id,
        league: s.league,
        sport: m.sport,
        label: id.slice(id.lastIndexOf('_') + 1),
        start_date: s.start,
        end_date: s.end,
        synthetic: m.synthetic,
        source: m.source,
      };
    });
}
