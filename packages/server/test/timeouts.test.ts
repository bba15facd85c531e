import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.js';
import { connect } from './ws-client.js';
import { expectDocumentedError, rawRequest } from './raw-http.js';
import { listen, sleep, testApp, type TestApp } from './helpers.js';

/** Resolves when the server closes the connection, with what it sent before closing. */
function closedBy(socket: net.Socket): Promise<string> {
  return new Promise((resolve) => {
    let out = '';
    socket.on('data', (d: Buffer) => (out += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => resolve(out));
  });
}

describe('slow and idle connections', () => {
  let t: TestApp;
  let port: number;
  let key: string;
  beforeAll(async () => {
    // Short on purpose: the test waits for the server to give up, never for a clock.
    t = await testApp({ config: { headersTimeoutMs: 300, requestTimeoutMs: 600, keepAliveTimeoutMs: 300, connectionTimeoutMs: 1000 } });
    key = await t.key();
    port = (await listen(t)).port;
  });
  afterAll(async () => t.close());

  it('answers a body announced at 1,000 bytes but sent as 10 with 408 and closes', async () => {
    const head = `POST /v1/reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n`;
    const res = await rawRequest(port, `${head}{"game_id"`, { end: false });
    expectDocumentedError(res, 408, 'invalid_request', 'request_timeout');
  });

  it('answers headers that never finish with 408 and closes', async () => {
    const res = await rawRequest(port, `GET /v1/teams HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n`, { end: false });
    expectDocumentedError(res, 408, 'invalid_request', 'request_timeout');
  });

  it('closes a connection that never sends a byte, and an idle keep-alive connection', async () => {
    const silent = net.connect(port, '127.0.0.1');
    await closedBy(silent);
    const idle = net.connect(port, '127.0.0.1', () => idle.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
    const answered = await closedBy(idle);
    expect(answered).toMatch(/^HTTP\/1\.1 200/);
    expect(answered).toMatch(/keep-alive/i);
  });

  it('leaves an open WebSocket alone past every HTTP timeout', async () => {
    const c = await connect(`ws://127.0.0.1:${port}/v1/stream`, key);
    // Longer than every HTTP timeout, the idle-socket one included, and shorter than a heartbeat.
    await sleep(1500);
    c.send({ op: 'ping' });
    await c.until((x) => x.frames.some((f) => f.type === 'pong'), 5000, 'pong');
    expect(c.closeCode).toBeNull();
    c.ws.close();
  });
});

describe('timeout configuration', () => {
  it('has defaults, reads the environment and refuses contradictions in one line', () => {
    const d = loadConfig({});
    expect(d).toMatchObject({ headersTimeoutMs: 10_000, requestTimeoutMs: 30_000, keepAliveTimeoutMs: 65_000, connectionTimeoutMs: 120_000 });
    expect(loadConfig({ SVC_REQUEST_TIMEOUT_MS: '5000', SVC_HEADERS_TIMEOUT_MS: '2000' })).toMatchObject({ requestTimeoutMs: 5000, headersTimeoutMs: 2000 });
    expect(() => loadConfig({ SVC_REQUEST_TIMEOUT_MS: '0' })).toThrow(/SVC_REQUEST_TIMEOUT_MS/);
    expect(() => loadConfig({ SVC_HEADERS_TIMEOUT_MS: 'soon' })).toThrow(/SVC_HEADERS_TIMEOUT_MS/);
    expect(() => loadConfig({ SVC_REQUEST_TIMEOUT_MS: '5000', SVC_HEADERS_TIMEOUT_MS: '6000' })).toThrow(/SVC_HEADERS_TIMEOUT_MS.*SVC_REQUEST_TIMEOUT_MS/);
  });
});
