import type { TeamTable } from '../store/reference/types.js';
import { PlayerBook } from './players.js';
import type { Side, SoccerGoal, SoccerMatch, TeamRef } from './soccer.js';
import { CodeAllocator, externalIds } from './teams.js';
import { matchKey } from './wc.js';

/** results.csv goes back to 1872; the archive keeps the modern era. */
export const INTL_FROM = '2000-01-01';

export interface IntlInput {
  results: Record<string, string>[];
  goals: Record<string, string>[];
  shootouts: Record<string, string>[];
  formerNames: Map<string, string>;
  /** Canonical nation name → World Cup code, and which of those are real FIFA codes. */
  wcCodeByName: Map<string, string>;
  fifaCodes: Set<string>;
  /** Keys (see matchKey) of the World Cup matches imported from openfootball. */
  wcKeys: Set<string>;
}

export interface IntlData {
  teams: TeamTable[];
  players: PlayerBook;
  matches: SoccerMatch[];
  /** results.csv rows left out because openfootball already has the match (league wc). */
  skippedAsWorldCup: number;
  /** "FIFA World Cup" rows of the imported years that matched no openfootball match (should stay empty). */
  unmatchedWorldCup: string[];
}

const rowKey = (r: Record<string, string>): string => `${r.date}|${r.home_team}|${r.away_team}`;
const known = (v: string | undefined): boolean => v !== undefined && v !== '' && v !== 'NA';

function teamRegistry(input: IntlInput, played: Map<string, number>) {
  const alloc = new CodeAllocator();
  for (const c of input.wcCodeByName.values()) alloc.reserve(c);
  const codes = new Map<string, string>();
  const teams: TeamTable[] = [];
  // Busiest teams first, so Andorra rather than Andalusia gets "AND"; then by name, so the
  // derived codes are the same on every run.
  const names = [...played.keys()].sort((a, b) => (played.get(b) ?? 0) - (played.get(a) ?? 0) || (a < b ? -1 : a > b ? 1 : 0));
  for (const name of names) {
    const wcCode = input.wcCodeByName.get(name);
    const code = wcCode ?? alloc.allocate(name);
    codes.set(name, code);
    teams.push({
      id: `team:intl:${code}`,
      sport: 'soccer',
      league: 'intl',
      name,
      code,
      venue_id: null,
      external_ids: externalIds({
        fifa: wcCode && input.fifaCodes.has(wcCode) ? wcCode : null,
        name,
        former_names: input.formerNames.get(name),
      }),
      synthetic: 0,
    });
  }
  return { codes, teams };
}

function groupBy(rows: Record<string, string>[]): Map<string, Record<string, string>[]> {
  const out = new Map<string, Record<string, string>[]>();
  for (const r of rows) {
    if (r.date < INTL_FROM) continue;
    const k = rowKey(r);
    const list = out.get(k);
    if (list) list.push(r);
    else out.set(k, [r]);
  }
  return out;
}

export function buildIntl(input: IntlInput): IntlData {
  const results = input.results.filter((r) => r.date >= INTL_FROM);
  const played = new Map<string, number>();
  for (const r of results) for (const t of [r.home_team, r.away_team]) played.set(t, (played.get(t) ?? 0) + 1);
  const { codes, teams } = teamRegistry(input, played);
  const ref = (name: string): TeamRef => ({ id: `team:intl:${codes.get(name) ?? ''}`, code: codes.get(name) ?? '' });
  const goalsByMatch = groupBy(input.goals);
  const shootoutByMatch = groupBy(input.shootouts);
  const players = new PlayerBook('intl', 'soccer');
  const matches: SoccerMatch[] = [];
  const seenKeys = new Set<string>();
  const unmatchedWorldCup: string[] = [];
  let skippedAsWorldCup = 0;

  results.forEach((r, order) => {
    if (input.wcKeys.has(matchKey(r.date, r.home_team, r.away_team))) {
      skippedAsWorldCup++;
      return;
    }
    const year = Number(r.date.slice(0, 4));
    if (r.tournament === 'FIFA World Cup' && [2014, 2018, 2022, 2026].includes(year)) unmatchedWorldCup.push(rowKey(r));
    const home = ref(r.home_team);
    const away = ref(r.away_team);
    const season = `intl_${year}`;
    const goals: SoccerGoal[] = [];
    for (const g of goalsByMatch.get(rowKey(r)) ?? []) {
      const side: Side | null = g.team === r.home_team ? 'home' : g.team === r.away_team ? 'away' : null;
      if (!side) continue;
      const own = g.own_goal === 'TRUE';
      // `team` is the side credited; an own goal's scorer plays for the other side.
      const playerTeam = (side === 'home') !== own ? home : away;
      let playerId: string | null = null;
      if (known(g.scorer)) {
        playerId = players.ensure(g.scorer);
        players.roster(playerTeam.id, playerId, season);
      }
      const minute = known(g.minute) && /^\d+$/.test(g.minute) ? Number(g.minute) : null;
      goals.push({ side, playerId, minute, offset: null, penalty: g.penalty === 'TRUE', ownGoal: own });
    }
    const so = shootoutByMatch.get(rowKey(r))?.[0];
    const score: [number, number] | null =
      /^\d+$/.test(r.home_score) && /^\d+$/.test(r.away_score) ? [Number(r.home_score), Number(r.away_score)] : null;
    let sourceKey = `intl:${r.date}:${r.home_team}:${r.away_team}`;
    for (let i = 2; seenKeys.has(sourceKey); i++) sourceKey = `intl:${r.date}:${r.home_team}:${r.away_team}:${i}`;
    seenKeys.add(sourceKey);
    matches.push({
      league: 'intl',
      year,
      date: r.date,
      startTime: null,
      name: r.tournament || 'International match',
      group: null,
      venueId: null,
      home,
      away,
      names: [r.home_team, r.away_team],
      score,
      // results.csv has no extra-time flag: a shoot-out or a goal from minute 100 on implies it.
      extraTime: so !== undefined || goals.some((g) => g.minute !== null && g.minute >= 100),
      shootout: so ? { winner: so.winner === r.away_team ? 'away' : 'home', home: null, away: null } : null,
      goals,
      sourceKey,
      source: 'martj42',
      order,
    });
  });
  return { teams, players, matches, skippedAsWorldCup, unmatchedWorldCup };
}
