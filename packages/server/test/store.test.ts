import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { migrate, openDb } from '../src/store/sql/db.js';
import { CompetitionRepo } from '../src/store/reference/competitions.js';
import { eventRecord } from '../src/store/events/rows.js';
import { ExportRepo, type ExportSlice } from '../src/store/events/export.js';
import { storedEventRow } from '../src/store/events/json.js';
import { SqliteEventLines, linesInSeqOrder } from '../src/store/events/lines.js';
import { SqliteRowReader, type RowReader } from '../src/store/sql/row-reader.js';
import { MetaRepo } from '../src/store/sql/meta.js';
import { CachedStatements } from '../src/store/sql/statement-cache.js';
import { WalCheckpointer } from '../src/store/sql/wal-checkpointer.js';
import { engines, freshDb, sleep, tmpDir } from './helpers.js';


describe('SQLite WAL checkpointing off the event loop', () => {
  /** Writes ~4 MB (about 1,000 pages) in one transaction. */
  const writeBatch = async (db: Awaited<ReturnType<typeof openDb>>) => {
    await sql`insert into scratch (b) select randomblob(4000) from (with recursive n(i) as (select 1 union all select i + 1 from n where i < 1000) select i from n)`.execute(db.kysely);
  };
  const walBytes = (dir: string) => fs.statSync(path.join(dir, 'svc.db-wal')).size;

  it('keeps the WAL from growing without any commit paying for a checkpoint', async () => {
    const dir = tmpDir();
    const db = await openDb({ dataDir: dir, databaseUrl: null, backgroundCheckpoint: true });
    try {
      // SQLite's own checkpoint in the commit only as a backstop, far above the thread's threshold.
      const auto = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db.kysely);
      expect(auto.rows[0].wal_autocheckpoint).toBe(4096);
      await sql`create table scratch (b blob)`.execute(db.kysely);
      await writeBatch(db);
      const first = walBytes(dir);
      expect(first).toBeGreaterThan(4_000_000);
      // The thread checkpoints every 250 ms; once it has, the next write starts the WAL over.
      await sleep(1000);
      await writeBatch(db);
      expect(walBytes(dir)).toBeLessThan(first * 1.2);
      const rows = await sql<{ n: number }>`select count(*) as n from scratch`.execute(db.kysely);
      expect(rows.rows[0].n).toBe(2000);
    } finally {
      await db.close();
    }
  });

  it('cuts a WAL that one large transaction grew back to its size limit once it starts over', async () => {
    const dir = tmpDir();
    const limit = 1024 * 1024;
    const db = await openDb({ dataDir: dir, databaseUrl: null, backgroundCheckpoint: true, walSizeLimitBytes: limit });
    try {
      await sql`create table scratch (b blob)`.execute(db.kysely);
      await writeBatch(db);
      expect(walBytes(dir)).toBeGreaterThan(4 * limit);
      // Once the thread has checkpointed (every 250 ms past 1,000 frames), the next commit starts over.
      await sleep(1000);
      await sql`insert into scratch (b) values (randomblob(100))`.execute(db.kysely);
      expect(walBytes(dir)).toBeLessThanOrEqual(limit);
    } finally {
      await db.close();
    }
  });

  it('keeps the WAL under 64 MB under a writer that never pauses (each commit begins while the last checkpoint runs)', async () => {
    const dir = tmpDir();
    const db = await openDb({ dataDir: dir, databaseUrl: null, backgroundCheckpoint: true });
    try {
      await sql`create table scratch (b blob)`.execute(db.kysely);
      const insert = db.statements?.prepare('insert into scratch (b) values (randomblob(8000))');
      if (!insert) throw new Error('unreachable: a SQLite Db has its statements');
      let largest = 0;
      // 128 MB in commits back to back, yielding to the event loop (where the catch-up runs) between
      // a few, as request handlers do. Without the catch-up the WAL grows by all of it.
      for (let written = 0; written < 128 * 1024 * 1024; written += 5 * 8000) {
        for (let i = 0; i < 5; i++) insert.run([]);
        await new Promise((r) => setImmediate(r));
        largest = Math.max(largest, walBytes(dir));
      }
      expect(largest).toBeLessThan(64 * 1024 * 1024);
    } finally {
      await db.close();
    }
  });

  /** The WAL header's checkpoint sequence number: SQLite adds one each time a writer starts the WAL over. */
  const walRestarts = (file: string) => {
    const header = Buffer.alloc(32);
    const fd = fs.openSync(`${file}-wal`, 'r');
    try {
      fs.readSync(fd, header, 0, 32, 0);
    } finally {
      fs.closeSync(fd);
    }
    return header.readUInt32BE(12);
  };

  it('commits seconds apart do not each start the WAL over (and pay its header fsync)', async () => {
    const dir = tmpDir();
    const db = await openDb({ dataDir: dir, databaseUrl: null, backgroundCheckpoint: true });
    try {
      await sql`create table scratch (b blob)`.execute(db.kysely);
      const file = path.join(dir, 'svc.db');
      const before = walRestarts(file);
      for (let i = 0; i < 6; i++) {
        await sql`insert into scratch (b) values (randomblob(100))`.execute(db.kysely);
        await sleep(300);
      }
      expect(walRestarts(file)).toBe(before);
      const rows = await sql<{ n: number }>`select count(*) as n from scratch`.execute(db.kysely);
      expect(rows.rows[0].n).toBe(6);
    } finally {
      await db.close();
    }
  });

  it('checkpoints a few frames once they have waited maxWaitMs, and many at once', async () => {
    const dir = tmpDir();
    const file = path.join(dir, 'x.db');
    const sqlite = new SQLite(file);
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('wal_autocheckpoint = 0');
    sqlite.exec('create table scratch (b blob)');
    const few = WalCheckpointer.start(file, { pollMs: 50, maxWaitMs: 1000 });
    try {
      const insert = sqlite.prepare('insert into scratch (b) values (randomblob(?))');
      insert.run(100);
      const start = walRestarts(file);
      // Not yet waited long enough: the next commit appends.
      await sleep(100);
      insert.run(100);
      expect(walRestarts(file)).toBe(start);
      // Checkpointed after maxWaitMs: the next commit starts the WAL over.
      await sleep(1600);
      insert.run(100);
      expect(walRestarts(file)).toBe(start + 1);
      // 1,000 frames (one row per page) are checkpointed at the next poll, long before maxWaitMs.
      sqlite.transaction(() => {
        for (let i = 0; i < 1100; i++) insert.run(3000);
      })();
      await sleep(500);
      insert.run(100);
      expect(walRestarts(file)).toBe(start + 2);
    } finally {
      await few.stop();
      sqlite.close();
    }
  });

  it('without it (the default for short-lived commands), SQLite checkpoints in the commit as usual', async () => {
    const dir = tmpDir();
    const db = await openDb({ dataDir: dir, databaseUrl: null });
    try {
      const auto = await sql<{ wal_autocheckpoint: number }>`pragma wal_autocheckpoint`.execute(db.kysely);
      expect(auto.rows[0].wal_autocheckpoint).toBe(1000);
    } finally {
      await db.close();
    }
  });

  it('a closed database reopens with everything the checkpointer and the writer left', async () => {
    const dir = tmpDir();
    const db = await openDb({ dataDir: dir, databaseUrl: null, backgroundCheckpoint: true });
    await sql`create table scratch (b blob)`.execute(db.kysely);
    await writeBatch(db);
    await db.close();
    const again = await openDb({ dataDir: dir, databaseUrl: null });
    try {
      const rows = await sql<{ n: number }>`select count(*) as n from scratch`.execute(again.kysely);
      expect(rows.rows[0].n).toBe(1000);
    } finally {
      await again.close();
    }
  });
});

describe.each(engines())('bulk export event lines (%s)', (engine) => {
  it('read committed confirmed events only, each rendered as the record the REST API writes, whatever the service connection is doing', async () => {
    const { db } = await freshDb(engine);
    const repo = new ExportRepo(db);
    const row = (n: number) => storedEventRow({
      type: 'score', tier: n === 4 ? 'provisional' : 'confirmed', game_id: 'soccer_1', competition_id: 'soccer_x_1', sport: 'soccer', league: 'x', season_id: 'x_2020', team: 'AAA',
      event_type: 'goal', points: 1, clock: n % 2 ? null : `${n}'`, ts: `2020-01-01T00:00:0${n}.000Z`, agreement: 0.5 + n / 10, reporters: n, latency_ms: 10 * n, probability: 1,
      provisional_id: n === 2 ? 'evt_000000000001' : null, retracted_id: null,
    });
    const slice = (over: Partial<ExportSlice> = {}): ExportSlice => ({ league: 'x', seasonIds: ['x_2020'], today: '2030-01-01', ...over });
    // Parsed: the bytes are checked against the REST serializer itself in export-lines.test.ts.
    const parse = (text: string): unknown[] => (text === '' ? [] : text.slice(0, -1).split('\n').map((l) => JSON.parse(l)));
    const lines = async (over: Partial<ExportSlice>, after: number, limit: number) => parse((await repo.events(slice(over), after, limit)).text.toString());
    try {
      await db.kysely.insertInto('events').values([row(1), row(4), row(2)]).execute();
      const viaKysely = await db.kysely.selectFrom('events').selectAll().where('season_id', '=', 'x_2020').where('tier', '=', 'confirmed').orderBy('seq').execute();
      expect(viaKysely).toHaveLength(2);
      // The record the REST API builds from the Kysely row.
      const rest = viaKysely.map(eventRecord);
      expect(await lines({}, 0, 10)).toEqual(rest);
      expect(await repo.events(slice(), 0, 10)).toMatchObject({ lines: 2, fetched: 2, lastSeq: viaKysely[1].seq });
      expect(await repo.events(slice(), 0, 1)).toMatchObject({ lines: 1, fetched: 1, lastSeq: viaKysely[0].seq });
      expect(await repo.events(slice(), viaKysely[1].seq, 10)).toEqual({ text: '', lines: 0, fetched: 0, lastSeq: viaKysely[1].seq });
      // Left-out competitions are read (the keyset moves past them) but not written.
      expect(await repo.events(slice(), 0, 10, ['soccer_x_1'])).toEqual({ text: '', lines: 0, fetched: 2, lastSeq: viaKysely[1].seq });
      expect(await repo.events(slice(), 0, 10, ['soccer_x_2'])).toMatchObject({ lines: 2, fetched: 2 });
      expect(await lines({}, viaKysely[0].seq, 10)).toEqual(rest.slice(1));
      expect(await lines({}, 0, 1)).toEqual(rest.slice(0, 1));
      expect(await lines({ fromTs: '2020-01-01T00:00:02.000Z' }, 0, 10)).toEqual(rest.slice(1));
      expect(await lines({ toTs: '2020-01-01T00:00:02.000Z' }, 0, 10)).toEqual(rest.slice(0, 1));
      expect(await lines({ seasonIds: ['x_2020', 'x_2021'] }, 0, 10)).toEqual(rest);
      expect(await lines({ seasonIds: [] }, 0, 10)).toEqual([]);

      await db.kysely.transaction().execute(async (trx) => {
        await trx.insertInto('events').values(row(3)).execute();
        // The service's connection sees its own uncommitted row; the export must not.
        expect(await trx.selectFrom('events').select('seq').where('season_id', '=', 'x_2020').where('tier', '=', 'confirmed').execute()).toHaveLength(3);
        expect((await repo.events(slice(), 0, 10)).lines).toBe(2);
      });
      expect((await repo.events(slice(), 0, 10)).lines).toBe(3);
    } finally {
      await repo.close();
      await db.close();
    }
  });
});

describe('SQLite export pages joined by the database', () => {
  it('checks each line is in seq order, and reads a page row by row when it is not', async () => {
    expect(linesInSeqOrder('')).toBe(true);
    expect(linesInSeqOrder('{"id":"evt_000000000001","a":1}\n{"id":"evt_000000000002","a":"\\n"}\n')).toBe(true);
    expect(linesInSeqOrder('{"id":"evt_000000000002"}\n{"id":"evt_000000000001"}\n')).toBe(false);
    expect(linesInSeqOrder('{"id":"evt_000000000002"}\n{"id":"evt_000000000002"}\n')).toBe(false);
    expect(linesInSeqOrder('{"id":"evt_999999999999"}\n{"id":"evt_1000000000000"}\n')).toBe(true);

    const { db } = await freshDb('sqlite');
    const file = db.sqliteFile ?? '';
    const real = new SqliteRowReader(file, 8192);
    // The real database's rows, with an aggregated page's lines handed back in reverse, as SQLite
    // would if it ever concatenated in another order.
    let reversed = 0;
    const reversing: RowReader = {
      async rows(q) {
        const rows = await real.rows(q);
        if (!q.text.includes('group_concat')) return rows;
        return rows.map(([n, last, kept, text]) => {
          if (typeof text !== 'string' || Number(kept) < 2) return [n, last, kept, text];
          reversed++;
          return [n, last, kept, text.split('\n').reverse().join('\n')];
        });
      },
      close: () => real.close(),
    };
    const q = { seasonIds: ['wc_2022'], afterSeq: 0, excluded: [], limit: 50 };
    const plain = new SqliteEventLines(new SqliteRowReader(file, 8192));
    try {
      const straight = await plain.page(q);
      expect(straight.lines).toBe(50);
      expect(linesInSeqOrder(straight.text.toString())).toBe(true);
      expect(await new SqliteEventLines(reversing).page(q)).toEqual(straight);
      expect(reversed).toBe(1);
    } finally {
      await plain.close();
      await real.close();
      await db.close();
    }
  });
});

describe.each(engines())('events stored before their JSON was (%s)', (engine) => {
  it('get the very JSON the event log writes when the migration runs, and the export reads them', async () => {
    const { db } = await freshDb(engine);
    const repo = new ExportRepo(db);
    try {
      const written = await db.kysely.selectFrom('events').select(['seq', 'json_tail']).orderBy('seq').execute();
      // More than one batch of the backfill.
      expect(written.length).toBeGreaterThan(2500);
      // The schema as it was before: no column, the migration not run; plus events of the time with odd text.
      await sql`alter table events drop column json_tail`.execute(db.kysely);
      await sql`delete from kysely_migration where name = '0007_event_json'`.execute(db.kysely);
      const odd = { type: 'score', tier: 'confirmed', game_id: 'g"1', competition_id: 'c_1', sport: 'soccer', league: 'x', season_id: 'x_2020', team: '\u2028é😀\\', event_type: '</script>\n', points: 3, ts: '2020-01-01T00:00:00.000Z', agreement: 2 / 3, reporters: 2, latency_ms: 7, probability: 1 };
      await sql`insert into events (type, tier, game_id, competition_id, sport, league, season_id, team, event_type, points, clock, ts, agreement, reporters, latency_ms, provisional_id, retracted_id)
                values (${odd.type}, ${odd.tier}, ${odd.game_id}, ${odd.competition_id}, ${odd.sport}, ${odd.league}, ${odd.season_id}, ${odd.team}, ${odd.event_type}, ${odd.points}, ${null}, ${odd.ts}, ${odd.agreement}, ${odd.reporters}, ${odd.latency_ms}, ${'evt_000000000001'}, ${null})`.execute(db.kysely);

      await migrate(db);

      const after = await db.kysely.selectFrom('events').selectAll().orderBy('seq').execute();
      expect(after.slice(0, written.length).map((r) => ({ seq: r.seq, json_tail: r.json_tail }))).toEqual(written);
      const added = after[after.length - 1];
      expect(added.json_tail).toBe(storedEventRow({ ...odd, clock: null, provisional_id: 'evt_000000000001', retracted_id: null }).json_tail);
      const page = await repo.events({ league: 'x', seasonIds: ['x_2020'], today: '2030-01-01' }, 0, 10);
      expect(page.lines).toBe(1);
      expect(JSON.parse(page.text.toString())).toEqual(eventRecord(added));
      if (engine === 'postgres') {
        // Every writer sets it; PostgreSQL also refuses a row without it.
        await expect(sql`insert into events (type, tier, game_id, competition_id, sport, league, season_id, team, event_type, points, ts, agreement, reporters, latency_ms)
          values ('score', 'confirmed', 'g', 'c', 's', 'l', 'x_2020', 't', 'e', 1, 't', 1, 0, 0)`.execute(db.kysely)).rejects.toThrow(/json_tail/);
      }
    } finally {
      await repo.close();
      await db.close();
    }
  });
});

describe.each(engines())('repositories the simulator reads and claims through (%s)', (engine) => {
  it('meta: the first writer of a key wins, a released key can be claimed again', async () => {
    const { db } = await freshDb(engine);
    const meta = new MetaRepo(db);
    try {
      expect(await meta.claim('test:a', 'one')).toBe(true);
      expect(await meta.claim('test:a', 'two')).toBe(false);
      expect(await meta.get('test:a')).toBe('one');
      expect(await meta.getMany(['test:a', 'test:b'])).toEqual([{ key: 'test:a', value: 'one' }]);
      expect(await meta.getMany([])).toEqual([]);
      await meta.release('test:a');
      expect(await meta.get('test:a')).toBeUndefined();
      expect(await meta.claim('test:a', 'three')).toBe(true);
    } finally {
      await db.close();
    }
  });

  it('live games with plays from a source: the prefix is literal, LIKE wildcards in it match nothing else', async () => {
    const { db } = await freshDb(engine);
    try {
      const game = await db.kysely
        .selectFrom('competitions as c')
        .innerJoin('competitors as k', (j) => j.onRef('k.competition_id', '=', 'c.id').on('k.role', '=', 'home'))
        .innerJoin('plays as p', 'p.competition_id', 'c.id')
        .select(['c.id', 'c.sport', 'k.entity_id', 'p.seq'])
        .where('c.sport', '=', 'soccer')
        .orderBy('c.id')
        .orderBy('p.seq')
        .executeTakeFirstOrThrow();
      await db.kysely.updateTable('competitions').set({ status: 'live' }).where('id', '=', game.id).execute();
      await db.kysely.updateTable('plays').set({ source: 'aXb:1' }).where('competition_id', '=', game.id).where('seq', '=', game.seq).execute();
      const repo = new CompetitionRepo(db);
      const found = (prefix: string) => repo.liveWithPlaysFrom(['soccer'], prefix).then((rows) => rows.filter((r) => r.competitionId === game.id));
      expect(await found('aXb:')).toEqual([{ competitionId: game.id, home: game.entity_id }]);
      expect(await found('a_b:')).toEqual([]);
      expect(await found('a%')).toEqual([]);
      expect(await repo.liveWithPlaysFrom(['basketball'], 'aXb:')).toEqual([]);
    } finally {
      await db.close();
    }
  });
});

describe('CachedStatements (prepared SQLite statements reused by Kysely)', () => {
  it('reuses a statement per SQL text, binds each call afresh, evicts the least recently used', async () => {
    const handle = new SQLite(path.join(tmpDir(), 'cache.db'));
    const cached = new CachedStatements(handle, 2);
    const kysely = new Kysely<{ t: { id: number; v: string } }>({ dialect: new SqliteDialect({ database: cached }) });
    try {
      await sql`create table t (id integer primary key, v text not null)`.execute(kysely);
      for (let i = 1; i <= 5; i++) await kysely.insertInto('t').values({ id: i, v: `v${i}` }).execute();
      const byId = (id: number) => kysely.selectFrom('t').select('v').where('id', '=', id).executeTakeFirst();
      expect(await byId(2)).toEqual({ v: 'v2' });
      expect(await byId(4)).toEqual({ v: 'v4' });
      // create, insert and select: three texts, capacity two, so create went first.
      expect(cached.size).toBe(2);
      expect(cached.prepare('select v from "t" where "id" = ?')).toBe(cached.prepare('select v from "t" where "id" = ?'));
      // A rolled-back transaction through cached statements leaves nothing behind.
      await expect(
        kysely.transaction().execute(async (trx) => {
          await trx.insertInto('t').values({ id: 6, v: 'v6' }).execute();
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect(await byId(6)).toBeUndefined();
    } finally {
      await kysely.destroy();
    }
  });

  it('a statement cached before a schema change sees the new schema', async () => {
    const handle = new SQLite(path.join(tmpDir(), 'cache.db'));
    const cached = new CachedStatements(handle);
    const kysely = new Kysely<{ t: { id: number } }>({ dialect: new SqliteDialect({ database: cached }) });
    try {
      await sql`create table t (id integer primary key)`.execute(kysely);
      await sql`insert into t (id) values (1)`.execute(kysely);
      const all = () => sql<Record<string, unknown>>`select * from t`.execute(kysely);
      expect((await all()).rows).toEqual([{ id: 1 }]);
      await sql`alter table t add column note text default 'x'`.execute(kysely);
      expect((await all()).rows).toEqual([{ id: 1, note: 'x' }]);
    } finally {
      await kysely.destroy();
    }
  });
});
