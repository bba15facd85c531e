import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { Migrator, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp, type BuiltApp } from '../src/app.js';
import { isoTime } from '../src/domain/clock.js';
import { generateSecretKey, isSealed, SecretBox } from '../src/domain/secrets/sealed.js';
import { verifySignature } from '../src/domain/webhooks/signature.js';
import { endpointSecretAad, recordedAnswerAad } from '../src/domain/secrets/columns.js';
import { keyFilePath, verifySecretKey, WrongSecretKeyError } from '../src/secrets/key.js';
import { rotateSecretKey } from '../src/secrets/rotate.js';
import { openEndpointSecrets } from '../src/webhooks/directory.js';
import { openDb, type Db } from '../src/store/sql/db.js';
import { migrationProvider } from '../src/store/migrations/index.js';
import { confirmedGoal } from './event-fixtures.js';
import { auth, engines, freshDb, ManualClock, testConfig, tmpDir, type EngineName } from './helpers.js';
import { runSvc, serveSvc } from './process.js';
import { PG_ADMIN_URL, pgUrlFor } from './templates.setup.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';

const run = promisify(execFile);

/** `svc <args>` as a real process; resolves with its exit code and output whatever the code. */
async function svc(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runSvc(args, env);
}

/** Every form of a secret that would betray it in raw storage: the text, its random part, its bytes. */
function needles(secret: string): Buffer[] {
  const random = secret.slice('whsec_'.length);
  return [Buffer.from(secret), Buffer.from(random), Buffer.from(random, 'base64url'), Buffer.from(random.slice(8, 24))];
}

function expectAbsent(haystack: Buffer, secrets: string[], where: string): void {
  for (const s of secrets) for (const n of needles(s)) expect(haystack.includes(n), `${where} holds a secret's bytes`).toBe(false);
}

async function pgDump(databaseUrl: string): Promise<Buffer> {
  const { stdout } = await run('pg_dump', ['--data-only', '--table=webhook_endpoints', '--table=idempotency_keys', '--table=meta', databaseUrl], { encoding: 'buffer', maxBuffer: 64 << 20 });
  return stdout;
}

describe.each(engines())('webhook secrets at rest (%s)', (engine: EngineName) => {
  let db: Db;
  let dataDir: string;
  let databaseUrl: string | null;
  let built: BuiltApp;
  let rx: Receiver;
  let key: string;
  const clock = new ManualClock(Date.now());
  const deploymentKey = generateSecretKey();

  beforeAll(async () => {
    ({ db, dataDir, databaseUrl } = await freshDb(engine));
    rx = await startReceiver();
    built = await buildApp({ config: testConfig(dataDir, { webhookAllowPrivate: true, webhookTimeoutMs: 2000, secretKey: deploymentKey }), db, clock });
    await verifySecretKey(db, new SecretBox(deploymentKey));
    key = (await built.services.keys.create({ name: 'secrets', plan: 'internal', products: ['live', 'archive'], sports: null, leagues: null }, new Date(clock.now()))).key;
  });
  afterAll(async () => {
    await built.services.webhooks.dispatcher.stop();
    await built.app.close();
    await rx.close();
    await db.close();
  });

  /** What the database holds on disk (SQLite file and WAL) or in a dump (PostgreSQL). */
  async function rawStorage(): Promise<Buffer> {
    if (databaseUrl) return pgDump(databaseUrl);
    const file = path.join(dataDir, 'svc.db');
    return Buffer.concat([fs.readFileSync(file), fs.existsSync(`${file}-wal`) ? fs.readFileSync(`${file}-wal`) : Buffer.alloc(0)]);
  }

  async function deliverOne(app: BuiltApp): Promise<{ header: string; body: string }> {
    const game = (await app.app.inject({ url: '/v1/games?sport=soccer&limit=1', headers: auth(key) })).json().data[0];
    const comp = (await app.app.inject({ url: `/v1/competitions/${game.competition_id}`, headers: auth(key) })).json().data;
    const before = rx.requests.length;
    await app.services.events.append([
      confirmedGoal({ ...game, season_id: comp.season_id, team: String(game.competitors[0].entity_id).split(':').pop() ?? '' }, isoTime(clock.now()), { clock: "10'", latency_ms: 500 }),
    ]);
    await app.services.webhooks.dispatcher.runOnce();
    await rx.waitFor((r) => r.requests.length > before, 10_000, 'a delivery');
    const req = rx.requests[rx.requests.length - 1];
    return { header: String(req.headers['x-svc-signature']), body: req.body };
  }

  it('stores no secret in clear after create and rotate (idempotent answers included), and deliveries still verify; a deployment-key rotation keeps them verifying', async () => {
    const create = await built.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { ...auth(key), 'idempotency-key': `create-${engine}` },
      payload: { url: `${rx.url}/at-rest`, tier: 'confirmed', sports: ['soccer'] },
    });
    expect(create.statusCode, create.body).toBe(201);
    const { id, secret: first } = create.json().data;
    const rotate = await built.app.inject({ method: 'POST', url: `/v1/webhooks/${id}/rotate-secret`, headers: { ...auth(key), 'idempotency-key': `rotate-${engine}` } });
    expect(rotate.statusCode, rotate.body).toBe(200);
    const second: string = rotate.json().data.secret;
    expect(second).not.toBe(first);

    // The replays come out of storage: they open, and give the very same secrets.
    const replay = await built.app.inject({ method: 'POST', url: `/v1/webhooks/${id}/rotate-secret`, headers: { ...auth(key), 'idempotency-key': `rotate-${engine}` } });
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().data.secret).toBe(second);

    const row = await db.kysely.selectFrom('webhook_endpoints').select(['secret', 'previous_secret']).where('id', '=', id).executeTakeFirstOrThrow();
    expect(isSealed(row.secret) && isSealed(row.previous_secret ?? '')).toBe(true);
    const answers = await db.kysely.selectFrom('idempotency_keys').select('body').where('idempotency_key', 'in', [`create-${engine}`, `rotate-${engine}`]).execute();
    expect(answers).toHaveLength(2);
    for (const a of answers) expect(isSealed(a.body ?? '')).toBe(true);
    expectAbsent(await rawStorage(), [first, second], engine === 'sqlite' ? 'svc.db / svc.db-wal' : 'pg_dump');

    // During the rotation overlap both secrets sign; the one shown at creation verifies.
    const d1 = await deliverOne(built);
    expect(d1.header.match(/v1=/g)).toHaveLength(2);
    expect(verifySignature(d1.header, d1.body, first, { now: Math.floor(clock.now() / 1000) })).toEqual({ ok: true, t: expect.any(Number) });
    expect(verifySignature(d1.header, d1.body, second, { now: Math.floor(clock.now() / 1000) }).ok).toBe(true);

    // The deployment key changes: every sealed value moves to the new key in one transaction.
    const oldBox = new SecretBox(deploymentKey);
    const nextKey = generateSecretKey();
    const result = await rotateSecretKey(db, oldBox, nextKey);
    expect(result).toMatchObject({ fromKeyId: deploymentKey.id, toKeyId: nextKey.id, secrets: 2 });
    expect(result.answers).toBeGreaterThanOrEqual(2);
    // Running it again finds nothing left to move.
    expect(await rotateSecretKey(db, new SecretBox(nextKey, [deploymentKey]), nextKey)).toMatchObject({ secrets: 0, answers: 0 });
    await expect(verifySecretKey(db, oldBox)).rejects.toThrow(WrongSecretKeyError);
    await verifySecretKey(db, new SecretBox(nextKey));
    expectAbsent(await rawStorage(), [first, second], 'storage after the key rotation');

    const after = await buildApp({ config: testConfig(dataDir, { webhookAllowPrivate: true, webhookTimeoutMs: 2000, secretKey: nextKey }), db, clock });
    try {
      const d2 = await deliverOne(after);
      expect(verifySignature(d2.header, d2.body, first, { now: Math.floor(clock.now() / 1000) }).ok).toBe(true);
      expect(verifySignature(d2.header, d2.body, second, { now: Math.floor(clock.now() / 1000) }).ok).toBe(true);
      const again = await after.app.inject({ method: 'POST', url: `/v1/webhooks/${id}/rotate-secret`, headers: { ...auth(key), 'idempotency-key': `rotate-${engine}` } });
      expect(again.json().data.secret).toBe(second);
      // The old key opens nothing any more: it fails loudly rather than signing with garbage.
      const sealedRow = await db.kysely.selectFrom('webhook_endpoints').select(['id', 'secret', 'previous_secret']).where('id', '=', id).executeTakeFirstOrThrow();
      expect(() => openEndpointSecrets(oldBox, sealedRow)).toThrow(/sealed under another SVC_SECRET_KEY/);
      expect(openEndpointSecrets(new SecretBox(nextKey), sealedRow)).toEqual({ secret: second, previousSecret: first });
    } finally {
      await after.services.webhooks.dispatcher.stop();
      await after.app.close();
    }
  });
});

describe.each(engines())('migration 0005_encrypted_secrets (%s)', (engine: EngineName) => {
  it('seals the plaintext secrets and answers of an older database, and will not run without a key', async () => {
    const dataDir = tmpDir();
    let databaseUrl: string | null = null;
    if (engine === 'postgres') {
      const name = `svc_t_${inject('runId')}_m${Math.random().toString(36).slice(2, 10)}`;
      const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${name}`);
      await admin.end();
      databaseUrl = pgUrlFor(name);
    }
    // A database as the previous release left it: migrated to 0004, secrets in plaintext.
    const old = await openDb({ dataDir, databaseUrl, poolSize: 2 }).catch(() => null);
    if (!old) throw new Error('the old database did not open');
    await sql`delete from kysely_migration where name = '0005_encrypted_secrets'`.execute(old.kysely);
    const plain = 'whsec_' + 'p'.repeat(10) + 'PlainOldSecret0123456789abcdefghi';
    const previous = 'whsec_' + 'q'.repeat(10) + 'PlainPrevSecret0123456789abcdefgh';
    const now = isoTime(Date.now());
    await old.kysely
      .insertInto('webhook_endpoints')
      .values({ id: 'we_old', key_id: 'key_1', url: 'https://example.com/h', description: null, sports: null, tier: 'confirmed', status: 'enabled', disabled_reason: null, disabled_at: null, secret: plain, previous_secret: previous, previous_secret_until: now, last_success_at: null, failing_since: null, created_at: now, updated_at: now })
      .execute();
    const body = JSON.stringify({ data: { id: 'we_old', secret: plain } });
    await old.kysely
      .insertInto('idempotency_keys')
      .values({ key_id: 'key_1', idempotency_key: 'k1', fingerprint: 'f', claim_token: 't', state: 'done', request_id: 'req_1', status_code: 201, content_type: 'application/json', body, created_at: Date.now(), expires_at: Date.now() + 86_400_000 })
      .execute();
    await old.close();

    await expect(openDb({ dataDir, databaseUrl, poolSize: 2 })).rejects.toThrow(/0005_encrypted_secrets failed.*1 webhook endpoint\(s\) and 1 recorded answer\(s\) hold plaintext secrets/);

    const box = new SecretBox(generateSecretKey());
    const db = await openDb({ dataDir, databaseUrl, poolSize: 2, secrets: box });
    try {
      const row = await db.kysely.selectFrom('webhook_endpoints').selectAll().where('id', '=', 'we_old').executeTakeFirstOrThrow();
      expect(isSealed(row.secret)).toBe(true);
      expect(box.open(row.secret, endpointSecretAad('we_old'))).toBe(plain);
      expect(box.open(row.previous_secret ?? '', endpointSecretAad('we_old'))).toBe(previous);
      const answer = await db.kysely.selectFrom('idempotency_keys').select('body').executeTakeFirstOrThrow();
      expect(box.open(answer.body ?? '', recordedAnswerAad('key_1', 'k1'))).toBe(body);
      const migrator = new Migrator({ db: db.kysely, provider: migrationProvider(db.engine) });
      expect((await migrator.getMigrations()).every((m) => m.executedAt !== undefined)).toBe(true);
      if (databaseUrl) expectAbsent(await pgDump(databaseUrl), [plain, previous], 'pg_dump after 0005');
    } finally {
      await db.close();
    }
    if (!databaseUrl) {
      const file = path.join(dataDir, 'svc.db');
      const reopened = await openDb({ dataDir, databaseUrl: null });
      // A checkpoint folds the WAL into the file; VACUUM rewrites it, dropping freed pages that still hold old text.
      await sql`vacuum`.execute(reopened.kysely);
      await reopened.close();
      expectAbsent(Buffer.concat([fs.readFileSync(file), fs.existsSync(`${file}-wal`) ? fs.readFileSync(`${file}-wal`) : Buffer.alloc(0)]), [plain, previous], 'svc.db after 0005');
    }
  });
});

describe('deployment key of a real svc process', () => {
  let rx: Receiver;
  beforeAll(async () => {
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx.close();
  });

  it('sandbox: generates the key once (0600) and reuses it; a wrong key and production without one refuse to start; svc secrets rotate-key re-encrypts', async () => {
    const dir = tmpDir();
    fs.copyFileSync(inject('sqliteTemplate'), path.join(dir, 'svc.db'));
    const env = { SVC_WEBHOOK_ALLOW_PRIVATE: 'on', SVC_SECRET_KEY: '' };

    const first = await serveSvc(dir, env);
    let endpointId: string;
    let shown: string;
    let apiKey: string;
    try {
      const file = keyFilePath(dir);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.readFileSync(file, 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
      expect(first.output()).toContain(`secret key:            ${file} (generated now`);
      apiKey = /svc_test_[A-Za-z0-9]{32}/.exec(first.output())?.[0] ?? '';
      const res = await fetch(`${first.base}/v1/webhooks`, { method: 'POST', headers: { ...auth(apiKey), 'content-type': 'application/json' }, body: JSON.stringify({ url: `${rx.url}/proc`, tier: 'confirmed' }) });
      expect(res.status).toBe(201);
      ({ id: endpointId, secret: shown } = (await res.json()).data);
    } finally {
      await first.stop();
    }
    const keyHex = fs.readFileSync(keyFilePath(dir), 'utf8');
    const raw = Buffer.concat([fs.readFileSync(path.join(dir, 'svc.db')), fs.existsSync(path.join(dir, 'svc.db-wal')) ? fs.readFileSync(path.join(dir, 'svc.db-wal')) : Buffer.alloc(0)]);
    expectAbsent(raw, [shown], 'svc.db of a real process');

    const testSend = async (base: string): Promise<void> => {
      const before = rx.requests.length;
      const res = await fetch(`${base}/v1/webhooks/${endpointId}/test`, { method: 'POST', headers: auth(apiKey) });
      expect(res.status).toBe(200);
      expect((await res.json()).data.delivered).toBe(true);
      const req = rx.requests[before];
      expect(verifySignature(String(req.headers['x-svc-signature']), req.body, shown).ok).toBe(true);
    };

    const second = await serveSvc(dir, env);
    try {
      expect(fs.readFileSync(keyFilePath(dir), 'utf8')).toBe(keyHex);
      expect(second.output()).toContain(`secret key:            ${keyFilePath(dir)}\n`);
      await testSend(second.base);
    } finally {
      await second.stop();
    }

    const wrong = await svc(['serve'], { SVC_DATA_DIR: dir, SVC_SECRET_KEY: generateSecretKey().toHex() });
    expect(wrong.code).toBe(2);
    expect(wrong.stderr.trim().split('\n')).toHaveLength(1);
    expect(wrong.stderr).toMatch(/^svc: invalid configuration: SVC_SECRET_KEY \(key id [0-9a-f]{16}\) is not the key this database's secrets are encrypted with/);

    const production = await svc(['serve'], { SVC_DATA_DIR: tmpDir(), SVC_ENV: 'production' });
    expect(production.code).toBe(2);
    expect(production.stderr).toBe('svc: invalid configuration: SVC_SECRET_KEY is required in production: 32 bytes as 64 hex characters (openssl rand -hex 32); it encrypts webhook secrets at rest\n');

    const help = await svc(['secrets', '--help'], { SVC_DATA_DIR: dir });
    expect(help).toMatchObject({ code: 0 });
    expect(help.stdout).toMatch(/^usage: svc secrets/);
    expect((await svc(['secrets', 'rotate-key', '--help'], { SVC_DATA_DIR: dir })).stdout).toMatch(/rotate-key --new-key/);
    for (const args of [['secrets', 'rotate-key'], ['secrets', 'rotate-key', '--new-key', 'c0ffee'], ['secrets', 'rotate-key', '--bogus'], ['secrets', 'shred']]) {
      const bad = await svc(args, { SVC_DATA_DIR: dir });
      expect(bad.code, args.join(' ')).toBe(2);
      expect(bad.stderr.trim().split('\n'), args.join(' ')).toHaveLength(1);
      expect(bad.stderr).not.toMatch(/at .*\.ts:\d+/);
    }
    expect(fs.readFileSync(keyFilePath(dir), 'utf8')).toBe(keyHex);
    // A key given without --new-key is a usage error that never repeats the key.
    const stray = generateSecretKey().toHex();
    const strayRun = await svc(['secrets', 'rotate-key', stray], { SVC_DATA_DIR: dir });
    expect(strayRun.code).toBe(2);
    expect(strayRun.stderr).not.toContain(stray);

    const next = generateSecretKey();
    const rotated = await svc(['secrets', 'rotate-key', '--new-key', next.toHex()], { SVC_DATA_DIR: dir });
    expect(rotated.code, rotated.stderr).toBe(0);
    expect(rotated.stdout).toMatch(new RegExp(`Re-encrypted 1 webhook secret\\(s\\) and \\d+ recorded answer\\(s\\) under key id ${next.id}`));
    expect(rotated.stdout).not.toContain(next.toHex());
    expect(fs.readFileSync(keyFilePath(dir), 'utf8')).toBe(`${next.toHex()}\n`);
    expect(fs.statSync(keyFilePath(dir)).mode & 0o777).toBe(0o600);

    const third = await serveSvc(dir, env);
    try {
      await testSend(third.base);
    } finally {
      await third.stop();
    }
    // Thirteen real processes one after another: 30 s was not enough on a slow VM.
  }, 120_000);
});
