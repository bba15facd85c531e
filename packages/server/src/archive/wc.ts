import type { TeamTable, VenueTable } from '../store/reference/types.js';
import { PlayerBook, SquadIndex } from './players.js';
import { parseMinute, type Side, type SoccerGoal, type SoccerMatch, type TeamRef } from './soccer.js';
import type { OfMatch, WorldCupSource } from './sources.js';
import { canonicalTeamName, CodeAllocator, externalIds } from './teams.js';
import { kickoffUtc, matchGround, wcVenues, type WcVenue } from './venues.js';
import { slugify } from './slug.js';

export interface WorldCupData {
  teams: TeamTable[];
  venues: VenueTable[];
  players: PlayerBook;
  matches: SoccerMatch[];
  /** Canonical (results.csv) nation name → code used for it in league `wc`. */
  codeByName: Map<string, string>;
  /** Codes that come from a teams file (real FIFA codes), as opposed to derived ones. */
  fifaCodes: Set<string>;
  /** Grounds that matched no stadium (should stay empty). */
  unmatchedGrounds: string[];
}

function teamRegistry(sources: WorldCupSource[], formerNames: Map<string, string>) {
  const codeByName = new Map<string, string>();
  const nameByCode = new Map<string, string>();
  const fifaCodes = new Set<string>();
  // Newest teams file first: a nation's name is its latest spelling in the source.
  for (const src of [...sources].sort((a, b) => b.year - a.year)) {
    for (const t of src.teams) {
      for (const n of [t.name, t.alt]) if (n && !codeByName.has(canonicalTeamName(n))) codeByName.set(canonicalTeamName(n), t.code);
      if (!nameByCode.has(t.code)) nameByCode.set(t.code, t.name);
      fifaCodes.add(t.code);
    }
  }
  // 2022 has no teams file; a nation that appears only there gets a derived code.
  const alloc = new CodeAllocator();
  for (const c of fifaCodes) alloc.reserve(c);
  for (const src of [...sources].sort((a, b) => a.year - b.year)) {
    for (const m of src.matches) {
      for (const name of [m.team1, m.team2]) {
        const canon = canonicalTeamName(name);
        if (codeByName.has(canon)) continue;
        const code = alloc.allocate(canon);
        codeByName.set(canon, code);
        nameByCode.set(code, name);
      }
    }
  }
  const teams: TeamTable[] = [...nameByCode.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([code, name]) => ({
      id: `team:wc:${code}`,
      sport: 'soccer',
      league: 'wc',
      name,
      code,
      venue_id: null,
      external_ids: externalIds({
        fifa: fifaCodes.has(code) ? code : null,
        name,
        former_names: formerNames.get(canonicalTeamName(name)),
      }),
      synthetic: 0,
    }));
  return { codeByName, fifaCodes, teams };
}

function squadPlayers(src: WorldCupSource, players: PlayerBook, index: SquadIndex): void {
  const dobBySlug = new Map<string, string>();
  for (const team of src.squads ?? []) {
    const teamId = `team:wc:${team.fifa_code}`;
    for (const p of team.players) {
      let slug = slugify(p.name);
      // Same name, different person (another birth date): keep both, the later one suffixed by nation.
      if (players.has(slug) && dobBySlug.get(slug) !== p.date_of_birth) slug = `${slug}-${team.fifa_code.toLowerCase()}`;
      dobBySlug.set(slug, p.date_of_birth ?? '');
      const id = players.ensure(p.name, { position: p.pos ?? null, externalIds: externalIds({ dob: p.date_of_birth, club: p.club?.name }) }, slug);
      players.roster(teamId, id, `wc_${src.year}`, p.number ?? null, p.pos ?? null);
      index.add(teamId, p.name, id);
    }
  }
}

function matchName(year: number, m: OfMatch): string {
  return `FIFA World Cup ${year} · ${m.group ?? m.round}`;
}

export function buildWorldCup(sources: WorldCupSource[], formerNames: Map<string, string>, venueIds: Set<string>): WorldCupData {
  const { codeByName, fifaCodes, teams } = teamRegistry(sources, formerNames);
  const ref = (name: string): TeamRef => {
    const code = codeByName.get(canonicalTeamName(name)) ?? '';
    return { id: `team:wc:${code}`, code };
  };
  const players = new PlayerBook('wc', 'soccer');
  const index = new SquadIndex();
  // Squads first: a real roster entry (position, birth date, club) beats a bare scorer name.
  for (const src of sources) if (src.squads) squadPlayers(src, players, index);

  const venues: VenueTable[] = [];
  const matches: SoccerMatch[] = [];
  const unmatchedGrounds: string[] = [];
  for (const src of sources) {
    const v = wcVenues(src.year, src.stadiums, venueIds);
    venues.push(...v.rows);
    const season = `wc_${src.year}`;
    src.matches.forEach((m, order) => {
      const venue: WcVenue | null = matchGround(v.venues, m.ground);
      if (!venue && m.ground) unmatchedGrounds.push(`${src.year}: ${m.ground}`);
      const home = ref(m.team1);
      const away = ref(m.team2);
      const goals: SoccerGoal[] = [];
      const sides: [Side, OfMatch['goals1']][] = [
        ['home', m.goals1],
        ['away', m.goals2],
      ];
      for (const [side, list] of sides) {
        for (const g of list ?? []) {
          // An own goal counts for this side but was scored by a player of the other team.
          const own = g.owngoal === true;
          const playerTeam = (side === 'home') !== own ? home : away;
          const playerId = index.find(playerTeam.id, g.name) ?? players.ensure(g.name);
          players.roster(playerTeam.id, playerId, season);
          const t = parseMinute(g.minute, g.offset);
          goals.push({ side, playerId, minute: t.minute, offset: t.offset, penalty: g.penalty === true, ownGoal: own });
        }
      }
      const s = m.score;
      const p = s?.p;
      matches.push({
        league: 'wc',
        year: src.year,
        date: m.date,
        startTime: kickoffUtc(m.date, m.time, venue?.utcOffset ?? null),
        name: matchName(src.year, m),
        group: m.group !== undefined && /^Group /.test(m.group) ? m.group : null,
        venueId: venue?.id ?? null,
        home,
        away,
        names: [m.team1, m.team2],
        score: s?.et ?? s?.ft ?? null,
        extraTime: s?.et !== undefined,
        shootout: p ? { winner: p[0] > p[1] ? 'home' : 'away', home: p[0], away: p[1] } : null,
        goals,
        sourceKey: `wc:${src.year}:${m.date}:${m.team1}:${m.team2}`,
        source: 'openfootball',
        order,
      });
    });
  }
  return { teams, venues, players, matches, codeByName, fifaCodes, unmatchedGrounds };
}

/** Keys under which a results.csv row would describe the same match (date ± 1 day, either order). */
export function wcMatchKeys(matches: SoccerMatch[]): Set<string> {
  const keys = new Set<string>();
  for (const m of matches) {
    const t = Date.parse(`${m.date}T00:00:00Z`);
    for (const d of [-1, 0, 1]) keys.add(matchKey(new Date(t + d * 86_400_000).toISOString().slice(0, 10), m.names[0], m.names[1]));
  }
  return keys;
}

export const matchKey = (date: string, a: string, b: string): string => `${date}|${[canonicalTeamName(a), canonicalTeamName(b)].sort().join('|')}`;
