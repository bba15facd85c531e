import type { Redis } from 'ioredis';

/**
 * Whether Redis is known to be away: one of the connections closed and has not been ready since
 * (docs/operations.md, "Faults"). ioredis would hold a command sent meanwhile in its offline queue
 * until its reconnects run out, seconds later; while Redis is known away, a call that needs it
 * fails at once (503 `bus_unavailable`) and one that does not skips it (local rate limits and
 * slots, events to this node's own streams). A client that has not connected yet is not known
 * away: its first connect still queues. Its `status` alone would not do: between two reconnect
 * attempts it reads `connecting`, as at the first connect.
 */
export function redisKnownAway(...clients: Redis[]): () => boolean {
  const closed = new Set<Redis>();
  for (const client of clients) {
    if (client.status === 'end' || client.status === 'close') closed.add(client);
    client.on('close', () => closed.add(client));
    client.on('end', () => closed.add(client));
    client.on('ready', () => closed.delete(client));
  }
  return () => closed.size > 0;
}
