import { invalid } from '../domain/errors.js';
import { EXPORT_ENTITIES, eventSeq, type ExportEntity } from '@svc/schema';

export const ENTITIES = EXPORT_ENTITIES;
export type Entity = ExportEntity;

/** A `from`/`to` bound: the instant on the event time line and the first date it includes. */
export interface Bound {
  /** ISO 8601 UTC with milliseconds, the stored form of `ts`, so strings compare as instants. */
  ts: string;
  /**
   * The first calendar date whose midnight (UTC) is at or after the instant. A competition is
   * placed at its date's midnight, so `date >= ceilDate(from)` and `date < ceilDate(to)` apply
   * the same inclusive/exclusive rule to dates as `ts` gets.
   */
  ceilDate: string;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * Parses an ISO 8601 date (`2022-11-20`, midnight UTC) or date-time (`2022-11-20T18:00:00Z`,
 * `…+01:00`; without an offset it is UTC) and rejects anything else, including impossible dates,
 * with a 400 naming the parameter.
 */
export function parseBound(value: string, param: 'from' | 'to'): Bound {
  const bad = () => invalid('invalid_parameter', `'${param}' must be an ISO 8601 date (2022-11-20) or date-time (2022-11-20T18:00:00Z).`, param);
  const m = ISO.exec(value);
  if (!m) throw bad();
  const [, y, mo, d, h = '00', mi = '00', s = '00', frac = '', zone = 'Z'] = m;
  const date = `${y}-${mo}-${d}`;
  const midnight = Date.parse(`${date}T00:00:00.000Z`);
  if (Number.isNaN(midnight) || new Date(midnight).toISOString().slice(0, 10) !== date) throw bad();
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) throw bad();
  const offsetMin = zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(-2)));
  if (zone !== 'Z' && (Number(zone.slice(1, 3)) > 23 || Number(zone.slice(-2)) > 59)) throw bad();
  // Stored times have millisecond precision; rounding a finer bound up keeps both rules exact.
  const ms = Math.ceil(Number(`0.${frac || '0'}`) * 1000);
  const at = midnight + ((Number(h) * 60 + Number(mi) - offsetMin) * 60 + Number(s)) * 1000 + ms;
  const ts = new Date(at).toISOString();
  if (!/^\d{4}-/.test(ts)) throw bad();
  const day = ts.slice(0, 10);
  const ceilDate = ts.endsWith('T00:00:00.000Z') ? day : new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10);
  return { ts, ceilDate };
}

/** `from` must come before `to`: an empty or inverted range is a mistake worth a clear 400. */
export function checkRange(from: Bound | undefined, to: Bound | undefined): void {
  if (from && to && from.ts >= to.ts) throw invalid('invalid_parameter', "'to' must be later than 'from' ('to' is exclusive).", 'to');
}

export type After =
  | { entity: 'events'; seq: number }
  | { entity: 'plays'; competitionId: string; seq: number }
  | { entity: 'competitions'; competitionId: string };

export const badAfter = (entity: Entity) =>
  invalid(
    'invalid_parameter',
    `'after' must be the id of the last ${entity === 'plays' ? 'play seen, as <competition_id>:<seq>' : entity === 'events' ? 'event seen (evt_…)' : 'competition seen'}.`,
    'after',
  );

/** The shape of `after` per entity; whether the competition it names is in the export is checked by the caller. */
export function parseAfter(value: string, entity: Entity): After {
  if (entity === 'events') {
    const seq = eventSeq(value);
    if (seq === undefined) throw badAfter(entity);
    return { entity, seq };
  }
  if (entity === 'plays') {
    const m = /^([a-z0-9_]{1,100}):(\d{1,9})$/.exec(value);
    if (!m) throw badAfter(entity);
    return { entity, competitionId: m[1], seq: Number(m[2]) };
  }
  if (!/^[a-z0-9_]{1,100}$/.test(value)) throw badAfter(entity);
  return { entity, competitionId: value };
}

/** The id a line of an export is resumed after: what `after` takes back. */
export function lineId(entity: Entity, record: { id?: unknown; competition_id?: unknown; seq?: unknown }): string | undefined {
  if (entity === 'plays') {
    return typeof record.competition_id === 'string' && typeof record.seq === 'number' ? `${record.competition_id}:${record.seq}` : undefined;
  }
  return typeof record.id === 'string' ? record.id : undefined;
}
