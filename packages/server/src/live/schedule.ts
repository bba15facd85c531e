import { TEAM_SPORTS, type Competition, type StatusChangeInput } from '@svc/schema';
import type { EventBus } from '../bus/bus.js';
import { isoTime, type Clock } from '../domain/clock.js';
import { notFound } from '../domain/errors.js';
import { planStatusChange } from '../domain/schedule/lifecycle.js';
import { requireScope, visibleTo, type Principal } from '../domain/scopes.js';
import { competitionStatus } from '../store/events/rows.js';
import type { CompetitionRepo } from '../store/reference/competitions.js';
import type { EventLog } from '../store/events/events.js';
import type { GameDirectory } from './games.js';
import type { LiveIngest } from './ingest.js';

/**
 * The schedule's changes (docs/schedule.md): an official source moves a competition through the
 * lifecycle of `domain/schedule`. A change writes the competition, a `status` event (with its
 * webhook deliveries) and the change feed's rows in one transaction, then publishes the event
 * on the bus like any other; asking for the status a competition has changes nothing.
 */
export class ScheduleFeed {
  constructor(
    private readonly competitions: CompetitionRepo,
    private readonly log: EventLog,
    private readonly bus: EventBus,
    private readonly games: GameDirectory,
    private readonly ingest: LiveIngest,
    private readonly clock: Clock,
    private readonly onWrite: () => void = () => undefined,
  ) {}

  async change(p: Principal, competitionId: string, input: StatusChangeInput): Promise<Competition> {
    const c = await this.competitions.get(competitionId);
    // Another key's sandbox replay does not exist for this key (docs/replays.md).
    if (!c || !visibleTo(c.ownerKeyId, p.keyId)) throw notFound('competition', competitionId, 'id');
    requireScope(p, c.sport, c.league);
    await this.apply(competitionId, input);
    const now = await this.competitions.get(competitionId);
    if (!now) throw notFound('competition', competitionId, 'id');
    return now;
  }

  /**
   * Applies a change without a caller's checks: the simulator's disruptions and a sandbox
   * replay's driver come in here. Returns whether anything changed.
   */
  async apply(competitionId: string, input: StatusChangeInput): Promise<boolean> {
    const now = this.clock.now();
    const nowIso = isoTime(now);
    const { change, stored } = await this.competitions.changeStatus(
      this.log,
      competitionId,
      (row) => planStatusChange({ status: competitionStatus(row.status), start_time: row.start_time, original_start_time: row.original_start_time, date: row.date, status_reason: row.status_reason }, input, now),
      nowIso,
    );
    if (!change) return false;
    this.onWrite();
    for (const s of stored) this.games.forget(s.event.game_id);
    if (stored.length) await this.bus.publish(stored);
    // A game that will not be played on: its open candidates are retracted (docs/consensus.md).
    const first = stored[0];
    if ((change.status === 'final' || change.status === 'cancelled') && first && TEAM_SPORTS.some((s) => s === first.sport)) await this.ingest.forgetGame(first.event.game_id);
    return true;
  }
}
