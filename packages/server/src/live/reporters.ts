import type { Reporter } from '@svc/schema';
import { isoTime, type Clock } from '../domain/clock.js';
import { flagged } from '../domain/consensus/flags.js';
import { NEW_RECORD, weightOf } from '../domain/consensus/weights.js';
import { reporterIdOf, splitVoter, voterOfReporterId } from '../domain/consensus/reporter-ids.js';
import { notFound } from '../domain/errors.js';
import type { ReporterStore, StoredVoter } from '../store/consensus/reporters.js';
import type { ReporterReads } from '../store/consensus/store.js';
import type { SuspensionRepo } from '../store/consensus/suspensions.js';
import { pageOf, stringKey, type Page } from '../store/sql/page.js';
import type { LiveIngest } from './ingest.js';

export interface ReporterQuery {
  keyId?: string;
  flagged?: boolean;
  suspended?: boolean;
  limit: number;
  cursor?: string;
}

/** Track records read per round while a filtered page fills. */
const BATCH = 500;

/**
 * The operator's view of the crowd (docs/reporters.md): every voter with a track record, its
 * counts, weight and flag; and suspend and restore, which reach every node (the votes a
 * suspended voter holds leave their games' open candidates on each game's owner at once).
 */
export class Reporters {
  constructor(
    private readonly records: ReporterStore,
    private readonly reads: ReporterReads,
    private readonly suspensions: SuspensionRepo,
    private readonly ingest: LiveIngest,
    private readonly clock: Clock,
  ) {}

  /** A page in voter order (a key's own voice, then its named reporters); filters apply before the page is cut. */
  async list(q: ReporterQuery): Promise<Page<Reporter>> {
    const suspended = new Set(await this.suspensions.voters());
    const found: { voter: string; reporter: Reporter }[] = [];
    let after = stringKey(q.cursor);
    for (;;) {
      const records = await this.records.page({ after, keyId: q.keyId, limit: BATCH });
      if (records.length === 0) break;
      for (const r of records) {
        const reporter = reporterOf(r, suspended.has(r.voter));
        if (q.flagged !== undefined && reporter.flagged !== q.flagged) continue;
        if (q.suspended !== undefined && reporter.suspended !== q.suspended) continue;
        found.push({ voter: r.voter, reporter });
        // One more than the page: it says that another page exists.
        if (found.length > q.limit) break;
      }
      if (found.length > q.limit || records.length < BATCH) break;
      after = records[records.length - 1].voter;
    }
    return pageOf(found, q.limit, (f) => [f.voter], (f) => f.reporter);
  }

  /** Suspends a voter: its reports start and join nothing from now on, and its open votes are withdrawn everywhere. */
  async suspend(id: string, signal?: AbortSignal): Promise<Reporter> {
    const voter = await this.known(id);
    const { keyId, reporter } = splitVoter(voter);
    // A record with nothing counted, so the list (which walks the records) shows it.
    await this.records.ensure(voter, keyId, isoTime(this.clock.now()));
    await this.suspensions.suspend(voter, keyId, reporter, isoTime(this.clock.now()));
    await this.ingest.withdrawVoter(voter, await this.reads.gamesWithOpenCandidates(), signal);
    return this.one(voter);
  }

  /** Lifts a suspension: the voter's next reports count again (its withdrawn votes stay withdrawn). */
  async restore(id: string): Promise<Reporter> {
    const voter = await this.known(id);
    await this.suspensions.restore(voter);
    this.ingest.restoreVoter(voter);
    return this.one(voter);
  }

  /** The voter a `rep_…` id names, when anything of it is stored; else a 404. */
  private async known(id: string): Promise<string> {
    const voter = voterOfReporterId(id);
    if (voter !== undefined && ((await this.records.one(voter)) !== undefined || (await this.reads.hasReported(voter)))) return voter;
    throw notFound('reporter', id);
  }

  private async one(voter: string): Promise<Reporter> {
    const { keyId, reporter } = splitVoter(voter);
    const record = (await this.records.one(voter)) ?? { ...NEW_RECORD, voter, keyId, reporter, reports: 0, weight: weightOf(NEW_RECORD), lastReportAt: null };
    const suspended = (await this.suspensions.voters()).includes(voter);
    return reporterOf(record, suspended);
  }
}

function reporterOf(r: StoredVoter, suspended: boolean): Reporter {
  return {
    id: reporterIdOf(r.voter),
    key_id: r.keyId,
    reporter: r.reporter,
    weight: Math.round(r.weight * 1000) / 1000,
    reports: r.reports,
    agreed: r.agreed,
    disagreed: r.disagreed,
    official_confirmed: r.officialConfirmed,
    official_contradicted: r.officialContradicted,
    flagged: flagged(r),
    suspended,
    last_report_at: r.lastReportAt,
  };
}
