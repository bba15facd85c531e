import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventId } from '@svc/schema';
import type { Db } from '../src/store/sql/db.js';
import { EventLog, type NewEvent } from '../src/store/events/events.js';
import { executeSql, HotSql, SqlExpr, writeTransaction, type Fence } from '../src/store/sql/write-tx.js';
import { engines, freshDb } from './helpers.js';

/**
 * The hot write transaction (store/sql/write-tx.ts): on PostgreSQL the statements whose rows are not
 * read at once travel with the next round trip, their parameters written in as literals. What
 * must hold whatever the engine: values arrive as they were given, statements keep their order,
 * a refused fence or a failed held statement leaves nothing behind.
 */
const INSERT = new HotSql('insert into changes (type, object_id, sport, league, owner_key_id, at) values (?, ?, ?, ?, ?, ?)');
const READ_BACK = new HotSql('select object_id, owner_key_id from changes where type = ? order by seq');
// Typed: an untyped parameter and a literal would be inferred differently (text and integer).
const BLOCKERS = new HotSql('select seq from changes where type = ?');
class Refused extends Error {}
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

describe('executeSql', () => {
  it('writes each parameter as a literal after the name of the prepared statement, and refuses a count that does not match', () => {
    expect(executeSql(INSERT, ['event.created', "it's", 'soccer', 'epl', null, '2026-01-01T00:00:00.000Z'])).toBe(
      `execute ${INSERT.name}('event.created', 'it''s', 'soccer', 'epl', NULL, '2026-01-01T00:00:00.000Z')`,
    );
    expect(executeSql(ECHO, ['a\\b', -1.5])).toBe(`execute ${ECHO.name}( E'a\\\\b', -1.5)`);
    expect(executeSql(ECHO, ['x', new SqlExpr("current_setting('a.b')")])).toBe(`execute ${ECHO.name}('x', current_setting('a.b'))`);
    expect(executeSql(new HotSql('select 1'), [])).toMatch(/^execute svc_hot_\d+$/);
    expect(() => executeSql(ECHO, ['a'])).toThrow(/too few/);
    expect(() => executeSql(ECHO, ['a', 1, 2])).toThrow(/too many/);
    expect(() => executeSql(ECHO, ['a\u0000b', 1])).toThrow(/NUL/);
    expect(executeSql(ECHO, ['a', Number.NEGATIVE_INFINITY])).toBe(`execute ${ECHO.name}('a', '-Infinity')`);
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

  /** Refuses while a change of type `blocker` exists. */
  const unblocked = (reason: string): Fence => {
    const refused = () => new Refused(reason);
    return {
      sqlite: {
        q: BLOCKERS,
        params: ['write_tx.blocker'],
        check: (rows) => {
          if (rows.length > 0) throw refused();
        },
      },
      postgres: { expr: `case when not exists (select 1 from changes where type = ?) then 1 else svc_refuse('${reason}') end`, params: ['write_tx.blocker'] },
      reason,
      refused,
    };
  };
  const NEVER = new HotSql('select seq from changes where type = ? and seq < 0');
  /** Always holds. */
  const holds: Fence = {
    sqlite: { q: NEVER, params: ['x'], check: () => undefined },
    postgres: { expr: "case when true then 1 else svc_refuse('write_tx_never') end", params: [] },
    reason: 'write_tx_never',
    refused: () => new Error('never refused'),
  };

  it('a fence that refuses fails the write with its own error and leaves nothing; one that holds lets it commit', async () => {
    await writeTransaction(db, async (tx) => {
      tx.fence(unblocked('write_tx_first'));
      tx.fence(holds);
      tx.later(INSERT, ['write_tx.fenced', 'before', 's', 'l', null, 't']);
    });
    await db.kysely.insertInto('changes').values({ type: 'write_tx.blocker', object_id: 'b', sport: 's', league: 'l', owner_key_id: null, at: 't' }).execute();
    // Sent with a statement whose rows are read.
    const first = writeTransaction(db, async (tx) => {
      tx.fence(holds);
      tx.fence(unblocked('write_tx_first'));
      tx.later(INSERT, ['write_tx.fenced', 'one', 's', 'l', null, 't']);
      await tx.run(READ_BACK, ['write_tx.fenced']);
    });
    await expect(first).rejects.toThrow(new Refused('write_tx_first'));
    // Held to the end: travels with the COMMIT, which the refusal abandons.
    const second = writeTransaction(db, async (tx) => {
      tx.later(INSERT, ['write_tx.fenced', 'two', 's', 'l', null, 't']);
      tx.fence(unblocked('write_tx_second'));
    });
    await expect(second).rejects.toThrow(new Refused('write_tx_second'));
    const rows = await db.kysely.selectFrom('changes').select('object_id').where('type', '=', 'write_tx.fenced').execute();
    expect(rows).toEqual([{ object_id: 'before' }]);
  });

  it('the rows of a held statement are there after the round trip that carried it', async () => {
    const [held, early] = await writeTransaction(db, async (tx) => {
      tx.later(INSERT, ['write_tx.held', 'h', 's', 'l', null, 't']);
      const held = tx.hold(READ_BACK, ['write_tx.held']);
      const early = held.ready;
      await tx.flush();
      return [held.rows, early];
    });
    expect(held).toEqual([{ object_id: 'h', owner_key_id: null }]);
    // SQLite runs it at once; PostgreSQL sends it with the next round trip.
    expect(early).toBe(engine === 'sqlite');
  });

  it('writes rows together, values as given, with the transaction; a row of the wrong width is refused before anything is sent', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(awkward, { minLength: 1, maxLength: 5 }), async (ids) => {
        const type = `write_tx.rows.${Math.random().toString(36).slice(2)}`;
        await writeTransaction(db, async (tx) => {
          tx.laterRows('changes', ['type', 'object_id', 'sport', 'league', 'owner_key_id', 'at'], ids.map((id, i) => [type, id, 's', 'l', i % 2 ? null : id, 't']));
        });
        const back = await db.kysely.selectFrom('changes').select(['object_id', 'owner_key_id']).where('type', '=', type).orderBy('seq').execute();
        expect(back).toEqual(ids.map((id, i) => ({ object_id: id, owner_key_id: i % 2 ? null : id })));
      }),
      { numRuns: 25 },
    );
    await expect(writeTransaction(db, async (tx) => tx.laterRows('changes', ['type', 'object_id'], [['write_tx.width']]))).rejects.toThrow(/1 values for 2 columns/);
    // Rolled back with the write they belong to.
    await expect(
      writeTransaction(db, async (tx) => {
        tx.laterRows('changes', ['type', 'object_id', 'sport', 'league', 'owner_key_id', 'at'], [['write_tx.rows_failed', 'a', 's', 'l', null, 't']]);
        tx.later(new HotSql('insert into changes (type, object_id, sport, league, owner_key_id, at) values (?, ?, ?, ?, ?, null)'), ['write_tx.rows_failed', 'b', 's', 'l', null]);
      }),
    ).rejects.toThrow(/null/i);
    expect(await db.kysely.selectFrom('changes').select('seq').where('type', '=', 'write_tx.rows_failed').execute()).toEqual([]);
  });

  it('runs what afterCommit was given once the commit is done, and never after a rollback', async () => {
    const seen: string[] = [];
    await writeTransaction(db, async (tx) => {
      tx.later(INSERT, ['write_tx.after', 'x', 's', 'l', null, 't']);
      tx.afterCommit(() => seen.push('committed'));
      seen.push('inside');
    });
    expect(seen).toEqual(['inside', 'committed']);
    await expect(
      writeTransaction(db, async (tx) => {
        tx.afterCommit(() => seen.push('rolled back'));
        tx.later(new HotSql('insert into changes (type, object_id, sport, league, owner_key_id, at) values (?, ?, ?, ?, ?, null)'), ['write_tx.after', 'y', 's', 'l', null]);
      }),
    ).rejects.toThrow(/null/i);
    expect(seen).toEqual(['inside', 'committed']);
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

describe.each(engines())('EventLog.append on the hot write transaction (%s)', (engine) => {
  let db: Db;
  beforeAll(async () => {
    ({ db } = await freshDb(engine));
    dbs.push(db);
  });
  const row = (tier: 'provisional' | 'confirmed', team: string): NewEvent => ({
    type: 'score', tier, game_id: 'basketball_990001', competition_id: 'c_990001', sport: 'basketball', league: 'nba', season_id: 'nba_2026',
    team, event_type: 'two_pointer', points: 2, clock: null, ts: '2026-06-01T12:00:00.000Z', agreement: 1, reporters: 3, latency_ms: 5, probability: 1,
    provisional_id: null, retracted_id: null,
  });
  const REPORT_EVENT = new HotSql('insert into changes (type, object_id, sport, league, owner_key_id, at) values (?, ?, ?, ?, ?, ?)');

  it('rows written after an event name it by the id the database gives, events a later row links to included', async () => {
    const log = new EventLog(db);
    const seen: (string | null)[][] = [];
    const stored = await log.append([row('provisional', "O'Neil"), { ...row('confirmed', "O'Neil"), provisionalIndex: 0 }, row('provisional', 'B\\C')], {
      within: async (tx, ids) => {
        seen.push(ids.map((id) => (typeof id === 'string' ? id : null)));
        for (const id of ids) tx.later(REPORT_EVENT, ['write_tx.named', id, 's', 'l', null, 't']);
      },
    });
    expect(stored.map((s) => s.event.id)).toEqual(stored.map((s) => eventId(s.seq)));
    // The confirmation holds its provisional's id, so that one was asked for at once; on PostgreSQL the others were not.
    expect(stored[1].event).toMatchObject({ tier: 'confirmed', provisional_id: stored[0].event.id, team: "O'Neil" });
    expect(seen[0][0]).toBe(stored[0].event.id);
    expect(seen[0].slice(1).map((id) => id !== null)).toEqual(engine === 'sqlite' ? [true, true] : [false, false]);
    const named = await db.kysely.selectFrom('changes').select('object_id').where('type', '=', 'write_tx.named').orderBy('seq').execute();
    expect(named.map((n) => n.object_id)).toEqual(stored.map((s) => s.event.id));
    const feed = await db.kysely.selectFrom('changes').select('object_id').where('type', '=', 'event.created').where('object_id', 'in', stored.map((s) => s.event.id)).orderBy('seq').execute();
    expect(feed.map((n) => n.object_id)).toEqual(stored.map((s) => s.event.id));
    // The stored JSON is the record's.
    const back = await log.get(stored[2].event.id);
    expect(back?.event).toEqual(stored[2].event);
  });

  it('a refused write stores no event and leaves the sequence to the next one', async () => {
    const log = new EventLog(db);
    class Refused extends Error {}
    const fence: Fence = {
      sqlite: {
        q: new HotSql('select 1 as x where ? = ?'),
        params: [1, 1],
        check: () => {
          throw new Refused('no');
        },
      },
      postgres: { expr: "case when false then 1 else svc_refuse('write_tx_append') end", params: [] },
      reason: 'write_tx_append',
      refused: () => new Refused('no'),
    };
    const before = await log.lastSeq();
    await expect(log.append([row('provisional', 'AAA')], { before: async (tx) => tx.fence(fence) })).rejects.toBeInstanceOf(Refused);
    expect(await log.lastSeq()).toBe(before);
    const [next] = await log.append([row('provisional', 'AAA')]);
    expect(next.seq).toBeGreaterThan(before);
  });
});

describe.each(engines().filter((e) => e === 'postgres'))('prepared hot statements (%s)', (engine) => {
  let db: Db;
  beforeAll(async () => {
    ({ db } = await freshDb(engine));
    dbs.push(db);
  });

  it('a lock travels with the fences beside it and is held to the end of the transaction', async () => {
    const other = await db.kysely.connection().execute(async (c) => {
      const taken = await writeTransaction(db, async (tx) => {
        tx.lock('pg_advisory_xact_lock(730199)');
        tx.later(INSERT, ['write_tx.locked', 'x', 's', 'l', null, 't']);
        await tx.flush();
        // Another session cannot take it while this transaction is open.
        return (await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(730199) as got`.execute(c)).rows[0]?.got;
      });
      return { taken, after: (await sql<{ got: boolean }>`select pg_try_advisory_xact_lock(730199) as got`.execute(c)).rows[0]?.got };
    });
    expect(other).toEqual({ taken: false, after: true });
  });

  it('a connection whose prepared statements were dropped behind its back fails one write, and is replaced', async () => {
    const write = (id: string, drop: boolean) =>
      writeTransaction(db, async (tx) => {
        tx.later(INSERT, ['write_tx.prepared', id, 's', 'l', null, 't']);
        // Prepares this text on the connection, then forgets every prepared statement of the session.
        if (drop) await sql`deallocate all`.execute(await tx.builder());
        tx.later(INSERT, ['write_tx.prepared', `${id}'`, 's', 'l', null, 't']);
      });
    await write('a', false);
    await expect(write('b', true)).rejects.toThrow(/does not exist/);
    // Every connection of the pool is asked: none still believes in statements it lost.
    await Promise.all(Array.from({ length: 8 }, (_, i) => write(`c${i}`, false)));
    const ids = await db.kysely.selectFrom('changes').select('object_id').where('type', '=', 'write_tx.prepared').orderBy('object_id').execute();
    expect(ids.map((r) => r.object_id)).toEqual(['a', "a'", ...Array.from({ length: 8 }, (_, i) => [`c${i}`, `c${i}'`]).flat()].sort());
  });
});
