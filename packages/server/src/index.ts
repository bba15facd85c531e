/**
 * What programs beside the server use of it: the benchmarks (bench/) build apps, open stores,
 * create keys and drive the consensus engine through these names and no others, so a module of
 * the server can move without them noticing (lint keeps bench/ to `@svc/server`). The `svc`
 * command itself starts at main.ts.
 */
export { buildApp, type BuiltApp } from './app.js';
export type { AppDeps } from './services.js';
export { keyPrefix, loadConfig, type Config } from './config.js';
export { isoDate, isoTime, ManualClock, systemClock, type Clock } from './domain/clock.js';
export { ConsensusEngine, ReporterWeights, type ConsensusOptions, type Outcome, type ReportIn } from './domain/consensus/engine.js';
export { DEFAULT_CONSENSUS_OPTIONS } from './domain/consensus/options.js';
export type { VoterStats } from './domain/consensus/weights.js';
export { CALIBRATION, EVIDENCE_FEATURES, logisticOf, type Calibration, type Evidence } from './domain/consensus/probability.js';
export { voterId } from './domain/consensus/voters.js';
export { loadWorldCup } from './archive/sources.js';
export { goalTiming, parseMinute } from './archive/soccer.js';
export { boxScore, leaders, playerTotals, standings, type GameResult, type PlayFact } from './domain/standings/index.js';
export { importArchive, type ImportSummary } from './archive/index.js';
export { generateLarge, LargeUsageError, type LargeOptions } from './archive/large.js';
export { runImport } from './archive/run-import.js';
export { openStore } from './secrets/key.js';
export { ConsensusStore } from './store/consensus/store.js';
export { CompetitionRepo } from './store/reference/competitions.js';
export { openDb, type Db } from './store/sql/db.js';
export { EventLog, type NewEvent, type StoredEvent } from './store/events/events.js';
export { KeyRepo, principalOf } from './store/accounts/keys.js';
export { textFrame } from './stream/frames.js';
export { FORMATS as EXPORT_FORMATS } from './export/formats.js';
export { createWebhooks } from './webhooks/index.js';
