import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import { keyPrefix } from './config.js';
import { isoDate, type Clock } from './domain/clock.js';
import { createAuthenticator, type Authenticator } from './http/auth.js';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter, FallbackRateLimiter } from './http/rate-limit.js';
import { ping, type Db } from './store/sql/db.js';
import { CompetitionRepo } from './store/reference/competitions.js';
import { SettledDays } from './store/reference/settled-days.js';
import { IdempotencyRepo } from './store/accounts/idempotency.js';
import { secretBoxOf } from './secrets/key.js';
import { KeyRepo } from './store/accounts/keys.js';
import { LeagueDirectory } from './store/reference/league-directory.js';
import { ReferenceRepo } from './store/reference/reference.js';
import { StandingsService } from './standings/service.js';
import { EventLog } from './store/events/events.js';
import { ResponseCache } from './http/response-cache.js';
import { FeedHealth } from './status/feed-health.js';
import { StoreHealth } from './health/store-health.js';
import { StatusService } from './status/service.js';
import { createWebhooks, type Webhooks } from './webhooks/index.js';
import { LocalBus, type EventBus } from './bus/bus.js';
import { redisKnownAway } from './bus/link.js';
import { redisKeys } from './bus/redis-keys.js';
import { createLive, defaultNodeId, type Live } from './live/index.js';
import { RedisRouter, type OwnerRouter } from './live/router.js';
import type { STREAM_LIMITS } from './stream/gateway.js';
import { FallbackSlots, MemorySlots, RedisSlots, type SlotCounter } from './bus/slots.js';
import { Lifecycle } from './health/lifecycle.js';
import { Metrics } from './metrics/index.js';
import { countPending } from './store/webhooks/deliveries.js';
import { createExports, type Exports } from './export/index.js';
import { createReplays, type Replays } from './replays/index.js';
import { ChangeFeed } from './changes/feed.js';
import { ChangeLog } from './store/events/changes.js';
import { StreamTokens } from './stream/tokens.js';
import { principalOf } from './store/accounts/keys.js';

export interface AppDeps {
  config: Config;
  db: Db;
  clock: Clock;
  redis?: Redis | null;
  /** Defaults to the in-process bus; cluster mode passes the Redis bus. */
  bus?: EventBus;
  /** Consensus routing between nodes; defaults to Redis request/reply when `redis` is given. */
  router?: OwnerRouter;
  /** This node's name on consensus leases (tests run several nodes in one process). */
  nodeId?: string;
  /** Tests shorten heartbeats and pings. */
  streamLimits?: Partial<typeof STREAM_LIMITS>;
}

export interface Services {
  config: Config;
  clock: Clock;
  db: Db;
  keys: KeyRepo;
  idempotency: IdempotencyRepo;
  reference: ReferenceRepo;
  competitions: CompetitionRepo;
  /** Lists of settled days, answered from memory. */
  settledDays: SettledDays;
  leagues: LeagueDirectory;
  /** Standings, box scores, leaders and player totals (docs/standings.md). */
  views: StandingsService;
  auth: Authenticator;
  limiter: RateLimiter;
  redis: Redis | null;
  events: EventLog;
  bus: EventBus;
  cache: ResponseCache;
  /** Whether the database is known not to answer (health/store-health.ts). */
  storeHealth: StoreHealth;
  health: FeedHealth;
  /** Status page: current health, the minute samples and incidents. */
  status: StatusService;
  live: Live;
  webhooks: Webhooks;
  /** Each key's open stream connections, against its plan's `streamConnections`. */
  connections: SlotCounter;
  /** Each key's running bulk exports, against its plan's `concurrentExports`. */
  exportSlots: SlotCounter;
  metrics: Metrics;
  lifecycle: Lifecycle;
  exports: Exports;
  /** Sandbox replays: their rules and the driver that plays them (docs/replays.md). */
  replays: Replays;
  /** The change feed (docs/changes.md). */
  changes: ChangeFeed;
  /** Stream tokens: minted for browser pages, opened by the stream (docs/stream.md "Stream tokens"). */
  streamTokens: StreamTokens;
  /** Today's date (UTC) by the service's clock: what "today's games" and "before today" mean. */
  today(): string;
}

/** Wires the service's parts from its dependencies; no rules live here. */
export function createServices(deps: AppDeps): Services {
  const { config, db, clock } = deps;
  const keys = new KeyRepo(db, config.env, keyPrefix(config.env));
  const reference = new ReferenceRepo(db);
  const leagues = new LeagueDirectory(reference, clock);
  const redis = deps.redis ?? null;
  const events = new EventLog(db);
  const bus = deps.bus ?? new LocalBus();
  const cache = new ResponseCache(clock);
  const storeHealth = new StoreHealth(() => ping(db), clock);
  const competitions = new CompetitionRepo(db);
  const today = () => isoDate(clock.now());
  const settledDays = new SettledDays(competitions, clock, today, config.settledDaysBytes);
  const metrics = new Metrics();
  const changes = new ChangeFeed(db, new ChangeLog(db), competitions, clock, config.changesRetentionDays);
  events.afterAppend((stored) => {
    cache.invalidate();
    changes.watcher.poke();
    metrics.observeEvents(stored);
  });
  metrics.readFrom({ webhookPending: () => countPending(db), settledDaysBytes: () => settledDays.size });
  const health = new FeedHealth(clock);
  // In a cluster each game's consensus runs on the node holding its lease; the others forward to it.
  // Not while Redis is known away (bus/link.ts); a first connect still queues to Redis.
  const redisAway = redis ? redisKnownAway(redis) : () => true;
  const redisAnswers = () => !redisAway();
  const redisNames = redisKeys(config.redisPrefix);
  // A key's slots of one kind: in Redis across nodes, in this node's memory while Redis is away or absent.
  const slots = (keyOf: (keyId: string) => string): SlotCounter =>
    redis ? new FallbackSlots(new RedisSlots(redis, clock, keyOf), new MemorySlots(), redisAnswers) : new MemorySlots();
  const nodeId = deps.nodeId ?? config.nodeId ?? defaultNodeId(redis !== null || deps.router !== undefined);
  const router = deps.router ?? (redis ? new RedisRouter(nodeId, redis, redis.duplicate(), redisNames) : null);
  const status = new StatusService({ db, clock, health, redis });
  bus.subscribe((batch) => {
    health.observe(batch);
    status.eventsSeen();
  });
  const live = createLive(
    db,
    events,
    bus,
    clock,
    {
      leaseMs: config.consensusLeaseMs,
      nodeId,
      router,
      consensus: { retractAfterMs: config.consensusRetractMs },
      store: { down: () => storeHealth.down, fault: () => storeHealth.fault() },
    },
    () => {
      cache.invalidate();
      changes.watcher.poke();
    },
  );
  return {
    health,
    status,
    events,
    bus,
    cache,
    storeHealth,
    live,
    replays: createReplays({ db, config, clock, nodeId, competitions, live }),
    webhooks: createWebhooks({
      db,
      config,
      clock,
      events,
      bus,
      dispatcher: {
        onOutcome: (outcome) => metrics.webhookDeliveries.inc({ outcome }),
        onClaim: (claimed) => metrics.webhookClaims.inc({ result: claimed > 0 ? 'found' : 'empty' }),
      },
    }),
    metrics,
    lifecycle: new Lifecycle(),
    connections: slots(redisNames.connections),
    exportSlots: slots(redisNames.exports),
    config,
    clock,
    db,
    keys,
    idempotency: new IdempotencyRepo(db, secretBoxOf(config)),
    reference,
    competitions,
    settledDays,
    leagues,
    views: new StandingsService(competitions, events, reference, leagues, today, () => cache.currentGeneration, () => clock.now()),
    auth: createAuthenticator(keys, config.env, keyPrefix(config.env), clock, () => storeHealth.down),
    limiter: redis ? new FallbackRateLimiter(new RedisRateLimiter(redis, clock, redisNames), new MemoryRateLimiter(clock), redisAnswers) : new MemoryRateLimiter(clock),
    redis,
    exports: createExports(db, config.dataDir),
    changes,
    streamTokens: new StreamTokens(secretBoxOf(config), async (id) => {
      const k = await keys.findById(id);
      return k && !k.revoked_at ? principalOf(k) : undefined;
    }),
    today,
  };
}
