import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { ScopeFilter } from '../../domain/scopes.js';
import type { SqlBuilder } from './row-reader.js';

/**
 * The key's sport/league allow-list as one WHERE clause for any table with `sport` and `league`
 * columns. Every scoped query goes through here, so the rule lives in one place.
 */
export function scopeSql(scope: ScopeFilter, table?: string): RawBuilder<SqlBool> {
  const col = (c: string) => sql.ref(table ? `${table}.${c}` : c);
  const parts: RawBuilder<unknown>[] = [];
  const list = (values: readonly string[]) => sql.join(values.length ? values : ['']);
  if (scope.sports) parts.push(sql`${col('sport')} in (${list(scope.sports)})`);
  if (scope.leagues) parts.push(sql`${col('league')} in (${list(scope.leagues)})`);
  if (parts.length === 0) return sql<SqlBool>`1 = 1`;
  return sql<SqlBool>`(${sql.join(parts, sql` and `)})`;
}

/**
 * Games a key may see: every real game (no owner) and its own sandbox replays' (docs/replays.md).
 * For a table with an `owner_key_id` column (competitions, events); `alias` names the table.
 */
export function visibleClause(b: SqlBuilder, scope: ScopeFilter, alias: string): string {
  const owner = `${alias}.owner_key_id`;
  return scope.viewerKeyId === null ? `${owner} is null` : `(${owner} is null or ${owner} = ${b.bind(scope.viewerKeyId)})`;
}

/** The same rule for the hot reads' hand-written SQL (store/sql/row-reader.ts); `alias` names the table. */
export function scopeClause(b: SqlBuilder, scope: ScopeFilter, alias: string): string {
  const parts: string[] = [];
  if (scope.sports) parts.push(b.oneOf(`${alias}.sport`, scope.sports));
  if (scope.leagues) parts.push(b.oneOf(`${alias}.league`, scope.leagues));
  return parts.length === 0 ? '1 = 1' : `(${parts.join(' and ')})`;
}
