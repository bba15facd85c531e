// Child of bench/stream.ts: holds many stream connections and timestamps every event frame.
// Protocols: svc (the gateway), bare (a plain ws server), eio (Socket.IO spoken over a plain ws
// client: the same client cost as the others) and sio (the official socket.io-client).
import crypto from 'node:crypto';
import net from 'node:net';
import WebSocket from 'ws';
import { io, type Socket } from 'socket.io-client';
import { num, onParent, str, toParent, now } from './stream-common.js';

type Protocol = 'svc' | 'bare' | 'eio' | 'sio' | 'sse';
const PROTOCOLS: readonly Protocol[] = ['svc', 'bare', 'eio', 'sio', 'sse'];
const LEAN = process.env.BENCH_CLIENT === 'lean';

interface Conn {
  close(): void;
}

let conns: Conn[] = [];
let events = 0;
let recv = new Float64Array(0);
let got = new Uint32Array(0);
let total = 0;
let extra = 0;
let closedEarly = 0;
const closeCodes = new Map<number, number>();
let waiter: (() => void) | null = null;
/** Set once the parent asks to close: closes after that are ours, not the server's. */
let closing = false;

function onEvent(i: number, at: number = now()): void {
  const c = got[i];
  if (c < events) {
    recv[i * events + c] = at;
    got[i] = c + 1;
    total += 1;
    if (waiter && total === conns.length * events) waiter();
  } else extra += 1;
}

function noteClose(code: number): void {
  closedEarly += 1;
  closeCodes.set(code, (closeCodes.get(code) ?? 0) + 1);
}

const CH_OPEN = 0x7b; // '{'
const CH_I = 0x69; // 'i' of {"id": an event frame; control frames start {"type":
const CH_0 = 0x30;
const CH_2 = 0x32;
const CH_4 = 0x34;

function openWs(i: number, protocol: Protocol, url: string, key: string): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, {
      headers: protocol === 'svc' ? { authorization: `Bearer ${key}` } : {},
      perMessageDeflate: false,
      skipUTF8Validation: true,
    });
    let ready = false;
    const conn: Conn = { close: () => ws.terminate() };
    const becomeReady = () => {
      if (ready) return;
      ready = true;
      resolve(conn);
    };
    ws.on('message', (data: WebSocket.RawData) => {
      if (!Buffer.isBuffer(data)) return;
      if (protocol === 'eio') {
        // Engine.IO v4 over WebSocket: 0 open, 2 ping, 4 message (40 connect ack, 42 event).
        if (data[0] === CH_4 && data[1] === CH_2) onEvent(i);
        else if (data[0] === CH_2) ws.send('3');
        else if (data[0] === CH_0) ws.send('40');
        else if (data[0] === CH_4 && data[1] === CH_0) becomeReady();
        return;
      }
      if (data[0] === CH_OPEN && data[2] === CH_I) onEvent(i);
      else becomeReady(); // svc: the `subscribed` frame says the subscriber is registered
    });
    ws.once('open', () => {
      if (protocol === 'bare') becomeReady();
    });
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode} on upgrade`)));
    ws.once('error', (e) => {
      if (!ready) reject(e);
    });
    ws.once('close', (code) => {
      if (!ready) reject(new Error(`closed ${code} before ready`));
      else if (!closing) noteClose(code);
    });
  });
}

/**
 * A minimal RFC 6455 client on a bare TCP socket, for the svc and bare protocols: it performs the
 * upgrade, then only walks frame headers (text frames are timestamped once per read, since they
 * arrived together), answers pings and notes close codes. It does a fraction of the work of a
 * full `ws` client per frame, so on a machine where clients and server share the cores less of
 * the measured latency is the clients' own. BENCH_CLIENT=lean selects it; the default is `ws`.
 */
function openLean(i: number, protocol: Protocol, url: string, key: string): Promise<Conn> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port), noDelay: true });
    let ready = false;
    let upgraded = false;
    let closeNoted = false;
    let buf: Buffer = Buffer.alloc(0);
    const conn: Conn = { close: () => socket.destroy() };
    const becomeReady = () => {
      if (ready) return;
      ready = true;
      resolve(conn);
    };
    socket.once('connect', () => {
      const headers = [
        `GET ${u.pathname}${u.search} HTTP/1.1`,
        `Host: ${u.host}`,
        'Upgrade: websocket',
        'Connection: Upgrade',
        `Sec-WebSocket-Key: ${crypto.randomBytes(16).toString('base64')}`,
        'Sec-WebSocket-Version: 13',
        ...(protocol === 'svc' ? [`Authorization: Bearer ${key}`] : []),
      ];
      socket.write(`${headers.join('\r\n')}\r\n\r\n`);
    });
    const control = (opcode: number, payload: Buffer) => {
      // Client frames are masked; a zero mask keeps the payload as is.
      const head = Buffer.from([0x80 | opcode, 0x80 | payload.length, 0, 0, 0, 0]);
      socket.write(Buffer.concat([head, payload]));
    };
    socket.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      if (!upgraded) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = buf.subarray(0, buf.indexOf('\r\n')).toString();
        if (!status.startsWith('HTTP/1.1 101')) {
          reject(new Error(`${status} on upgrade`));
          socket.destroy();
          return;
        }
        upgraded = true;
        buf = buf.subarray(end + 4);
        if (protocol === 'bare') becomeReady();
      }
      let at = 0;
      const t = now();
      while (buf.length - at >= 2) {
        const opcode = buf[at] & 0x0f;
        let len = buf[at + 1] & 0x7f;
        let head = 2;
        if (len === 126) {
          if (buf.length - at < 4) break;
          len = buf.readUInt16BE(at + 2);
          head = 4;
        } else if (len === 127) {
          if (buf.length - at < 10) break;
          len = Number(buf.readBigUInt64BE(at + 2));
          head = 10;
        }
        if (buf.length - at < head + len) break;
        const p = at + head;
        at = p + len;
        if (opcode === 0x1) {
          if (buf[p] === CH_OPEN && buf[p + 2] === CH_I) {
            onEvent(i, t);
          } else becomeReady(); // svc: the `subscribed` frame
        } else if (opcode === 0x9) control(0xa, buf.subarray(p, at));
        else if (opcode === 0x8) {
          const code = len >= 2 ? buf.readUInt16BE(p) : 1005;
          if (!ready) reject(new Error(`closed ${code} before ready`));
          else if (!closing) noteClose(code);
          closeNoted = true;
          socket.destroy();
          return;
        }
      }
      buf = at === buf.length ? Buffer.alloc(0) : buf.subarray(at);
    });
    socket.once('error', (e) => {
      if (!ready) reject(e);
    });
    socket.once('close', () => {
      if (!ready) reject(new Error('closed before ready'));
      else if (!closing && !closeNoted) noteClose(1006); // gone without a close frame
    });
  });
}

const LF2 = Buffer.from('\n\n');
const ID = Buffer.from('id: ');
const SUBSCRIBED = Buffer.from('event: subscribed');

/**
 * svc's stream as server-sent events (`Accept: text/event-stream`) on a bare TCP socket: it sends
 * the request, then only splits messages at blank lines (an event message starts with `id: `,
 * timestamped once per read like the lean WebSocket client) and notes the end of the response.
 * The same work per frame as the lean WebSocket client, so the two transports compare.
 */
function openSse(i: number, url: string, key: string): Promise<Conn> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port), noDelay: true });
    let ready = false;
    let head = true;
    let buf: Buffer = Buffer.alloc(0);
    const conn: Conn = { close: () => socket.destroy() };
    socket.once('connect', () => {
      socket.write(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${key}\r\n\r\n`);
    });
    socket.on('data', (chunk: Buffer) => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      if (head) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const status = buf.subarray(0, buf.indexOf('\r\n')).toString();
        if (!status.startsWith('HTTP/1.1 200')) {
          reject(new Error(`${status} on the event stream`));
          socket.destroy();
          return;
        }
        head = false;
        buf = buf.subarray(end + 4);
      }
      let at = 0;
      const t = now();
      for (;;) {
        const end = buf.indexOf(LF2, at);
        if (end < 0) break;
        const starts = (prefix: Buffer) => end - at >= prefix.length && buf.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;
        if (starts(ID)) onEvent(i, t);
        else if (!ready && starts(SUBSCRIBED)) {
          ready = true;
          resolve(conn);
        }
        at = end + 2;
      }
      buf = at === buf.length ? Buffer.alloc(0) : buf.subarray(at);
    });
    socket.once('error', (e) => {
      if (!ready) reject(e);
    });
    socket.once('close', () => {
      if (!ready) reject(new Error('closed before ready'));
      else if (!closing) noteClose(1006);
    });
  });
}

function openSio(i: number, url: string): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const socket: Socket = io(url, { transports: ['websocket'], forceNew: true, reconnection: false });
    socket.on('e', () => onEvent(i));
    socket.once('connect', () => resolve({ close: () => socket.disconnect() }));
    socket.once('connect_error', (e) => reject(e));
    socket.on('disconnect', (reason) => {
      if (!closing) noteClose(reason === 'transport close' ? 1006 : 1000);
    });
  });
}

async function connect(protocol: Protocol, url: string, key: string, count: number, concurrency: number): Promise<{ ok: number; failed: number; firstError: string }> {
  const opened: Conn[] = new Array<Conn>(count);
  let next = 0;
  let failed = 0;
  let firstError = '';
  const worker = async () => {
    while (next < count) {
      const i = next++;
      try {
        opened[i] = protocol === 'sse' ? await openSse(i, url, key) : protocol === 'sio' ? await openSio(i, url) : LEAN && (protocol === 'svc' || protocol === 'bare') ? await openLean(i, protocol, url, key) : await openWs(i, protocol, url, key);
      } catch (e) {
        failed += 1;
        if (!firstError) firstError = e instanceof Error ? e.message : String(e);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
  conns = opened.filter((c): c is Conn => c !== undefined);
  return { ok: conns.length, failed, firstError };
}

onParent(async (m) => {
  switch (m.op) {
    case 'connect': {
      const protocol = PROTOCOLS.find((p) => p === m.protocol);
      if (!protocol) throw new Error(`unknown protocol ${String(m.protocol)}`);
      const t0 = now();
      const r = await connect(protocol, str(m, 'url'), str(m, 'key'), num(m, 'count'), num(m, 'concurrency'));
      toParent({ op: 'connected', ...r, ms: now() - t0 });
      return;
    }
    case 'arm': {
      events = num(m, 'events');
      recv = new Float64Array(conns.length * events).fill(NaN);
      got = new Uint32Array(conns.length);
      total = 0;
      extra = 0;
      toParent({ op: 'armed', sockets: conns.length });
      return;
    }
    case 'collect': {
      const expected = conns.length * events;
      if (total < expected) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, num(m, 'timeoutMs'));
          waiter = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        waiter = null;
      }
      toParent({ op: 'result', recv, total, expected, extra, closedEarly, closeCodes: JSON.stringify([...closeCodes]) });
      return;
    }
    case 'close': {
      closing = true;
      for (const c of conns) c.close();
      conns = [];
      toParent({ op: 'closed' });
      setTimeout(() => process.exit(0), 200).unref();
      return;
    }
    default:
      throw new Error(`unknown op ${m.op}`);
  }
});
toParent({ op: 'ready' });
