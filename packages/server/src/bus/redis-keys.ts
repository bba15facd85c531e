/**
 * Every Redis key and channel svc uses, under the deployment's prefix (`SVC_REDIS_PREFIX`,
 * default `svc:`), so deployments can share one Redis without hearing each other's events or
 * spending each other's limits (docs/operations.md "Roles and cluster mode").
 */
export interface RedisKeys {
  readonly prefix: string;
  /** Pub/sub channel of the event bus. */
  readonly events: string;
  /** Rate-limit state of one API key. */
  rateLimit(keyId: string): string;
  /** Open stream connections of one API key. */
  connections(keyId: string): string;
  /** Running bulk exports of one API key. */
  exports(keyId: string): string;
  /** Request/reply channel of one node's consensus (reports routed to a game's owner). */
  consensus(nodeId: string): string;
}

export function redisKeys(prefix: string): RedisKeys {
  return {
    prefix,
    events: `${prefix}events`,
    rateLimit: (keyId) => `${prefix}rl:${keyId}`,
    connections: (keyId) => `${prefix}conns:${keyId}`,
    exports: (keyId) => `${prefix}exports:${keyId}`,
    consensus: (nodeId) => `${prefix}consensus:${nodeId}`,
  };
}
