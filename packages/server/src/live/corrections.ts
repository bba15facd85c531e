import { PLAY_SCHEMA, type CorrectionEventType, type Play, type PlayWithdrawalInput } from '@svc/schema';
import type { EventBus } from '../bus/bus.js';
import { isoTime, type Clock } from '../domain/clock.js';
import { contradictedByFinal, planWithdrawal, resolveWithdrawn, teamCode, type EventOnRecord } from '../domain/corrections.js';
import { conflict, invalid } from '../domain/errors.js';
import { NOT_PLAYED } from '../domain/schedule/lifecycle.js';
import { playRecord, type CompetitionRepo } from '../store/reference/competitions.js';
import type { EventLog, NewEvent, StoredEvent } from '../store/events/events.js';
import type { PlayTable } from '../store/reference/types.js';
import type { GameInfo } from './games.js';

/**
 * Corrections (docs/corrections.md): an official source withdraws a confirmed score, and the
 * official final result withdraws the crowd scores it cannot hold. Each is one transaction of the
 * event log (store/reference/competitions.ts `correct`), taken on whichever node received the request:
 * the competition's row is locked first, so a score is withdrawn once however many nodes try.
 * The `score_retracted` events then go on the bus like any other: every node's stream sends
 * them, and their webhook deliveries and change-feed rows were written in the same transaction.
 */
export class Corrections {
  constructor(
    private readonly competitions: CompetitionRepo,
    private readonly log: EventLog,
    private readonly bus: EventBus,
    private readonly clock: Clock,
    private readonly onWrite: () => void = () => undefined,
  ) {}

  /** A `score_withdrawn` play; `viewerKeyId` is the posting key (another key's sandbox replay's events are not its to name). */
  async withdraw(game: GameInfo, input: PlayWithdrawalInput, viewerKeyId: string | null): Promise<Play[]> {
    if (input.ts !== undefined && Number.isNaN(Date.parse(input.ts))) throw invalid('invalid_field', "'ts' must be an ISO 8601 date-time.", 'ts');
    const now = isoTime(this.clock.now());
    const { write, stored } = await this.competitions.correct(this.log, game.competitionId, game.gameId, viewerKeyId, async (ctx) => {
      if (ctx.status === 'final') throw conflict('competition_final', `Competition '${game.competitionId}' is final.`);
      if (NOT_PLAYED.includes(ctx.status)) {
        throw conflict('invalid_transition', `Competition '${game.competitionId}' is ${ctx.status}: it takes no plays until its source schedules it again.`);
      }
      const withdrawn = await resolveWithdrawn(game.gameId, input.withdraws, ctx.read);
      const plan = planWithdrawal(ctx.game, withdrawn, input);
      const p = plan.play;
      const play: PlayTable = {
        competition_id: game.competitionId,
        seq: p.seq,
        period_unit: p.period.unit,
        period_num: p.period.num,
        period_label: p.period.label,
        competitor_id: p.competitor_id,
        player_id: p.player_id,
        event_type: 'score_withdrawn',
        points: p.points,
        clock: p.clock,
        state: JSON.stringify(p.state),
        source: p.source,
        ts: p.ts !== null ? new Date(p.ts).toISOString() : now,
        event_id: p.event_id,
        withdrawn_by: null,
        withdraws: p.withdraws,
      };
      const events = plan.retract ? [correctionEvent(game, plan.retract, 'score_withdrawn', p.clock, now)] : [];
      return { play, withdrawnSeq: withdrawn.play?.seq ?? null, scores: plan.scores, events };
    });
    await this.published(stored);
    if (!write.play) throw new Error('a withdrawal wrote no play');
    return [{ ...playRecord(write.play), schema: PLAY_SCHEMA }];
  }

  /**
   * The official `final` play arrived: the confirmed crowd scores its score cannot hold are
   * withdrawn (domain/corrections.ts `contradictedByFinal`). Returns the corrections published.
   */
  async judgeFinal(game: GameInfo): Promise<StoredEvent[]> {
    const now = isoTime(this.clock.now());
    const { stored } = await this.competitions.correct(this.log, game.competitionId, game.gameId, null, async (ctx) => {
      const nothing = { play: null, withdrawnSeq: null, scores: [], events: [] };
      if (!ctx.game.covered) return nothing;
      const finalScore = new Map(ctx.game.competitors.map((c) => [teamCode(c.entity_id), c.score]));
      const heldIds = new Set((await ctx.heldScores()).map((h) => h.event_id));
      const standing = await ctx.standingScores();
      const crowd = standing.filter((e) => !heldIds.has(e.id));
      const held = standing.filter((e) => heldIds.has(e.id));
      const withdrawn = new Set(contradictedByFinal(finalScore, held, crowd));
      if (withdrawn.size === 0) return nothing;
      return { ...nothing, events: crowd.filter((e) => withdrawn.has(e.id)).map((e) => correctionEvent(game, e, 'final_contradicted', null, now)) };
    });
    await this.published(stored);
    return stored;
  }

  private async published(stored: StoredEvent[]): Promise<void> {
    this.onWrite();
    if (stored.length > 0) await this.bus.publish(stored);
  }
}

/**
 * The confirmed `score_retracted` of a correction: the withdrawn score's team and points, official
 * (agreement 1), with the withdrawn score's probability, so that a stream or endpoint whose
 * min_probability let the score through gets its correction too (docs/stream.md "min_probability").
 */
function correctionEvent(game: GameInfo, e: Pick<EventOnRecord, 'id' | 'team' | 'points' | 'probability'>, why: CorrectionEventType, clock: string | null, ts: string): NewEvent {
  return {
    type: 'score_retracted',
    tier: 'confirmed',
    game_id: game.gameId,
    competition_id: game.competitionId,
    sport: game.sport,
    league: game.league,
    season_id: game.seasonId,
    owner_key_id: game.ownerKeyId,
    team: e.team,
    event_type: why,
    points: e.points,
    clock,
    ts,
    agreement: 1,
    reporters: 0,
    latency_ms: 0,
    probability: e.probability ?? 1,
    provisional_id: null,
    retracted_id: e.id,
  };
}
