import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { tmpDir, until } from './helpers.js';
import { serveSvc, type SvcProcess } from './process.js';

const KEY = `svc_test_${'Log0Leak1Probe2Key3'.padEnd(32, 'q')}`;
/** The random part: finding any 12 characters of it in the output is a leak. */
const KEY_BODY = KEY.slice('svc_test_'.length);


/** Sends raw bytes and resolves with whatever the server answers before closing. */
function raw(port: number, bytes: string): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(bytes));
    let out = '';
    socket.on('data', (d) => (out += d.toString()));
    socket.on('close', () => resolve(out));
    socket.on('error', () => resolve(out));
  });
}

describe('logs of a running server', () => {
  let svc: SvcProcess | null = null;
  afterAll(async () => {
    await svc?.kill();
  });

  it('never carry an API key, a webhook secret or a stream token: not in URLs, the banner, client errors or failures', { timeout: 120_000 }, async () => {
    const dataDir = tmpDir('svc-logs-');
    fs.copyFileSync(inject('sqliteTemplate'), path.join(dataDir, 'svc.db'));
    svc = await serveSvc(dataDir, {
      SVC_BOOTSTRAP_KEY: KEY,
      // The most talkative level: every line the server can write is in play.
      SVC_LOG_LEVEL: 'trace',
      SVC_WEBHOOK_ALLOW_PRIVATE: 'on',
    });
    const { base } = svc;
    const port = Number(new URL(base).port);
    const output = () => svc?.output() ?? '';
    const bearer = { authorization: `Bearer ${KEY}` };
    const encoded = KEY.replace(/_/g, '%5F');

    // The token in the query string, as browsers pass it, on many routes and in several spellings.
    const urls = [
      `/v1/me?access_token=${KEY}`,
      `/v1/teams?league=wc&access_token=${KEY}&limit=2`,
      `/v1/competitions?access_token=${encoded}`,
      `/v1/games?access%5Ftoken=${KEY}`,
      `/v1/stream?access_token=${KEY}`,
      `/v1/teams?limit=Infinity&access_token=${KEY}`,
      `/v1/nowhere?access_token=${KEY}`,
      `/v1/teams/${KEY}`,
      `/v1/teams/${encoded}`,
      `/v1/me?token=${KEY}`,
    ];
    for (const url of urls) await (await fetch(`${base}${url}`)).arrayBuffer();
    for (const url of urls) await (await fetch(`${base}${url}`, { headers: bearer })).arrayBuffer();

    // A webhook's secret, at creation and rotation.
    const created = await fetch(`${base}/v1/webhooks`, {
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:9/hook', tier: 'confirmed' }),
    });
    expect(created.status).toBe(201);
    const endpoint = ((await created.json()) as { data: { id: string; secret: string } }).data;
    const rotated = await fetch(`${base}/v1/webhooks/${endpoint.id}/rotate-secret`, { method: 'POST', headers: bearer });
    const newSecret = ((await rotated.json()) as { data: { secret: string } }).data.secret;
    // A body the server cannot parse, carrying the key.
    await (await fetch(`${base}/v1/reports`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: `{"ref":"${KEY}"` })).arrayBuffer();
    // Requests Node itself refuses, with the key in the request line and headers.
    await raw(port, `GET /v1/me?access_token=${KEY} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\nBad Header\r\n\r\n`);
    await raw(port, `GET /v1/me?access_token=${KEY} HTTP/1.1\r\nAuthorization: Bearer ${KEY}\r\nX-Long: ${'a'.repeat(20_000)}\r\n\r\n`);

    // A stream token: in the stream's query (an event stream, then a refused WebSocket upgrade),
    // and where it is refused (REST, a header, a misspelt parameter).
    const minted = await fetch(`${base}/v1/stream/tokens`, { method: 'POST', headers: { ...bearer, 'content-type': 'application/json' }, body: '{"ttl_s": 60}' });
    expect(minted.status).toBe(201);
    const token = ((await minted.json()) as { data: { token: string } }).data.token;
    const ctl = new AbortController();
    const sse = await fetch(`${base}/v1/stream?token=${token}&game=soccer_1`, { headers: { accept: 'text/event-stream' }, signal: ctl.signal }).catch(() => null);
    ctl.abort();
    void sse;
    for (const url of [`/v1/stream?token=${token}`, `/v1/me?token=${token}`, `/v1/games?tok=${token}`]) await (await fetch(`${base}${url}`)).arrayBuffer();
    await (await fetch(`${base}/v1/me`, { headers: { authorization: `Bearer ${token}` } })).arrayBuffer();
    await raw(port, `GET /v1/stream?token=${token}&bad=1 HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`);

    // The requests above were logged (the check below would pass on an empty log otherwise).
    await (await fetch(`${base}/healthz?marker=end`)).arrayBuffer();
    await until(() => output().includes('marker=end'), 10_000, 'the last request in the log');
    expect(output().includes('/v1/teams?league=wc&access_token=[redacted]&limit=2'), 'the redacted URL is logged').toBe(true);
    // Node's parse errors carry the raw request bytes (headers included) as a Buffer.
    expect(output().includes('rawPacket'), 'raw request bytes are logged').toBe(false);
    const tokenBody = token.split('.')[2];
    for (const secret of [KEY, KEY_BODY.slice(0, 12), endpoint.secret, newSecret, endpoint.secret.slice(6, 18), newSecret.slice(6, 18), token, tokenBody.slice(0, 12)]) {
      const at = output().indexOf(secret);
      expect(at, `secret found in the log: …${output().slice(Math.max(0, at - 200), at + 60)}…`).toBe(-1);
    }
  });
});
