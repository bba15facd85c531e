import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyPrefix } from '../src/config.js';
import { isoTime } from '../src/domain/clock.js';
import { openDb, type Db } from '../src/store/sql/db.js';
import { EventLog, type NewEvent } from '../src/store/events/events.js';
import { KeyRepo, principalOf } from '../src/store/accounts/keys.js';
import { WebhookDispatcher } from '../src/webhooks/dispatcher.js';
import { createWebhooks } from '../src/webhooks/index.js';
import { engines, freshDb, ManualClock, testConfig } from './helpers.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';

describe.skipIf(!engines().includes('postgres'))('PostgreSQL: dispatchers racing on one database', () => {
  let db: Db;
  let db2: Db;
  let rx: Receiver;

  beforeAll(async () => {
    const fresh = await freshDb('postgres');
    db = fresh.db;
    db2 = await openDb({ dataDir: fresh.dataDir, databaseUrl: fresh.databaseUrl, poolSize: 5 });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await rx.close();
    await db2.close();
    await db.close();
  });

  it('never send one attempt twice over 200 due deliveries and their retries', async () => {
    const clock = new ManualClock(Date.now());
    const config = testConfig('/tmp', { webhookAllowPrivate: true, webhookTimeoutMs: 2000 });
    const events = new EventLog(db);
    const wh = createWebhooks({ db, config, clock, events });
    const { record } = await new KeyRepo(db, config.env, keyPrefix(config.env)).create({ name: 'race', plan: 'internal', products: ['live'] }, new Date(clock.now()));
    const owner = principalOf(record);
    // Two endpoints answer 200 a little slowly, two answer 500 (so their retries race too).
    for (const path of ['/slow/20/a', '/slow/20/b', '/status/500/c', '/status/500/d']) {
      await wh.manage.create(owner, { url: `${rx.url}${path}`, tier: 'confirmed' });
    }
    const c = await db.kysely.selectFrom('competitions').innerJoin('competitors', 'competitors.competition_id', 'competitions.id').selectAll('competitions').select('competitors.entity_id').where('competitions.sport', '=', 'soccer').limit(1).executeTakeFirstOrThrow();
    const row = (): NewEvent => ({
      type: 'score',
      tier: 'confirmed',
      game_id: `soccer_${c.n}`,
      competition_id: c.id,
      sport: 'soccer',
      league: c.league,
      season_id: c.season_id,
      team: c.entity_id.split(':').pop() ?? 'X',
      event_type: 'goal',
      points: 1,
      clock: null,
      ts: isoTime(clock.now()),
      agreement: 1,
      reporters: 3,
      latency_ms: 500, probability: 1,
      provisional_id: null,
      retracted_id: null,
    });
    await events.append(Array.from({ length: 50 }, row));

    // Small batches and caps keep both busy long enough to really interleave; both pools are warm.
    const errors: unknown[] = [];
    const log = { error: (obj: object) => errors.push(obj) };
    const a = new WebhookDispatcher({ db, config, clock }, { claimBatch: 8, perEndpointConcurrency: 4, log });
    const b = new WebhookDispatcher({ db: db2, config, clock }, { claimBatch: 8, perEndpointConcurrency: 4, log });
    await Promise.all([db.kysely.selectFrom('meta').select('key').execute(), db2.kysely.selectFrom('meta').select('key').execute()]);
    const [na, nb] = await Promise.all([a.runOnce(), b.runOnce()]);
    expect(na + nb).toBe(200);
    expect(na).toBeGreaterThan(0);
    expect(nb).toBeGreaterThan(0);

    clock.advance(60_000);
    const [ra, rb] = await Promise.all([a.runOnce(), b.runOnce()]);
    expect(ra + rb).toBe(100);
    await Promise.all([a.stop(), b.stop()]);

    expect(errors).toEqual([]);
    const pairs = rx.requests.map((r) => `${String(r.headers['x-svc-delivery-id'])}#${String(r.headers['x-svc-attempt'])}`);
    expect(pairs).toHaveLength(300);
    expect(new Set(pairs).size).toBe(300);
    expect(new Set(rx.header('x-svc-delivery-id')).size).toBe(200);
    const statuses = await db.kysely.selectFrom('webhook_deliveries').select(['status', 'attempts']).execute();
    expect(statuses.filter((s) => s.status === 'delivered')).toHaveLength(100);
    expect(statuses.filter((s) => s.status === 'pending' && s.attempts === 2)).toHaveLength(100);
    const logged = await db.kysely.selectFrom('webhook_attempts').select('delivery_id').execute();
    expect(logged).toHaveLength(300);
  });
});
