// `svc migrate-store` (docs/operations.md "From one node to a cluster"): a SQLite node with live
// data (keys of several scopes, webhook endpoints with rotated secrets, reports and their events,
// a sandbox replay, the change feed) copied into an empty PostgreSQL by the real command, compared
// table by table with a reading of both databases of its own, then served by two `svc serve`
// nodes on that PostgreSQL and a Redis: the same answers, the same export bytes, the old keys,
// webhook deliveries signed with the old secrets, `since=` and change-feed cursors from before
// continuing with nothing missed or doubled. Then an interrupted migration resumed, and every
// refusal.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { buildApp, type BuiltApp } from '../src/app.js';
import { systemClock } from '../src/domain/clock.js';
import { parseSecretKey, SecretBox } from '../src/domain/secrets/sealed.js';
import { verifySignature } from '../src/domain/webhooks/signature.js';
import { verifySecretKey } from '../src/secrets/key.js';
import { openDb } from '../src/store/sql/db.js';
import { auth, freshDb, testConfig, TEST_SECRET_KEY, tmpDir, until } from './helpers.js';
import { runSvc, seededDataDir, serveSvc, startSvc, type SvcProcess } from './process.js';
import { PG_ADMIN_URL, pgUrlFor } from './templates.setup.js';
import { startReceiver } from './webhook-receiver.js';
import { connect, type StreamClient } from './ws-client.js';

type Json = Record<string, unknown>;

const pgTemplate = inject('pgTemplate');
const redisUrl = inject('redisUrl');
const available = Boolean(pgTemplate && redisUrl);
if (!available && process.env.CI) throw new Error('the migrate-store tests need PostgreSQL and Redis in CI');

/** An empty PostgreSQL database of this run (its teardown drops it): what an operator makes with createdb. */
async function emptyDatabase(): Promise<string> {
  const name = `svc_t_${inject('runId')}_m${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  return pgUrlFor(name);
}

async function query<R extends pg.QueryResultRow>(url: string, text: string): Promise<R[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query<R>(text)).rows;
  } finally {
    await c.end();
  }
}

/** The tables of a PostgreSQL database (no migrator's), with their row counts. */
async function pgCounts(url: string): Promise<Record<string, number>> {
  const tables = await query<{ table_name: string }>(url, `select table_name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE' order by 1`);
  const out: Record<string, number> = {};
  for (const { table_name } of tables) out[table_name] = Number((await query<{ n: string }>(url, `select count(*)::text as n from "${table_name}"`))[0].n);
  return out;
}

/** A database's schema as text: every column, index and constraint of its tables, the migrator's own left out. */
async function schemaOf(url: string): Promise<string[]> {
  const columns = await query<{ d: string }>(url, `select table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') as d from information_schema.columns where table_schema = 'public' and table_name not like 'kysely%'`);
  const indexes = await query<{ d: string }>(url, `select indexdef as d from pg_indexes where schemaname = 'public' and tablename not like 'kysely%'`);
  const constraints = await query<{ d: string }>(
    url,
    `select t.relname || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid) as d from pg_constraint c join pg_class t on t.oid = c.conrelid where t.relnamespace = 'public'::regnamespace and t.relname not like 'kysely%'`,
  );
  return [...columns, ...indexes, ...constraints].map((r) => r.d).sort();
}

/** Each row as JSON with its values spelt one way (integers and doubles as numbers, text as text), sorted: a table's content, order aside. */
function canonicalRows(rows: Json[]): string[] {
  return rows
    .map((r) => JSON.stringify(Object.keys(r).sort().map((k) => [k, typeof r[k] === 'bigint' ? Number(r[k]) : r[k]])))
    .sort();
}

/** The ids of the events a stream client received, in order (scores, retractions, status changes). */
const eventIds = (c: StreamClient): string[] => c.frames.flatMap((f) => (typeof f.id === 'string' && f.id.startsWith('evt_') ? [f.id] : []));

/** `svc migrate-store <args>` with the test's deployment key, run to completion. */
const migrate = (args: string[], env: Record<string, string>) => runSvc(['migrate-store', ...args], { SVC_SECRET_KEY: TEST_SECRET_KEY, ...env }, { timeoutMs: 240_000 });

/** A JSON answer's body (as fetch types it). */
const getJson = async (base: string, url: string, key: string) => (await fetch(`${base}${url}`, { headers: auth(key) })).json();

/** Rows as plain objects, whatever the driver typed them as. */
const asRows = (rows: readonly unknown[]): Json[] => rows.map((r) => (typeof r === 'object' && r !== null ? Object.fromEntries(Object.entries(r)) : {}));

/** What a probe answered, minus what differs between any two answers (the request id). */
async function answer(base: string, url: string, key: string | null): Promise<{ status: number; body: unknown; limit: string | null }> {
  const res = await fetch(`${base}${url}`, { headers: key ? auth(key) : {} });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: compared as text
  }
  if (typeof body === 'object' && body !== null && 'error' in body && typeof body.error === 'object' && body.error !== null) {
    body = { error: { ...body.error, request_id: '(any)' } };
  }
  return { status: res.status, body, limit: res.headers.get('ratelimit-limit') };
}

describe.runIf(available)('svc migrate-store', () => {
  const procs: SvcProcess[] = [];
  const closers: (() => Promise<void>)[] = [];
  afterAll(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    for (const c of closers.reverse()) await c();
  });

  it(
    'a node with live data, migrated: the tables match row for row, and two cluster nodes answer as the node did, keys, secrets, since= and cursors included',
    { timeout: 300_000 },
    async () => {
      // --- The single node on SQLite, filled through its API.
      const { db, dataDir } = await freshDb('sqlite');
      const rx = await startReceiver();
      closers.push(() => rx.close());
      const config = testConfig(dataDir, { webhookAllowPrivate: true, webhookTimeoutMs: 2000 });
      // As `svc serve` does at start: the key check sealed under the deployment key.
      if (!config.secretKey) throw new Error('testConfig sets SVC_SECRET_KEY');
      await verifySecretKey(db, new SecretBox(config.secretKey));
      const single: BuiltApp = await buildApp({ config, db, clock: systemClock });
      await single.app.listen({ port: 0, host: '127.0.0.1' });
      const addr = single.app.server.address();
      if (!addr || typeof addr === 'string') throw new Error('no address');
      const before = `http://127.0.0.1:${addr.port}`;
      const keys = single.services.keys;
      const now = () => new Date();
      const admin = (await keys.create({ name: 'admin', plan: 'internal', products: ['live', 'archive', 'report', 'source', 'admin'], sports: null, leagues: null }, now())).key;
      const free = (await keys.create({ name: 'free soccer', plan: 'free', products: ['live'], sports: ['soccer'], leagues: null }, now())).key;
      const pro = (await keys.create({ name: 'pro wc', plan: 'pro', products: ['archive'], sports: null, leagues: ['wc'] }, now())).key;
      const gone = await keys.create({ name: 'revoked', plan: 'pro', products: ['live'], sports: null, leagues: null }, now());
      await keys.revoke(gone.record.id, now());
      const reporters: string[] = [];
      for (let i = 0; i < 3; i++) reporters.push((await keys.create({ name: `reporter ${i}`, plan: 'internal', products: ['report'], sports: null, leagues: null }, now())).key);

      const post = async (base: string, url: string, key: string, body: Json, headers: Record<string, string> = {}) => {
        const res = await fetch(`${base}${url}`, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
        const json = await res.json();
        if (res.status >= 300) throw new Error(`POST ${url}: ${res.status} ${JSON.stringify(json)}`);
        return json.data;
      };
      const changesStart = await getJson(before, '/v1/changes?limit=1000', admin);
      // Two endpoints: one created with an Idempotency-Key (its recorded answer sealed), one whose secret is rotated (current and previous sealed).
      const confirmedHook = await post(before, '/v1/webhooks', admin, { url: `${rx.url}/confirmed`, tier: 'confirmed' }, { 'idempotency-key': 'migrate-hook-1' });
      const rotatedHook = await post(before, '/v1/webhooks', admin, { url: `${rx.url}/all`, tier: 'confirmed', sports: ['basketball'], types: ['score'], description: 'basketball scores' });
      const rotated = await post(before, `/v1/webhooks/${String(rotatedHook.id)}/rotate-secret`, admin, {});
      const secrets = { confirmed: String(confirmedHook.secret), all: String(rotated.secret) };
      single.services.webhooks.dispatcher.start();

      // Reports on one of today's basketball games: three reporters agree on each play.
      const games: { id: string; status: string; competitors: { entity_id: string }[] }[] = (await getJson(before, '/v1/games?date=today&sport=basketball&limit=100', admin)).data;
      const game = games.find((g) => g.status === 'scheduled' || g.status === 'live');
      if (!game) throw new Error('no basketball game today');
      const teams = game.competitors.map((c) => c.entity_id.split(':').pop() ?? '');
      let play = 0;
      // Each play a team and points of its own: the consensus takes a repeat of the same score for the same play.
      const scoreOnce = async (base: string) => {
        const body = { game_id: game.id, team: teams[play % 2], points: (play % 3) + 1, clock: `Q1 ${String(10 - play).padStart(2, '0')}:00` };
        play++;
        let last: { tier?: string } = {};
        for (const r of reporters) last = (await post(base, '/v1/reports', r, body))[0];
        return last;
      };
      for (let i = 0; i < 3; i++) expect((await scoreOnce(before)).tier).toBe('confirmed');
      // A sandbox replay of the 2022 final, cancelled once it has confirmed its first goal.
      const replay = await post(before, '/v1/replays', admin, { game_id: 'soccer_21728', speed: 600 });
      await until(async () => (await getJson(before, `/v1/games/${String(replay.game_id)}/events`, admin)).data.length > 0, 30_000, 'the replay\'s first goal');
      const cancel = await fetch(`${before}/v1/replays/${String(replay.id)}`, { method: 'DELETE', headers: auth(admin) });
      expect(cancel.status, await cancel.text()).toBe(200);
      // Every delivery made before the node stops, so nothing is left for the cluster to send.
      await until(async () => {
        const pending = await db.kysely.selectFrom('webhook_deliveries').select('id').where('status', '=', 'pending').execute();
        return pending.length === 0 && rx.requests.length > 0;
      }, 30_000, 'the deliveries to be made');

      // The single node's answers, and what its stream replays after an id of before.
      // The first provisional of the game: everything after it is replayed to a stream resuming from it.
      const confirmedOfGame: { provisional_id: string }[] = (await getJson(before, `/v1/games/${game.id}/events`, admin)).data;
      const sinceId = confirmedOfGame.map((e) => e.provisional_id).sort()[0];
      const changes: { data: { id: string }[]; next_cursor: string } = await getJson(before, `/v1/changes?since=${changesStart.next_cursor}&limit=1000`, admin);
      expect(changes.data.length).toBeGreaterThan(5);
      const probes: [string, string | null][] = [
        ['/v1/me', admin],
        ['/v1/me', free],
        ['/v1/me', pro],
        ['/v1/me', gone.key],
        ['/v1/me', reporters[0]],
        ['/v1/me', null],
        ['/v1/games?date=today&sport=basketball', free],
        ['/v1/competitions?league=wc&season=2022&limit=5', pro],
        ['/v1/competitions?league=intl&limit=3', pro],
        [`/v1/games/${game.id}`, admin],
        [`/v1/games/${game.id}/events`, admin],
        [`/v1/games/${String(replay.game_id)}`, admin],
        [`/v1/games/${String(replay.game_id)}`, pro],
        ['/v1/replays', admin],
        ['/v1/webhooks', admin],
        [`/v1/webhooks/${String(confirmedHook.id)}/deliveries?limit=100`, admin],
        [`/v1/webhooks/${String(rotatedHook.id)}`, admin],
        [`/v1/changes?since=${changesStart.next_cursor}&limit=1000`, admin],
        ['/v1/standings?league=wc&season=2022', pro],
        ['/v1/leaders?league=wc&season=2022&limit=5', pro],
        ['/v1/teams/team:wc:ARG/roster?season=wc_2026', pro],
        ['/v1/export?league=wc&season=2022', pro],
        ['/v1/export?league=wc&season=2022&entity=plays', pro],
      ];
      const expected = [];
      for (const [url, key] of probes) expected.push(await answer(before, url, key));
      const exportBefore = await fetch(`${before}/v1/export?league=wc&season=2022`, { headers: auth(pro) });
      const exportBytes = Buffer.from(await exportBefore.arrayBuffer());
      const exportCursor = exportBefore.headers.get('x-changes-cursor');
      const maxSeq = Number((await db.kysely.selectFrom('events').select((e) => e.fn.max('seq').as('m')).executeTakeFirstOrThrow()).m);
      const lastId = `evt_${String(maxSeq).padStart(12, '0')}`;
      const oldStream = await connect(`${before.replace('http', 'ws')}/v1/stream?since=${sinceId}`, admin);
      await oldStream.until((c) => eventIds(c).includes(lastId), 15_000, 'the replay from since= up to the last event');
      const replayedBefore = eventIds(oldStream);
      expect(replayedBefore.length).toBeGreaterThan(5);
      oldStream.close();
      await single.services.webhooks.dispatcher.stop();
      await single.app.close();
      await db.close();

      // --- The migration, by the command an operator runs.
      const url = await emptyDatabase();
      const run = await migrate(['--to', url, '--batch-rows', '700'], { SVC_DATA_DIR: dataDir });
      expect(run.code, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^table\s+source rows\s+target rows/m);
      expect(run.stdout).not.toMatch(/DIFFERS/);
      expect(run.stdout).toMatch(/^consensus_leases\s+per node: not copied/m);

      // Table by table, read independently of the command: every row the same, the per-node leases empty.
      const sqlite = new SQLite(path.join(dataDir, 'svc.db'), { readonly: true });
      const tables = sqlite
        .prepare(`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%' order by name`)
        .pluck()
        .all()
        .map(String);
      expect(tables).toEqual(expect.arrayContaining(['api_keys', 'webhook_endpoints', 'events', 'changes', 'reports', 'consensus_candidates', 'reporters', 'replays', 'idempotency_keys', 'meta']));
      const target = new pg.Client({ connectionString: url });
      await target.connect();
      try {
        for (const t of tables) {
          const fromSqlite = asRows(sqlite.prepare(`select * from "${t}"`).safeIntegers(true).all());
          const fromPg = asRows((await target.query(`select * from "${t}"`)).rows);
          if (t === 'consensus_leases') {
            expect(fromSqlite.length, 'the node held leases').toBeGreaterThan(0);
            expect(fromPg).toEqual([]);
            continue;
          }
          expect(canonicalRows(fromPg), `table ${t}`).toEqual(canonicalRows(fromSqlite));
        }
        // Sequences continue after the copied rows.
        const maxSeq = Number(sqlite.prepare('select max(seq) from events').pluck().get());
        expect((await target.query<{ last_value: string }>(`select last_value::text from pg_sequences where sequencename = 'events_seq_seq'`)).rows[0].last_value).toBe(String(maxSeq));
        expect(await target.query(`select 1 from information_schema.tables where table_name like 'svc_migrate_store%'`).then((r) => r.rowCount)).toBe(0);
      } finally {
        await target.end();
        sqlite.close();
      }

      // The schema is this build's, every key and index made again after the copy: as a database a node migrated itself.
      const migrated = await freshDb('postgres');
      await migrated.db.close();
      expect(await schemaOf(url)).toEqual(await schemaOf(migrated.databaseUrl ?? ''));

      // --- Two nodes on the PostgreSQL and a Redis.
      const env = {
        SVC_DATABASE_URL: url,
        SVC_REDIS_URL: redisUrl ?? '',
        SVC_REDIS_PREFIX: `svc-migrate-${process.pid}:`,
        SVC_SECRET_KEY: TEST_SECRET_KEY,
        SVC_WEBHOOK_ALLOW_PRIVATE: 'on',
        SVC_WEBHOOK_TIMEOUT_MS: '2000',
        SVC_BOOTSTRAP_KEY: admin,
      };
      const [a, b] = await Promise.all([serveSvc(tmpDir(), env), serveSvc(tmpDir(), env)]);
      procs.push(a, b);
      for (const node of [a, b]) {
        for (let i = 0; i < probes.length; i++) {
          const [probeUrl, key] = probes[i];
          expect(await answer(node.base, probeUrl, key), `${probeUrl} as ${key === null ? 'nobody' : key.slice(0, 14)} on ${node.base}`).toEqual(expected[i]);
        }
        const exported = await fetch(`${node.base}/v1/export?league=wc&season=2022`, { headers: auth(pro) });
        expect(Buffer.from(await exported.arrayBuffer()).equals(exportBytes), 'export bytes').toBe(true);
        expect(exported.headers.get('x-changes-cursor')).toBe(exportCursor);
      }

      // A stream on node B from an id of before replays what the single node replayed, then a
      // report through node A arrives after it, numbered right after the last event of before.
      const stream: StreamClient = await connect(`${b.base.replace('http', 'ws')}/v1/stream?since=${sinceId}`, admin);
      closers.push(async () => stream.close());
      await stream.until((c) => eventIds(c).includes(lastId), 15_000, 'the replay from since=');
      expect(eventIds(stream)).toEqual(replayedBefore);
      const deliveredBefore = rx.requests.length;
      const fresh = await scoreOnce(a.base);
      expect(fresh.tier).toBe('confirmed');
      await stream.until((c) => eventIds(c).length >= replayedBefore.length + 2, 15_000, 'the new events on node B');
      const after = eventIds(stream);
      expect(after.slice(0, replayedBefore.length)).toEqual(replayedBefore);
      const newIds = after.slice(replayedBefore.length);
      expect(new Set(after).size, 'no event twice').toBe(after.length);
      // Numbered right after the last event of before: the sequence was set past the copied rows.
      expect(newIds.map((id) => Number(id.slice(4)))).toEqual([maxSeq + 1, maxSeq + 2]);

      // The change feed from the cursor of before: nothing missed, nothing doubled.
      const feed: { data: { id: string; object_id: string }[]; next_cursor: string } = await getJson(b.base, `/v1/changes?since=${changes.next_cursor}&limit=1000`, admin);
      const oldIds = new Set(changes.data.map((c) => c.id));
      expect(feed.data.length).toBeGreaterThan(0);
      for (const c of feed.data) expect(oldIds.has(c.id)).toBe(false);
      expect(feed.data.map((c) => c.object_id)).toEqual(expect.arrayContaining(newIds));
      const firstNew = Number(feed.data[0].id.slice(4));
      const lastOld = Number(changes.data[changes.data.length - 1].id.slice(4));
      expect(firstNew, 'the feed continues right after the last change of before').toBe(lastOld + 1);
      expect((await getJson(a.base, `/v1/changes?since=${feed.next_cursor}`, admin)).data).toEqual([]);

      // The webhook endpoints deliver the new events, signed with the secrets of before.
      await rx.waitFor((r) => r.requests.slice(deliveredBefore).some((q) => q.path === '/confirmed') && r.requests.slice(deliveredBefore).some((q) => q.path === '/all'), 20_000, 'deliveries from the cluster');
      for (const q of rx.requests.slice(deliveredBefore)) {
        const secret = q.path === '/confirmed' ? secrets.confirmed : secrets.all;
        const header = q.headers['x-svc-signature'];
        expect(verifySignature(typeof header === 'string' ? header : undefined, q.body, secret).ok, `signature on ${q.path}`).toBe(true);
      }
      // The Idempotency-Key of before replays its recorded answer (sealed on SQLite, opened on the cluster).
      const again = await fetch(`${a.base}/v1/webhooks`, {
        method: 'POST',
        headers: { ...auth(admin), 'content-type': 'application/json', 'idempotency-key': 'migrate-hook-1' },
        body: JSON.stringify({ url: `${rx.url}/confirmed`, tier: 'confirmed' }),
      });
      expect((await again.json()).data).toMatchObject({ id: confirmedHook.id, secret: secrets.confirmed });

      // Both nodes drain cleanly.
      for (const node of [a, b]) {
        await node.stop();
        expect((await node.exited).code).toBe(0);
      }
    },
  );
});

/** The rows of every table of a SQLite file and a PostgreSQL database, compared as `canonicalRows` reads them; the per-node leases left out. */
async function expectSameTables(file: string, url: string): Promise<number> {
  const sqlite = new SQLite(file, { readonly: true });
  const target = new pg.Client({ connectionString: url });
  await target.connect();
  let rows = 0;
  try {
    const tables = sqlite
      .prepare(`select name from sqlite_master where type = 'table' and name not like 'sqlite_%' and name not like 'kysely_%' and name <> 'consensus_leases' order by name`)
      .pluck()
      .all()
      .map(String);
    for (const t of tables) {
      const fromSqlite = canonicalRows(asRows(sqlite.prepare(`select * from "${t}"`).safeIntegers(true).all()));
      expect(canonicalRows(asRows((await target.query(`select * from "${t}"`)).rows)), `table ${t}`).toEqual(fromSqlite);
      rows += fromSqlite.length;
    }
  } finally {
    await target.end();
    sqlite.close();
  }
  return rows;
}

/** One line on stderr, after the command's name: a refusal. */
const ONE_LINE = /^svc (migrate-store|restore|backup): [^\n]+\n$/;

const sha256 = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

describe.runIf(available)('svc migrate-store: interrupted, resumed', () => {
  it('Ctrl-C stops after a batch, a killed run loses only its batch in flight, a new run without --resume is refused, and --resume copies every row once', { timeout: 300_000 }, async () => {
    const dataDir = seededDataDir();
    const url = await emptyDatabase();
    const env = { SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: TEST_SECRET_KEY };
    const copied = async () => Number((await query<{ n: string }>(url, `select coalesce(sum(copied), 0)::text as n from svc_migrate_store_progress`).catch(() => [{ n: '0' }]))[0].n);
    const interrupt = async (args: string[], signal: 'SIGINT' | 'SIGKILL', after: number) => {
      const p = startSvc(['migrate-store', '--to', url, '--batch-rows', '400', ...args], env);
      await until(async () => (await copied()) >= after || p.child.exitCode !== null, 120_000, `${after} rows copied`);
      expect(p.child.exitCode, `the run ended before its interruption: ${p.output()}`).toBe(null);
      if (signal === 'SIGKILL') await p.kill();
      else p.signal('SIGINT');
      return { p, exit: await p.exited };
    };

    // Ctrl-C: the batch in flight is committed with its progress, then the command stops (130) and says how to go on.
    const first = await interrupt([], 'SIGINT', 10_000);
    expect(first.exit.code).toBe(130);
    expect(first.p.written('stderr')).toMatch(/svc migrate-store: interrupted during \w+; what was copied is kept: run the same command with --resume\n$/);
    const afterFirst = await copied();
    // A crash: SIGKILL mid-run.
    const second = await interrupt(['--resume'], 'SIGKILL', afterFirst + 20_000);
    expect(second.exit.signal).toBe('SIGKILL');
    const atKill = await copied();
    const counts = await pgCounts(url);

    const refused = await migrate(['--to', url], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(ONE_LINE);
    expect(refused.stderr).toMatch(/the target holds an interrupted migration: run the same command with --resume/);
    expect(await pgCounts(url), 'a refusal writes nothing').toEqual(counts);

    const resumed = await migrate(['--to', url, '--resume'], env);
    expect(resumed.code, resumed.stderr).toBe(0);
    const left = /Resuming \d+ tables \(([\d,]+) rows left\)/.exec(resumed.stderr);
    expect(left, resumed.stderr).not.toBeNull();
    const total = await expectSameTables(path.join(dataDir, 'svc.db'), url);
    // The resumed run copied exactly what the interrupted ones had not: nothing twice, nothing skipped.
    expect(Number(left?.[1].replace(/,/g, ''))).toBe(total - atKill);
    expect(resumed.stdout).not.toMatch(/DIFFERS/);
    // The keys and indexes set aside for the copy are made again, and the migration's own tables gone.
    const fresh = await freshDb('postgres');
    await fresh.db.close();
    expect(await schemaOf(url)).toEqual(await schemaOf(fresh.databaseUrl ?? ''));
    // And once done there is nothing to resume: the target now holds data.
    const done = await migrate(['--to', url, '--resume'], env);
    expect(done.code).toBe(1);
    expect(done.stderr).toMatch(/the target holds data \(table \w+ has rows\) and no interrupted migration to resume/);
  });
});

describe.runIf(available)('svc migrate-store and svc restore: refusals, each one line with nothing written', () => {
  const procs: SvcProcess[] = [];
  afterAll(async () => Promise.all(procs.map((p) => p.stop())));

  /** A data dir whose database has the key check sealed under `key` (as a node's first start leaves it). */
  async function sealedDataDir(key: string): Promise<string> {
    const dataDir = seededDataDir();
    const db = await openDb({ dataDir, databaseUrl: null });
    const parsed = parseSecretKey(key);
    if (!parsed.ok) throw new Error('bad test key');
    await verifySecretKey(db, new SecretBox(parsed.key));
    await db.close();
    return dataDir;
  }

  it('a running source node: migrate-store and restore refuse, the target and the data dir untouched', async () => {
    const dataDir = await sealedDataDir(TEST_SECRET_KEY);
    const node = await serveSvc(dataDir, { SVC_SECRET_KEY: TEST_SECRET_KEY });
    procs.push(node);
    const url = await emptyDatabase();
    const r = await migrate(['--to', url], { SVC_DATA_DIR: dataDir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stderr).toMatch(/^svc migrate-store: the source \S+svc\.db is open in another process: a node is running on it; stop it first\n$/);
    expect(await pgCounts(url)).toEqual({});

    const backup = path.join(tmpDir(), 'b.db');
    const b = await runSvc(['backup', backup], { SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: TEST_SECRET_KEY });
    expect(b.code, b.stderr).toBe(0);
    const restore = await runSvc(['restore', backup, '--force'], { SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: TEST_SECRET_KEY });
    expect(restore.code).toBe(1);
    expect(restore.stderr).toMatch(ONE_LINE);
    expect(restore.stderr).toMatch(/a node is running on \S+ \(\S+svc\.db is open in another process\): stop it first/);
    expect(fs.readdirSync(dataDir).filter((f) => f.includes('restore'))).toEqual([]);
    expect((await fetch(`${node.base}/readyz`)).status).toBe(200);
    await node.stop();
    // Stopped, the same command goes through.
    const ok = await runSvc(['restore', backup, '--force'], { SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: TEST_SECRET_KEY });
    expect(ok.code, ok.stderr).toBe(0);
  });

  it('a target that holds data, a key that does not open the source, no key at all: refused before anything is written', async () => {
    const dataDir = await sealedDataDir(TEST_SECRET_KEY);
    // A database a node has run on: the archive is in it.
    const { databaseUrl, db } = await freshDb('postgres');
    await db.close();
    if (!databaseUrl) throw new Error('no database');
    const before = await pgCounts(databaseUrl);
    const full = await migrate(['--to', databaseUrl], { SVC_DATA_DIR: dataDir });
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(ONE_LINE);
    expect(full.stderr).toMatch(/the target already holds data \(table \w+ has rows\): migrate into an empty database/);
    expect(await pgCounts(databaseUrl)).toEqual(before);

    const url = await emptyDatabase();
    const other = crypto.randomBytes(32).toString('hex');
    const wrong = await migrate(['--to', url], { SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: other });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(ONE_LINE);
    expect(wrong.stderr).toMatch(/SVC_SECRET_KEY \(key id [0-9a-f]{16}\) is not the key the source's secrets are sealed under \(key id [0-9a-f]{16}\)/);
    expect(await pgCounts(url)).toEqual({});

    const none = await runSvc(['migrate-store', '--to', url], { SVC_DATA_DIR: dataDir });
    expect(none.code).toBe(1);
    expect(none.stderr).toMatch(ONE_LINE);
    expect(none.stderr).toMatch(/no key was given: set SVC_SECRET_KEY/);
    expect(await pgCounts(url)).toEqual({});

    // A sandbox's key file beside the source is the key when SVC_SECRET_KEY is not set; the wrong one is refused too.
    fs.writeFileSync(path.join(dataDir, 'secret.key'), `${other}\n`, { mode: 0o600 });
    const file = await runSvc(['migrate-store', '--to', url], { SVC_DATA_DIR: dataDir });
    expect(file.stderr).toMatch(/secret\.key \(key id [0-9a-f]{16}\) is not the key/);
    expect(await pgCounts(url)).toEqual({});
  });

  it('a newer schema than this build: migrate-store and restore refuse; a non-empty data dir without --force: restore refuses', async () => {
    const dataDir = await sealedDataDir(TEST_SECRET_KEY);
    const newer = new SQLite(path.join(dataDir, 'svc.db'));
    newer.prepare(`insert into kysely_migration (name, timestamp) values ('9999_from_the_future', '2030-01-01T00:00:00.000Z')`).run();
    newer.close();
    const url = await emptyDatabase();
    const r = await migrate(['--to', url], { SVC_DATA_DIR: dataDir });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(ONE_LINE);
    expect(r.stderr).toMatch(/the source's schema is newer than this build's \(it ran 9999_from_the_future\)/);
    expect(await pgCounts(url)).toEqual({});

    const target = seededDataDir();
    const hash = sha256(path.join(target, 'svc.db'));
    const newerRestore = await runSvc(['restore', path.join(dataDir, 'svc.db'), '--force'], { SVC_DATA_DIR: target, SVC_SECRET_KEY: TEST_SECRET_KEY });
    expect(newerRestore.code).toBe(1);
    expect(newerRestore.stderr).toMatch(ONE_LINE);
    expect(newerRestore.stderr).toMatch(/the backup's schema is newer than this build's \(it ran 9999_from_the_future\)/);

    const backup = path.join(tmpDir(), 'b.db');
    expect((await runSvc(['backup', backup], { SVC_DATA_DIR: await sealedDataDir(TEST_SECRET_KEY) })).code).toBe(0);
    const occupied = await runSvc(['restore', backup], { SVC_DATA_DIR: target, SVC_SECRET_KEY: TEST_SECRET_KEY });
    expect(occupied.code).toBe(1);
    expect(occupied.stderr).toMatch(ONE_LINE);
    expect(occupied.stderr).toMatch(/already holds a database: restoring replaces it; run again with --force/);
    // A key that does not open the backup's secrets: refused even with --force, as the node would not start.
    const wrongKey = await runSvc(['restore', backup, '--force'], { SVC_DATA_DIR: target, SVC_SECRET_KEY: crypto.randomBytes(32).toString('hex') });
    expect(wrongKey.code).toBe(1);
    expect(wrongKey.stderr).toMatch(/the backup's secrets are sealed under key id [0-9a-f]{16}, and SVC_SECRET_KEY holds key id [0-9a-f]{16}/);
    expect(sha256(path.join(target, 'svc.db')), 'the data dir untouched').toBe(hash);
    expect(fs.readdirSync(target).sort()).toEqual(['svc.db']);
  });
});
