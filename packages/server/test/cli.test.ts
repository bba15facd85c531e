import { systemClock } from '../src/domain/clock.js';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, inject } from 'vitest';
import { buildApp } from '../src/app.js';
import { openDb } from '../src/store/sql/db.js';
import { auth, testConfig, tmpDir } from './helpers.js';
import { runSvc, seededDataDir, startSvc } from './process.js';

/** `svc <args>` run to completion; rejects with the exit code and output when it is not 0. */
async function svc(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = await runSvc(args, env);
  if (r.code !== 0) throw Object.assign(new Error(`svc ${args.join(' ')} exited ${r.code}: ${r.stderr}`), r);
  return r;
}

describe('svc CLI', () => {
  it('keys create --json prints the full key once; list and revoke work', async () => {
    const dir = tmpDir();
    fs.copyFileSync(inject('sqliteTemplate'), path.join(dir, 'svc.db'));
    const env = { SVC_DATA_DIR: dir };
    const { stdout } = await svc(['keys', 'create', '--name', 'acme', '--plan', 'pro', '--products', 'live,archive', '--sports', 'soccer', '--json'], env);
    const created = JSON.parse(stdout);
    expect(created.key).toMatch(/^svc_test_[A-Za-z0-9]{32}$/);
    expect(created).toMatchObject({ name: 'acme', plan: 'pro', products: ['live', 'archive'], sports: ['soccer'] });

    const db = await openDb({ dataDir: dir, databaseUrl: null });
    const { app } = await buildApp({ config: testConfig(dir), db, clock: systemClock });
    const me = await app.inject({ url: '/v1/me', headers: auth(created.key) });
    expect(me.json().data).toMatchObject({ id: created.id, plan: 'pro', sports: ['soccer'], rate_limit: { limit: 1000, window_s: 60 } });

    const list = await svc(['keys', 'list', '--json'], env);
    const listed = JSON.parse(list.stdout);
    expect(listed.find((k: { id: string }) => k.id === created.id)).toBeDefined();
    expect(list.stdout).not.toContain(created.key);

    await svc(['keys', 'revoke', created.id], env);
    const fresh = await buildApp({ config: testConfig(dir), db, clock: systemClock });
    expect((await fresh.app.inject({ url: '/v1/me', headers: auth(created.key) })).statusCode).toBe(401);
    await app.close();
    await fresh.app.close();
    await db.close();
  });

  it('refuses bad arguments and bad configuration with one clear line', async () => {
    const dir = tmpDir();
    const badPlan = await svc(['keys', 'create', '--name', 'x', '--plan', 'gold'], { SVC_DATA_DIR: dir }).catch((e: { code: number; stderr: string }) => e);
    expect(badPlan).toMatchObject({ code: 2 });
    expect('stderr' in badPlan ? badPlan.stderr : '').toMatch(/--plan must be one of/);
    const badEnv = await svc(['keys', 'list'], { SVC_DATA_DIR: dir, SVC_PORT: 'eighty' }).catch((e: { code: number; stderr: string }) => e);
    expect(badEnv).toMatchObject({ code: 2 });
    expect('stderr' in badEnv ? badEnv.stderr : '').toMatch(/SVC_PORT/);
    const badKey = await svc(['keys', 'list'], { SVC_DATA_DIR: dir, SVC_BOOTSTRAP_KEY: 'svc_live_abcdefabcdefabcdefabcdef' }).catch((e: { code: number; stderr: string }) => e);
    expect('stderr' in badKey ? badKey.stderr : '').toMatch(/SVC_BOOTSTRAP_KEY/);
  });
});

// Concurrent: each case is a few process starts (describe.concurrent), all at once on two vCPUs,
// so each gets more than the default 30 s.
describe.concurrent('svc CLI: help and usage errors (real processes)', { timeout: 120_000 }, () => {
  const COMMANDS: string[][] = [[], ['serve'], ['import'], ['keys'], ['keys', 'create'], ['keys', 'list'], ['keys', 'revoke'], ['reporters'], ['reporters', 'suspend'], ['tail'], ['replay'], ['standings'], ['changes'], ['simulate'], ['export'], ['backup'], ['restore'], ['migrate-store'], ['help']];

  for (const cmd of COMMANDS) {
    it(`svc ${[...cmd, '--help'].join(' ')} prints usage and exits 0 without touching the data dir`, async () => {
      const dir = path.join(tmpDir(), 'data');
      // -h is the same flag; checking it on a few commands keeps the suite quick.
      const flags = cmd.length === 0 || cmd[0] === 'serve' || cmd[1] === 'create' ? ['--help', '-h'] : ['--help'];
      for (const flag of flags) {
        const r = await runSvc([...cmd, flag], { SVC_DATA_DIR: dir });
        expect(r, r.stderr).toMatchObject({ code: 0, stderr: '' });
        expect(r.stdout).toMatch(/^(usage: svc|svc — )/);
        if (cmd.length > 0 && cmd[0] !== 'help') expect(r.stdout).toContain(`svc ${cmd.join(' ')}`);
      }
      // Neither a database nor a key was created: help never runs the command.
      expect(fs.existsSync(dir)).toBe(false);
    });
  }

  const BAD: [string[], RegExp][] = [
    [['serve', '--port', '80'], /^svc serve: Unknown option '--port' \(see svc serve --help\)$/],
    [['import', 'now'], /^svc import: unexpected argument 'now'/],
    [['keys', 'create', '--nmae', 'x'], /^svc keys create: Unknown option '--nmae'/],
    [['keys', 'create', '--plan', 'gold', '--name', 'x'], /^svc keys create: --plan must be one of/],
    [['keys', 'list', '--xml'], /^svc keys list: Unknown option '--xml'/],
    [['keys', 'revoke'], /^svc keys revoke: which key\?/],
    [['keys', 'rotate'], /^svc keys: unknown subcommand 'rotate'/],
    [['reporters', 'suspend', '--key', 'svc_test_x'], /^svc reporters suspend: which reporter\? svc reporters suspend REPORTER_ID/],
    [['reporters', 'ban'], /^svc reporters: unknown subcommand 'ban' \(list, suspend or restore\)/],
    [['tail', '--tier', 'maybe'], /^svc tail: --tier must be provisional or confirmed/],
    [['tail', '--sport'], /^svc tail: Option '--sport <value>' argument missing/],
    [['replay'], /^svc replay: which game\? e\.g\. svc replay soccer_21728/],
    [['standings'], /^svc standings: --league is required/],
    [['standings', '--league', 'wc', '--tier', 'rumour', '--key', 'svc_test_x'], /^svc standings: --tier must be confirmed or provisional, got 'rumour'/],
    [['replay', 'soccer_21728', '--speed', '601'], /^svc replay: --speed must be a whole number from 1 to 600, got '601'/],
    [['simulate', '--turbo'], /^svc simulate: unknown option '--turbo'/],
    [['export', '--league'], /^svc export: --league needs a value/],
    [['backup'], /^svc backup: which file\? svc backup <file> \(see svc backup --help\)$/],
    [['restore', 'a.db', '--yes'], /^svc restore: Unknown option '--yes'/],
    [['migrate-store'], /^svc migrate-store: --to postgres:\/\/… is required \(see svc migrate-store --help\)$/],
    [['migrate-store', '--to', 'mysql://x/y'], /^svc migrate-store: --to must be a postgres:\/\/ URL/],
    [['migrate-store', '--to', 'postgres://h/d', '--batch-rows', '0'], /^svc migrate-store: --batch-rows must be an integer from 1 to 1000000/],
    [['frobnicate'], /^svc: unknown command 'frobnicate'/],
    [['help', 'frobnicate'], /^svc help: unknown command 'frobnicate'/],
  ];
  for (const [args, message] of BAD) {
    it(`svc ${args.join(' ')}: one line on stderr, exit 2, no stack`, async () => {
      const r = await runSvc(args, { SVC_DATA_DIR: seededDataDir() });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr.trim()).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at |ERR_PARSE_ARGS/);
    });
  }

  it('an unexpected failure is one line and exit 1, not a stack trace', async () => {
    // The data dir is a file: SQLite cannot open a database in it.
    const file = path.join(tmpDir(), 'not-a-dir');
    fs.writeFileSync(file, 'x');
    const r = await runSvc(['keys', 'list'], { SVC_DATA_DIR: file });
    expect(r.code).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^svc: /);
  });

  it('keys list prints a table with a header, and --json the records', async () => {
    const dir = seededDataDir();
    const created = JSON.parse((await runSvc(['keys', 'create', '--name', 'acme corp', '--plan', 'pro', '--products', 'live', '--json'], { SVC_DATA_DIR: dir })).stdout);
    const r = await runSvc(['keys', 'list'], { SVC_DATA_DIR: dir });
    expect(r.code).toBe(0);
    const [header, ...rows] = r.stdout.trim().split('\n');
    expect(header.split(/\s{2,}/)).toEqual(['ID', 'PREFIX', 'NAME', 'PLAN', 'PRODUCTS', 'SPORTS', 'LEAGUES', 'CREATED', 'STATUS']);
    const row = rows.find((l) => l.startsWith(created.id));
    expect(row?.split(/\s{2,}/)).toEqual([created.id, `${created.prefix}…`, 'acme corp', 'pro', 'live', '*', '*', created.created_at.slice(0, 10), 'active']);
    expect(r.stdout).not.toContain(created.key);
    const json = JSON.parse((await runSvc(['keys', 'list', '--json'], { SVC_DATA_DIR: dir })).stdout);
    expect(json.find((k: { id: string }) => k.id === created.id)).toMatchObject({ name: 'acme corp', plan: 'pro' });
  });
});

describe('svc serve: the start key (real processes)', { timeout: 120_000 }, () => {
  const startAndStop = async (env: Record<string, string>) => {
    const p = startSvc(['serve'], env);
    try {
      await p.port();
      await p.line('stderr', /API key:/);
    } finally {
      p.signal('SIGTERM');
    }
    const exit = await p.exited;
    expect(exit.code).toBe(0);
    return p;
  };
  const demoKeys = async (dir: string) => {
    const db = await openDb({ dataDir: dir, databaseUrl: null });
    try {
      return await db.kysely.selectFrom('api_keys').selectAll().where('name', '=', 'demo (npm start)').execute();
    } finally {
      await db.close();
    }
  };

  it('the sandbox creates its demo key once per data dir and prints the same key on the next start', async () => {
    const dir = seededDataDir();
    const first = await startAndStop({ SVC_DATA_DIR: dir });
    const key = (await first.line('stderr', /API key:\s+(svc_test_[A-Za-z0-9]+)/))[1];
    expect(first.stderr.join('\n')).toContain('created now');
    const second = await startAndStop({ SVC_DATA_DIR: dir });
    expect((await second.line('stderr', /API key:\s+(svc_test_[A-Za-z0-9]+)/))[1]).toBe(key);
    expect(await demoKeys(dir)).toHaveLength(1);
    const file = path.join(dir, 'demo-key');
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(key);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    // Humans read stderr; stdout is JSON log lines only, and they never carry the key.
    for (const p of [first, second]) {
      expect(p.logs().length).toBeGreaterThan(0);
      expect(p.stdout.join('\n')).not.toContain(key);
    }
  });

  it('a revoked demo key is replaced, not resurrected', async () => {
    const dir = seededDataDir();
    const first = await startAndStop({ SVC_DATA_DIR: dir });
    const key = (await first.line('stderr', /API key:\s+(svc_test_[A-Za-z0-9]+)/))[1];
    const [record] = await demoKeys(dir);
    expect((await runSvc(['keys', 'revoke', record.id], { SVC_DATA_DIR: dir })).code).toBe(0);
    const second = await startAndStop({ SVC_DATA_DIR: dir });
    const again = (await second.line('stderr', /API key:\s+(svc_test_[A-Za-z0-9]+)/))[1];
    expect(again).not.toBe(key);
    expect(fs.readFileSync(path.join(dir, 'demo-key'), 'utf8').trim()).toBe(again);
  });

  it('production never creates a key by itself', async () => {
    const dir = seededDataDir();
    const p = await startAndStop({ SVC_DATA_DIR: dir, SVC_ENV: 'production', SVC_SECRET_KEY: '0f'.repeat(32) });
    expect(p.stderr.join('\n')).toMatch(/API key:\s+none created in production/);
    expect(p.stderr.join('\n')).not.toMatch(/svc_live_/);
    expect(fs.existsSync(path.join(dir, 'demo-key'))).toBe(false);
    const db = await openDb({ dataDir: dir, databaseUrl: null });
    try {
      expect(await db.kysely.selectFrom('api_keys').selectAll().where('environment', '=', 'production').execute()).toEqual([]);
    } finally {
      await db.close();
    }
  });
});

describe('svc tail (real processes)', () => {
  it('prints live events with the demo key of the data dir, and exits 0 on SIGINT', async () => {
    const dir = seededDataDir();
    const server = startSvc(['serve'], { SVC_DATA_DIR: dir });
    try {
      const port = await server.port();
      const key = (await server.line('stderr', /API key:\s+(svc_test_[A-Za-z0-9]+)/))[1];
      const tail = startSvc(['tail', '--sport', 'soccer', '--json', '--url', `http://127.0.0.1:${port}`], { SVC_DATA_DIR: dir });
      await tail.line('stderr', /svc tail: subscribed to sports soccer/);
      const games = (await (await fetch(`http://127.0.0.1:${port}/v1/games?date=today&sport=soccer&limit=1`, { headers: auth(key) })).json()).data;
      const team = String(games[0].competitors[0].entity_id).split(':').pop();
      const res = await fetch(`http://127.0.0.1:${port}/v1/reports`, {
        method: 'POST',
        headers: { ...auth(key), 'content-type': 'application/json' },
        body: JSON.stringify({ game_id: games[0].id, team, points: 1 }),
      });
      expect(res.status).toBe(202);
      const eventId = (await res.json()).data[0].event_id;
      const line = await tail.line('stdout', /^\{.*\}$/);
      expect(JSON.parse(line[0])).toMatchObject({ id: eventId, type: 'score', tier: 'provisional', game_id: games[0].id, team, points: 1 });
      tail.signal('SIGINT');
      expect(await tail.exited).toEqual({ code: 0, signal: null });
    } finally {
      server.signal('SIGTERM');
      await server.exited;
    }
  });

  it('says in one line, exit 1, when there is no service or the key is refused', async () => {
    const dir = seededDataDir();
    const none = await runSvc(['tail', '--url', 'http://127.0.0.1:9', '--key', 'svc_test_0000000000000000000000000000'], { SVC_DATA_DIR: dir });
    expect(none.code).toBe(1);
    expect(none.stderr.trim()).toMatch(/^svc tail: refused by http:\/\/127\.0\.0\.1:9: no svc service at/);
    const server = startSvc(['serve'], { SVC_DATA_DIR: dir });
    try {
      const port = await server.port();
      const bad = await runSvc(['tail', '--url', `http://127.0.0.1:${port}`, '--key', 'svc_test_0000000000000000000000000000'], { SVC_DATA_DIR: dir });
      expect(bad.code).toBe(1);
      expect(bad.stderr.trim().split('\n')).toHaveLength(1);
      expect(bad.stderr).toMatch(/HTTP 401: The API key is not valid or has been revoked/);
    } finally {
      server.signal('SIGTERM');
      await server.exited;
    }
  });
});
