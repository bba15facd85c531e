import { invalid } from './errors.js';

/**
 * Calendar days of an IANA time zone as instants (docs/decisions.md "Time zones"): `date=…&tz=…`
 * on `/v1/games` and `/v1/competitions` means that day on the zone's wall clock, matched on
 * `start_time`. The zone rules are the runtime's (ICU's tz database, shipped with Node).
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The zone's formatter, or undefined for a name ICU does not know. */
function formatter(zone: string): Intl.DateTimeFormat | undefined {
  let f = formatters.get(zone);
  if (f) return f;
  try {
    f = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hourCycle: 'h23' });
  } catch {
    return undefined;
  }
  // ICU accepts names in any letter case: kept up to a bound so odd spellings cannot grow it without end.
  if (formatters.size >= 1024) formatters.clear();
  formatters.set(zone, f);
  return f;
}

/** Names ICU accepts in any letter case; only these characters appear in IANA zone names. */
const ZONE_SHAPE = /^[A-Za-z0-9_+\-/]{1,64}$/;

/** The zone's formatter; a name that is not an IANA zone (`America/New_York`, `UTC`) is a 400 naming `tz`. */
function zoneFormatter(zone: string): Intl.DateTimeFormat {
  const f = ZONE_SHAPE.test(zone) ? formatter(zone) : undefined;
  if (!f) throw invalid('invalid_parameter', `'tz' must be an IANA time zone such as America/New_York or Europe/London; '${zone.slice(0, 64)}' is not one.`, 'tz');
  return f;
}

/** Validates `tz` (see zoneFormatter). */
export function checkZone(zone: string): string {
  zoneFormatter(zone);
  return zone;
}

/** The calendar date (YYYY-MM-DD) on the zone's wall clock at an instant. */
export function dateInZone(zone: string, at: number): string {
  const parts = zoneFormatter(zone).formatToParts(at);
  const get = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}

const DAY_MS = 86_400_000;

/**
 * The first instant (ms) whose wall-clock date in the zone is `date` or later. Offsets stay
 * within ±26 h of UTC, so the answer lies within two days of the date's UTC midnight; the wall
 * date only moves forward with time, so a binary search to the millisecond finds it. This is the
 * day's midnight where midnight exists, and the first instant after the jump where a DST change
 * skips midnight (America/Santiago, Asia/Beirut).
 */
export function startOfDay(zone: string, date: string): number {
  const utcMidnight = Date.parse(`${date}T00:00:00.000Z`);
  let lo = utcMidnight - 2 * DAY_MS; // wall date before `date`
  let hi = utcMidnight + 2 * DAY_MS; // wall date at or after `date`
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (dateInZone(zone, mid) >= date) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** A calendar day of a zone: the date and the instants [from, to) it spans, as stored ISO strings. */
export interface ZoneDay {
  date: string;
  /** Inclusive, ISO 8601 UTC with milliseconds (the stored form of `start_time`). */
  from: string;
  /** Exclusive. */
  to: string;
}

const nextDate = (date: string) => new Date(Date.parse(`${date}T00:00:00.000Z`) + DAY_MS).toISOString().slice(0, 10);

/**
 * `date` (a YYYY-MM-DD already checked, or `today`) as a day of the zone. `today` is the zone's
 * date at `now`: at 21:00 in New York it is still that day there, whatever the date in UTC.
 */
export function zoneDay(date: string, zone: string, now: number): ZoneDay {
  const day = date === 'today' ? dateInZone(zone, now) : date;
  const key = `${zone} ${day}`;
  let hit = days.get(key);
  if (!hit) {
    hit = { date: day, from: new Date(startOfDay(zone, day)).toISOString(), to: new Date(startOfDay(zone, nextDate(day))).toISOString() };
    // A day's bounds never change for a given tz database: kept, up to a bound.
    if (days.size >= 4096) days.clear();
    days.set(key, hit);
  }
  return hit;
}

const days = new Map<string, ZoneDay>();
