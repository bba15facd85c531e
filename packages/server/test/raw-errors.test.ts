import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listen, testApp, type TestApp } from './helpers.js';

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `bytes` on a fresh TCP connection and parses the first response the server sends. */
export function rawRequest(port: number, bytes: string | Buffer, opts: { end?: boolean } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => (opts.end === false ? socket.write(bytes) : socket.end(bytes)));
    let out = Buffer.alloc(0);
    const finish = () => {
      const text = out.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split === -1) return reject(new Error(`no response: ${JSON.stringify(text.slice(0, 200))}`));
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).trim().toLowerCase()] = l.slice(i + 1).trim();
      }
      let body = text.slice(split + 4);
      if (headers['content-length']) body = Buffer.from(body).subarray(0, Number(headers['content-length'])).toString('utf8');
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
      socket.destroy();
    };
    socket.on('data', (d: Buffer) => {
      out = Buffer.concat([out, d]);
      const text = out.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const len = /content-length:\s*(\d+)/i.exec(text.slice(0, split));
      if (split !== -1 && len && out.length - Buffer.byteLength(text.slice(0, split + 4)) >= Number(len[1])) finish();
    });
    socket.on('close', () => (out.length > 0 ? finish() : reject(new Error('closed without a response'))));
    socket.on('error', () => undefined);
  });
}

/** The documented error body with X-Request-Id naming the same request. */
export function expectDocumentedError(res: RawResponse, status: number, type: string, code?: string): void {
  expect(res.status, res.body).toBe(status);
  expect(res.headers['content-type'], res.body).toMatch(/^application\/json/);
  const body = JSON.parse(res.body) as { error: Record<string, unknown> };
  expect(Object.keys(body)).toEqual(['error']);
  expect(body.error).toMatchObject({ type, ...(code ? { code } : {}) });
  expect(typeof body.error.message).toBe('string');
  expect(body.error.request_id).toMatch(/^req_/);
  for (const k of Object.keys(body.error)) expect(['type', 'code', 'message', 'param', 'request_id']).toContain(k);
  expect(res.headers['x-request-id']).toBe(body.error.request_id);
}

describe('errors the server writes outside the route handlers', () => {
  let t: TestApp;
  let port: number;
  let key: string;
  beforeAll(async () => {
    t = await testApp();
    key = await t.key();
    port = (await listen(t)).port;
  });
  afterAll(async () => t.close());

  const get = (path: string, extra = '') => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n${extra}Connection: close\r\n\r\n`;

  it('answers a path id over the router limit with the documented body', async () => {
    for (const path of [`/v1/teams/${'a'.repeat(600)}`, `/v1/competitions/${'x'.repeat(513)}/plays`, `/v1/webhooks/${'w'.repeat(5000)}`]) {
      const res = await rawRequest(port, get(path));
      expectDocumentedError(res, 414, 'invalid_request', 'uri_too_long');
    }
  });

  it('judges ids up to the router limit by their schema: 404 or 400, never the router', async () => {
    expectDocumentedError(await rawRequest(port, get(`/v1/teams/team:wc:${'a'.repeat(60)}`)), 404, 'not_found');
    expectDocumentedError(await rawRequest(port, get(`/v1/webhooks/${'w'.repeat(150)}`)), 404, 'not_found');
    expectDocumentedError(await rawRequest(port, get(`/v1/webhooks/${'w'.repeat(300)}`)), 400, 'invalid_request');
  });

  it('answers a 20 kB query string and oversized headers with 431 and the documented body', async () => {
    expectDocumentedError(await rawRequest(port, get(`/v1/teams?league=${'a'.repeat(20_000)}`)), 431, 'invalid_request', 'headers_too_large');
    expectDocumentedError(await rawRequest(port, get('/v1/teams', `X-Big: ${'b'.repeat(20_000)}\r\n`)), 431, 'invalid_request', 'headers_too_large');
  });

  it('answers requests Node cannot parse with 400 and the documented body', async () => {
    const cases = [
      'GET /v1/teams HTTP/1.1\r\nHost: x\r\nBad Header Line\r\n\r\n',
      'GET /v1/teams HTTP/9.9\r\nHost: x\r\n\r\n',
      'G@T /v1/teams HTTP/1.1\r\nHost: x\r\n\r\n',
      'POST /v1/reports HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello',
      'POST /v1/reports HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
      '\x00\x01\x02\x03\r\n\r\n',
    ];
    for (const bytes of cases) expectDocumentedError(await rawRequest(port, bytes), 400, 'invalid_request', 'malformed_request');
  });

  it('answers a malformed percent-encoding in the path with the documented body', async () => {
    expectDocumentedError(await rawRequest(port, get('/v1/teams/%E0%A4%A')), 400, 'invalid_request');
    expectDocumentedError(await rawRequest(port, get('/v1/teams?league=%zz')), 400, 'invalid_request');
  });

  it('answers bad JSON and wrong media types with the documented body', async () => {
    const post = (body: string, type = 'application/json') =>
      `POST /v1/reports HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: ${type}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
    expectDocumentedError(await rawRequest(port, post('{"game_id":')), 400, 'invalid_request', 'invalid_json');
    expectDocumentedError(await rawRequest(port, post('')), 400, 'invalid_request', 'invalid_json');
    expectDocumentedError(await rawRequest(port, post('{"a":1}', 'text/plain')), 415, 'unsupported_media_type');
  });
});
