import type { Redis } from 'ioredis';
import type { Config } from './config.js';
import { keyPrefix } from './config.js';
import { isoDate, type Clock } from './domain/clock.js';
import { invalid } from './domain/errors.js';
import { scopeFor, type Principal, type ScopeFilter } from './domain/scopes.js';
import { createAuthenticator, type Authenticator } from './http/auth.js';
import { MemoryRateLimiter, RedisRateLimiter, type RateLimiter } from './http/rate-limit.js';
import type { Db } from './store/db.js';
import { CompetitionRepo } from './store/competitions.js';
import { IdempotencyRepo } from './store/idempotency.js';
import { KeyRepo } from './store/keys.js';
import { ReferenceRepo } from './store/reference.js';
import { EventLog } from './store/events.js';
import { ResponseCache } from './http/response-cache.js';
import { FeedHealth } from './status/feed-health.js';
import { StatusService } from './status/service.js';
import { createWebhooks, type Webhooks } from './webhooks/index.js';
import { LocalBus, type EventBus } from './bus/bus.js';
import { createLive, defaultNodeId, type Live } from './live/index.js';
import { RedisRouter, type OwnerRouter } from './live/router.js';
import type { STREAM_LIMITS } from './stream/gateway.js';
import { MemoryConnectionCounter, RedisConnectionCounter, type ConnectionCounter } from './stream/connection-counter.js';

/** Knows which leagues exist and their sport; reloads when asked about one it has not seen. */
export class LeagueDirectory {
  private bySport = new Map<string, string>();
  private loadedAt = 0;
  constructor(
    private readonly reference: ReferenceRepo,
    private readonly clock: Clock,
  ) {}

  async sportOf(league: string): Promise<string | undefined> {
    if (!this.bySport.has(league) && this.clock.now() - this.loadedAt > 1000) {
      const rows = await this.reference.leagues();
      this.bySport = new Map(rows.map((r) => [r.id, r.sport]));
      this.loadedAt = this.clock.now();
    }
    return this.bySport.get(league);
  }

  /** 400 for a league that does not exist, else the league's sport. */
  async require(league: string, param = 'league'): Promise<string> {
    const sport = await this.sportOf(league);
    if (sport === undefined) throw invalid('invalid_parameter', `Unknown league '${league}'; GET /v1/seasons lists them.`, param);
    return sport;
  }
}

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
  leagues: LeagueDirectory;
  auth: Authenticator;
  limiter: RateLimiter;
  redis: Redis | null;
  events: EventLog;
  bus: EventBus;
  cache: ResponseCache;
  health: FeedHealth;
  /** Status page: current health, the minute samples and incidents. */
  status: StatusService;
  live: Live;
  webhooks: Webhooks;
  connections: ConnectionCounter;
  today(): string;
  /** The key's scope narrowed by explicit sport/league filters (403 outside the scope, 400 for unknown leagues). */
  scope(p: Principal, sport?: string, league?: string): Promise<ScopeFilter>;
}

export function createServices(deps: AppDeps): Services {
  const { config, db, clock } = deps;
  const keys = new KeyRepo(db, config.env, keyPrefix(config.env));
  const reference = new ReferenceRepo(db);
  const leagues = new LeagueDirectory(reference, clock);
  const redis = deps.redis ?? null;
  const events = new EventLog(db);
  const bus = deps.bus ?? new LocalBus();
  const cache = new ResponseCache(clock);
  events.afterAppend(() => cache.invalidate());
  const health = new FeedHealth(clock);
  // In a cluster each game's consensus runs on the node holding its lease; the others forward to it.
  const nodeId = deps.nodeId ?? config.nodeId ?? defaultNodeId(redis !== null || deps.router !== undefined);
  const router = deps.router ?? (redis ? new RedisRouter(nodeId, redis, redis.duplicate()) : null);
  bus.subscribe((batch) => health.observe(batch));
  return {
    health,
    status: new StatusService({ db, clock, health, redis }),
    events,
    bus,
    cache,
    live: createLive(
      db,
      events,
      bus,
      clock,
      {
        leaseMs: config.consensusLeaseMs,
        nodeId,
        router,
        consensus: { retractAfterMs: config.consensusRetractMs },
      },
      () => cache.invalidate(),
    ),
    webhooks: createWebhooks({ db, config, clock, events }),
    connections: redis ? new RedisConnectionCounter(redis, clock) : new MemoryConnectionCounter(),
    config,
    clock,
    db,
    keys,
    idempotency: new IdempotencyRepo(db),
    reference,
    competitions: new CompetitionRepo(db),
    leagues,
    auth: createAuthenticator(keys, config.env, keyPrefix(config.env), clock),
    limiter: redis ? new RedisRateLimiter(redis, clock) : new MemoryRateLimiter(clock),
    redis,
    today: () => isoDate(clock.now()),
    async scope(p, sport, league) {
      const leagueSport = league !== undefined ? await leagues.require(league) : undefined;
      if (sport !== undefined && leagueSport !== undefined && sport !== leagueSport) {
        throw invalid('invalid_parameter', `League '${league}' is ${leagueSport}, not ${sport}.`, 'league');
      }
      return scopeFor(p, sport, league, leagueSport);
    },
  };
}
