// Child of bench/stream.ts: holds many stream connections and timestamps every event frame.
// Protocols: svc (the gateway), bare (a plain ws server), eio (Socket.IO spoken over a plain ws
// client: the same client cost as the others) and sio (the official socket.io-client).
import WebSocket from 'ws';
import { io, type Socket } from 'socket.io-client';
import { num, onParent, str, toParent, now } from './stream-common.js';

type Protocol = 'svc' | 'bare' | 'eio' | 'sio';
const PROTOCOLS: readonly Protocol[] = ['svc', 'bare', 'eio', 'sio'];

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

function onEvent(i: number): void {
  const c = got[i];
  if (c < events) {
    recv[i * events + c] = now();
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
        opened[i] = protocol === 'sio' ? await openSio(i, url) : await openWs(i, protocol, url, key);
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
