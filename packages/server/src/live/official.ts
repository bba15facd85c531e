import { PLAY_SCHEMA, SCORE_WITHDRAWN, TEAM_SPORTS, type AnyPlayInput, type Play, type PlayInput, type PlayWithdrawalInput } from '@svc/schema';
import { isoTime, type Clock } from '../domain/clock.js';
import { conflict, invalid, notFound } from '../domain/errors.js';
import { NOT_PLAYED } from '../domain/schedule/lifecycle.js';
import { requireScope, visibleTo, type Principal } from '../domain/scopes.js';
import { playRecord, type CompetitionRepo } from '../store/reference/competitions.js';
import type { Corrections } from './corrections.js';
import type { GameDirectory, GameInfo } from './games.js';
import type { LiveIngest } from './ingest.js';
import { pointsAllowed } from './sport-rules.js';

/** A play would move a postponed or cancelled competition to live, which the lifecycle does not allow (docs/schedule.md). */
const notPlayed = (id: string, status: string) =>
  conflict('invalid_transition', `Competition '${id}' is ${status}: it takes no plays until its source schedules it again.`);

/** `record` was told which play comes last and another came first: the caller's plays are stale. */
export class PlaysMovedOn extends Error {}

/** An official correction rather than a play (docs/corrections.md). */
const isWithdrawal = (i: AnyPlayInput): i is PlayWithdrawalInput => i.event_type === SCORE_WITHDRAWN;
const isPlay = (i: AnyPlayInput): i is PlayInput => !isWithdrawal(i);

/**
 * Official play-by-play in. Plays get the next `seq`, a running `state`, and move the
 * competition: scheduled → live on the first play, live → final on a play of type `final`.
 * A scoring play of a team sport confirms the matching crowd candidate at once. A
 * `score_withdrawn` play and the final play's judgement of the crowd are corrections
 * (corrections.ts).
 */
export class OfficialFeed {
  constructor(
    private readonly competitions: CompetitionRepo,
    private readonly games: GameDirectory,
    private readonly ingest: LiveIngest,
    private readonly corrections: Corrections,
    private readonly clock: Clock,
    private readonly onWrite: () => void = () => undefined,
  ) {}

  async append(p: Principal, competitionId: string, inputs: AnyPlayInput[], batched: boolean, signal?: AbortSignal): Promise<Play[]> {
    const game = await this.games.byCompetitionId(competitionId);
    // Another key's sandbox replay does not exist for this key (docs/replays.md).
    if (!game || !visibleTo(game.ownerKeyId, p.keyId)) throw notFound('competition', competitionId, 'id');
    requireScope(p, game.sport, game.league);
    const at = inputs.findIndex(isWithdrawal);
    if (at < 0) return this.record(game, inputs.filter(isPlay), batched, { signal });
    const withdrawal = inputs[at];
    if (inputs.length > 1 || !isWithdrawal(withdrawal)) {
      throw invalid('withdrawal_not_alone', 'A score_withdrawn play is posted on its own, not in a batch with other plays.', batched ? `plays[${at}].event_type` : 'event_type');
    }
    if (game.status === 'final') throw conflict('competition_final', `Competition '${competitionId}' is final.`);
    return this.corrections.withdraw(game, withdrawal, p.keyId);
  }

  /**
   * Appends plays to a known game without a caller's checks: a sandbox replay's driver, which
   * plays its own game (docs/replays.md), comes in here directly. With `afterSeq` the plays go in
   * only when the game's last play is that one (checked in the appending transaction), else
   * PlaysMovedOn: a play is never posted twice, even by two drivers of one replay.
   */
  async record(game: GameInfo, inputs: PlayInput[], batched: boolean, opts: { afterSeq?: number; signal?: AbortSignal } = {}): Promise<Play[]> {
    const competitionId = game.competitionId;
    if (game.status === 'final') throw conflict('competition_final', `Competition '${competitionId}' is final.`);
    if (NOT_PLAYED.includes(game.status)) throw notPlayed(competitionId, game.status);
    const teamSport = TEAM_SPORTS.some((s) => s === game.sport);
    const now = this.clock.now();

    const inserted = await this.competitions.appendPlays(competitionId, (current, competitors, last, covered) => {
      // Checked again here: a batch racing this one may have ended the competition since.
      if (current === 'final') throw conflict('competition_final', `Competition '${competitionId}' is final.`);
      if (NOT_PLAYED.includes(current)) throw notPlayed(competitionId, current);
      if (opts.afterSeq !== undefined && (last?.seq ?? 0) !== opts.afterSeq) throw new PlaysMovedOn(`${competitionId} is past play ${opts.afterSeq}`);
      // The official record's running score: from zero until a play other than a correction covers the game (docs/corrections.md).
      const state: Record<string, number> = last && covered ? JSON.parse(last.state) : Object.fromEntries(competitors.map((c) => [c.role, 0]));
      let seq = last?.seq ?? 0;
      let final = false;
      const rows = inputs.map((play, i) => {
        const at = (f: string) => (batched ? `plays[${i}].${f}` : f);
        if (final) throw invalid('play_after_final', 'No play may follow the final play.', at('event_type'));
        const who = competitors.find((c) => c.entity_id === play.competitor_id);
        if (!who) throw invalid('competitor_not_in_competition', `'${play.competitor_id}' does not compete in ${competitionId}.`, at('competitor_id'));
        if (teamSport && play.points > 0 && !pointsAllowed(game.sport, play.points)) {
          throw invalid('invalid_points', `${play.points} points cannot be scored at once in ${game.sport}.`, at('points'));
        }
        if (play.ts !== undefined && Number.isNaN(Date.parse(play.ts))) throw invalid('invalid_field', "'ts' must be an ISO 8601 date-time.", at('ts'));
        state[who.role] = (state[who.role] ?? 0) + play.points;
        if (play.event_type === 'final') final = true;
        seq += 1;
        return {
          competition_id: competitionId,
          seq,
          period_unit: play.period.unit,
          period_num: play.period.num,
          period_label: play.period.label,
          competitor_id: play.competitor_id,
          player_id: play.player_id ?? null,
          event_type: play.event_type,
          points: play.points,
          clock: play.clock ?? null,
          state: JSON.stringify(state),
          source: play.source ?? 'official',
          ts: play.ts !== undefined ? new Date(play.ts).toISOString() : isoTime(now),
        };
      });
      const scores = competitors.filter((c) => (state[c.role] ?? c.score) !== c.score).map((c) => ({ idx: c.idx, score: state[c.role] ?? c.score }));
      // A suspended game stays suspended until its source says otherwise (docs/schedule.md).
      const status = final ? 'final' : current === 'suspended' ? 'suspended' : 'live';
      return { rows, scores, status };
    });
    this.onWrite();
    this.games.setStatus(game.gameId, inserted.status);
    game.status = inserted.status;

    if (teamSport) {
      for (const row of inserted.rows) {
        if (row.points <= 0) continue;
        const code = [...game.teams.entries()].find(([, t]) => t.entityId === row.competitor_id)?.[0];
        if (!code) continue;
        await this.ingest.official(game, { team: code, points: row.points, eventType: row.event_type, clock: row.clock ?? undefined, observedAt: Date.parse(row.ts), seq: row.seq }, opts.signal);
      }
      if (inserted.status === 'final') {
        await this.ingest.forgetGame(game.gameId, true, opts.signal);
        await this.corrections.judgeFinal(game);
      }
    }
    return inserted.rows.map(playRecord).map((pl) => ({ ...pl, schema: PLAY_SCHEMA }));
  }
}
