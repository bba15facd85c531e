import { buildIntl } from './intl.js';
import { seasonRows } from './plays.js';
import { append, appendRows, emptyRows, type Rows } from './rows.js';
import { compareMatches, emptyStats, matchRows, type SoccerStats } from './soccer.js';
import { loadWorldCup, readCsv, sourceCommit, WC_YEARS } from './sources.js';
import { buildWorldCup, wcMatchKeys } from './wc.js';

export const WC_SOURCE = 'openfootball/worldcup.json (CC0)';
export const INTL_SOURCE = 'martj42/international_results (CC0)';

export interface FootballResult {
  rows: Rows;
  stats: SoccerStats;
  /** Lines worth telling the operator about (data quirks found while importing). */
  notes: string[];
}

/** current name → "Former A|Former B" from former_names.csv. */
function formerNames(rows: Record<string, string>[]): Map<string, string> {
  const out = new Map<string, string[]>();
  for (const r of rows) out.set(r.current, [...(out.get(r.current) ?? []), r.former]);
  return new Map([...out.entries()].map(([k, v]) => [k, v.join('|')]));
}

/**
 * World Cups 2014–2026 from openfootball (league `wc`) and every international since 2000 from
 * results.csv (league `intl`), without the World Cup matches that both sources hold.
 */
export function buildFootball(today: string): FootballResult {
  const former = formerNames(readCsv('former_names.csv'));
  const wc = buildWorldCup(
    WC_YEARS.map((y) => loadWorldCup(y)),
    former,
    new Set<string>(),
  );
  const intl = buildIntl({
    results: readCsv('results.csv'),
    goals: readCsv('goalscorers.csv'),
    shootouts: readCsv('shootouts.csv'),
    formerNames: former,
    wcCodeByName: wc.codeByName,
    fifaCodes: wc.fifaCodes,
    wcKeys: wcMatchKeys(wc.matches),
  });

  const rows = emptyRows();
  rows.leagues.push(
    { id: 'wc', sport: 'soccer', name: 'FIFA World Cup', synthetic: 0 },
    { id: 'intl', sport: 'soccer', name: 'International matches', synthetic: 0 },
  );
  append(rows.venues, wc.venues);
  append(rows.teams, [...wc.teams, ...intl.teams]);
  append(rows.players, wc.players.rows);
  append(rows.players, intl.players.rows);
  append(rows.rosters, wc.players.rosters());
  append(rows.rosters, intl.players.rosters());

  const stats = emptyStats();
  const all = [...wc.matches, ...intl.matches].sort(compareMatches);
  let n = 0;
  for (const m of all) {
    if (m.score === null && m.date < today) {
      stats.skippedNoScore++;
      continue;
    }
    appendRows(rows, matchRows(m, ++n, today, stats));
  }
  rows.seasons.push(
    ...seasonRows(rows.competitions, (league) => ({ sport: 'soccer', synthetic: 0, source: league === 'wc' ? WC_SOURCE : INTL_SOURCE })),
  );

  const notes = [
    `football: sources openfootball/worldcup.json@${sourceCommit('openfootball-worldcup').slice(0, 7)}, martj42/international_results@${sourceCommit('international-results').slice(0, 7)}`,
    `football: ${wc.matches.length} World Cup matches (openfootball), ${intl.matches.length} internationals since 2000 (results.csv), ${intl.skippedAsWorldCup} results.csv rows skipped as World Cup duplicates`,
    `football: ${stats.withoutGoals} final matches without a goal list (final play only), ${stats.inconsistent.length} whose goal list does not add up to the score, ${stats.skippedNoScore} past matches without a score skipped`,
  ];
  if (wc.unmatchedGrounds.length) notes.push(`football: grounds without a stadium: ${wc.unmatchedGrounds.join('; ')}`);
  if (intl.unmatchedWorldCup.length) notes.push(`football: results.csv World Cup rows not found in openfootball: ${intl.unmatchedWorldCup.join('; ')}`);
  return { rows, stats, notes };
}
