import net from 'node:net';
import { expect } from 'vitest';

export interface RawResponse {
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
