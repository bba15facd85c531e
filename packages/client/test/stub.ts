import http from 'node:http';
import type { Socket } from 'node:net';

/** One recorded request to the stub. */
export interface Hit {
  method: string;
  url: string;
  at: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export type Answer = { status: number; headers?: Record<string, string>; body?: unknown } | 'destroy' | 'hang';

/** A stub HTTP server of the test's own: answers from a script, records every attempt. */
export class Stub {
  hits: Hit[] = [];
  script: Answer[] = [];
  onHit: (() => void) | null = null;
  private server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.hits.push({ method: req.method ?? '', url: req.url ?? '', at: Date.now(), headers: req.headers, body: Buffer.concat(chunks).toString() });
      this.onHit?.();
      const answer = this.script.shift() ?? { status: 200, body: { data: { ok: true } } };
      if (answer === 'destroy') return req.socket.destroy();
      if (answer === 'hang') return;
      res.writeHead(answer.status, { 'content-type': 'application/json', 'x-request-id': `req_stub${this.hits.length}`, ...answer.headers });
      res.end(JSON.stringify(answer.body ?? {}));
    });
  });
  private sockets = new Set<Socket>();
  url = '';

  async start(): Promise<void> {
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    const addr = this.server.address();
    if (!addr || typeof addr === 'string') throw new Error('stub has no port');
    this.url = `http://127.0.0.1:${addr.port}`;
  }

  reset(): void {
    this.hits = [];
    this.script = [];
    this.onHit = null;
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
