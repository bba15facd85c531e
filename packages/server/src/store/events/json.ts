import fastJson from 'fast-json-stringify';
import { ScoreEvent, StatusEvent, eventId } from '@svc/schema';
import type { Insertable } from 'kysely';
import { eventRecord, type EventRow } from './rows.js';
import type { EventTable } from './types.js';

/** An event row as its writers give it: the database assigns `seq`, and `json_tail` is derived here. */
export type EventFields = Omit<Insertable<EventTable>, 'seq' | 'json_tail'>;

/**
 * The serializer Fastify compiles for an `Event` in a REST response: the same library on the
 * same schema, so the stored JSON is the REST item's bytes by construction (odd strings,
 * integers, infinities and all; test/export-lines.test.ts checks it against the API).
 */
const serializeScore = fastJson(ScoreEvent);
const serializeStatus = fastJson(StatusEvent);

/** Every event's JSON starts with its id, the schema's first (required) property. */
const PLACEHOLDER_SEQ = 0;
const PLACEHOLDER_HEAD = `{"id":${JSON.stringify(eventId(PLACEHOLDER_SEQ))}`;

/**
 * The drivers write text as UTF-8, which cannot hold a lone surrogate: better-sqlite3 stores
 * one as three bytes that read back as three U+FFFD, node-postgres as one U+FFFD. The event log
 * stores well-formed text instead (one U+FFFD on both engines), so the JSON written beside a row
 * is the JSON of what is read back.
 */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const SURROGATE = /[\ud800-\udfff]/;
const wellFormed = (s: string): string => (SURROGATE.test(s) ? s.replace(LONE_SURROGATE, '\ufffd') : s);
const wellFormedOrNull = (s: string | null | undefined): string | null => (s == null ? null : wellFormed(s));

/**
 * An event's REST JSON after its `id` member (docs/decisions.md, "Export"), for a row as the
 * database holds it. The row is written before the database has given it a `seq`, so the stored
 * JSON leaves the id out and a reader puts it back in front (`eventJson`); events are never
 * updated, so the text cannot go stale.
 */
export function eventJsonTail(row: EventFields): string {
  const record = eventRecord(eventRowOfFields(row, PLACEHOLDER_SEQ));
  const json = record.type === 'status' ? serializeStatus(record) : serializeScore(record);
  if (!json.startsWith(PLACEHOLDER_HEAD)) throw new Error('the Event schema no longer starts with its id');
  return json.slice(PLACEHOLDER_HEAD.length);
}

/**
 * The row as the database holds it once `seq` is given: what a writer inserted is what a reader
 * reads back, so an append builds its stored events from its own rows and the seq alone.
 */
export function eventRowOfFields(row: EventFields, seq: number): EventRow {
  // Field by field: a spread of the row costs several times more per event.
  return {
    seq, type: row.type, tier: row.tier, game_id: row.game_id, competition_id: row.competition_id, sport: row.sport, league: row.league,
    season_id: row.season_id, team: row.team, event_type: row.event_type, points: row.points, clock: row.clock ?? null, ts: row.ts, agreement: row.agreement,
    reporters: row.reporters, latency_ms: row.latency_ms, probability: row.probability, provisional_id: row.provisional_id ?? null, retracted_id: row.retracted_id ?? null,
    status: row.status ?? null, previous_status: row.previous_status ?? null, start_time: row.start_time ?? null, reason: row.reason ?? null,
  };
}

/** The row the event log inserts for these fields: well-formed text and its JSON beside it. */
export function storedEventRow(fields: EventFields): Insertable<EventTable> {
  const row = {
    type: wellFormed(fields.type), tier: wellFormed(fields.tier), game_id: wellFormed(fields.game_id), competition_id: wellFormed(fields.competition_id),
    sport: wellFormed(fields.sport), league: wellFormed(fields.league), season_id: wellFormed(fields.season_id), team: wellFormed(fields.team),
    event_type: wellFormed(fields.event_type), points: fields.points, clock: wellFormedOrNull(fields.clock), ts: wellFormed(fields.ts), agreement: fields.agreement,
    reporters: fields.reporters, latency_ms: fields.latency_ms, probability: fields.probability, provisional_id: wellFormedOrNull(fields.provisional_id), retracted_id: wellFormedOrNull(fields.retracted_id),
    status: fields.status ?? null, previous_status: fields.previous_status ?? null, start_time: fields.start_time ?? null, reason: wellFormedOrNull(fields.reason),
    json_tail: '',
    owner_key_id: fields.owner_key_id ?? null,
  };
  row.json_tail = eventJsonTail(row);
  return row;
}

/** The event's REST JSON from its seq and stored tail. */
export const eventJson = (seq: number, jsonTail: string): string => `{"id":"${eventId(seq)}"${jsonTail}`;
