import http from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Wall-clock arrival, ms. */
  at: number;
}

/**
 * How the receiver answers a request on `/`; other paths choose per request:
 * `/status/<code>`, `/redirect` (302 to /status/200), `/hang` (never answers), `/slow/<ms>` (200 after ms),
 * `/nul` (200 with a NUL character in the body).
 */
export type Mode = { status: number } | { redirect: true } | { hang: true } | { slowMs: number } | { nul: true };

export interface Receiver {
  url: string;
  port: number;
  requests: Received[];
  mode: Mode;
  /** Most requests on one path that were open (arrived, not yet closed) at the same time. */
  peakOpen(path: string): number;
  header(name: string): string[];
  waitFor(pred: (r: Receiver) => boolean, timeoutMs?: number, what?: string): Promise<void>;
  close(): Promise<void>;
}

function modeFor(path: string, dflt: Mode): Mode {
  const status = /^\/status\/(\d{3})/.exec(path);
  if (status) return { status: Number(status[1]) };
  if (path.startsWith('/redirect')) return { redirect: true };
  if (path.startsWith('/hang')) return { hang: true };
  if (path.startsWith('/nul')) return { nul: true };
  const slow = /^\/slow\/(\d+)/.exec(path);
  if (slow) return { slowMs: Number(slow[1]) };
  return dflt;
}

/** A real HTTP receiver on 127.0.0.1, port 0, that records every request it gets. */
export async function startReceiver(mode: Mode = { status: 200 }): Promise<Receiver> {
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const open = new Map<string, number>();
  const peak = new Map<string, number>();
  const r: Receiver = {
    url: '',
    port: 0,
    requests: [],
    mode,
    peakOpen: (path) => peak.get(path) ?? 0,
    header: (name) => r.requests.map((q) => String(q.headers[name.toLowerCase()] ?? '')),
    async waitFor(pred, timeoutMs = 10_000, what = 'condition') {
      const end = Date.now() + timeoutMs;
      while (!pred(r)) {
        if (Date.now() > end) throw new Error(`receiver: timed out waiting for ${what} (${r.requests.length} requests seen)`);
        await new Promise((res) => setTimeout(res, 10));
      }
    },
    async close() {
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
      await new Promise<void>((res) => server.close(() => res()));
    },
  };
  const server = http.createServer((req, res) => {
    const path = req.url ?? '/';
    open.set(path, (open.get(path) ?? 0) + 1);
    peak.set(path, Math.max(peak.get(path) ?? 0, open.get(path) ?? 0));
    res.on('close', () => open.set(path, (open.get(path) ?? 1) - 1));
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.requests.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const m = modeFor(path, r.mode);
      const answer = (status: number, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'text/plain', ...headers });
        res.end(status >= 200 && status < 300 ? 'ok' : `answer ${status}`);
      };
      if ('hang' in m) return;
      if ('nul' in m) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        return void res.end('ok\u0000done');
      }
      if ('redirect' in m) return answer(302, { location: `${r.url}/status/200` });
      if ('slowMs' in m) {
        const t = setTimeout(() => {
          timers.delete(t);
          answer(200);
        }, m.slowMs);
        timers.add(t);
        return;
      }
      answer(m.status);
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', () => res()));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('receiver: no TCP address');
  r.port = addr.port;
  r.url = `http://127.0.0.1:${r.port}`;
  return r;
}
