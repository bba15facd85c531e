import type { StandingsRow, StandingsTable } from '@svc/schema';

/**
 * Standings tables from game results: pure rules, no I/O (README.md beside this file states them
 * and their sources).
 */

/** One game as the tables see it: its group, whether it is over or in progress, and its two sides' scores. */
export interface GameResult {
  id: string;
  group: string | null;
  /** `final` and `live` games count; any other status counts nothing but still seats its teams. */
  status: string;
  sides: readonly { entity_id: string; score: number }[];
}

export type TableSport = 'soccer' | 'basketball';

interface Tally {
  entity_id: string;
  played: number;
  won: number;
  drawn: number;
  lost: number;
  scored: number;
  conceded: number;
  live: boolean;
}

const tally = (entity_id: string): Tally => ({ entity_id, played: 0, won: 0, drawn: 0, lost: 0, scored: 0, conceded: 0, live: false });

/** Adds the counted games among `games` to tallies keyed by entity (entities not yet present are added). */
function addGames(into: Map<string, Tally>, games: readonly GameResult[]): void {
  for (const g of games) {
    if (g.sides.length !== 2) continue;
    for (const s of g.sides) if (!into.has(s.entity_id)) into.set(s.entity_id, tally(s.entity_id));
    if (g.status !== 'final' && g.status !== 'live') continue;
    const [a, b] = g.sides;
    for (const [me, them] of [
      [a, b],
      [b, a],
    ] as const) {
      const t = into.get(me.entity_id);
      if (!t) continue;
      t.played++;
      t.scored += me.score;
      t.conceded += them.score;
      if (me.score > them.score) t.won++;
      else if (me.score < them.score) t.lost++;
      else t.drawn++;
      if (g.status === 'live') t.live = true;
    }
  }
}

const soccerPoints = (t: Tally): number => 3 * t.won + t.drawn;
const diff = (t: Tally): number => t.scored - t.conceded;
/** Won / played to 3 decimals; 0 before the first game. */
export const pct = (won: number, played: number): number => (played === 0 ? 0 : Math.round((won / played) * 1000) / 1000);
const byId = (a: Tally, b: Tally): number => (a.entity_id < b.entity_id ? -1 : a.entity_id > b.entity_id ? 1 : 0);

/**
 * Splits `sorted` into runs of entities equal under `same`, and orders each run of two or more by
 * `tiebreak` (which sees the run's members).
 */
function breakTies<T>(sorted: T[], same: (a: T, b: T) => boolean, tiebreak: (run: T[]) => T[]): T[] {
  const out: T[] = [];
  let i = 0;
  while (i < sorted.length) {
    let j = i + 1;
    while (j < sorted.length && same(sorted[i], sorted[j])) j++;
    const run = sorted.slice(i, j);
    out.push(...(run.length > 1 ? tiebreak(run) : run));
    i = j;
  }
  return out;
}

/** The games played between members of `ids` only. */
const among = (games: readonly GameResult[], ids: Set<string>): GameResult[] =>
  games.filter((g) => g.sides.length === 2 && g.sides.every((s) => ids.has(s.entity_id)));

/**
 * Soccer: points (3 a win, 1 a draw), goal difference, goals scored; then, among the teams still
 * level, points, goal difference and goals in the games between them; then entity id.
 */
function orderSoccer(tallies: Tally[], games: readonly GameResult[]): Tally[] {
  const key = (t: Tally): [number, number, number] => [soccerPoints(t), diff(t), t.scored];
  const cmp = (ka: number[], kb: number[]): number => {
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return kb[i] - ka[i];
    return 0;
  };
  const first = [...tallies].sort((a, b) => cmp(key(a), key(b)) || byId(a, b));
  return breakTies(
    first,
    (a, b) => cmp(key(a), key(b)) === 0,
    (run) => {
      const ids = new Set(run.map((t) => t.entity_id));
      const h2h = new Map<string, Tally>();
      for (const id of ids) h2h.set(id, tally(id));
      addGames(h2h, among(games, ids));
      const hk = (t: Tally): number[] => {
        const h = h2h.get(t.entity_id) ?? tally(t.entity_id);
        return [soccerPoints(h), diff(h), h.scored];
      };
      return [...run].sort((a, b) => cmp(hk(a), hk(b)) || byId(a, b));
    },
  );
}

/** Basketball: pct, then head-to-head pct among the teams level on pct, then point difference, then entity id. */
function orderBasketball(tallies: Tally[], games: readonly GameResult[]): Tally[] {
  const first = [...tallies].sort((a, b) => pct(b.won, b.played) - pct(a.won, a.played) || byId(a, b));
  return breakTies(
    first,
    (a, b) => pct(a.won, a.played) === pct(b.won, b.played),
    (run) => {
      const ids = new Set(run.map((t) => t.entity_id));
      const h2h = new Map<string, Tally>();
      for (const id of ids) h2h.set(id, tally(id));
      addGames(h2h, among(games, ids));
      const hp = (t: Tally): number => {
        const h = h2h.get(t.entity_id) ?? tally(t.entity_id);
        return pct(h.won, h.played);
      };
      return [...run].sort((a, b) => hp(b) - hp(a) || diff(b) - diff(a) || byId(a, b));
    },
  );
}

function rows(sport: TableSport, ordered: Tally[]): StandingsRow[] {
  const leader = ordered[0];
  return ordered.map((t, i) => {
    const base = { rank: i + 1, entity_id: t.entity_id, played: t.played, won: t.won };
    if (sport === 'soccer') {
      return { ...base, drawn: t.drawn, lost: t.lost, scored: t.scored, conceded: t.conceded, diff: diff(t), points: soccerPoints(t), live: t.live };
    }
    const gb = leader ? (leader.won - t.won + (t.lost - leader.lost)) / 2 : 0;
    return { ...base, lost: t.lost, scored: t.scored, conceded: t.conceded, diff: diff(t), pct: pct(t.won, t.played), games_behind: gb, live: t.live };
  });
}

/**
 * The tables of a season. With groups (any game has one) there is one table per group, in group
 * order, and games without a group count in none; without groups, one table with `group` null.
 * Every competitor of a game in a table has a row, counted games or not.
 */
export function standings(sport: TableSport, games: readonly GameResult[]): StandingsTable[] {
  const grouped = games.some((g) => g.group !== null);
  const buckets = new Map<string | null, GameResult[]>();
  for (const g of games) {
    const key = grouped ? g.group : null;
    if (grouped && key === null) continue;
    let list = buckets.get(key);
    if (!list) buckets.set(key, (list = []));
    list.push(g);
  }
  const keys = [...buckets.keys()].sort((a, b) => (a ?? '').localeCompare(b ?? '', 'en', { numeric: true }));
  return keys.map((group) => {
    const list = buckets.get(group) ?? [];
    const tallies = new Map<string, Tally>();
    addGames(tallies, list);
    const counted = list.filter((g) => g.status === 'final' || g.status === 'live');
    const ordered = sport === 'soccer' ? orderSoccer([...tallies.values()], counted) : orderBasketball([...tallies.values()], counted);
    return { group, rows: rows(sport, ordered) };
  });
}
