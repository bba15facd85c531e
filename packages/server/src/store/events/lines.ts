import pg from 'pg';
import { linesFromBinaryCopy } from '../sql/copy-lines.js';
import { eventJson } from './json.js';
import { copyOut } from '../sql/pg-copy.js';
import type { PrimaryPool } from '../sql/pg-primary.js';
import { PgRowReader, RowShapeError, SqlBuilder, rowNumber, rowText, type RowReader } from '../sql/row-reader.js';

export interface EventLineQuery {
  seasonIds: readonly string[];
  afterSeq: number;
  fromTs?: string;
  toTs?: string;
  /** Only rows up to this seq, and only of these types (docs/changes.md, docs/schedule.md). */
  throughSeq?: number;
  types?: readonly string[];
  /** Competitions whose events the page leaves out (they still count as read). */
  excluded: readonly string[];
  limit: number;
}

/** One keyset page of the bulk export's event lines. */
export interface EventLinePage {
  /**
   * The lines in `seq` order, each ending in a newline, as text or as the UTF-8 bytes (PostgreSQL
   * hands them over as bytes); empty when every row was left out.
   */
  text: string | Buffer;
  lines: number;
  /** Rows read, left-out ones included: fewer than the limit means the end. */
  fetched: number;
  /** The last row's seq (the next page starts after it); the query's `afterSeq` when none. */
  lastSeq: number;
}

/** Keyset pages of a season's confirmed events in `seq` order: what the bulk export reads. */
export interface EventLinePages {
  page(q: EventLineQuery): Promise<EventLinePage>;
  close(): Promise<void>;
}

/** How a page's values enter its SQL: SqlBuilder binds them; a COPY writes them as literals (copyPageSql). */
type PageValues = Pick<SqlBuilder, 'bind' | 'oneOf'>;

/** The rows of one page: seq, competition_id and the stored JSON after the id (store/events/json.ts). */
function rowsSql(q: EventLineQuery, b: PageValues, columns: string): string {
  const seasons = q.seasonIds.length === 1 ? `season_id = ${b.bind(q.seasonIds[0])}` : b.oneOf('season_id', q.seasonIds);
  // A sandbox replay's events are its key's own, never the archive's (docs/replays.md).
  const where = [seasons, `seq > ${b.bind(q.afterSeq)}`, `tier = 'confirmed'`, 'owner_key_id is null'];
  if (q.fromTs !== undefined) where.push(`ts >= ${b.bind(q.fromTs)}`);
  if (q.toTs !== undefined) where.push(`ts < ${b.bind(q.toTs)}`);
  if (q.throughSeq !== undefined) where.push(`seq <= ${b.bind(q.throughSeq)}`);
  if (q.types !== undefined) where.push(b.oneOf('type', q.types));
  return `select ${columns} from events where ${where.join(' and ')} order by seq limit ${b.bind(q.limit)}`;
}

function decode(v: unknown[]): { seq: number; competitionId: string; jsonTail: string } {
  if (v.length !== 3) throw new RowShapeError('unexpected row shape');
  return { seq: rowNumber(v[0]), competitionId: rowText(v[1]), jsonTail: rowText(v[2]) };
}

/** A page from its rows, each line written in JavaScript. */
async function pageOfRows(reader: RowReader, engine: 'sqlite' | 'postgres', q: EventLineQuery): Promise<EventLinePage> {
  const b = new SqlBuilder(engine);
  const rows = (await reader.rows(b.query(rowsSql(q, b, 'seq, competition_id, json_tail')))).map(decode);
  const excluded = new Set(q.excluded);
  let text = '';
  let lines = 0;
  for (const r of rows) {
    if (excluded.size > 0 && excluded.has(r.competitionId)) continue;
    text += `${eventJson(r.seq, r.jsonTail)}\n`;
    lines++;
  }
  return { text, lines, fetched: rows.length, lastSeq: rows.length > 0 ? rows[rows.length - 1].seq : q.afterSeq };
}

/**
 * SQLite: the whole page as one text, joined by the database. Each row read into JavaScript
 * costs a string per column; one text per page costs one (bench/history/2026-11-24.md, "Export: the line stored with the event").
 * `printf('%012d')` writes the id as `eventId` does (it pads, and never cuts a longer one).
 */
function aggregateSql(q: EventLineQuery, b: SqlBuilder): string {
  const line = `'{"id":"evt_' || printf('%012d', seq) || '"' || json_tail as line`;
  if (q.excluded.length === 0) {
    // A past season leaves nothing out: without the per-row membership test the query reads
    // markedly faster (bench/history/2026-11-26.md "Export: nothing left out").
    return `select count(*), max(seq), count(*), group_concat(line, char(10)) from (${rowsSql(q, b, `seq, ${line}`)})`;
  }
  const excluded = b.bind(JSON.stringify(q.excluded));
  const rows = rowsSql(q, b, `seq, ${line}, competition_id in (select value from json_each(${excluded})) as left_out`);
  return `select count(*), max(seq), count(*) filter (where not left_out), group_concat(line, char(10)) filter (where not left_out) from (${rows})`;
}

/**
 * Whether the lines of an aggregated page are in `seq` order. SQLite concatenates in the order
 * its subquery yields, which is the subquery's ORDER BY, but does not promise it for an aggregate
 * without its own ORDER BY (which costs a sort of the page): each line's id is checked instead,
 * and a page out of order is read again row by row.
 */
export function linesInSeqOrder(text: string): boolean {
  const ID = '{"id":"evt_'.length;
  let previous = -1;
  for (let at = 0; at < text.length; ) {
    const end = text.indexOf('"', at + ID);
    const seq = Number(text.slice(at + ID, end));
    if (end === -1 || !(seq > previous)) return false;
    previous = seq;
    const next = text.indexOf('\n', end);
    if (next === -1) break;
    at = next + 1;
  }
  return true;
}

/**
 * Why not Kysely, and why the JSON is stored: an export line costs what crosses from the driver
 * into JS per column (a string per text column) plus whatever renders it; the stored JSON makes
 * it one text per row, and on SQLite one text per page (bench/history/2026-11-24.md, "Export: the line stored with the event").
 *
 * SQLite's pages, read through the export's own read-only connection (store/events/export.ts), whose
 * small page cache keeps a season-long scan from growing the process and which sees only
 * committed data. PostgreSQL's: PgEventLines below.
 */
export class SqliteEventLines implements EventLinePages {
  constructor(private readonly reader: RowReader) {}

  async page(q: EventLineQuery): Promise<EventLinePage> {
    const b = new SqlBuilder('sqlite');
    const [row] = await this.reader.rows(b.query(aggregateSql(q, b)));
    if (row?.length !== 4) throw new RowShapeError('unexpected row shape');
    const fetched = rowNumber(row[0]);
    if (fetched === 0) return { text: '', lines: 0, fetched: 0, lastSeq: q.afterSeq };
    const lines = rowNumber(row[2]);
    const text = lines === 0 ? '' : `${rowText(row[3])}\n`;
    if (!linesInSeqOrder(text)) return pageOfRows(this.reader, 'sqlite', q);
    return { text, lines, fetched, lastSeq: rowNumber(row[1]) };
  }

  close(): Promise<void> {
    return this.reader.close();
  }
}

/**
 * Bytes a page's COPY may send: a page is `limit` rows of an event's JSON (a few hundred
 * bytes each), so this is only reached by a statement that is not the bounded page it should be.
 */
const COPY_PAGE_MAX_BYTES = 64 * 1024 * 1024;

const integerLiteral = (n: number): string => {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`not a row position: ${n}`);
  return String(n);
};

/**
 * A page's values as PostgreSQL literals: integers checked as such, text quoted by
 * node-postgres' escapeLiteral (which also handles backslashes), whatever the caller passes.
 */
const literals: PageValues = {
  bind: (value) => (typeof value === 'number' ? integerLiteral(value) : pg.escapeLiteral(value)),
  oneOf: (column, values) => (values.length === 0 ? '1 = 0' : `${column} in (${values.map((v) => pg.escapeLiteral(v)).join(', ')})`),
};

/** The page (the rows rowsSql reads) as a binary COPY of seq and the stored JSON. COPY takes no bind parameters. */
export function copyPageSql(q: EventLineQuery): string {
  return `copy (${rowsSql(q, literals, 'seq, json_tail')}) to stdout with (format binary)`;
}

/**
 * PostgreSQL: a page with nothing to leave out is one binary COPY whose bytes become the lines
 * without being decoded (store/sql/copy-lines.ts). Rows read through node-postgres cost a string per
 * column, and the text is encoded to UTF-8 again on its way to the socket; with the bytes passed
 * through, the export runs at about two thirds of the database's own COPY of the season, where it
 * ran at two fifths (bench/history/2026-11-27.md "Export on PostgreSQL: the bytes as the database sends them"). A page that leaves competitions out
 * (today's season) reads rows, as SQLite does.
 */
export class PgEventLines implements EventLinePages {
  private readonly rows: RowReader;

  constructor(private readonly pool: PrimaryPool) {
    this.rows = new PgRowReader(pool);
  }

  async page(q: EventLineQuery): Promise<EventLinePage> {
    if (q.excluded.length > 0) return pageOfRows(this.rows, 'postgres', q);
    const copied = linesFromBinaryCopy(await copyOut(this.pool, copyPageSql(q), COPY_PAGE_MAX_BYTES));
    if (copied.lastSeq === null) return { text: '', lines: 0, fetched: 0, lastSeq: q.afterSeq };
    return { text: copied.bytes, lines: copied.lines, fetched: copied.lines, lastSeq: copied.lastSeq };
  }

  close(): Promise<void> {
    return this.rows.close();
  }
}
