import type { BoxScore, BoxScoreCompetitor, BoxScorePlayer } from '@svc/schema';

/**
 * A game's box score from its official plays: pure rules, no I/O (README.md beside this file).
 */

/** An official play as the box score reads it (svc.play.v1 without the parts it does not need). */
export interface PlayFact {
  period: { unit: string; num: number; label: string };
  competitor_id: string;
  player_id?: string | null;
  event_type: string;
  points: number;
  state: Record<string, number>;
  ts: string;
}

export interface GameFacts {
  competition_id: string;
  sport: string;
  status: string;
  competitors: readonly { entity_id: string; role: string }[];
  /** When the game starts (or its date at midnight UTC): `as_of` before its first play. */
  start: string;
}

/** The periods every game of a sport reaches once it is over, in order. */
const REGULAR: Record<string, { unit: string; num: number; label: string }[]> = {
  soccer: [
    { unit: 'half', num: 1, label: '1st half' },
    { unit: 'half', num: 2, label: '2nd half' },
  ],
  basketball: [1, 2, 3, 4].map((num) => ({ unit: 'quarter', num, label: `Q${num}` })),
};
/** Units in the order they are played; units not named here come after, in the order first seen. */
const UNIT_ORDER = ['half', 'quarter', 'extra_time', 'overtime'];
/** Plays on these are not a period of play: the line score has no column for them. */
const NOT_A_PERIOD = new Set(['fulltime', 'shootout']);
const SOCCER_EXTRA_TIME = [
  { unit: 'extra_time', num: 1, label: 'Extra time 1st half' },
  { unit: 'extra_time', num: 2, label: 'Extra time 2nd half' },
];

export const OWN_GOAL = 'own_goal';
export const isShootout = (p: { period: { unit: string } }): boolean => p.period.unit === 'shootout';

/** The `by_type` key of a play: shoot-out kicks are kept apart from plays of the game. */
export function typeKey(p: PlayFact): string {
  return isShootout(p) && !p.event_type.startsWith('shootout') ? `shootout_${p.event_type}` : p.event_type;
}

/**
 * The side a play's player plays for: an own goal counts for the side it names but was scored by
 * a player of the other side.
 */
export function playerSide(p: PlayFact, competitors: readonly { entity_id: string }[]): string {
  if (p.event_type !== OWN_GOAL) return p.competitor_id;
  return competitors.find((c) => c.entity_id !== p.competitor_id)?.entity_id ?? p.competitor_id;
}

/** The points a play adds to its player's total: own goals and shoot-out kicks add none. */
export const playerPoints = (p: PlayFact): number => (p.event_type === OWN_GOAL || isShootout(p) ? 0 : p.points);

type PeriodRef = { unit: string; num: number; label: string };
const periodKey = (p: { unit: string; num: number }): string => `${p.unit}:${p.num}`;

/** Every period the game reached, in order of play (see README.md "Periods"). */
export function periodsReached(sport: string, status: string, plays: readonly PlayFact[]): PeriodRef[] {
  const labels = new Map<string, PeriodRef>();
  const seenUnits: string[] = [];
  const maxNum = new Map<string, number>();
  const note = (p: PeriodRef): void => {
    if (!labels.has(periodKey(p))) labels.set(periodKey(p), p);
    if (!seenUnits.includes(p.unit)) seenUnits.push(p.unit);
    maxNum.set(p.unit, Math.max(maxNum.get(p.unit) ?? 0, p.num));
  };
  const regular = REGULAR[sport] ?? [];
  for (const p of plays) if (!NOT_A_PERIOD.has(p.period.unit)) note(p.period);
  const over = status === 'final';
  if (over) for (const p of regular) note(p);
  // A soccer shoot-out follows extra time, and extra time, once over, was both its halves.
  const extraTimeOver = over && seenUnits.includes('extra_time');
  if (sport === 'soccer' && (plays.some(isShootout) || extraTimeOver)) for (const p of [...regular, ...SOCCER_EXTRA_TIME]) note(p);
  // A later unit reached means every earlier regular period was played.
  if (seenUnits.some((u) => !regular.some((r) => r.unit === u))) for (const p of regular) note(p);
  const units = [...seenUnits].sort((a, b) => rankOf(a) - rankOf(b) || seenUnits.indexOf(a) - seenUnits.indexOf(b));
  const out: PeriodRef[] = [];
  for (const unit of units) {
    for (let num = 1; num <= (maxNum.get(unit) ?? 0); num++) {
      out.push(labels.get(periodKey({ unit, num })) ?? { unit, num, label: defaultLabel(unit, num) });
    }
  }
  return out;
}

const rankOf = (unit: string): number => {
  const i = UNIT_ORDER.indexOf(unit);
  return i < 0 ? UNIT_ORDER.length : i;
};

function defaultLabel(unit: string, num: number): string {
  if (unit === 'quarter') return `Q${num}`;
  if (unit === 'overtime') return `OT${num}`;
  if (unit === 'half') return num === 1 ? '1st half' : num === 2 ? '2nd half' : `Half ${num}`;
  if (unit === 'extra_time') return num === 1 ? 'Extra time 1st half' : num === 2 ? 'Extra time 2nd half' : `Extra time ${num}`;
  return `${unit} ${num}`;
}

/** Shoot-out kicks scored by each competitor, or undefined when there was no shoot-out or its count is unknown. */
function shootoutCounts(game: GameFacts, plays: readonly PlayFact[]): Map<string, number> | undefined {
  const kicks = plays.filter(isShootout);
  if (kicks.length === 0) return undefined;
  const out = new Map<string, number>(game.competitors.map((c) => [c.entity_id, 0]));
  let any = false;
  for (const k of kicks) {
    if (k.points > 0) {
      out.set(k.competitor_id, (out.get(k.competitor_id) ?? 0) + k.points);
      any = true;
    }
  }
  if (any) return out;
  // A summary play (the archive's) states the totals as `<role>_shootout` in its running state.
  const summary = [...kicks].reverse().find((k) => game.competitors.every((c) => typeof k.state[`${c.role}_shootout`] === 'number'));
  if (!summary) return undefined;
  return new Map(game.competitors.map((c) => [c.entity_id, summary.state[`${c.role}_shootout`] ?? 0]));
}

/**
 * The box score. `periods` are every period reached with each competitor's points in it (0 when
 * none), adding up to `score`; the shoot-out is apart. The winner is named once the game is final:
 * the higher score, else the shoot-out's winner, else null (a draw).
 */
export function boxScore(game: GameFacts, plays: readonly PlayFact[]): BoxScore {
  const reached = periodsReached(game.sport, game.status, plays);
  const shootout = shootoutCounts(game, plays);
  const competitors: BoxScoreCompetitor[] = game.competitors.map((c) => {
    const periods = reached.map((p) => ({
      ...p,
      points: plays.filter((x) => x.competitor_id === c.entity_id && x.period.unit === p.unit && x.period.num === p.num).reduce((s, x) => s + x.points, 0),
    }));
    const out: BoxScoreCompetitor = { entity_id: c.entity_id, role: c.role, score: periods.reduce((s, p) => s + p.points, 0), periods };
    const so = shootout?.get(c.entity_id);
    if (so !== undefined) out.shootout = so;
    return out;
  });
  const players = playerLines(plays, game.competitors);
  return {
    competition_id: game.competition_id,
    sport: game.sport,
    status: game.status,
    competitors,
    players,
    winner: game.status === 'final' ? winner(competitors, plays) : null,
    as_of: plays.length > 0 ? latest(plays.map((p) => p.ts)) : game.start,
  };
}

function winner(competitors: BoxScoreCompetitor[], plays: readonly PlayFact[]): string | null {
  if (competitors.length !== 2) return null;
  const [a, b] = competitors;
  if (a.score !== b.score) return a.score > b.score ? a.entity_id : b.entity_id;
  if (a.shootout !== undefined && b.shootout !== undefined && a.shootout !== b.shootout) return a.shootout > b.shootout ? a.entity_id : b.entity_id;
  // The archive's shoot-out play names its winner when the kicks are not known.
  const decided = [...plays].reverse().find((p) => isShootout(p) && p.event_type === 'shootout');
  return decided ? decided.competitor_id : null;
}

export const latest = (times: readonly string[]): string => times.reduce((m, t) => (t > m ? t : m));

/** Each player's line over `plays` (of one game): points, plays by type, own side. Most points first, then id. */
export function playerLines(plays: readonly PlayFact[], competitors: readonly { entity_id: string }[]): BoxScorePlayer[] {
  const lines = new Map<string, BoxScorePlayer>();
  for (const p of plays) {
    if (!p.player_id) continue;
    let line = lines.get(p.player_id);
    if (!line) lines.set(p.player_id, (line = { player_id: p.player_id, competitor_id: playerSide(p, competitors), points: 0, by_type: {} }));
    // The side of the latest non-own-goal play names the player's team.
    if (p.event_type !== OWN_GOAL) line.competitor_id = p.competitor_id;
    line.points += playerPoints(p);
    const k = typeKey(p);
    line.by_type[k] = (line.by_type[k] ?? 0) + 1;
  }
  return [...lines.values()].sort((a, b) => b.points - a.points || (a.player_id < b.player_id ? -1 : a.player_id > b.player_id ? 1 : 0));
}
