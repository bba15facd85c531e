import { CompetitionRepo } from '../store/reference/competitions.js';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { EventBus } from '../bus/bus.js';
import type { Clock } from '../domain/clock.js';
import { ConsensusEngine, type ConsensusOptions } from '../domain/consensus/engine.js';
import type { Db } from '../store/sql/db.js';
import type { EventLog } from '../store/events/events.js';
import { ConsensusStore, ReporterReads } from '../store/consensus/store.js';
import { ReporterStore } from '../store/consensus/reporters.js';
import { SuspensionRepo } from '../store/consensus/suspensions.js';
import { Reporters } from './reporters.js';
import { SuspendedVoters } from './suspended.js';
import { ConsensusWriter } from './consensus-writer.js';
import { Corrections } from './corrections.js';
import { GameDirectory } from './games.js';
import { LiveIngest, type StoreWatch } from './ingest.js';
import { GameLeases } from '../store/consensus/leases.js';
import { OfficialFeed } from './official.js';
import { ScheduleFeed } from './schedule.js';
import type { OwnerRouter } from './router.js';

export interface Live {
  games: GameDirectory;
  engine: ConsensusEngine;
  ingest: LiveIngest;
  official: OfficialFeed;
  /** Withdrawn scores and the final result's judgement of the crowd (docs/corrections.md). */
  corrections: Corrections;
  /** Status changes by an official source (docs/schedule.md). */
  schedule: ScheduleFeed;
  leases: GameLeases;
  /** The operator's view of the crowd: the list, suspend and restore (docs/reporters.md). */
  reporters: Reporters;
}

export interface LiveOptions {
  /** Lease TTL of a game's consensus (docs/consensus.md, "Cluster"). */
  leaseMs: number;
  /** This node's name on leases; defaults as `defaultNodeId`. */
  nodeId?: string | null;
  /** Reaches the other nodes; null on a single node (it owns every game). */
  router?: OwnerRouter | null;
  consensus?: Partial<ConsensusOptions>;
  /** How long a report may wait for its game's owner (default: the lease TTL and 5 s). */
  routeWaitMs?: number;
  /** Whether the database is known not to answer (health/store-health.ts): calls fail at once rather than queue for it. */
  store?: StoreWatch;
}

/**
 * A single node keeps one stable name, so after a restart it takes its own leases back at once;
 * nodes of a cluster each get a name of their own, so a restarted one never mistakes another's.
 */
export function defaultNodeId(clustered: boolean): string {
  return clustered ? `${os.hostname()}-${process.pid}-${randomBytes(3).toString('hex')}` : 'single';
}

/** `onWrite` runs after every committed change of competitions, so read caches drop them. */
export function createLive(db: Db, log: EventLog, bus: EventBus, clock: Clock, opts: LiveOptions, onWrite: () => void = () => undefined): Live {
  const router = opts.router ?? null;
  const competitions = new CompetitionRepo(db);
  const games = new GameDirectory(competitions, clock);
  const engine = new ConsensusEngine(clock, opts.consensus);
  const leases = new GameLeases(db, clock, opts.nodeId ?? defaultNodeId(router !== null), opts.leaseMs);
  const state = new ConsensusStore(db);
  const reporters = new ReporterStore(db);
  const writer = new ConsensusWriter(games, log, state, reporters, leases, bus, clock);
  const suspensions = new SuspensionRepo(db);
  const suspended = new SuspendedVoters(suspensions);
  const ingest = new LiveIngest(games, state, reporters, writer, engine, clock, leases, suspended, router, onWrite, opts.routeWaitMs, opts.store);
  // A status change made on any node reaches this one as a `status` event: what this node knew
  // of the game (status, date) is read again on its next use.
  bus.subscribe((batch) => {
    for (const s of batch) if (s.event.type === 'status') games.forget(s.event.game_id);
  });
  const corrections = new Corrections(competitions, log, bus, clock, onWrite);
  return {
    games,
    engine,
    ingest,
    leases,
    corrections,
    reporters: new Reporters(reporters, new ReporterReads(db), suspensions, ingest, clock),
    official: new OfficialFeed(competitions, games, ingest, corrections, clock, onWrite),
    schedule: new ScheduleFeed(competitions, log, bus, games, ingest, clock, onWrite),
  };
}
