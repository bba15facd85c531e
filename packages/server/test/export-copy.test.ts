import { describe, expect, it } from 'vitest';
import { copyPageSql, PgEventLines, type EventLineQuery } from '../src/store/events/lines.js';
import { CopyTooLarge, copyOut } from '../src/store/sql/pg-copy.js';
import { PgRowReader, SqlBuilder } from '../src/store/sql/row-reader.js';
import { eventJson } from '../src/store/events/json.js';
import { engines, freshDb } from './helpers.js';

const postgres = engines().filter((e) => e === 'postgres');

describe.each(postgres)('PostgreSQL export pages as binary COPY (%s)', (engine) => {
  const query = (over: Partial<EventLineQuery> = {}): EventLineQuery => ({ seasonIds: ['wc_2022'], afterSeq: 0, excluded: [], limit: 100, ...over });

  /** The page as rows read one by one and written in JavaScript: what the COPY must equal. */
  async function byRows(reader: PgRowReader, q: EventLineQuery): Promise<{ text: string; lastSeq: number }> {
    const b = new SqlBuilder('postgres');
    const where = [b.oneOf('season_id', q.seasonIds), `seq > ${b.bind(q.afterSeq)}`, `tier = 'confirmed'`];
    if (q.fromTs !== undefined) where.push(`ts >= ${b.bind(q.fromTs)}`);
    if (q.toTs !== undefined) where.push(`ts < ${b.bind(q.toTs)}`);
    const rows = await reader.rows(b.query(`select seq, json_tail from events where ${where.join(' and ')} order by seq limit ${b.bind(q.limit)}`));
    return { text: rows.map(([seq, tail]) => `${eventJson(Number(seq), String(tail))}\n`).join(''), lastSeq: rows.length ? Number(rows[rows.length - 1][0]) : q.afterSeq };
  }

  it('walks a season page by page with the same bytes, counts and positions as rows read one by one', async () => {
    const { db } = await freshDb(engine);
    const pool = db.pgPool;
    if (!pool) throw new Error('PostgreSQL has a pool');
    const lines = new PgEventLines(pool);
    const reader = new PgRowReader(pool);
    try {
      let afterSeq = 0;
      let pages = 0;
      let total = 0;
      for (;;) {
        const q = query({ afterSeq, limit: 25 });
        const page = await lines.page(q);
        const expected = await byRows(reader, q);
        expect(Buffer.isBuffer(page.text) || page.text === '').toBe(true);
        expect(page.text.toString()).toBe(expected.text);
        expect(page.lastSeq).toBe(expected.lastSeq);
        expect(page.fetched).toBe(page.lines);
        total += page.lines;
        pages++;
        if (page.fetched < q.limit) break;
        afterSeq = page.lastSeq;
      }
      const [[count]] = await reader.rows({ text: `select count(*)::int from events where season_id = 'wc_2022' and tier = 'confirmed'`, params: [] });
      expect(total).toBe(count);
      expect(pages).toBeGreaterThan(2);
      // Time bounds, two seasons, and no season at all.
      const bounded = query({ fromTs: '2022-11-25T00:00:00.000Z', toTs: '2022-12-01T00:00:00.000Z', limit: 1000 });
      expect((await lines.page(bounded)).text.toString()).toBe((await byRows(reader, bounded)).text);
      expect((await lines.page(query({ seasonIds: ['wc_2018', 'wc_2022'], limit: 1000 }))).lines).toBeGreaterThan((await lines.page(query({ limit: 1000 }))).lines);
      expect(await lines.page(query({ seasonIds: [] }))).toEqual({ text: '', lines: 0, fetched: 0, lastSeq: 0 });
    } finally {
      await lines.close();
      await db.close();
    }
  });

  it('takes values only as literals: a quote in a season id matches nothing, a position that is not a whole number is refused', async () => {
    const { db } = await freshDb(engine);
    const pool = db.pgPool;
    if (!pool) throw new Error('PostgreSQL has a pool');
    const lines = new PgEventLines(pool);
    try {
      const hostile = query({ seasonIds: ["wc_2022' or '1'='1", "x\\' or 1=1 --"], fromTs: "2022' or true --" });
      expect(await lines.page(hostile)).toEqual({ text: '', lines: 0, fetched: 0, lastSeq: 0 });
      expect(() => copyPageSql(query({ afterSeq: 1.5 }))).toThrow(RangeError);
      expect(() => copyPageSql(query({ afterSeq: -1 }))).toThrow(RangeError);
      expect(() => copyPageSql(query({ limit: Number.NaN }))).toThrow(RangeError);
      // Still a working pool afterwards.
      expect((await lines.page(query({ limit: 5 }))).lines).toBe(5);
    } finally {
      await lines.close();
      await db.close();
    }
  });

  it('a failed or oversized COPY rejects and drops its connection; the pool goes on', async () => {
    const { db } = await freshDb(engine);
    const pool = db.pgPool;
    if (!pool) throw new Error('PostgreSQL has a pool');
    try {
      await expect(copyOut(pool, 'copy (select no_such_column from events) to stdout with (format binary)', 1 << 20)).rejects.toThrow(/no_such_column/);
      await expect(copyOut(pool, `copy (select seq, json_tail from events where season_id = 'wc_2022' order by seq limit 100) to stdout with (format binary)`, 1000)).rejects.toBeInstanceOf(CopyTooLarge);
      await expect(copyOut(pool, 'select 1', 1 << 20)).rejects.toThrow(/rows/);
      expect(pool.totalCount).toBe(pool.idleCount);
      const ok = await copyOut(pool, `copy (select seq, json_tail from events where season_id = 'wc_2022' order by seq limit 3) to stdout with (format binary)`, 1 << 20);
      expect(ok.subarray(0, 6).toString()).toBe('PGCOPY');
    } finally {
      await db.close();
    }
  });
});
