// bench/consensus-rebuild: what a node reads before the first report of a game it did not hold
// (after a restart or a handover): ConsensusStore.loadGame, on a store holding many other games'
// reports. Baseline: the same three reads (candidates, votes, active reporters) of that game as
// fixed SQL on the bare driver (better-sqlite3 prepared statements; pg with the same text),
// each through the game's index. Prints milliseconds per rebuild and the ratio.
// Run: node --import tsx bench/consensus-rebuild.ts   (BENCH_ENGINE_DB=sqlite|postgres|both, default both)
// Knobs: BENCH_REBUILD_REPORTS=500000  BENCH_REBUILD_GAMES=2000  BENCH_REBUILD_CANDIDATES=20 (a game)
//        BENCH_REBUILD_SAMPLES=40 (games rebuilt)  BENCH_PG_URL (an administrator's URL)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { DEFAULT_CONSENSUS_OPTIONS, ConsensusStore, openDb, type Db } from '@svc/server';
import { fmt } from './lib.js';
import { now, percentile } from './stream-common.js';

const REPORTS = Number(process.env.BENCH_REBUILD_REPORTS ?? 500_000);
const GAMES = Number(process.env.BENCH_REBUILD_GAMES ?? 2_000);
const CANDIDATES = Number(process.env.BENCH_REBUILD_CANDIDATES ?? 20);
const SAMPLES = Number(process.env.BENCH_REBUILD_SAMPLES ?? 40);
const ENGINES = (process.env.BENCH_ENGINE_DB ?? 'both') === 'both' ? ['sqlite', 'postgres'] : [process.env.BENCH_ENGINE_DB ?? 'sqlite'];
const PG_ADMIN = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const PG_DB = 'svc_bench_rebuild';

const NOW = Date.parse('2026-06-01T12:00:00Z');
const RECENT = new Date(NOW - 10_000).toISOString();
const OPTIONS = DEFAULT_CONSENSUS_OPTIONS;

// Report i belongs to game i % GAMES and votes for one of that game's CANDIDATES open candidates,
// by one of 50 reporters (100 votes a game); every report is recent, so each game's reporters are all active.
const FILL_REPORTS = `
  with recursive s(i) as (select 0 union all select i + 1 from s where i < ${REPORTS - 1})
  insert into reports (id, key_id, ref, game_id, team, points, event_type, clock, observed_at, received_at, event_id, tier, candidate_id)
  select 'rpt_' || i, 'key_' || ((i / ${GAMES}) % 50), null, 'g' || (i % ${GAMES}), 'AAA', 2, null, null, '${RECENT}', '${RECENT}', null, 'provisional',
         'c_' || (i % ${GAMES}) || '_' || ((i / ${GAMES}) % ${CANDIDATES})
  from s`;
const FILL_CANDIDATES = `
  with recursive s(i) as (select 0 union all select i + 1 from s where i < ${GAMES * CANDIDATES - 1})
  insert into consensus_candidates (id, game_id, team, points, first_observed_at, first_received_at, event_type, clock, starter, state, published, official, provisional_event_id, confirmed_event_id)
  select 'c_' || (i % ${GAMES}) || '_' || (i / ${GAMES}), 'g' || (i % ${GAMES}), 'AAA', 2, ${NOW - 10_000}, ${NOW - 10_000}, null, null, 'key_0', 'open', 1, 0, null, null
  from s`;

/** The reads of a rebuild, by the game's indexes, `?` placeholders (PostgreSQL: numbered below). */
const BARE = [
  `select * from consensus_candidates where game_id = ? and (state = 'open' or first_received_at > ?)`,
  `select candidate_id, key_id, min(observed_at) as first, max(observed_at) as last from reports where game_id = ? group by candidate_id, key_id`,
  `select key_id, max(received_at) as at from reports where game_id = ? and received_at >= ? group by key_id`,
];
const bareParams = (game: string): (string | number)[][] => [[game, NOW - (OPTIONS.retractAfterMs + OPTIONS.windowMs)], [game], [game, new Date(NOW - OPTIONS.activeWindowMs).toISOString()]];
const numbered = (q: string) => {
  let n = 0;
  return q.replace(/\?/g, () => `$${++n}`);
};

interface Store {
  db: Db;
  bare: (game: string) => Promise<number>;
  close: () => Promise<void>;
}

async function sqliteStore(): Promise<Store> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-bench-rebuild-'));
  const db = await openDb({ dataDir, databaseUrl: null });
  const file = path.join(dataDir, 'svc.db');
  const raw = new SQLite(file);
  raw.exec(FILL_REPORTS);
  raw.exec(FILL_CANDIDATES);
  raw.exec('analyze');
  const stmts = BARE.map((q) => raw.prepare(q));
  return {
    db,
    bare: async (game) => {
      let rows = 0;
      bareParams(game).forEach((p, i) => (rows += stmts[i].all(...p).length));
      return rows;
    },
    close: async () => {
      raw.close();
      await db.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function postgresStore(): Promise<Store> {
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  await admin.query(`drop database if exists ${PG_DB} with (force)`);
  await admin.query(`create database ${PG_DB}`);
  const url = new URL(PG_ADMIN);
  url.pathname = `/${PG_DB}`;
  const db = await openDb({ dataDir: os.tmpdir(), databaseUrl: url.toString() });
  const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
  await pool.query(FILL_REPORTS);
  await pool.query(FILL_CANDIDATES);
  await pool.query('analyze');
  return {
    db,
    bare: async (game) => {
      let rows = 0;
      const params = bareParams(game);
      for (const [i, q] of BARE.entries()) rows += (await pool.query(numbered(q), params[i])).rowCount ?? 0;
      return rows;
    },
    close: async () => {
      await pool.end();
      await db.close();
      await admin.query(`drop database if exists ${PG_DB} with (force)`);
      await admin.end();
    },
  };
}

async function main(): Promise<void> {
  const rows: string[] = [];
  for (const engine of ENGINES) {
    const t0 = now();
    const s = engine === 'postgres' ? await postgresStore() : await sqliteStore();
    process.stderr.write(`[bench/consensus-rebuild] ${engine}: ${fmt(REPORTS)} reports of ${fmt(GAMES)} games stored in ${fmt((now() - t0) / 1000, 1)} s\n`);
    const store = new ConsensusStore(s.db);
    const svc: number[] = [];
    const bare: number[] = [];
    // Alternate the two on each game, after one warm-up pass of each.
    for (let i = -1; i < SAMPLES; i++) {
      const game = `g${((i + 1) * 7919) % GAMES}`;
      let t = now();
      const loaded = await store.loadGame(game, NOW, OPTIONS);
      const svcMs = now() - t;
      t = now();
      const bareRows = await s.bare(game);
      const bareMs = now() - t;
      const votes = loaded.snapshot.candidates.reduce((n, c) => n + c.votes.length, 0);
      if (loaded.snapshot.candidates.length !== CANDIDATES || votes === 0 || bareRows === 0) {
        throw new Error(`${engine} ${game}: ${loaded.snapshot.candidates.length} candidates, ${votes} votes, ${bareRows} bare rows`);
      }
      if (i < 0) continue;
      svc.push(svcMs);
      bare.push(bareMs);
    }
    await s.close();
    const sorted = (a: number[]) => Float64Array.from(a).sort();
    const svcP50 = percentile(sorted(svc), 50);
    const bareP50 = percentile(sorted(bare), 50);
    rows.push(
      `| ${engine} | ${fmt(REPORTS)} / ${fmt(GAMES)} | ${SAMPLES} | ${fmt(svcP50, 2)} | ${fmt(percentile(sorted(svc), 99), 2)} | ${fmt(bareP50, 2)} | **${fmt(svcP50 / bareP50, 2)}×** |`,
    );
  }
  process.stdout.write(
    [
      'bench/consensus-rebuild — ConsensusStore.loadGame (one game) against its reads on the bare driver, by index',
      '',
      '| engine | reports / games stored | games rebuilt | loadGame p50 ms | p99 ms | bare reads p50 ms | loadGame ÷ bare |',
      '|---|---|---|---|---|---|---|',
      ...rows,
    ].join('\n') + '\n',
  );
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
