import { seasonRows } from './plays.js';
import { appendRows, emptyRows, type Rows } from './rows.js';
import { buildBasketball } from './synthetic-basketball.js';
import { SYNTHETIC_SEASON_SOURCE } from './synthetic-common.js';
import { buildGolf } from './synthetic-golf.js';
import { buildMma } from './synthetic-mma.js';
import { buildTennis } from './synthetic-tennis.js';

/** Fixed seeds: the synthetic archive is identical on every machine and every run. */
const SEED = 20260101;

export const SYNTHETIC_LEAGUES = [
  { id: 'sbl', sport: 'basketball', name: 'Synthetic Basketball League' },
  { id: 'stt', sport: 'tennis', name: 'Synthetic Tennis Tour' },
  { id: 'sgt', sport: 'golf', name: 'Synthetic Golf Tour' },
  { id: 'smma', sport: 'mma', name: 'Synthetic MMA' },
] as const;

/**
 * Generated leagues for the sports without open data. Results do not depend on `today` (each
 * sport has its own seed and a fixed calendar); `today` only decides which games are final.
 */
export function buildSynthetic(today: string): Rows {
  const rows = emptyRows();
  for (const l of SYNTHETIC_LEAGUES) rows.leagues.push({ id: l.id, sport: l.sport, name: l.name, synthetic: 1 });
  appendRows(rows, buildBasketball(SEED + 1, today));
  appendRows(rows, buildTennis(SEED + 2, today));
  appendRows(rows, buildGolf(SEED + 3, today));
  appendRows(rows, buildMma(SEED + 4, today));
  const sportOf = new Map<string, string>(SYNTHETIC_LEAGUES.map((l) => [l.id, l.sport]));
  rows.seasons.push(
    ...seasonRows(rows.competitions, (league) => ({ sport: sportOf.get(league) ?? '', synthetic: 1, source: SYNTHETIC_SEASON_SOURCE })),
  );
  return rows;
}
