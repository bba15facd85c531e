import { encodeCursor } from '../domain/cursor.js';
import type { ScopeFilter } from '../domain/scopes.js';
import { playRecord, type CompetitionRepo } from '../store/reference/competitions.js';
import { inSlice, type CompetitionPosition, type ExportRepo, type ExportSlice } from '../store/events/export.js';
import type { PlayTable } from '../store/reference/types.js';
import type { PageSource } from './stream.js';

/**
 * Serialises one record exactly as the REST API does: the route passes the serializer Fastify
 * compiles for the record's response schema, so a line is byte for byte the REST item.
 */
export type Serialize = (record: { [key: string]: unknown }) => string;

/**
 * Confirmed events of the slice's archive-eligible competitions, in `seq` order. `excluded`
 * (ExportRepo.excluded) is read once when the export starts: a game finishing meanwhile joins
 * the next export, not half of this one.
 */
export function eventSource(repo: ExportRepo, slice: ExportSlice, afterSeq: number, excluded: ReadonlySet<string>): PageSource {
  let after = afterSeq;
  const leftOut = [...excluded];
  return {
    async next(limit) {
      const page = await repo.events(slice, after, limit, leftOut);
      after = page.lastSeq;
      return { text: page.text, fetched: page.fetched, done: page.fetched < limit };
    },
  };
}

/** Records serialised as lines, each ending in a newline. */
const linesOf = (lines: string[]): string => (lines.length > 0 ? `${lines.join('\n')}\n` : '');

/** Where a plays export resumes: inside this competition, after `seq`. */
export interface PlayStart {
  competition: CompetitionPosition;
  seq: number;
}

/**
 * Plays in (competition date, competition id, seq) order: a queue of the slice's competitions,
 * read a few dozen at a time, and each competition's plays by primary key until the page is
 * full. Every query is a bounded index range, whatever the season's size.
 */
export function playSource(repo: ExportRepo, slice: ExportSlice, start: PlayStart | undefined, serialize: Serialize): PageSource {
  const QUEUE = 64;
  let queue: { id: string; date: string }[] = [];
  let queued: { date: string; id: string } | undefined = start && { date: start.competition.date, id: start.competition.id };
  let exhausted = false;
  let current: { id: string; seq: number } | undefined = start && inSlice(start.competition, slice) ? { id: start.competition.id, seq: start.seq } : undefined;
  return {
    async next(limit) {
      const rows: PlayTable[] = [];
      while (rows.length < limit) {
        if (!current) {
          if (queue.length === 0 && !exhausted) {
            queue = await repo.competitionsAfter(slice, queued, QUEUE);
            exhausted = queue.length < QUEUE;
            const last = queue[queue.length - 1];
            if (last) queued = { date: last.date, id: last.id };
          }
          const c = queue.shift();
          if (!c) break;
          current = { id: c.id, seq: 0 };
        }
        const want = limit - rows.length;
        const got = await repo.plays(current.id, current.seq, want);
        for (const r of got) rows.push(r);
        if (got.length > 0) current.seq = got[got.length - 1].seq;
        if (got.length < want) current = undefined;
      }
      return { text: linesOf(rows.map((r) => serialize(playRecord(r)))), fetched: rows.length, done: rows.length < limit };
    },
  };
}

/**
 * Competitions come from the very query behind `GET /v1/competitions` (same filter, same
 * record mapping, same keyset cursor); only the range bounds are added here: the start position
 * becomes the first cursor and the end bound stops the walk.
 */
export function competitionSource(
  competitions: CompetitionRepo,
  scope: ScopeFilter,
  slice: ExportSlice,
  start: { date: string; id: string } | undefined,
  serialize: Serialize,
): PageSource {
  // (date, '') sorts before every competition of that date: the cursor then means date >= from.
  const fromKey = slice.fromDate !== undefined ? { date: slice.fromDate, id: '' } : undefined;
  const first = start && fromKey ? (start.date >= fromKey.date ? start : fromKey) : (start ?? fromKey);
  let cursor: string | undefined = first ? encodeCursor([first.date, first.id]) : undefined;
  return {
    async next(limit) {
      // Like the events and plays: a sandbox replay's game is its key's own, never the archive's.
      const page = await competitions.list(scope, { league: slice.league, seasonIds: slice.seasonIds, archiveOnly: true }, { limit, cursor });
      const toDate = slice.toDate;
      const kept = toDate === undefined ? page.data : page.data.filter((c) => c.date < toDate);
      cursor = page.next_cursor ?? undefined;
      const done = page.next_cursor === null || kept.length < page.data.length;
      return { text: linesOf(kept.map((c) => serialize(c))), fetched: page.data.length, done };
    },
  };
}
