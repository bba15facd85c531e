import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../src/store/db.js';
import { HotSql, inlineSql, writeTransaction } from '../src/store/write-tx.js';
import { engines, freshDb } from './helpers.js';

/**
 * The hot write transaction (store/write-tx.ts): on PostgreSQL the statements whose rows are not
 * read at once travel with the next round trip, their parameters written in as literals. What
 * must hold whatever the engine: values arrive as they were given, statements keep their order,
 * a refused fence or a failed held statement leaves nothing behind.
 */
const INSERT = new HotSql('insert into changes (type, object_id, sport, league, owner_key_id, at) values (?, ?, ?, ?, ?, ?)');
const READ_BACK = new HotSql('select object_id, owner_key_id from changes where type = ? order by seq');
// Typed: an untyped parameter and a literal would be inferred differently (text and integer).
const ECHO = new HotSql('select cast(? as text) as s, cast(? as integer) as n');

const dbs: Db[] = [];
afterAll(async () => {
  for (const d of dbs) await d.close();
});

/** Strings PostgreSQL can hold (no NUL), weighted towards what breaks quoting: quotes, backslashes, semicolons, non-ASCII. */
const awkward = fc.oneof(
  fc.string({ unit: fc.constantFrom("'", '\\', ';', '"', '$', '?', '\n', 'é', '名', '😀', '--', '/*', 'E', ' '), maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 16 }),
).filter((s) => !s.includes('\u0000'));

describe('inlineSql', () => {
  it('writes each placeholder as a literal and refuses a count that does not match', () => {
    expect(inlineSql(INSERT, ['event.created', "it's", 'soccer', 'epl', null, '2026-01-01T00:00:00.000Z'])).toBe(
      "insert into changes (type, object_id, sport, league, owner_key_id, at) values ('event.created', 'it''s', 'soccer', 'epl', NULL, '2026-01-01T00:00:00.000Z')",
    );
    expect(inlineSql(ECHO, ['a\\b', -1.5])).toBe("select cast( E'a\\\\b' as text) as s, cast(-1.5 as integer) as n");
    expect(() => inlineSql(ECHO, ['a'])).toThrow(/too few/);
    expect(() => inlineSql(ECHO, ['a', 1, 2])).toThrow(/too many/);
    expect(() => inlineSql(ECHO, ['a', Number.NaN])).toThrow(/finite/);
  });
});

describe.each(engines())('the hot write transaction (%s)', (engine) => {
  let db: Db;
  beforeAll(async () => {
    ({ db } = await freshDb(engine));
    dbs.push(db);
  });

  it('returns the values it was given, sent alone or behind held statements', async () => {
    await fc.assert(
      fc.asyncProperty(awkward, fc.integer({ min: -1e9, max: 1e9 }), async (s, n) => {
        const [alone, behind] = await writeTransaction(db, async (tx) => {
          const first = await tx.run(ECHO, [s, n]);
          tx.later(INSERT, ['write_tx.echo', s, 'x', 'y', null, 'z']);
          const second = await tx.run(ECHO, [s, n]);
          return [first[0], second[0]];
        });
        expect(alone).toEqual({ s, n });
        expect(behind).toEqual({ s, n });
      }),
      { numRuns: 60 },
    );
    const stored = await db.kysely.selectFrom('changes').select('object_id').where('type', '=', 'write_tx.echo').execute();
    expect(stored).toHaveLength(60);
  });

  it('keeps the order of held and run statements, and commits them together', async () => {
    const ids = ['a', "b'", 'c\\', 'd;e', 'é名'];
    const seen = await writeTransaction(db, async (tx) => {
      tx.later(INSERT, ['write_tx.order', ids[0], 's', 'l', null, 't']);
      tx.later(INSERT, ['write_tx.order', ids[1], 's', 'l', 'owner', 't']);
      const mid = await tx.run(READ_BACK, ['write_tx.order']);
      tx.later(INSERT, ['write_tx.order', ids[2], 's', 'l', null, 't']);
      tx.later(INSERT, ['write_tx.order', ids[3], 's', 'l', null, 't']);
      const k = await tx.builder();
      await k.insertInto('changes').values({ type: 'write_tx.order', object_id: ids[4], sport: 's', league: 'l', owner_key_id: null, at: 't' }).execute();
      return mid.map((r) => r.object_id);
    });
    expect(seen).toEqual(ids.slice(0, 2));
    const rows = await db.kysely.selectFrom('changes').select(['object_id', 'owner_key_id']).where('type', '=', 'write_tx.order').orderBy('seq').execute();
    expect(rows.map((r) => r.object_id)).toEqual(ids);
    expect(rows[1].owner_key_id).toBe('owner');
  });

  it('a fence that refuses leaves nothing, even statements that ran before its check', async () => {
    class Refused extends Error {}
    await expect(
      writeTransaction(db, async (tx) => {
        tx.fence(READ_BACK, ['write_tx.none'], () => {
          throw new Refused('refused');
        });
        tx.later(INSERT, ['write_tx.fenced', 'one', 's', 'l', null, 't']);
        await tx.run(READ_BACK, ['write_tx.fenced']);
        tx.later(INSERT, ['write_tx.fenced', 'two', 's', 'l', null, 't']);
      }),
    ).rejects.toBeInstanceOf(Refused);
    // A fence held to the end is checked before the COMMIT is sent.
    await expect(
      writeTransaction(db, async (tx) => {
        tx.later(INSERT, ['write_tx.fenced', 'three', 's', 'l', null, 't']);
        tx.fence(READ_BACK, ['write_tx.none'], () => {
          throw new Refused('refused');
        });
      }),
    ).rejects.toBeInstanceOf(Refused);
    expect(await db.kysely.selectFrom('changes').select('seq').where('type', '=', 'write_tx.fenced').execute()).toEqual([]);
  });

  it('a held statement that fails at the COMMIT fails the transaction and stores nothing', async () => {
    const NOT_NULL = new HotSql('insert into changes (type, object_id, sport, league, owner_key_id, at) values (?, ?, ?, ?, ?, null)');
    await expect(
      writeTransaction(db, async (tx) => {
        await tx.run(ECHO, ['x', 1]);
        tx.later(INSERT, ['write_tx.failed', 'one', 's', 'l', null, 't']);
        tx.later(NOT_NULL, ['write_tx.failed', 'two', 's', 'l', null]);
      }),
    ).rejects.toThrow(/null/i);
    expect(await db.kysely.selectFrom('changes').select('seq').where('type', '=', 'write_tx.failed').execute()).toEqual([]);
    // The connection went back to the pool usable: the next transaction commits.
    await writeTransaction(db, async (tx) => tx.later(INSERT, ['write_tx.failed', 'after', 's', 'l', null, 't']));
    expect(await db.kysely.selectFrom('changes').select('object_id').where('type', '=', 'write_tx.failed').execute()).toEqual([{ object_id: 'after' }]);
  });
});
