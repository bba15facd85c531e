import { RowShapeError, SqlBuilder, rowNumber, rowText, type RowReader, type SqlQuery } from './row-reader.js';

export interface EventLineQuery {
  seasonIds: readonly string[];
  afterSeq: number;
  fromTs?: string;
  toTs?: string;
  limit: number;
}

/**
 * One confirmed event as the export reads it: its stored JSON after the id (store/event-json.ts),
 * with `seq` (the keyset, and the id) and `competition_id` (the archive filter) beside it.
 */
export interface EventLineRow {
  seq: number;
  competitionId: string;
  jsonTail: string;
}

/** Keyset pages of a season's confirmed events in `seq` order, as line rows: what the bulk export reads. */
export interface EventLinePages {
  page(q: EventLineQuery): Promise<EventLineRow[]>;
  close(): Promise<void>;
}

/** The page query and its parameters. */
function pageSql(q: EventLineQuery, engine: 'sqlite' | 'postgres'): SqlQuery {
  const b = new SqlBuilder(engine);
  const seasons = q.seasonIds.length === 1 ? `season_id = ${b.bind(q.seasonIds[0])}` : b.oneOf('season_id', q.seasonIds);
  const where = [seasons, `seq > ${b.bind(q.afterSeq)}`, `tier = 'confirmed'`];
  if (q.fromTs !== undefined) where.push(`ts >= ${b.bind(q.fromTs)}`);
  if (q.toTs !== undefined) where.push(`ts < ${b.bind(q.toTs)}`);
  return b.query(`select seq, competition_id, json_tail from events where ${where.join(' and ')} order by seq limit ${b.bind(q.limit)}`);
}

function decode(v: unknown[]): EventLineRow {
  if (v.length !== 3) throw new RowShapeError('unexpected row shape');
  return { seq: rowNumber(v[0]), competitionId: rowText(v[1]), jsonTail: rowText(v[2]) };
}

/**
 * Why not Kysely, and why the JSON is stored: an export line costs what crosses from the driver
 * into JS per column (a string per text column) plus whatever renders it. Three values per row,
 * one of them the line's text, is the least a keyset page can read (bench/RESULTS.md,
 * "bench/export").
 *
 * The reader is the export's own (store/export.ts): on SQLite a read-only connection whose small
 * page cache keeps a season-long scan from growing the process, and which sees only committed
 * data; on PostgreSQL the service's pool.
 */
export class EventLines implements EventLinePages {
  constructor(
    private readonly reader: RowReader,
    private readonly engine: 'sqlite' | 'postgres',
  ) {}

  async page(q: EventLineQuery): Promise<EventLineRow[]> {
    return (await this.reader.rows(pageSql(q, this.engine))).map(decode);
  }

  close(): Promise<void> {
    return this.reader.close();
  }
}
