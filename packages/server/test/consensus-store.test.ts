import { createQueryId, type KyselyPlugin, type RootOperationNode } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONSENSUS_OPTIONS } from '../src/domain/consensus/options.js';
import { ConsensusStore } from '../src/store/consensus/store.js';
import type { Db } from '../src/store/sql/db.js';
import type { ReportTable } from '../src/store/consensus/types.js';
import { engines, freshDb } from './helpers.js';

/**
 * ConsensusStore.loadGame, what a node reads to rebuild a game (docs/consensus.md, "Cluster"),
 * against a store that also holds other games' reports.
 */
const dbs: Db[] = [];
afterAll(async () => {
  for (const d of dbs) await d.close();
});

const NOW = Date.parse('2026-06-01T12:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

function report(id: string, gameId: string, keyId: string, candidateId: string | null, observedAt: number): ReportTable {
  return {
    id, key_id: keyId, ref: null, game_id: gameId, team: 'AAA', points: 2, event_type: null, clock: null,
    observed_at: iso(observedAt), received_at: iso(observedAt), event_id: null, tier: 'provisional', candidate_id: candidateId, reporter: null,
  };
}

/** One open candidate of game g1 with two voters, and a report of game g2. */
async function seeded(db: Db): Promise<void> {
  await db.kysely
    .insertInto('consensus_candidates')
    .values({
      id: 'cand_g1', game_id: 'g1', team: 'AAA', points: 2, first_observed_at: NOW - 20_000, first_received_at: NOW - 20_000,
      event_type: null, clock: null, starter: 'key_a', state: 'open', published: 1, official: 0, provisional_event_id: 'evt_p', confirmed_event_id: null, judged: 0, probability: 0.5,
    })
    .execute();
  await db.kysely
    .insertInto('reports')
    .values([
      report('rpt_1', 'g1', 'key_a', 'cand_g1', NOW - 20_000),
      report('rpt_2', 'g1', 'key_a', 'cand_g1', NOW - 18_000),
      report('rpt_3', 'g1', 'key_b', 'cand_g1', NOW - 15_000),
      report('rpt_4', 'g2', 'key_c', null, NOW - 10_000),
    ])
    .execute();
}

describe.each(engines())('ConsensusStore.loadGame (%s)', (engine) => {
  it("rebuilds a game's open candidate with its voters' spans and the game's active reporters only", async () => {
    const { db } = await freshDb(engine);
    dbs.push(db);
    await seeded(db);
    const stored = await new ConsensusStore(db).loadGame('g1', NOW, DEFAULT_CONSENSUS_OPTIONS);
    expect(stored.snapshot.candidates.map((c) => c.id)).toEqual(['cand_g1']);
    const votes = [...stored.snapshot.candidates[0].votes].sort((a, b) => a.reporterId.localeCompare(b.reporterId));
    expect(votes).toEqual([
      { reporterId: 'key_a', first: NOW - 20_000, last: NOW - 18_000 },
      { reporterId: 'key_b', first: NOW - 15_000, last: NOW - 15_000 },
    ]);
    expect(stored.snapshot.active.map((a) => a.reporterId).sort()).toEqual(['key_a', 'key_b']);
    expect(stored.provisionalOf.get('cand_g1')).toBe('evt_p');
  });
});

describe('ConsensusStore.loadGame (sqlite plan)', () => {
  it('reads reports through an index, never by scanning every report of the store', async () => {
    const { db } = await freshDb('sqlite');
    dbs.push(db);
    await seeded(db);
    const queries: RootOperationNode[] = [];
    const capture: KyselyPlugin = {
      transformQuery: ({ node }) => {
        queries.push(node);
        return node;
      },
      transformResult: async ({ result }) => result,
    };
    await new ConsensusStore({ ...db, kysely: db.kysely.withPlugin(capture) }).loadGame('g1', NOW, DEFAULT_CONSENSUS_OPTIONS);
    const plans: string[] = [];
    for (const node of queries) {
      const q = db.kysely.getExecutor().compileQuery(node, createQueryId());
      if (!/\bfrom "reports"/.test(q.sql)) continue;
      const rows = await db.kysely.executeQuery<{ detail: string }>({ ...q, sql: `explain query plan ${q.sql}` });
      plans.push(...rows.rows.map((r) => r.detail));
    }
    expect(plans.length).toBeGreaterThan(0);
    expect(plans.filter((d) => /^SCAN reports\b/.test(d))).toEqual([]);
    expect(plans.filter((d) => /^SEARCH reports USING (COVERING )?INDEX/.test(d)).length).toBeGreaterThanOrEqual(2);
  });
});
