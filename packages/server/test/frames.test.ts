import http from 'node:http';
import type { Duplex } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { textFrame } from '../src/stream/frames.js';

// The gateway writes textFrame bytes straight to the TCP socket under `ws`; a real `ws` client
// must read them as the same text messages, at every length encoding (7-bit, 16-bit, 64-bit).
describe('textFrame', () => {
  const sizes = [0, 1, 125, 126, 127, 65_535, 65_536, 70_000];
  // Two-byte characters, so a frame's length is in bytes, not characters.
  const payloads = sizes.map((n) => Buffer.from('é'.repeat(Math.floor(n / 2)) + (n % 2 ? 'a' : '')));
  let server: http.Server;
  let url: string;

  beforeAll(async () => {
    const wss = new WebSocketServer({ noServer: true });
    server = http.createServer();
    server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      wss.handleUpgrade(req, socket, head, () => {
        socket.cork();
        for (const p of payloads) socket.write(textFrame(p));
        socket.uncork();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const addr = server.address();
    if (addr === null || typeof addr === 'string') throw new Error('not listening on TCP');
    url = `ws://127.0.0.1:${addr.port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('frames every length so that a ws client reads the same text messages', async () => {
    const ws = new WebSocket(url);
    const got: { text: string; isBinary: boolean }[] = [];
    await new Promise<void>((resolve, reject) => {
      ws.on('message', (data: WebSocket.RawData, isBinary: boolean) => {
        got.push({ text: Buffer.isBuffer(data) ? data.toString('utf8') : '', isBinary });
        if (got.length === payloads.length) resolve();
      });
      ws.once('error', reject);
      ws.once('close', (code) => reject(new Error(`closed ${code} after ${got.length} messages`)));
    });
    ws.terminate();
    expect(got.map((g) => g.isBinary)).toEqual(payloads.map(() => false));
    expect(got.map((g) => g.text)).toEqual(payloads.map((p) => p.toString('utf8')));
    expect(payloads.map((p) => p.length)).toEqual(sizes);
  });

  it('uses the shortest length encoding and never masks', () => {
    expect([...textFrame(Buffer.alloc(125)).subarray(0, 2)]).toEqual([0x81, 125]);
    expect([...textFrame(Buffer.alloc(126)).subarray(0, 4)]).toEqual([0x81, 126, 0, 126]);
    expect([...textFrame(Buffer.alloc(65_536)).subarray(0, 10)]).toEqual([0x81, 127, 0, 0, 0, 0, 0, 1, 0, 0]);
    expect(textFrame(Buffer.from('hi')).length).toBe(4);
  });
});
