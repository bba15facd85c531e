import SQLite from 'better-sqlite3';
import type pg from 'pg';
import { EVENT_SCHEMA } from '@svc/schema';

export interface EventLineQuery {
  seasonIds: readonly string[];
  afterSeq: number;
  fromTs?: string;
  toTs?: string;
  limit: number;
}

/**
 * One confirmed event as the database renders its export line (docs/decisions.md, "Export"):
 * the line is `head + <agreement as JSON> + tail`. Everything but the one floating-point field
 * is JSON the database wrote; `seq` (the keyset) and `competition_id` (the archive filter)
 * travel beside it.
 */
export interface EventLineRow {
  seq: number;
  competitionId: string;
  head: string;
  agreement: number;
  tail: string;
}

/** Keyset pages of a season's confirmed events in `seq` order, as line rows: what the bulk export reads. */
export interface EventLinePages {
  page(q: EventLineQuery): Promise<EventLineRow[]>;
  close(): Promise<void>;
}

/** How each engine writes the few SQL expressions the line needs. */
interface Dialect {
  placeholder(i: number): string;
  /** A text column as a JSON string, or the JSON `null` for SQL NULL. */
  json(column: string): string;
  /** An integer column as its decimal digits. */
  integer(column: string): string;
  /** `evt_` and the seq zero-padded to 12 digits, as `eventId` in @svc/schema writes it. */
  eventId: string;
}

const SQLITE: Dialect = {
  placeholder: () => '?',
  json: (c) => `json_quote(${c})`,
  // An INTEGER column holds what the API validated as an integer; the cast truncates anything
  // else toward zero, as fast-json-stringify does for an integer field.
  integer: (c) => `cast(${c} as integer)`,
  eventId: `printf('evt_%012d', seq)`,
};

const POSTGRES: Dialect = {
  placeholder: (i) => `$${i}`,
  json: (c) => `coalesce(to_json(${c})::text, 'null')`,
  integer: (c) => `${c}::text`,
  // lpad() cuts a longer value to the length; padStart() does not.
  eventId: `'evt_' || case when seq < 1000000000000 then lpad(seq::text, 12, '0') else seq::text end`,
};

/** A constant as an SQL string literal (standard quoting, valid on both engines). */
const literal = (s: string) => `'${s.replaceAll("'", "''")}'`;

/**
 * The `head` and `tail` expressions: the keys, their order and each value's JSON form follow
 * the `Event` response schema as fast-json-stringify writes it for `eventRecord`
 * (store/competitions.ts): required properties in schema order, then the optional ones.
 * test/export-lines.test.ts checks the lines byte for byte against the REST API, odd strings and
 * numbers included, on both engines.
 */
function lineColumns(d: Dialect): { head: string; tail: string } {
  const field = (key: string, value: string) => [literal(`,${JSON.stringify(key)}:`), value];
  const optional = (key: string, column: string) => `case when ${column} is null then '' else ${literal(`,${JSON.stringify(key)}:`)} || ${d.json(column)} end`;
  const head = [
    literal('{"id":"'), d.eventId, literal('"'),
    ...field('type', `case when type = 'score_retracted' then '"score_retracted"' else '"score"' end`),
    // Only confirmed rows are selected.
    ...field('tier', literal('"confirmed"')),
    ...field('game_id', d.json('game_id')),
    ...field('sport', d.json('sport')),
    ...field('league', d.json('league')),
    ...field('team', d.json('team')),
    ...field('event_type', d.json('event_type')),
    ...field('points', d.integer('points')),
    ...field('clock', d.json('clock')),
    ...field('ts', d.json('ts')),
    literal(',"confidence":{"agreement":'),
  ];
  const tail = [
    ...field('reporters', d.integer('reporters')),
    ...field('latency_ms', d.integer('latency_ms')),
    literal('}'),
    ...field('schema', literal(JSON.stringify(EVENT_SCHEMA))),
    // fast-json-stringify writes the required properties first, then the optional ones.
    optional('provisional_id', 'provisional_id'),
    optional('retracted_id', 'retracted_id'),
    literal('}'),
  ];
  return { head: `concat(${head.join(', ')})`, tail: `concat(${tail.join(', ')})` };
}

/** The page query and its parameters. */
function pageSql(q: EventLineQuery, d: Dialect, columns: { head: string; tail: string }): { text: string; params: (string | number)[] } {
  const params: (string | number)[] = [];
  const bind = (v: string | number) => {
    params.push(v);
    return d.placeholder(params.length);
  };
  const seasons = q.seasonIds.length === 1 ? `season_id = ${bind(q.seasonIds[0])}` : `season_id in (${q.seasonIds.map(bind).join(', ') || "''"})`;
  const where = [seasons, `seq > ${bind(q.afterSeq)}`, `tier = 'confirmed'`];
  if (q.fromTs !== undefined) where.push(`ts >= ${bind(q.fromTs)}`);
  if (q.toTs !== undefined) where.push(`ts < ${bind(q.toTs)}`);
  const text = `select seq, competition_id, ${columns.head}, agreement, ${columns.tail} from events where ${where.join(' and ')} order by seq limit ${bind(q.limit)}`;
  return { text, params };
}

class RowShapeError extends Error {}

const str = (v: unknown): string => {
  if (typeof v !== 'string') throw new RowShapeError(`expected text, got ${typeof v}`);
  return v;
};
const num = (v: unknown): number => {
  if (typeof v !== 'number') throw new RowShapeError(`expected a number, got ${typeof v}`);
  return v;
};

function decode(v: unknown): EventLineRow {
  if (!Array.isArray(v) || v.length !== 5) throw new RowShapeError('unexpected row shape');
  return { seq: num(v[0]), competitionId: str(v[1]), head: str(v[2]), agreement: num(v[3]), tail: str(v[4]) };
}

/**
 * Why not Kysely, and why the database writes the JSON: an export line costs what crosses from
 * the driver into JS per column (a string per text column) plus building a record and
 * serialising it; 18 columns as arrays were ~2.9 µs of the ~5 µs a line cost the server.
 * Five values per row, two of them the line's text, cost a fraction of that
 * (bench/RESULTS.md, "bench/export").
 *
 * On SQLite the reads use a read-only connection of their own: the service's connection can be
 * inside a transaction that spans awaits (an event append), and a read on it would see that
 * transaction's uncommitted rows; this one only sees committed data (WAL), and its small page
 * cache keeps a season-long scan from growing the process.
 */
export class SqliteEventLines implements EventLinePages {
  private db: SQLite.Database | null = null;
  private readonly statements = new Map<string, SQLite.Statement>();
  private readonly columns = lineColumns(SQLITE);

  constructor(private readonly file: string) {}

  async page(q: EventLineQuery): Promise<EventLineRow[]> {
    const { text, params } = pageSql(q, SQLITE, this.columns);
    let st = this.statements.get(text);
    if (!st) {
      this.db ??= this.open();
      st = this.db.prepare(text).raw(true);
      this.statements.set(text, st);
    }
    return st.all(...params).map(decode);
  }

  private open(): SQLite.Database {
    const db = new SQLite(this.file, { readonly: true, fileMustExist: true });
    db.pragma('cache_size = -8192');
    return db;
  }

  async close(): Promise<void> {
    this.statements.clear();
    this.db?.close();
    this.db = null;
  }
}

/** PostgreSQL: the service's pool, rows as arrays. Each page takes and returns a connection. */
export class PgEventLines implements EventLinePages {
  private readonly columns = lineColumns(POSTGRES);

  constructor(private readonly pool: pg.Pool) {}

  async page(q: EventLineQuery): Promise<EventLineRow[]> {
    const { text, params } = pageSql(q, POSTGRES, this.columns);
    const res = await this.pool.query({ text, values: params, rowMode: 'array' });
    return res.rows.map(decode);
  }

  async close(): Promise<void> {
    // The pool belongs to the Db.
  }
}
