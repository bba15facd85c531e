import type { SuspensionRepo } from '../store/consensus/suspensions.js';

/**
 * The suspended voters as this node knows them (docs/reporters.md "On every node"). The node
 * that suspends or restores changes its set at once, a game's owner learns a suspension with the
 * request that withdraws the voter's votes there, and every node reads the table again each
 * second (`refresh`), so one that heard of nothing catches up within a second.
 */
export class SuspendedVoters {
  private readonly voters = new Set<string>();
  private loaded: Promise<void> | null = null;
  /** Counts this node's own changes, so a read that started before one of them does not undo it. */
  private changes = 0;

  constructor(private readonly repo: SuspensionRepo) {}

  /** Read once before the first report is decided, then kept by `refresh`. */
  ready(): Promise<void> {
    this.loaded ??= this.refresh().then(
      () => undefined,
      (err: unknown) => {
        this.loaded = null;
        throw err;
      },
    );
    return this.loaded;
  }

  has(voter: string): boolean {
    return this.voters.has(voter);
  }

  add(voter: string): void {
    this.changes += 1;
    this.voters.add(voter);
  }

  delete(voter: string): void {
    this.changes += 1;
    this.voters.delete(voter);
  }

  /** Reads the table; returns the voters suspended since the last read (their votes here must go). */
  async refresh(): Promise<string[]> {
    const before = this.changes;
    const stored = new Set(await this.repo.voters());
    // This node suspended or restored someone while the table was read: the read may predate
    // that commit, so it is not applied; the next one (a second later) is.
    if (this.changes !== before) return [];
    const added = [...stored].filter((v) => !this.voters.has(v));
    for (const v of [...this.voters]) if (!stored.has(v)) this.voters.delete(v);
    for (const v of added) this.voters.add(v);
    return added;
  }
}
