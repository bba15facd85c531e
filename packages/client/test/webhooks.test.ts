import fs from 'node:fs';
import http from 'node:http';
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

  it('verifies every delivery, and both secrets after a rotation', async () => {
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

describe('verifyWebhook takes the signature as node:http, fetch and frameworks hand it over', () => {
  let s: LiveSvc;
  let server: http.Server;
  let url = '';
  /** What the receiver made of each request: the event id, or the failure reason per form. */
  const seen: { id?: string; forms?: Record<string, string> }[] = [];
  let secret = '';

  beforeAll(async () => {
    s = await liveSvc({ config: { webhookAllowPrivate: true, webhookTimeoutMs: 2000 } });
    // A receiver as a user writes one with node:http under `strict`: no casts on req.headers.
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const raw = Buffer.concat(chunks);
        const forms = {
          headers: req.headers,
          value: req.headers['x-svc-signature'],
          distinct: req.headersDistinct['x-svc-signature'],
          fetchHeaders: new Headers(Object.entries(req.headersDistinct).flatMap(([k, vs]) => (vs ?? []).map((v): [string, string] => [k, v]))),
        };
        const outcome: Record<string, string> = {};
        for (const [name, source] of Object.entries(forms)) {
          outcome[name] = await verifyWebhook(raw, source, secret).then(
            (ev) => ev.id,
            (e: unknown) => (e instanceof WebhookVerificationError ? e.reason : String(e)),
          );
        }
        seen.push({ forms: outcome });
        const ok = Object.values(outcome).every((v) => v.startsWith('evt_'));
        res.writeHead(ok ? 200 : 400).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const addr = server.address();
    if (!addr || typeof addr === 'string') throw new Error('no port');
    url = `http://127.0.0.1:${addr.port}`;
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await s.close();
  });

  it('req.headers, its X-SVC-Signature entry (string | string[] | undefined), headersDistinct and a Headers: a real delivery verifies in each form', async () => {
    const ep = await s.svc.webhooks.create({ url: `${url}/hook`, tier: 'confirmed' });
    secret = ep.secret;
    const result = await s.svc.webhooks.test(ep.id);
    expect(result).toMatchObject({ delivered: true, status_code: 200 });
    expect(seen).toHaveLength(1);
    const forms = seen[0].forms ?? {};
    expect(Object.keys(forms)).toEqual(['headers', 'value', 'distinct', 'fetchHeaders']);
    expect(new Set(Object.values(forms)).size).toBe(1);
    expect(forms.headers).toMatch(/^evt_test_/);
  });

  it('without the header each form is missing_header; a forged one is signature_mismatch', async () => {
    seen.length = 0;
    secret = 'whsec_receiver';
    expect((await fetch(`${url}/hook`, { method: 'POST', body: '{"id":"evt_1"}' })).status).toBe(400);
    const forged = `t=${now()},v1=${'0'.repeat(64)}`;
    expect((await fetch(`${url}/hook`, { method: 'POST', body: '{"id":"evt_1"}', headers: { 'X-SVC-Signature': forged } })).status).toBe(400);
    expect(seen.map((x) => x.forms)).toEqual([
      { headers: 'missing_header', value: 'missing_header', distinct: 'missing_header', fetchHeaders: 'missing_header' },
      { headers: 'signature_mismatch', value: 'signature_mismatch', distinct: 'signature_mismatch', fetchHeaders: 'signature_mismatch' },
    ]);
  });

  it('a header sent twice (split by a proxy) reads as one list, in every form', async () => {
    seen.length = 0;
    secret = 'whsec_receiver';
    const body = JSON.stringify({ id: 'evt_000000000042', type: 'score', schema: 'svc.event.v1' });
    const header = await generateTestHeaderString({ payload: body, secret: [secret, 'whsec_old'] });
    const [t, v1a, v1b] = header.split(',');
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${url}/hook`, { method: 'POST' }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.setHeader('X-SVC-Signature', [`${t},${v1b}`, v1a]);
      req.end(body);
    });
    expect(status).toBe(200);
    expect(seen[0].forms).toEqual({ headers: 'evt_000000000042', value: 'evt_000000000042', distinct: 'evt_000000000042', fetchHeaders: 'evt_000000000042' });
  });

  it('a plain object is searched case-insensitively; an empty list or object is missing_header', async () => {
    const body = JSON.stringify({ id: 'evt_000000000043', type: 'score', schema: 'svc.event.v1' });
    const header = await generateTestHeaderString({ payload: body, secret: SECRET });
    for (const source of [{ 'X-Svc-Signature': header }, { 'x-svc-signature': [header] }, new Headers({ 'X-SVC-SIGNATURE': header }), [header]]) {
      expect((await verifyWebhook(body, source, SECRET)).id).toBe('evt_000000000043');
    }
    for (const source of [{}, { 'x-other': header }, [], null, undefined, '']) {
      await expect(verifyWebhook(body, source, SECRET)).rejects.toMatchObject({ reason: 'missing_header' });
    }
  });
});
