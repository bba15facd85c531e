import type { ConsensusOptions } from './types.js';

export type ResolvedOptions = Required<ConsensusOptions>;

/** The default rules of `docs/consensus.md`. */
export const DEFAULT_CONSENSUS_OPTIONS: Readonly<ResolvedOptions> = Object.freeze({
  windowMs: 30_000,
  quorum: 3,
  agreement: 0.6,
  activeWindowMs: 120_000,
  retractAfterMs: 90_000,
  duplicateWindowMs: 5_000,
  minStartWeight: 0.2,
  maxOpenStartedPerReporter: 16,
});

/** Fills defaults and refuses values that would make the rules meaningless (fail at start, not later). */
export function resolveOptions(partial: Partial<ConsensusOptions> = {}): ResolvedOptions {
  const o: ResolvedOptions = { ...DEFAULT_CONSENSUS_OPTIONS };
  for (const [k, v] of Object.entries(partial)) {
    if (v !== undefined && k in o) Object.assign(o, { [k]: v });
  }
  const durations = ['windowMs', 'activeWindowMs', 'retractAfterMs', 'duplicateWindowMs'] as const;
  for (const k of durations) {
    if (!Number.isFinite(o[k]) || o[k] < 0) throw new RangeError(`consensus option ${k} must be a duration ≥ 0 ms, got ${o[k]}`);
  }
  if (!Number.isSafeInteger(o.quorum) || o.quorum < 1) throw new RangeError(`consensus option quorum must be a whole number ≥ 1, got ${o.quorum}`);
  if (!(o.agreement > 0 && o.agreement <= 1)) throw new RangeError(`consensus option agreement must be in (0, 1], got ${o.agreement}`);
  if (!Number.isSafeInteger(o.maxOpenStartedPerReporter) || o.maxOpenStartedPerReporter < 1) {
    throw new RangeError(`consensus option maxOpenStartedPerReporter must be a whole number ≥ 1, got ${o.maxOpenStartedPerReporter}`);
  }
  if (!(o.minStartWeight >= 0 && o.minStartWeight <= 1)) throw new RangeError(`consensus option minStartWeight must be in [0, 1], got ${o.minStartWeight}`);
  return o;
}
