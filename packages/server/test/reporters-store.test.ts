import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { voterId } from '../src/domain/consensus/voters.js';
import { applyDelta, NEW_RECORD, NO_DELTA, weightOf, type RecordDelta, type TrackRecord } from '../src/domain/consensus/weights.js';
import { migrate } from '../src/store/sql/db.js';
import { storedEventRow } from '../src/store/events/json.js';
import { ReporterStore, StaleTrackRecord } from '../src/store/consensus/reporters.js';
import { writeTransaction } from '../src/store/sql/write-tx.js';
import { engines, freshDb } from './helpers.js';

/**
 * store/consensus/reporters.ts and migration 0016 on both engines: a voter's track record as moves add to
 * it (counts, probation, the weight written in SQL beside the domain's formula), the fence that
 * refuses a decision weighed on a record another node moved, and the records and events stored
 * before the migration.
 */
const move = (d: Partial<RecordDelta>): RecordDelta => ({ ...NO_DELTA, ...d });

describe.each(engines())('ReporterStore (%s)', (engine) => {
  it('adds moves and reports to a voter’s record; the stored weight is the domain’s, probation and all', async () => {
    const { db } = await freshDb(engine);
    try {
      const store = new ReporterStore(db);
      const voter = voterId('key_app', 'fan 1');
      const steps: RecordDelta[] = [
        move({ agreed: 2, officialConfirmed: 1 }),
        move({ disagreed: 1, officialContradicted: 1 }),
        move({ agreed: 1, officialConfirmed: 3, missed: 2 }),
        move({ officialConfirmed: 2 }),
        move({ disagreed: 4 }),
      ];
      let expected: TrackRecord = NEW_RECORD;
      for (const [i, d] of steps.entries()) {
        await writeTransaction(db, async (tx) => store.write(tx, [{ gameId: 'g', voter, keyId: 'key_app', delta: d }], [{ voter, keyId: 'key_app', reports: 1, lastReportAt: `2026-06-11T12:00:0${i}.000Z` }], '2026-06-11T12:00:00.000Z'));
        expected = applyDelta(expected, d);
        const row = await db.kysely.selectFrom('reporters').selectAll().where('voter', '=', voter).executeTakeFirstOrThrow();
        expect(row).toMatchObject({ key_id: 'key_app', reporter: 'fan 1', reports: i + 1, last_report_at: `2026-06-11T12:00:0${i}.000Z`, probation: expected.probation });
        expect(Number(row.weight)).toBeCloseTo(weightOf(expected), 12);
        expect((await store.records([voter])).get(voter)).toEqual(expected);
      }
      // A key's own voice is a row of its own, without a reporter.
      await writeTransaction(db, async (tx) => store.write(tx, [], [{ voter: 'key_app', keyId: 'key_app', reports: 3, lastReportAt: '2026-06-11T12:00:00.000Z' }], '2026-06-11T12:00:00.000Z'));
      expect(await db.kysely.selectFrom('reporters').select(['reporter', 'reports', 'weight']).where('voter', '=', 'key_app').executeTakeFirst()).toEqual({ reporter: null, reports: 3, weight: 0.5 });
    } finally {
      await db.close();
    }
  });

  it('refuses a write whose decision weighed a record another node has moved since', async () => {
    const { db } = await freshDb(engine);
    try {
      const store = new ReporterStore(db);
      const now = '2026-06-11T12:00:00.000Z';
      await writeTransaction(db, async (tx) => store.write(tx, [{ gameId: 'g', voter: 'key_x', keyId: 'key_x', delta: move({ agreed: 1 }) }], [], now));
      const weighed = applyDelta(NEW_RECORD, move({ agreed: 1 }));
      await writeTransaction(db, async (tx) => store.checkRecord(tx, 'key_x', weighed));
      // Another node moves it; the record this node weighed is stale now, and the write is refused.
      await writeTransaction(db, async (tx) => store.write(tx, [{ gameId: 'h', voter: 'key_x', keyId: 'key_x', delta: move({ officialContradicted: 1 }) }], [], now));
      await expect(writeTransaction(db, async (tx) => store.checkRecord(tx, 'key_x', weighed))).rejects.toBeInstanceOf(StaleTrackRecord);
      // A newcomer weighed as one passes; one weighed as anything else does not.
      await writeTransaction(db, async (tx) => store.checkRecord(tx, 'key_new', NEW_RECORD));
      await expect(writeTransaction(db, async (tx) => store.checkRecord(tx, 'key_new', weighed))).rejects.toBeInstanceOf(StaleTrackRecord);
    } finally {
      await db.close();
    }
  });

  it('refuses, as the report’s write moves the row, a record weighed before another node moved it; nothing of the write is stored', async () => {
    const { db } = await freshDb(engine);
    try {
      const store = new ReporterStore(db);
      const now = '2026-06-11T12:00:00.000Z';
      const report = (voter: string) => ({ voter, keyId: voter, reports: 1, lastReportAt: now });
      const reportsOf = async (voter: string) => (await store.one(voter))?.reports;
      await writeTransaction(db, async (tx) => store.write(tx, [{ gameId: 'g', voter: 'key_x', keyId: 'key_x', delta: move({ agreed: 1 }) }], [], now));
      const weighed = applyDelta(NEW_RECORD, move({ agreed: 1 }));
      // Weighed as stored: the report is counted, and its voter moved in the same write.
      await writeTransaction(db, async (tx) => store.write(tx, [{ gameId: 'g', voter: 'key_x', keyId: 'key_x', delta: move({ agreed: 1 }) }], [report('key_x')], now, new Map([['key_x', weighed]])));
      expect(await reportsOf('key_x')).toBe(1);
      const stored = applyDelta(weighed, move({ agreed: 1 }));
      // Another node moves it; a write whose decision weighed the record before is refused whole.
      await writeTransaction(db, async (tx) => store.write(tx, [{ gameId: 'h', voter: 'key_x', keyId: 'key_x', delta: move({ officialContradicted: 1 }) }], [], now));
      const moved = applyDelta(stored, move({ officialContradicted: 1 }));
      const refused = writeTransaction(db, async (tx) => store.write(tx, [{ gameId: 'g', voter: 'key_y', keyId: 'key_y', delta: move({ agreed: 1 }) }], [report('key_y'), report('key_x')], now, new Map([['key_y', NEW_RECORD], ['key_x', stored]])));
      await expect(refused).rejects.toBeInstanceOf(StaleTrackRecord);
      await expect(refused).rejects.toMatchObject({ reporterId: 'key_x' });
      expect(await reportsOf('key_y')).toBeUndefined();
      expect((await store.records(['key_x'])).get('key_x')).toEqual(moved);
      // Weighed on the moved record, the same write goes through; a newcomer's first row needs no check.
      await writeTransaction(db, async (tx) => store.write(tx, [{ gameId: 'g', voter: 'key_y', keyId: 'key_y', delta: move({ agreed: 1 }) }], [report('key_y'), report('key_x')], now, new Map([['key_y', NEW_RECORD], ['key_x', moved]])));
      expect([await reportsOf('key_x'), await reportsOf('key_y')]).toEqual([2, 1]);
      // A voter weighed but with nothing to write (its reports were replays) is checked all the same.
      await expect(writeTransaction(db, async (tx) => store.write(tx, [], [], now, new Map([['key_x', stored]])))).rejects.toBeInstanceOf(StaleTrackRecord);
    } finally {
      await db.close();
    }
  });
});

describe.each(engines())('migration 0016_crowd_trust (%s)', (engine) => {
  it('moves the keys’ records into reporters and gives every stored event its probability and JSON', async () => {
    const { db } = await freshDb(engine);
    try {
      const k = db.kysely;
      // The schema as it was before: reporter_records, no columns of 0016, the migration not run.
      await k.schema.dropTable('reporters').execute();
      await sql`create table reporter_records (key_id text primary key, agreed integer not null, disagreed integer not null)`.execute(k);
      await sql`insert into reporter_records (key_id, agreed, disagreed) values ('key_old', 3, 1)`.execute(k);
      for (const [table, column] of [['reports', 'reporter'], ['consensus_candidates', 'judged'], ['consensus_candidates', 'probability'], ['webhook_endpoints', 'min_probability'], ['events', 'probability']]) {
        await sql`alter table ${sql.table(table)} drop column ${sql.ref(column)}`.execute(k);
      }
      await sql`delete from kysely_migration where name = '0016_crowd_trust'`.execute(k);
      const base = { game_id: 'soccer_1', competition_id: 'soccer_x_1', sport: 'soccer', league: 'x', season_id: 'x_2026', team: 'AAA', event_type: 'goal', points: 1, clock: null, ts: '2026-06-11T12:00:00.000Z', reporters: 1, latency_ms: 0 };
      const insert = async (e: { type: string; tier: string; agreement: number; retracted_id: string | null }) => {
        const row = await sql<{ seq: number }>`insert into events (type, tier, game_id, competition_id, sport, league, season_id, team, event_type, points, clock, ts, agreement, reporters, latency_ms, provisional_id, retracted_id, json_tail)
          values (${e.type}, ${e.tier}, ${base.game_id}, ${base.competition_id}, ${base.sport}, ${base.league}, ${base.season_id}, ${base.team}, ${base.event_type}, ${base.points}, ${null}, ${base.ts}, ${e.agreement}, ${base.reporters}, ${base.latency_ms}, ${null}, ${e.retracted_id}, ${'stale'}) returning seq`.execute(k);
        return Number(row.rows[0].seq);
      };
      const provisional = await insert({ type: 'score', tier: 'provisional', agreement: 0.4, retracted_id: null });
      const retraction = await insert({ type: 'score_retracted', tier: 'provisional', agreement: 0, retracted_id: `evt_${String(provisional).padStart(12, '0')}` });
      const confirmed = await insert({ type: 'score', tier: 'confirmed', agreement: 0.8, retracted_id: null });
      // A correction (docs/corrections.md) withdrawing the confirmed score: it carries that score's.
      const correction = await insert({ type: 'score_retracted', tier: 'confirmed', agreement: 1, retracted_id: `evt_${String(confirmed).padStart(12, '0')}` });

      await migrate(db);

      expect(await k.selectFrom('reporters').selectAll().where('key_id', '=', 'key_old').execute()).toEqual([
        expect.objectContaining({ voter: 'key_old', reporter: null, agreed: 3, disagreed: 1, official_confirmed: 0, official_contradicted: 0, probation: 0, weight: 4 / 6 }),
      ]);
      const rows = await k.selectFrom('events').selectAll().where('seq', 'in', [provisional, retraction, confirmed, correction]).orderBy('seq').execute();
      expect(rows.map((r) => Number(r.probability))).toEqual([0.4, 0.4, 0.8, 0.8]);
      for (const r of rows) {
        expect(r.json_tail).toBe(storedEventRow({ ...r, probability: Number(r.probability) }).json_tail);
        expect(r.json_tail).toContain(`"probability":${Number(r.probability)}`);
      }
      // The archive's events are official: 1.
      const archive = await k.selectFrom('events').select(['probability', 'json_tail']).where('seq', '<', provisional).where('type', '=', 'score').limit(5).execute();
      expect(archive.length).toBeGreaterThan(0);
      for (const r of archive) {
        expect(Number(r.probability)).toBe(1);
        expect(r.json_tail).toContain('"probability":1');
      }
    } finally {
      await db.close();
    }
  });
});
