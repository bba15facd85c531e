import fs from 'node:fs';
import path from 'node:path';
import Stripe from 'stripe';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startReceiver, type Receiver } from '../../server/test/webhook-receiver.js';
import {
  SchemaMismatchError,
  WebhookVerificationError,
  generateTestHeaderString,
  verifyWebhook,
  webhookSignatureFailure,
  type WireEvent,
} from '../src/index.js';
import { goalPlays, liveSvc, VECTORS_DIR, type LiveSvc } from './support.js';

interface Vector {
  name: string;
  secret: string;
  now: number;
  tolerance_s: number;
  body: string;
  header: string;
  valid: boolean;
  reason: string | null;
}
const vectors: Vector[] = JSON.parse(fs.readFileSync(path.join(VECTORS_DIR, 'webhooks.json'), 'utf8')).vectors;
const stripe = new Stripe('sk_test_unused');
const SECRET = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8';
const now = () => Math.floor(Date.now() / 1000);

describe('verifyWebhook against the cross-language vectors', () => {
  it('has vectors to check', () => expect(vectors.length).toBeGreaterThanOrEqual(10));

  it.each(vectors.map((v) => [v.name, v] as const))('%s', async (_name, v) => {
    const opts = { toleranceS: v.tolerance_s, now: v.now };
    expect(await webhookSignatureFailure(v.body, v.header, v.secret, opts)).toBe(v.reason);
    for (const body of [v.body, new TextEncoder().encode(v.body)]) {
      if (v.valid) {
        const ev = await verifyWebhook(body, v.header, v.secret, opts);
        expect(ev).toEqual(JSON.parse(v.body));
      } else {
        const err = await verifyWebhook(body, v.header, v.secret, opts).catch((e: unknown) => e);
        expect(err).toBeInstanceOf(WebhookVerificationError);
        expect(err).toMatchObject({ reason: v.reason });
      }
    }
  });
});

describe('verifyWebhook against headers made by Stripe’s SDK (same t=,v1= HMAC-SHA256 scheme)', () => {
  const body = JSON.stringify(JSON.parse(fs.readFileSync(path.join(VECTORS_DIR, 'events.json'), 'utf8')).wire[0]);

  it('accepts a fresh header and returns the event', async () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET });
    const ev = await verifyWebhook(body, header, SECRET, { toleranceS: 300 });
    expect(ev).toEqual(JSON.parse(body));
    expect(ev.schema).toBe('svc.event.v1');
  });

  it('signs exactly as Stripe does (generateTestHeaderString is interchangeable)', async () => {
    const timestamp = 1_700_000_123;
    expect(await generateTestHeaderString({ payload: body, secret: SECRET, timestamp })).toBe(
      stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp }),
    );
  });

  it('rejects a header over the tolerance, a wrong secret, a tampered body, a missing t or v1', async () => {
    const old = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: now() - 301 });
    const fresh = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET });
    const cases: [string, string, string, string][] = [
      [body, old, SECRET, 'timestamp_out_of_tolerance'],
      [body, fresh, 'whsec_other', 'signature_mismatch'],
      [body.replace('"points":1', '"points":2'), fresh, SECRET, 'signature_mismatch'],
      [body, fresh.replace(/^t=\d+,/, ''), SECRET, 'missing_timestamp'],
      [body, fresh.replace(/,v1=.*$/, ''), SECRET, 'missing_signature'],
      [body, '', SECRET, 'missing_header'],
    ];
    for (const [b, h, s, reason] of cases) {
      await expect(verifyWebhook(b, h, s), reason).rejects.toMatchObject({ name: 'WebhookVerificationError', reason });
    }
  });

  it('accepts either secret while two v1 are present (rotation)', async () => {
    const header = await generateTestHeaderString({ payload: body, secret: ['whsec_new', 'whsec_old'] });
    await expect(verifyWebhook(body, header, 'whsec_new')).resolves.toBeDefined();
    await expect(verifyWebhook(body, header, 'whsec_old')).resolves.toBeDefined();
    await expect(verifyWebhook(body, header, 'whsec_neither')).rejects.toBeInstanceOf(WebhookVerificationError);
  });

  it('throws SchemaMismatchError for a correctly signed event of another schema', async () => {
    const v2 = body.replace('svc.event.v1', 'svc.event.v2');
    const header = await generateTestHeaderString({ payload: v2, secret: SECRET });
    await expect(verifyWebhook(v2, header, SECRET)).rejects.toBeInstanceOf(SchemaMismatchError);
  });
});

describe('verifyWebhook on deliveries the server itself makes to a real receiver', () => {
  let s: LiveSvc;
  let rx: Receiver;
  beforeAll(async () => {
    s = await liveSvc({ config: { webhookAllowPrivate: true, webhookTimeoutMs: 2000 } });
    rx = await startReceiver();
    s.t.services.webhooks.dispatcher.start();
  });
  afterAll(async () => {
    await s.t.services.webhooks.dispatcher.stop();
    await rx.close();
    await s.close();
  });

  it('verifies every delivery, and both secrets after a rotation', { timeout: 60_000 }, async () => {
    const ep = await s.svc.webhooks.create({ url: `${rx.url}/hook`, tier: 'confirmed', sports: ['soccer'] });
    expect(ep.secret).toMatch(/^whsec_/);
    const game = (await s.svc.games.list({ sport: 'soccer', status: 'scheduled', limit: 1 })).data[0];
    const competitor = game.competitors[0].entity_id;
    await s.svc.plays.create(game.competition_id, goalPlays(competitor, 2, Date.now()));
    await rx.waitFor((r) => r.requests.length >= 2, 30_000, 'two deliveries');

    const rotated = await s.svc.webhooks.rotateSecret(ep.id);
    expect(rotated.secret).not.toBe(ep.secret);
    await s.svc.plays.create(game.competition_id, goalPlays(competitor, 1, Date.now() + 60_000));
    await rx.waitFor((r) => r.requests.length >= 3, 30_000, 'a delivery after the rotation');

    for (const req of rx.requests) {
      const header = String(req.headers['x-svc-signature']);
      const ev = await verifyWebhook(req.body, header, ep.secret);
      expect(ev.id).toBe(req.headers['x-svc-event-id']);
      expect(ev.type).toBe('score');
      await expect(verifyWebhook(req.body, header, 'whsec_wrong')).rejects.toMatchObject({ reason: 'signature_mismatch' });
      await expect(verifyWebhook(`${req.body} `, header, ep.secret)).rejects.toMatchObject({ reason: 'signature_mismatch' });
    }
    const last = rx.requests[2];
    const wire: WireEvent = await verifyWebhook(Buffer.from(last.body), String(last.headers['x-svc-signature']), rotated.secret).then((ev) => {
      if (ev.type === 'test') throw new Error('expected a score event');
      return ev;
    });
    expect(wire.game_id).toBe(game.id);
    expect(String(last.headers['x-svc-signature']).match(/v1=/g)).toHaveLength(2);
  });
});
