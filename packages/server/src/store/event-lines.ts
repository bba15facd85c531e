import { EVENT_SCHEMA } from '@svc/schema';
import { RowShapeError, SqlBuilder, rowNumber, rowText, type RowReader, type SqlQuery } from './row-reader.js';

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
  /** A text column as a JSON string, or the JSON `null` for SQL NULL. */
  json(column: string): string;
  /** An integer column as its decimal digits. */
  integer(column: string): string;
  /** `evt_` and the seq zero-padded to 12 digits, as `eventId` in @svc/schema writes it. */
  eventId: string;
}

const SQLITE: Dialect = {
  json: (c) => `json_quote(${c})`,
  // An INTEGER column holds what the API validated as an integer; the cast truncates anything
  // else toward zero, as fast-json-stringify does for an integer field.
  integer: (c) => `cast(${c} as integer)`,
  eventId: `printf('evt_%012d', seq)`,
};

const POSTGRES: Dialect = {
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
function pageSql(q: EventLineQuery, engine: 'sqlite' | 'postgres', columns: { head: string; tail: string }): SqlQuery {
  const b = new SqlBuilder(engine);
  const seasons = q.seasonIds.length === 1 ? `season_id = ${b.bind(q.seasonIds[0])}` : b.oneOf('season_id', q.seasonIds);
  const where = [seasons, `seq > ${b.bind(q.afterSeq)}`, `tier = 'confirmed'`];
  if (q.fromTs !== undefined) where.push(`ts >= ${b.bind(q.fromTs)}`);
  if (q.toTs !== undefined) where.push(`ts < ${b.bind(q.toTs)}`);
  return b.query(`select seq, competition_id, ${columns.head}, agreement, ${columns.tail} from events where ${where.join(' and ')} order by seq limit ${b.bind(q.limit)}`);
}

function decode(v: unknown[]): EventLineRow {
  if (v.length !== 5) throw new RowShapeError('unexpected row shape');
  return { seq: rowNumber(v[0]), competitionId: rowText(v[1]), head: rowText(v[2]), agreement: rowNumber(v[3]), tail: rowText(v[4]) };
}

/**
 * Why not Kysely, and why the database writes the JSON: an export line costs what crosses from
 * the driver into JS per column (a string per text column) plus building a record and
 * serialising it; 18 columns as arrays were ~2.9 µs of the ~5 µs a line cost the server.
 * Five values per row, two of them the line's text, cost a fraction of that
 * (bench/RESULTS.md, "bench/export").
 *
 * The reader is the export's own (store/export.ts): on SQLite a read-only connection whose small
 * page cache keeps a season-long scan from growing the process, and which sees only committed
 * data; on PostgreSQL the service's pool.
 */
export class EventLines implements EventLinePages {
  private readonly columns: { head: string; tail: string };

  constructor(
    private readonly reader: RowReader,
    private readonly engine: 'sqlite' | 'postgres',
  ) {
    this.columns = lineColumns(engine === 'postgres' ? POSTGRES : SQLITE);
  }

  async page(q: EventLineQuery): Promise<EventLineRow[]> {
    return (await this.reader.rows(pageSql(q, this.engine, this.columns))).map(decode);
  }

  close(): Promise<void> {
    return this.reader.close();
  }
}
