import type { ExportStats } from './stream.js';

// Keyed by the app's services object: each app (and each test's app) counts its own exports,
// without widening the shared Services interface for one feature's counters.
const byOwner = new WeakMap<object, ExportStats>();

export function exportStats(owner: object): ExportStats {
  let stats = byOwner.get(owner);
  if (!stats) {
    stats = { rowsFetched: 0, pagesFetched: 0, inFlight: 0, active: 0 };
    byOwner.set(owner, stats);
  }
  return stats;
}
