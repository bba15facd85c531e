import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXCERPT_BYTES, WebhookSender } from '../src/webhooks/sender.js';

/**
 * The sender against a real local server: the response-size limit and the deadline over the
 * whole exchange (lookup, headers and body), which `docs/webhooks.md` "Outcomes" promises.
 */
describe('webhook sender limits', () => {
  let server: http.Server;
  let base = '';
  /** Whether the server finished writing each answer, by path, when its connection closed. */
  const finished = new Map<string, boolean>();
  const held: http.ServerResponse[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const path = req.url ?? '/';
      req.resume();
      res.on('close', () => finished.set(path, res.writableFinished));
      if (path === '/huge') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        // 8 MiB, far more than the socket buffers hold: it only finishes if the sender reads it all.
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let left = 128;
        const pump = (): void => {
          while (left > 0) {
            left -= 1;
            if (!res.write(chunk)) return void res.once('drain', pump);
          }
          res.end();
        };
        pump();
      } else if (path === '/stall') {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write('partial');
        held.push(res);
      } else {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('ok');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('the test server has no port');
    base = `http://127.0.0.1:${address.port}`;
  });
  afterAll(async () => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const post = (sender: WebhookSender, url: string) =>
    sender.send({ endpointId: 'whe_test', url, headers: { 'content-type': 'application/json' }, body: '{}' });

  it('keeps 1 KiB of a huge answer and drops the connection instead of reading the rest', async () => {
    const sender = new WebhookSender({ timeoutMs: 5_000, allowPrivate: true, connectionsPerEndpoint: 1 });
    try {
      const r = await post(sender, `${base}/huge`);
      expect(r).toMatchObject({ statusCode: 200, error: null });
      expect(r.excerpt).toBe('x'.repeat(EXCERPT_BYTES));
      await expect.poll(() => finished.get('/huge')).toBe(false);
    } finally {
      await sender.close();
    }
  });

  it('ends an answer whose body stalls at the deadline, keeping its status and what arrived', async () => {
    // The receiver shares this process's event loop: 1 s lets its status and first bytes arrive on a loaded machine.
    const sender = new WebhookSender({ timeoutMs: 1_000, allowPrivate: true, connectionsPerEndpoint: 1 });
    try {
      const r = await post(sender, `${base}/stall`);
      expect(r.statusCode).toBe(200);
      expect(r.error).toMatch(/^response body: timeout/);
      expect(r.excerpt).toBe('partial');
    } finally {
      await sender.close();
    }
  });

  it('counts a slow DNS lookup against the deadline and then sends nothing', async () => {
    const seen = finished.size;
    const lookup = () => new Promise<{ address: string; family: number }[]>((resolve) => setTimeout(() => resolve([{ address: '127.0.0.1', family: 4 }]), 600));
    const sender = new WebhookSender({ timeoutMs: 200, allowPrivate: true, connectionsPerEndpoint: 1, lookup });
    try {
      const port = new URL(base).port;
      const r = await post(sender, `http://receiver.test:${port}/ok`);
      expect(r).toMatchObject({ statusCode: null, excerpt: null });
      expect(r.error).toMatch(/^timeout/);
      expect(finished.size).toBe(seen);
    } finally {
      await sender.close();
    }
  });
});
