import { CHANGE_TYPES, type Change, type ChangeType } from '@svc/schema';
import type { Clock } from '../domain/clock.js';
import { isoDate, isoTime } from '../domain/clock.js';
import { mayReadEvents } from '../domain/access.js';
import { decodeCursor, encodeCursor } from '../domain/cursor.js';
import { invalid } from '../domain/errors.js';
import type { Principal } from '../domain/scopes.js';
import type { ChangeLog, ChangeRow, ChangeScope } from '../store/events/changes.js';
import type { CompetitionRepo } from '../store/reference/competitions.js';
import type { Db } from '../store/sql/db.js';
import { eventsBySeq } from '../store/events/events.js';
import { eventId, eventSeq } from '@svc/schema';

/** `chg_<seq>`, zero-padded like event ids so ids sort as the feed does. */
export const changeId = (seq: number): string => `chg_${seq.toString().padStart(12, '0')}`;

const CURSOR_TAG = 'chg';
/** Rows read at a time while changes the key may not read are passed over (ChangeFeed.visible). */
const SCAN_ROWS = 200;
/** Rows one answer passes over at most before it answers with what it found. */
const MAX_SCANNED = 20_000;
/** The feed's opaque cursor: its position (the last change seq seen). */
export const changesCursor = (seq: number): string => encodeCursor([CURSOR_TAG, seq]);

export function cursorSeq(cursor: string, param = 'since'): number {
  let parts: (string | number)[];
  try {
    parts = decodeCursor(cursor, ['string', 'number']);
  } catch {
    throw invalid('invalid_cursor', 'The cursor is not one the change feed issued (a next_cursor or an X-Changes-Cursor).', param);
  }
  const [tag, seq] = parts;
  if (tag !== CURSOR_TAG || typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) throw invalid('invalid_cursor', 'The cursor is not one the change feed issued (a next_cursor or an X-Changes-Cursor).', param);
  return seq;
}

/**
 * Long polls of one node wait here. One read of the feed's head per `pollMs` while anyone waits,
 * whatever the number of waiters (changes written on other nodes are seen within it); a change
 * written on this node wakes its waiters at once (`poke`). Nobody waiting: no reads at all.
 */
export class ChangeWatcher {
  private waiters = new Set<{ after: number; wake: () => void }>();
  private timer: NodeJS.Timeout | null = null;
  private reading = false;
  constructor(
    private readonly log: ChangeLog,
    private readonly pollMs = 100,
  ) {}

  get waiting(): number {
    return this.waiters.size;
  }

  /** Resolves when a change after `after` exists, or after `ms`, or on `signal`. */
  wait(after: number, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const w = {
        after,
        wake: () => {
          clearTimeout(t);
          signal?.removeEventListener('abort', w.wake);
          this.waiters.delete(w);
          if (this.waiters.size === 0) this.stop();
          resolve();
        },
      };
      const t = setTimeout(w.wake, ms);
      signal?.addEventListener('abort', w.wake, { once: true });
      this.waiters.add(w);
      this.start();
    });
  }

  /** A change was committed here: read the head now. */
  poke(): void {
    if (this.waiters.size > 0) void this.check();
  }

  private start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), this.pollMs);
    this.timer.unref();
  }

  private stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async check(): Promise<void> {
    if (this.reading) return;
    this.reading = true;
    try {
      const head = (await this.log.heads()).change;
      for (const w of [...this.waiters]) if (head > w.after) w.wake();
    } catch {
      // The store is away: waiters keep waiting until their time is up.
    } finally {
      this.reading = false;
    }
  }
}

/** A page of the changes a key may read, the position after them, and whether the feed's head was reached. */
interface FoundPage {
  data: Change[];
  last: number;
  atHead: boolean;
}

export interface ChangesQueryParsed {
  since?: string;
  limit: number;
  types?: string;
  wait: number;
}

/**
 * The change feed (docs/changes.md): every created or updated competition and every event a key
 * may see, in the one order the database gave them, each with its object as REST returns it now.
 */
export class ChangeFeed {
  readonly watcher: ChangeWatcher;
  /** The highest change seq this node has read as the feed's head (it only grows). */
  private knownHead = 0;
  constructor(
    private readonly db: Db,
    private readonly log: ChangeLog,
    private readonly competitions: CompetitionRepo,
    private readonly clock: Clock,
    private readonly retentionDays: number,
    pollMs = 100,
  ) {
    this.watcher = new ChangeWatcher(log, pollMs);
  }

  /** One answer of `GET /v1/changes`: holds an empty page up to `wait` seconds for a change. */
  async page(p: Principal, q: ChangesQueryParsed, signal?: AbortSignal): Promise<{ data: Change[]; next_cursor: string }> {
    const types = q.types === undefined ? null : parseChangeTypes(q.types);
    let since = q.since === undefined ? null : cursorSeq(q.since);
    const pruned = await this.log.prunedThrough();
    if (since !== null && since < pruned) {
      throw invalid('cursor_expired', `The cursor points before the oldest change kept (the feed keeps ${this.retentionDays} days); start again from an export and its X-Changes-Cursor.`, 'since');
    }
    // A position past the feed's head was never issued: polling with it would pass over every
    // change up to it, for ever, so it is refused rather than answered empty. The head only
    // grows, so a cursor at or below one seen before needs no read.
    if (since !== null && since > Math.max(pruned, this.knownHead)) {
      this.knownHead = Math.max(this.knownHead, (await this.log.heads()).change);
      if (since > Math.max(pruned, this.knownHead)) {
        throw invalid('invalid_cursor', 'The cursor is past the end of the change feed: it is not one the feed issued (a next_cursor or an X-Changes-Cursor).', 'since');
      }
    }
    if (since === null) since = pruned;
    const scope = { sports: p.sports, leagues: p.leagues, viewerKeyId: p.keyId, types };
    const deadline = Date.now() + q.wait * 1000;
    for (;;) {
      const from = since;
      const found = await this.shared(`${from}|${q.limit}|${types?.join(',') ?? '*'}|${p.sports?.join(',') ?? '*'}|${p.leagues?.join(',') ?? '*'}|${p.keyId}`, () => this.visible(p, from, q.limit, scope));
      if (found && found.data.length > 0) return { data: found.data, next_cursor: changesCursor(found.last) };
      // Only changes the key may not read (or none): the cursor moves past them, and the wait goes on from there.
      if (found) since = found.last;
      const left = deadline - Date.now();
      if (left <= 0 || signal?.aborted || (found && !found.atHead)) return { data: [], next_cursor: changesCursor(since) };
      await this.watcher.wait(since, left, signal);
    }
  }

  /**
   * Up to `limit` changes after `since` that the key may read, and the position after them. Rows
   * it may not read are passed over, reading on (SCAN_ROWS at a time) until `limit` are found or
   * the head is reached; an empty page therefore means the key has nothing more up to the head,
   * unless MAX_SCANNED rows were passed over first (then the page is empty with the cursor
   * moved on: a client keeps polling with it). Null when there is no change at all after `since`.
   */
  private async visible(p: Principal, since: number, limit: number, scope: ChangeScope): Promise<FoundPage | null> {
    const data: Change[] = [];
    let last = since;
    let scanned = 0;
    for (;;) {
      const want = Math.max(limit - data.length, SCAN_ROWS);
      const rows = await this.log.after(last, want, scope);
      if (rows.length === 0) return scanned === 0 ? null : { data, last, atHead: true };
      scanned += rows.length;
      for (const { seq, change } of await this.objects(rows, p)) {
        if (change) {
          data.push(change);
          if (data.length === limit) return { data, last: seq, atHead: false };
        }
        last = seq;
      }
      if (rows.length < want) return { data, last, atHead: true };
      if (scanned >= MAX_SCANNED) return { data, last, atHead: false };
    }
  }

  /**
   * An export's X-Changes-Cursor and the last event seq it may hold (docs/changes.md): the feed's
   * head and the event log's, read in one snapshot. When the export leaves out competitions that
   * already have events (games still being played), the cursor moves back to just before the
   * first of those events, so the feed from the cursor brings every event the export does not
   * hold; events the export holds that come after that point are in the feed too, and a mirror
   * keyed by id (as every mirror is) takes them once. The export itself stays whole.
   */
  async position(firstLeftOut: (throughSeq: number) => Promise<number | undefined> = async () => undefined): Promise<{ cursor: string; eventSeq: number }> {
    const heads = await this.log.heads();
    const first = await firstLeftOut(heads.event);
    if (first !== undefined) {
      const change = await this.log.ofEvent(eventId(first));
      // Its change was pruned: the oldest change kept is the best the feed can do.
      return { cursor: changesCursor(change !== undefined ? change - 1 : await this.log.prunedThrough()), eventSeq: heads.event };
    }
    return { cursor: changesCursor(heads.change), eventSeq: heads.event };
  }

  /**
   * Followers of one key poll with the same cursor: when a change wakes a thousand of them, one
   * read answers them all. A page found is kept a second (its changes never change; a competition
   * object may be up to a second old, as a REST answer of another node may); an empty one is not.
   */
  private async shared(key: string, read: () => Promise<FoundPage | null>): Promise<FoundPage | null> {
    const now = Date.now();
    const hit = this.pages.get(key);
    if (hit && hit.until > now) return hit.page;
    const page = read();
    if (this.pages.size >= 1000) this.pages.clear();
    this.pages.set(key, { page, until: now + 1000 });
    try {
      const found = await page;
      // Nothing found is not kept: the next poll reads again.
      if (!found || found.data.length === 0) this.pages.delete(key);
      return found;
    } catch (err) {
      this.pages.delete(key);
      throw err;
    }
  }
  private readonly pages = new Map<string, { page: Promise<FoundPage | null>; until: number }>();

  /** Deletes changes past the retention (worker.ts, hourly). */
  prune(): Promise<number> {
    return this.log.prune(isoTime(this.clock.now() - this.retentionDays * 86_400_000));
  }

  /**
   * The changes' objects, as REST returns them now, and only those the key may read elsewhere
   * (docs/changes.md "What a key sees"): a competition's changes for any product (competition
   * listings are), an event's only when the key's products read its competition's events now
   * (`GET /v1/games/:id/events`: `live` for today's and live games, `archive` for settled ones).
   */
  private async objects(rows: ChangeRow[], p: Principal): Promise<{ seq: number; change: Change | null }[]> {
    const seqs = rows.flatMap((r) => (r.type === 'event.created' ? [eventSeq(r.object_id) ?? -1] : []));
    const stored = await eventsBySeq(this.db, seqs);
    const events = new Map(stored.map((e) => [e.event.id, e]));
    const competitionIds = [...rows.filter((r) => r.type !== 'event.created').map((r) => r.object_id), ...stored.map((e) => e.competitionId)];
    const competitions = await this.competitions.getMany([...new Set(competitionIds)]);
    const today = isoDate(this.clock.now());
    return rows.map((r) => {
      const type = CHANGE_TYPES.find((t) => t === r.type);
      if (type === 'event.created') {
        const e = events.get(r.object_id);
        const c = e && competitions.get(e.competitionId);
        return { seq: r.seq, change: e && c && mayReadEvents(p, c, today) ? { id: changeId(r.seq), type, object_id: r.object_id, object: e.event, at: r.at } : null };
      }
      const c = competitions.get(r.object_id);
      if (!type || !c || (c.ownerKeyId !== null && c.ownerKeyId !== p.keyId)) return { seq: r.seq, change: null };
      const { ownerKeyId: _owner, ...record } = c;
      return { seq: r.seq, change: { id: changeId(r.seq), type, object_id: r.object_id, object: record, at: r.at } };
    });
  }
}

function parseChangeTypes(raw: string): ChangeType[] {
  const out: ChangeType[] = [];
  for (const name of raw.split(',')) {
    const t = CHANGE_TYPES.find((x) => x === name.trim());
    if (!t) throw invalid('invalid_parameter', `'types' must list change types among ${CHANGE_TYPES.join(', ')}.`, 'types');
    if (!out.includes(t)) out.push(t);
  }
  return out;
}
