import net from 'node:net';
import crypto from 'node:crypto';
import WebSocket from 'ws';

export interface Frame {
  type: string;
  [k: string]: unknown;
}

/** A stream client that records every frame and can wait for a condition. */
export class StreamClient {
  readonly frames: Frame[] = [];
  closeCode: number | null = null;
  private waiters: (() => void)[] = [];
  constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.frames.push(JSON.parse(data.toString()));
      this.notify();
    });
    ws.on('close', (code) => {
      this.closeCode = code;
      this.notify();
    });
  }

  private notify() {
    for (const w of this.waiters.splice(0)) w();
  }

  events(): Frame[] {
    return this.frames.filter((f) => f.type === 'score' || f.type === 'score_retracted');
  }

  async until(pred: (c: StreamClient) => boolean, timeoutMs = 10_000, what = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; frames: ${JSON.stringify(this.frames.slice(-5))}, close ${this.closeCode}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  send(msg: unknown) {
    this.ws.send(JSON.stringify(msg));
  }

  close() {
    this.ws.close();
  }
}

export function connect(url: string, key?: string, opts: { localAddress?: string } = {}): Promise<StreamClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { ...(key ? { headers: { authorization: `Bearer ${key}` } } : {}), ...opts });
    const client = new StreamClient(ws);
    ws.once('open', () => resolve(client));
    ws.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode, body: JSON.parse(body) })));
    });
    ws.once('error', reject);
  });
}

/** An upgrade the stream authenticates but `ws` refuses (unsupported Sec-WebSocket-Version); resolves with the response. */
export async function badHandshake(port: number, key: string): Promise<string> {
  const sock = net.connect(port, '127.0.0.1');
  await new Promise<void>((r) => sock.once('connect', () => r()));
  sock.write(
    `GET /v1/stream HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 12\r\nAuthorization: Bearer ${key}\r\n\r\n`,
  );
  let response = '';
  sock.on('data', (c: Buffer) => (response += c.toString()));
  await new Promise<void>((r) => sock.once('close', () => r()));
  return response;
}
