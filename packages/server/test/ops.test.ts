import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../src/app.js';
import { auth, listen, testApp, until, type TestApp } from './helpers.js';
import { expectError } from './contract.js';
import { connect } from './ws-client.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format, the lines that matter here: `name{a="x",b="y"} value`. */
function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]] = l[2];
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** The sum of the samples of `name` whose labels include `labels` (0 when there are none). */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

interface Game {
  id: string;
  sport: string;
  competitors: { entity_id: string; role: string }[];
}

describe('operations endpoints', () => {
  let t: TestApp;
  let admin: string;
  let liveOnly: string;
  let base: string;
  let wsBase: string;
  let rx: Receiver;

  beforeAll(async () => {
    t = await testApp({ config: { webhookAllowPrivate: true, webhookTimeoutMs: 2000 } });
    const at = await listen(t);
    base = at.http;
    wsBase = at.ws;
    admin = await t.key({ products: ['admin'] });
    liveOnly = await t.key({ products: ['live', 'archive', 'report', 'source'] });
    rx = await startReceiver();
  });
  afterAll(async () => {
    await t.services.webhooks.dispatcher.stop();
    await rx.close();
    await t.close();
  });

  const scrape = async (key = admin) => {
    const res = await fetch(`${base}/metrics`, { headers: auth(key) });
    expect(res.status).toBe(200);
    return parseMetrics(await res.text());
  };

  describe('/livez, /healthz, /readyz', () => {
    it('answer 200 without a key while the node is up and its dependencies answer', async () => {
      expect(await (await fetch(`${base}/livez`)).json()).toEqual({ status: 'ok' });
      expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ ok: true });
      const ready = await fetch(`${base}/readyz`);
      expect(ready.status).toBe(200);
      expect(await ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', redis: 'not_configured', migrations: 'ok' } });
    });

    it('/readyz is 503 in the documented body when the schema is behind the code, and says nothing about the data', async () => {
      const other = await testApp();
      try {
        // As if this code shipped a migration the database has not run yet.
        await sql`delete from kysely_migration where name = (select max(name) from kysely_migration)`.execute(other.db.kysely);
        const res = await other.app.inject({ url: '/readyz', headers: auth('svc_test_not_even_a_real_key_0000') });
        expectError(res, 503, 'unavailable', { code: 'not_ready' });
        expect(res.json().error.message).toBe('Not ready: migrations failing.');
        // Liveness does not depend on the database: restarting would not fix the schema.
        expect((await other.app.inject({ url: '/livez' })).statusCode).toBe(200);
      } finally {
        await other.close();
      }
    });

    it('/readyz is 503 `draining` once the node drains, while /livez stays 200', async () => {
      const other = await testApp();
      try {
        other.services.lifecycle.startDraining(Date.now());
        expectError(await other.app.inject({ url: '/readyz' }), 503, 'unavailable', { code: 'draining' });
        expect((await other.app.inject({ url: '/livez' })).statusCode).toBe(200);
      } finally {
        await other.close();
      }
    });

    it('/readyz checks Redis when one is configured: ok when it answers, 503 when it does not', async () => {
      const redisUrl = inject('redisUrl');
      if (redisUrl) {
        const redis = new Redis(redisUrl);
        const up = await testApp({ config: { redisUrl } });
        try {
          const built = await buildApp({ config: up.services.config, db: up.db, clock: up.clock, redis });
          const res = await built.app.inject({ url: '/readyz' });
          expect(res.json()).toMatchObject({ status: 'ready', checks: { redis: 'ok' } });
          await built.app.close();
        } finally {
          await up.close();
          redis.disconnect();
        }
      }
      // Nothing listens on port 1: the check fails within its timeout instead of hanging.
      const dead = new Redis('redis://127.0.0.1:1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
      const down = await testApp();
      try {
        const built = await buildApp({ config: down.services.config, db: down.db, clock: down.clock, redis: dead });
        const res = await built.app.inject({ url: '/readyz' });
        expectError(res, 503, 'unavailable', { code: 'not_ready' });
        expect(res.json().error.message).toBe('Not ready: redis failing.');
        expect(res.body).not.toContain('127.0.0.1:1');
        await built.app.close();
      } finally {
        await down.close();
        dead.disconnect();
      }
    });
  });

  describe('/metrics', () => {
    it('needs a key with the admin product: 401 without or with a bad key, 403 without admin', async () => {
      const none = await t.app.inject({ url: '/metrics' });
      expectError(none, 401, 'authentication_error', { code: 'missing_api_key' });
      expectError(await t.app.inject({ url: '/metrics', headers: auth('svc_test_0000000000000000000000000000') }), 401, 'authentication_error');
      expectError(await t.app.inject({ url: '/metrics', headers: auth(liveOnly) }), 403, 'permission_error');
      const revoked = await t.key({ products: ['admin'] });
      const rec = (await t.app.inject({ url: '/v1/me', headers: auth(revoked) })).json().data;
      await t.services.keys.revoke(rec.id, new Date());
      t.services.auth.forget();
      expectError(await t.app.inject({ url: '/metrics', headers: auth(revoked) }), 401, 'authentication_error');
    });

    it('serves Prometheus text with the process defaults and every svc metric', async () => {
      const res = await fetch(`${base}/metrics`, { headers: auth(admin) });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await res.text();
      for (const name of [
        'svc_http_request_duration_seconds',
        'svc_stream_connections',
        'svc_events_total',
        'svc_webhook_deliveries_total',
        'svc_webhook_pending',
        'svc_confirmation_latency_seconds',
        'svc_settled_days_bytes',
        'process_cpu_seconds_total',
        'nodejs_eventloop_lag_seconds',
      ]) {
        expect(text).toContain(`# TYPE ${name} `);
      }
      expect(text).toContain('# TYPE svc_http_request_duration_seconds histogram');
      expect(text).toContain('# TYPE svc_confirmation_latency_seconds histogram');
    });

    it('labels requests with the route pattern, never the URL', async () => {
      const before = await scrape();
      await fetch(`${base}/v1/teams/team:wc:ARG`, { headers: auth(liveOnly) });
      await fetch(`${base}/v1/teams/team:wc:BRA`, { headers: auth(liveOnly) });
      await fetch(`${base}/v1/no/such/route/secret-token`, { headers: auth(liveOnly) });
      const after = await scrape();
      const count = (s: Sample[], labels: Record<string, string>) => value(s, 'svc_http_request_duration_seconds_count', labels);
      expect(count(after, { method: 'GET', route: '/v1/teams/:id', status: '200' }) - count(before, { method: 'GET', route: '/v1/teams/:id', status: '200' })).toBe(2);
      expect(count(after, { route: 'unmatched', status: '404' }) - count(before, { route: 'unmatched', status: '404' })).toBe(1);
      const routes = new Set(after.filter((s) => s.name.startsWith('svc_http_request_duration_seconds')).map((s) => s.labels.route));
      for (const r of routes) expect(r).not.toMatch(/ARG|BRA|secret-token/);
    });

    it('moves with real traffic: a stream connection, a confirmed event from three reporters, a webhook delivery', async () => {
      const before = await scrape();
      expect(value(before, 'svc_stream_connections')).toBe(0);

      const games = (await t.app.inject({ url: '/v1/games?date=today&sport=soccer&limit=1', headers: auth(liveOnly) })).json().data as Game[];
      const game = games[0];
      const team = String(game.competitors.find((c) => c.role === 'home')?.entity_id.split(':').pop());
      const hook = await t.app.inject({ method: 'POST', url: '/v1/webhooks', headers: auth(liveOnly), payload: { url: `${rx.url}/metrics-test`, tier: 'confirmed', sports: ['soccer'] } });
      expect(hook.statusCode, hook.body).toBe(201);

      const client = await connect(`${wsBase}/v1/stream?game=${game.id}`, liveOnly);
      await client.until((c) => c.frames.some((f) => f.type === 'subscribed'), 5000, 'subscribed');
      expect(value(await scrape(), 'svc_stream_connections')).toBe(1);

      const reporters = await Promise.all([1, 2, 3].map(() => t.key({ products: ['report'] })));
      for (const r of reporters) {
        const res = await fetch(`${base}/v1/reports`, { method: 'POST', headers: { ...auth(r), 'content-type': 'application/json' }, body: JSON.stringify({ game_id: game.id, team, points: 1 }) });
        expect(res.status).toBe(202);
      }
      await client.until((c) => c.events().some((e) => e.tier === 'confirmed'), 5000, 'confirmed event');
      const mid = await scrape();
      const delta = (name: string, labels: Record<string, string>) => value(mid, name, labels) - value(before, name, labels);
      expect(delta('svc_events_total', { sport: 'soccer', tier: 'provisional', type: 'score' })).toBe(1);
      expect(delta('svc_events_total', { sport: 'soccer', tier: 'confirmed', type: 'score' })).toBe(1);
      expect(delta('svc_confirmation_latency_seconds_count', { sport: 'soccer' })).toBe(1);
      expect(delta('svc_http_request_duration_seconds_count', { method: 'POST', route: '/v1/reports', status: '202' })).toBe(3);
      expect(value(mid, 'svc_webhook_pending')).toBe(1);

      await t.services.webhooks.dispatcher.runOnce();
      await rx.waitFor((r) => r.requests.some((q) => q.path === '/metrics-test'), 5000, 'the delivery');
      client.close();
      await until(() => t.gateway.connections === 0, 5000, 'the stream to close');
      const after = await scrape();
      expect(value(after, 'svc_webhook_deliveries_total', { outcome: 'delivered' }) - value(before, 'svc_webhook_deliveries_total', { outcome: 'delivered' })).toBe(1);
      expect(value(after, 'svc_webhook_pending')).toBe(0);
      expect(value(after, 'svc_stream_connections')).toBe(0);
    });

    it('keeps each app to its own registry', async () => {
      const other = await testApp();
      try {
        const key = await other.key({ products: ['admin'] });
        const own = parseMetrics((await other.app.inject({ url: '/metrics', headers: auth(key) })).body);
        // The traffic above went to `t` only.
        expect(value(own, 'svc_http_request_duration_seconds_count', { route: '/v1/reports' })).toBe(0);
        expect(value(own, 'svc_events_total')).toBe(0);
      } finally {
        await other.close();
      }
    });

    it('the Grafana dashboard in docs/ queries only metrics the service exposes', async () => {
      const text = await (await fetch(`${base}/metrics`, { headers: auth(admin) })).text();
      const exposed = new Set([...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]));
      const dashboard = JSON.parse(fs.readFileSync(path.resolve(import.meta.dirname, '../../../docs/grafana-dashboard.json'), 'utf8'));
      const exprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) => p.targets.map((t) => t.expr));
      const used = new Set(exprs.flatMap((e) => [...e.matchAll(/\b((?:svc|process|nodejs)_\w+)/g)].map((m) => m[1].replace(/_(bucket|count|sum)$/, ''))));
      expect(used.size).toBeGreaterThanOrEqual(8);
      for (const m of used) expect(exposed, m).toContain(m);
      for (const name of ['svc_http_request_duration_seconds', 'svc_stream_connections', 'svc_events_total', 'svc_webhook_deliveries_total', 'svc_webhook_pending', 'svc_confirmation_latency_seconds']) {
        expect(used).toContain(name);
      }
    });
  });

  describe("the README's tour", () => {
    it('every curl line answers 200 with the demo key, and the events example has goals', async () => {
      const readme = fs.readFileSync(path.resolve(import.meta.dirname, '../../../README.md'), 'utf8');
      const tour = readme.slice(readme.indexOf('## A short tour'), readme.indexOf('Lists return'));
      const urls = [...tour.matchAll(/curl -H "Authorization: Bearer \$KEY" "?(http:\/\/127\.0\.0\.1:8080[^"\s]+)"?/g)].map((m) => m[1]);
      expect(urls.length).toBeGreaterThanOrEqual(6);
      // The demo key's grants (packages/server/src/process/demo-key.ts).
      const demo = await t.key({ products: ['live', 'archive', 'report', 'source'], plan: 'pro' });
      for (const url of urls) {
        const res = await fetch(url.replace('http://127.0.0.1:8080', base), { headers: auth(demo) });
        expect(res.status, url).toBe(200);
        const body = await res.json();
        if (url.includes('/events')) {
          expect(body.data.filter((e: { event_type: string }) => /goal/.test(e.event_type)).length, url).toBeGreaterThan(0);
        }
      }
      expect(tour).toContain('npm run svc -- tail');
      expect(tour).not.toContain('wscat');
    });
  });
});
