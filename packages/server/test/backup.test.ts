// `svc backup` and `svc restore` (docs/operations.md "Backups"): a backup of a running node taken
// while about a thousand reports a second arrive is one consistent snapshot of the database (each
// event with its change-feed row and its reports, nothing half-written), and a node restored
// from it serves exactly what the live node held at that moment.
import fs from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { auth, keysOf, tmpDir } from './helpers.js';
import { runSvc, seededDataDir, serveSvc, startSvc, type SvcProcess } from './process.js';

const ADMIN = 'svc_test_BackupUnderLoadBackupUnder01';
const SECRET = '5e'.repeat(32);

type Row = Record<string, unknown>;
const rowsOf = (db: SQLite.Database, sql: string): Row[] => db.prepare(sql).all().map((r) => (typeof r === 'object' && r !== null ? Object.fromEntries(Object.entries(r)) : {}));

describe('svc backup and restore', () => {
  const procs: SvcProcess[] = [];
  afterAll(async () => Promise.all(procs.map((p) => p.stop())));

  it('a backup under ~1,000 reports a second is a consistent snapshot, and the node restored from it serves it', { timeout: 240_000 }, async () => {
    const dataDir = seededDataDir();
    const reporters = await keysOf(dataDir, null, 20, 'internal', ['report']);
    const env = { SVC_SECRET_KEY: SECRET, SVC_BOOTSTRAP_KEY: ADMIN };
    const node = await serveSvc(dataDir, env);
    procs.push(node);
    const games: { id: string; status: string; competitors: { entity_id: string }[] }[] = (await (await fetch(`${node.base}/v1/games?date=today&sport=basketball&limit=100`, { headers: auth(ADMIN) })).json()).data;
    const open = games.filter((g) => g.status === 'scheduled' || g.status === 'live').slice(0, 8);
    expect(open.length).toBeGreaterThan(1);

    // The load: every 50 ms a batch of 50 reports from one reporter (1,000 a second), spread over the games.
    let acknowledged = 0;
    let failures = 0;
    let batch = 0;
    let running = true;
    const inFlight = new Set<Promise<void>>();
    const send = async (n: number) => {
      const reporter = reporters[n % reporters.length];
      const reports = Array.from({ length: 50 }, (_, i) => {
        const g = open[(n + i) % open.length];
        return { game_id: g.id, team: g.competitors[i % 2].entity_id.split(':').pop(), points: (i % 3) + 1, clock: `Q${(n % 4) + 1} ${String(n % 60).padStart(2, '0')}:${String(i).padStart(2, '0')}` };
      });
      const res = await fetch(`${node.base}/v1/reports`, { method: 'POST', headers: { ...auth(reporter), 'content-type': 'application/json' }, body: JSON.stringify({ reports }) });
      const body = await res.json();
      if (res.status === 202) acknowledged += body.data.length;
      else failures++;
    };
    const loadStarted = Date.now();
    const load = (async () => {
      while (running) {
        const p = send(batch++).finally(() => inFlight.delete(p));
        inFlight.add(p);
        // On a schedule, not 50 ms after each send: timers run late on a busy machine.
        await new Promise((r) => setTimeout(r, Math.max(0, loadStarted + batch * 50 - Date.now())));
      }
      await Promise.all(inFlight);
    })();
    const rate = () => (acknowledged / ((Date.now() - loadStarted) / 1000)).toFixed(0);
    await new Promise((r) => setTimeout(r, 2000));
    const atBackupStart = acknowledged;

    const file = path.join(tmpDir(), 'svc-backup.db');
    const backup = startSvc(['backup', file], { SVC_DATA_DIR: dataDir, ...env });
    const done = await backup.exited;
    const atBackupEnd = acknowledged;
    await new Promise((r) => setTimeout(r, 1000));
    running = false;
    await load;
    console.log(`backup under load: ${acknowledged} reports acknowledged at ${rate()}/s (${atBackupStart} before the backup, ${atBackupEnd - atBackupStart} during it), ${failures} batches refused`);
    expect(done.code, backup.output()).toBe(0);
    expect(backup.written('stderr')).toMatch(/\[#{24}\] 100% [\d,]+ of [\d,]+ pages/);
    expect(backup.written('stdout')).toMatch(/^Backed up \S+ to \S+svc-backup\.db: [\d.]+ MiB in [\d.]+ s, schema at 0\d+_\w+\.\nIt holds no key: keep SVC_SECRET_KEY with it\.\n$/);
    expect(failures).toBe(0);
    expect(atBackupStart, 'reports were arriving when the backup started').toBeGreaterThan(100);
    expect(acknowledged, 'and after it').toBeGreaterThan(atBackupEnd);
    // No temporary file left beside it; the backup stands alone (no WAL belongs with it).
    expect(fs.readdirSync(path.dirname(file))).toEqual(['svc-backup.db']);

    await node.stop();
    const snapshot = new SQLite(file, { readonly: true });
    const live = new SQLite(path.join(dataDir, 'svc.db'), { readonly: true });
    try {
      expect(snapshot.pragma('journal_mode', { simple: true })).toBe('delete');
      expect(snapshot.pragma('integrity_check', { simple: true })).toBe('ok');
      const maxSeq = Number(snapshot.prepare('select max(seq) from events').pluck().get());
      const reportsIn = Number(snapshot.prepare('select count(*) from reports').pluck().get());
      expect(reportsIn, 'the backup holds some of the reports, not all').toBeGreaterThan(0);
      expect(reportsIn).toBeLessThan(Number(live.prepare('select count(*) from reports').pluck().get()));
      // One moment of the database: the live node's events and changes up to the backup's last are exactly the backup's ...
      expect(rowsOf(snapshot, 'select * from events order by seq')).toEqual(rowsOf(live, `select * from events where seq <= ${maxSeq} order by seq`));
      const maxChange = Number(snapshot.prepare('select max(seq) from changes').pluck().get());
      expect(rowsOf(snapshot, 'select * from changes order by seq')).toEqual(rowsOf(live, `select * from changes where seq <= ${maxChange} order by seq`));
      // ... each event of the load with its change row (written in one transaction), and every report's event there too.
      const loaded = open.map((g) => `'${g.id}'`).join(', ');
      expect(Number(snapshot.prepare(`select count(*) from events where game_id in (${loaded})`).pluck().get())).toBeGreaterThan(0);
      expect(snapshot.prepare(`select count(*) from events e where e.game_id in (${loaded}) and not exists (select 1 from changes c where c.object_id = 'evt_' || printf('%012d', e.seq))`).pluck().get()).toBe(0);
      expect(snapshot.prepare(`select count(*) from reports r where r.event_id is not null and not exists (select 1 from events e where 'evt_' || printf('%012d', e.seq) = r.event_id)`).pluck().get()).toBe(0);
    } finally {
      snapshot.close();
      live.close();
    }

    // Restored into a fresh data dir, a node serves the snapshot: the live node's answers up to that moment.
    const restoredDir = tmpDir();
    const restored = await runSvc(['restore', file], { SVC_DATA_DIR: restoredDir, ...env });
    expect(restored.code, restored.stderr).toBe(0);
    expect(restored.stdout).toMatch(/^Restored \S+ into \S+svc\.db \([\d.]+ MiB\)\.\n$/);
    const [again, liveAgain] = await Promise.all([serveSvc(restoredDir, env), serveSvc(dataDir, env)]);
    procs.push(again, liveAgain);
    const seqOf = (id: string) => Number(id.slice(4));
    const copy = new SQLite(file, { readonly: true });
    const restoredMax = Number(copy.prepare('select max(seq) from events').pluck().get());
    copy.close();
    for (const g of open) {
      const read = async (base: string): Promise<{ id: string }[]> => (await (await fetch(`${base}/v1/games/${g.id}/events?limit=1000`, { headers: auth(ADMIN) })).json()).data;
      const fromLive = (await read(liveAgain.base)).filter((e) => seqOf(e.id) <= restoredMax);
      expect(await read(again.base), `events of ${g.id}`).toEqual(fromLive);
    }
    expect((await fetch(`${again.base}/v1/me`, { headers: auth(reporters[0]) })).status).toBe(200);
  });
});
