import type { Reporter } from '@svc/schema';
import { isoTime, type Clock } from '../domain/clock.js';
import { flagged } from '../domain/consensus/flags.js';
import { reporterIdOf, splitVoter, voterOfReporterId } from '../domain/consensus/reporter-ids.js';
import { ReporterWeights } from '../domain/consensus/weights.js';
import { notFound } from '../domain/errors.js';
import type { ReporterReads, VoterActivity, VoterRecord } from '../store/consensus/store.js';
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

const NO_ACTIVITY: VoterActivity = { reports: 0, lastReportAt: null };

/**
 * The operator's view of the crowd (docs/reporters.md): every voter with a track record, its
 * counts, weight and flag; and suspend and restore, which reach every node (the votes a
 * suspended voter holds leave their games' open candidates on each game's owner at once).
 */
export class Reporters {
  constructor(
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
      const records = await this.reads.records({ after, keyId: q.keyId, limit: BATCH });
      if (records.length === 0) break;
      const activity = await this.reads.activity(records.map((r) => r.voter));
      for (const r of records) {
        const reporter = reporterOf(r, activity.get(r.voter) ?? NO_ACTIVITY, suspended.has(r.voter));
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
    await this.reads.ensureRecord(voter);
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
    if (voter !== undefined && ((await this.reads.record(voter)) !== undefined || (await this.reads.hasReported(voter)))) return voter;
    throw notFound('reporter', id);
  }

  private async one(voter: string): Promise<Reporter> {
    const record = (await this.reads.record(voter)) ?? { voter, agreed: 0, disagreed: 0 };
    const activity = (await this.reads.activity([voter])).get(voter) ?? NO_ACTIVITY;
    const suspended = (await this.suspensions.voters()).includes(voter);
    return reporterOf(record, activity, suspended);
  }
}

function reporterOf(r: VoterRecord, a: VoterActivity, suspended: boolean): Reporter {
  const { keyId, reporter } = splitVoter(r.voter);
  const weights = new ReporterWeights();
  weights.load(r.voter, r);
  const counts = { agreed: r.agreed, disagreed: r.disagreed, officialConfirmed: 0, officialContradicted: 0, missed: 0 };
  return {
    id: reporterIdOf(r.voter),
    key_id: keyId,
    reporter,
    weight: Math.round(weights.weight(r.voter) * 1000) / 1000,
    reports: a.reports,
    agreed: counts.agreed,
    disagreed: counts.disagreed,
    official_confirmed: counts.officialConfirmed,
    official_contradicted: counts.officialContradicted,
    flagged: flagged({ ...counts, reports: a.reports }),
    suspended,
    last_report_at: a.lastReportAt,
  };
}
