import { afterAll, beforeAll, describe, it } from 'vitest';
import { expectDocumentedError, rawRequest } from './raw-http.js';
import { listen, testApp, type TestApp } from './helpers.js';

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
