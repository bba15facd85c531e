export { standings, pct, type GameResult, type TableSport } from './table.js';
export { boxScore, periodsReached, playerLines, latest, type GameFacts, type PlayFact } from './boxscore.js';
export { leaders, playerTotals, statValue, DEFAULT_STAT, type PlayerTotal, type SeasonPlay } from './leaders.js';
export { liveScore, type ScoreEventFact } from './live.js';
export { crowdPlays, type CrowdScoreFact } from './crowd.js';
