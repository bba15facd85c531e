import fastJson from 'fast-json-stringify';
import { Competition } from '@svc/schema';
import { addDays, type Clock } from '../../domain/clock.js';
import { encodeCursor } from '../../domain/cursor.js';
import type { ScopeFilter } from '../../domain/scopes.js';
import type { CompetitionFilter, CompetitionRepo } from './competitions.js';
import { dateIdKey, type PageRequest } from '../sql/page.js';

/**
 * The serializer Fastify compiles for a `Competition` in a REST response: the same library on
 * the same schema, so a stored competition's JSON is the REST item's bytes by construction
 * (test/settled-days.test.ts checks whole pages against the database path).
 */
const serializeCompetition = fastJson(Competition);

/**
 * A day settles this many days after it began (UTC): by then every writer that can add a
 * competition to it has passed it (games are scheduled only for today or later), with a day to
 * spare for clocks that disagree.
 */
export const SETTLE_AFTER_DAYS = 2;
/** A day with more competitions than this is not kept: it is read from the database page by page. */
const MAX_COMPETITIONS_A_DAY = 1000;
/** A day found unsettled (a game not final yet) is read again, to be kept, no sooner than this. */
const RECHECK_UNSETTLED_MS = 60_000;
/** What a kept day costs beyond its JSON text (its arrays, ids and map entry), roughly. */
const DAY_OVERHEAD_BYTES = 200;
const COMPETITION_OVERHEAD_BYTES = 120;

interface SettledCompetition {
  id: string;
  sport: string;
  league: string;
  seasonId: string;
  json: string;
}

interface SettledDay {
  /** In the database's (date, id) order: the order the database path pages in. */
  competitions: SettledCompetition[];
  bytes: number;
  /** When it was last read, as a count of reads. */
  usedAt: number;
}

/**
 * The competitions of settled days, each with its REST JSON, so a list of one such day is
 * answered without SQL or serialisation (docs/decisions.md, "Settled days").
 *
 * A day is settled when it lies SETTLE_AFTER_DAYS behind today and every competition on it is
 * final. Nothing can change it then: final is terminal (the store serialises a competition's
 * plays and refuses any after the final one), no writer adds a competition to a past day, and the
 * archive is imported before a node serves. So a kept day needs no invalidation, on this node or
 * across a cluster. Days are kept on first read, least recently used first out past `budgetBytes`.
 */
export class SettledDays {
  private readonly days = new Map<string, SettledDay>();
  private bytes = 0;
  private uses = 0;
  private boundaryOf = '';
  private boundary = '';
  private readonly loading = new Map<string, Promise<SettledDay | undefined>>();
  /** When each day last read was found unsettled. */
  private readonly unsettled = new Map<string, number>();

  constructor(
    private readonly competitions: CompetitionRepo,
    private readonly clock: Clock,
    private readonly today: () => string,
    private readonly budgetBytes: number,
  ) {}

  /**
   * The page's REST body when the settled days can answer it: a `date` filter on a settled day,
   * no team or player filter, and a cursor of that day. Undefined otherwise: the caller asks the
   * database. Scope and the other filters are applied here as the database path applies them.
   */
  async page(scope: ScopeFilter, filter: CompetitionFilter, page: PageRequest): Promise<string | undefined> {
    const { date } = filter;
    if (this.budgetBytes === 0 || date === undefined || filter.team !== undefined || filter.player !== undefined) return undefined;
    const after = dateIdKey(page.cursor);
    // A cursor of another day (never issued for this filter) is left to the database's ordering.
    if (after !== undefined && after[0] !== date) return undefined;
    const day = this.days.get(date) ?? (this.settles(date) ? await this.load(date) : undefined);
    if (!day) return undefined;

    let from = 0;
    if (after !== undefined) {
      from = day.competitions.findIndex((c) => c.id === after[1]) + 1;
      if (from === 0) return undefined;
    }
    let body = '{"data":[';
    let last: SettledCompetition | undefined;
    let more = false;
    let n = 0;
    // Every competition of a settled day is final: a status filter keeps all or none.
    if (filter.status === undefined || filter.status === 'final') {
      for (let i = from; i < day.competitions.length; i++) {
        const c = day.competitions[i];
        if (!matches(c, scope, filter)) continue;
        if (n === page.limit) {
          more = true;
          break;
        }
        body += n++ === 0 ? c.json : `,${c.json}`;
        last = c;
      }
    }
    const next = more && last ? JSON.stringify(encodeCursor([date, last.id])) : 'null';
    day.usedAt = ++this.uses;
    return `${body}],"next_cursor":${next}}`;
  }

  /** Bytes held now, as counted against the budget. */
  get size(): number {
    return this.bytes;
  }

  /** Whether `date` lies SETTLE_AFTER_DAYS or more behind today (ISO dates compare as strings). */
  private settles(date: string): boolean {
    const today = this.today();
    if (today !== this.boundaryOf) {
      this.boundaryOf = today;
      this.boundary = addDays(today, -SETTLE_AFTER_DAYS);
    }
    return date <= this.boundary;
  }

  /** Reads a day, keeping it if settled; concurrent reads of one day share one query. */
  private async load(date: string): Promise<SettledDay | undefined> {
    const checked = this.unsettled.get(date);
    if (checked !== undefined && this.clock.now() - checked < RECHECK_UNSETTLED_MS) return undefined;
    let pending = this.loading.get(date);
    if (!pending) {
      pending = this.read(date).finally(() => this.loading.delete(date));
      this.loading.set(date, pending);
    }
    return pending;
  }

  private async read(date: string): Promise<SettledDay | undefined> {
    const read = await this.competitions.list({ sports: null, leagues: null, viewerKeyId: null }, { date }, { limit: MAX_COMPETITIONS_A_DAY });
    if (read.next_cursor !== null || read.data.some((c) => c.status !== 'final')) {
      if (this.unsettled.size >= 10_000) this.unsettled.clear();
      this.unsettled.set(date, this.clock.now());
      return undefined;
    }
    this.unsettled.delete(date);
    let bytes = DAY_OVERHEAD_BYTES;
    const competitions = read.data.map((c): SettledCompetition => {
      const json = serializeCompetition(c);
      bytes += json.length + COMPETITION_OVERHEAD_BYTES;
      return { id: c.id, sport: c.sport, league: c.league, seasonId: c.season_id, json };
    });
    const day: SettledDay = { competitions, bytes, usedAt: ++this.uses };
    if (bytes > this.budgetBytes) return day;
    this.days.set(date, day);
    this.bytes += bytes;
    if (this.bytes > this.budgetBytes) this.evict();
    return day;
  }

  /**
   * Drops the least recently used days until the rest fit in three quarters of the budget: one
   * sort per eviction instead of reordering the map on every read.
   */
  private evict(): void {
    const byUse = [...this.days].sort((a, b) => a[1].usedAt - b[1].usedAt);
    for (const [date, d] of byUse) {
      if (this.bytes <= this.budgetBytes * 0.75) break;
      this.days.delete(date);
      this.bytes -= d.bytes;
    }
  }
}

function matches(c: SettledCompetition, scope: ScopeFilter, f: CompetitionFilter): boolean {
  if (scope.sports && !scope.sports.includes(c.sport)) return false;
  if (scope.leagues && !scope.leagues.includes(c.league)) return false;
  if (f.sports !== undefined && !f.sports.includes(c.sport)) return false;
  if (f.league !== undefined && f.league !== c.league) return false;
  if (f.seasonIds !== undefined && !f.seasonIds.includes(c.seasonId)) return false;
  return true;
}
