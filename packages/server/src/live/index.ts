import type { EventBus } from '../bus/bus.js';
import type { Clock } from '../domain/clock.js';
import { ConsensusEngine } from '../domain/consensus/engine.js';
import type { Db } from '../store/db.js';
import type { EventLog } from '../store/events.js';
import { GameDirectory } from './games.js';
import { LiveIngest } from './ingest.js';
import { OfficialFeed } from './official.js';

export interface Live {
  games: GameDirectory;
  engine: ConsensusEngine;
  ingest: LiveIngest;
  official: OfficialFeed;
}

/** `onWrite` runs after every committed change of competitions, so read caches drop them. */
export function createLive(db: Db, log: EventLog, bus: EventBus, clock: Clock, onWrite: () => void = () => undefined): Live {
  const games = new GameDirectory(db);
  const engine = new ConsensusEngine(clock);
  const ingest = new LiveIngest(db, games, log, bus, engine, clock, onWrite);
  return { games, engine, ingest, official: new OfficialFeed(db, games, ingest, clock, onWrite) };
}
