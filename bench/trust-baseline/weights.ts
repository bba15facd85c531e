/**
 * Reporter track record. Weight = (agreed + 1) / (agreed + disagreed + 2): Laplace's rule of
 * succession, so a newcomer starts at 0.5, one bad call does not silence anyone, and a reporter
 * whose reports keep ending in retractions sinks towards 0 (and agreeing ones rise towards 1).
 */
export interface TrackRecord {
  agreed: number;
  disagreed: number;
}

interface Entry extends TrackRecord {
  /** Kept with the counts: weight() runs for every active reporter on every agreement check. */
  weight: number;
}

const laplace = (agreed: number, disagreed: number): number => (agreed + 1) / (agreed + disagreed + 2);

export class ReporterWeights {
  private readonly entries = new Map<string, Entry>();

  /** `initial` restores a snapshot (e.g. after a restart) so reporters keep their standing. */
  constructor(initial: Record<string, TrackRecord> = {}) {
    for (const [id, r] of Object.entries(initial)) this.entries.set(id, { agreed: r.agreed, disagreed: r.disagreed, weight: laplace(r.agreed, r.disagreed) });
  }

  weight(reporterId: string): number {
    return this.entries.get(reporterId)?.weight ?? 0.5;
  }

  /** agreed: the reporter voted for a candidate that was confirmed; false: one that was retracted. */
  record(reporterId: string, agreed: boolean): void {
    let e = this.entries.get(reporterId);
    if (!e) {
      e = { agreed: 0, disagreed: 0, weight: 0.5 };
      this.entries.set(reporterId, e);
    }
    if (agreed) e.agreed += 1;
    else e.disagreed += 1;
    e.weight = laplace(e.agreed, e.disagreed);
  }

  /** Whether a record is held for this reporter (else it counts as a newcomer). */
  has(reporterId: string): boolean {
    return this.entries.has(reporterId);
  }

  /** The counts held for a reporter (a newcomer's are zero). */
  recordOf(reporterId: string): TrackRecord {
    const e = this.entries.get(reporterId);
    return { agreed: e?.agreed ?? 0, disagreed: e?.disagreed ?? 0 };
  }

  /** Sets a reporter's record as stored (a node taking a game over, or a record moved by another node). */
  load(reporterId: string, r: TrackRecord): void {
    this.entries.set(reporterId, { agreed: r.agreed, disagreed: r.disagreed, weight: laplace(r.agreed, r.disagreed) });
  }

  snapshot(): Record<string, { agreed: number; disagreed: number; weight: number }> {
    const out: Record<string, { agreed: number; disagreed: number; weight: number }> = {};
    for (const [id, e] of this.entries) out[id] = { agreed: e.agreed, disagreed: e.disagreed, weight: e.weight };
    return out;
  }
}
