import type { CompetitionStatus, Event } from '@svc/schema';
import { COMPETITION_STATUSES, EVENT_SCHEMA, eventId } from '@svc/schema';
import type { Selectable } from 'kysely';
import { rowNumber, rowText, rowTextOrNull } from '../sql/row-reader.js';
import type { EventTable } from './types.js';

/**
 * The event row and its record, both ways and nothing else: the event log, the export's stored
 * JSON and the migration that writes it all map rows through here, so none of them needs another.
 */
/** An event row as records are built from it: its stored JSON is the export's business. */
export type EventRow = Omit<Selectable<EventTable>, 'json_tail' | 'owner_key_id'>;

/** A stored status text as the schema's literal (`scheduled` for anything unknown, which no writer stores). */
export const competitionStatus = (s: string | null | undefined): CompetitionStatus => COMPETITION_STATUSES.find((x) => x === s) ?? 'scheduled';

/** A `status` event's record (docs/schedule.md): its own fields, keys in schema order. */
const statusRecord = (r: EventRow): Event => ({
  id: eventId(r.seq),
  type: 'status',
  tier: 'confirmed',
  game_id: r.game_id,
  sport: r.sport,
  status: competitionStatus(r.status),
  previous_status: competitionStatus(r.previous_status),
  start_time: r.start_time ?? null,
  reason: r.reason ?? null,
  ts: r.ts,
  schema: EVENT_SCHEMA,
});

export const eventRecord = (r: EventRow): Event => (r.type === 'status' ? statusRecord(r) : {
  id: eventId(r.seq),
  type: r.type === 'score_retracted' ? 'score_retracted' : 'score',
  tier: r.tier === 'provisional' ? 'provisional' : 'confirmed',
  game_id: r.game_id,
  sport: r.sport,
  league: r.league,
  team: r.team,
  event_type: r.event_type,
  points: r.points,
  clock: r.clock,
  ts: r.ts,
  confidence: { agreement: r.agreement, reporters: r.reporters, latency_ms: r.latency_ms, probability: r.probability },
  ...(r.provisional_id !== null ? { provisional_id: r.provisional_id } : {}),
  ...(r.retracted_id !== null ? { retracted_id: r.retracted_id } : {}),
  schema: EVENT_SCHEMA,
});

/** The columns only a status event fills, read by name from a raw row. */
export const STATUS_COLUMNS = ['status', 'previous_status', 'start_time', 'reason'] as const;

/** A column added by a later migration (a status event's): absent from rows read before it ran (0007 reads events). */
const laterText = (v: unknown): string | null => (v === undefined ? null : rowTextOrNull(v));
/** `probability` (migration 0016, which writes every stored event's JSON again): 1 for rows read before it ran. */
const laterProbability = (v: unknown): number => (v === undefined ? 1 : rowNumber(v));

/** An event row read by column name (INSERT_EVENT's RETURNING, or a raw select), checked. */
export function eventRowOf(r: Record<string, unknown>): EventRow {
  return {
    seq: rowNumber(r.seq), type: rowText(r.type), tier: rowText(r.tier), game_id: rowText(r.game_id), competition_id: rowText(r.competition_id),
    sport: rowText(r.sport), league: rowText(r.league), season_id: rowText(r.season_id), team: rowText(r.team), event_type: rowText(r.event_type),
    points: rowNumber(r.points), clock: rowTextOrNull(r.clock), ts: rowText(r.ts), agreement: rowNumber(r.agreement), reporters: rowNumber(r.reporters),
    latency_ms: rowNumber(r.latency_ms), probability: laterProbability(r.probability), provisional_id: rowTextOrNull(r.provisional_id), retracted_id: rowTextOrNull(r.retracted_id),
    status: laterText(r.status), previous_status: laterText(r.previous_status), start_time: laterText(r.start_time), reason: laterText(r.reason),
  };
}
