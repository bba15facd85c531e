/** The stream's limits (README, "Live: reports, consensus, stream"); tests shorten the timers. */
export const STREAM_LIMITS = {
  heartbeatMs: 5_000,
  /** An event stream's keep-alive comment after this much silence (docs/stream.md "Server-sent events"). */
  sseHeartbeatMs: 15_000,
  pingMs: 15_000,
  maxBufferedBytes: 1024 * 1024,
  replayMaxEvents: 10_000,
  replayWindowMs: 24 * 3600 * 1000,
  /** A resume waits this long for its client to take a slice of it before the client counts as a slow consumer. */
  replayStallMs: 10_000,
  /** How often the keys of open sockets are re-read from the store (revocation reaches them within this). */
  keyCheckMs: 2_000,
  /** How long an event that arrived ahead of a lower seq waits for it before the gap is read from the store. */
  reorderHoldMs: 200,
  /** Sports, leagues and games one socket may subscribe to, all counted. */
  maxSubscriptionsPerSocket: 1_000,
  /** The same, summed over all the sockets of one key on this node. */
  maxSubscriptionsPerKey: 5_000,
};

export type StreamLimits = typeof STREAM_LIMITS;
