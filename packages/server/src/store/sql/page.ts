import { sql, type SelectQueryBuilder } from 'kysely';
import { decodeCursor, encodeCursor, type KeyValue } from '../../domain/cursor.js';

export interface PageRequest {
  limit: number;
  cursor?: string;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** Rows were fetched with limit + 1: the extra row only says that another page exists. */
export function pageOf<R, T>(rows: R[], limit: number, key: (r: R) => KeyValue[], map: (r: R) => T): Page<T> {
  const more = rows.length > limit;
  const kept = more ? rows.slice(0, limit) : rows;
  return {
    data: kept.map(map),
    next_cursor: more ? encodeCursor(key(kept[kept.length - 1])) : null,
  };
}

export function stringKey(cursor: string | undefined): string | undefined {
  if (cursor === undefined) return undefined;
  const [k] = decodeCursor(cursor, ['string']);
  return String(k);
}

export function numberKey(cursor: string | undefined): number | undefined {
  if (cursor === undefined) return undefined;
  const [k] = decodeCursor(cursor, ['number']);
  return Number(k);
}

export function dateIdKey(cursor: string | undefined): [string, string] | undefined {
  if (cursor === undefined) return undefined;
  const [d, id] = decodeCursor(cursor, ['string', 'string']);
  return [String(d), String(id)];
}

/**
 * One page of a list kept newest first by (created_at, id), after the page's cursor, fetched
 * with limit + 1 for `pageOf`: the lists of a key's own records (deliveries, notifications,
 * replays) are read this way.
 */
export function newestFirst<DB, TB extends keyof DB, O>(q: SelectQueryBuilder<DB, TB, O>, page: PageRequest): SelectQueryBuilder<DB, TB, O> {
  const before = dateIdKey(page.cursor);
  return q
    .$if(before !== undefined, (b) => b.where(sql<boolean>`(created_at, id) < (${before?.[0] ?? ''}, ${before?.[1] ?? ''})`))
    .orderBy(sql`created_at`, 'desc')
    .orderBy(sql`id`, 'desc')
    .limit(page.limit + 1);
}
