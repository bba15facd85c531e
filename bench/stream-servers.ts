// Child of bench/stream.ts: one fan-out server, driven over IPC.
//   harness   svc's real app (buildApp: the gateway, auth, filters) on the bench data dir; events
//             are synthetic StoredEvents handed to services.bus.publish, as ingestion does after
//             its append. Measures the gateway's fan-out without the ingestion path in front.
//   bare      a plain `ws` server sending one pre-serialised frame (the same bytes) to every client.
//   raw       the floor of any Node server: the frame built once (header and payload) and handed to
//             each client's TCP socket with one socket.write, no WebSocket library on the send path.
//   coalesce  the same, with writes coalesced per subscriber (the prototype of the gateway's flush, kept for comparison).
//   socketio  a Socket.IO server (websocket transport) doing io.emit of the same event.
// Every mode publishes the same way: one event per event-loop turn (setImmediate), E events; or,
// for latency, one event every gapMs.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { Server as SocketIoServer } from 'socket.io';
import { wireEvent } from '@svc/schema';
import { buildApp, runImport, loadConfig, systemClock, openStore, type StoredEvent, textFrame } from '@svc/server';
import { BENCH_DATA, BENCH_KEY } from './lib.js';
import { num, onParent, toParent, now, syntheticEvent } from './stream-common.js';

interface FanOut {
  /** Sends event number k (0-based) of a run to every connected client. */
  publish(k: number): void;
  /** Prepares a run of `count` events (outside the timed loop). */
  prepare(count: number): void;
  connections(): number;
}

/** Publishes `count` events: one per event-loop turn (gapMs 0), or one every gapMs (latency runs). */
function publishLoop(count: number, fanout: FanOut, gapMs: number): Promise<Float64Array> {
  const times = new Float64Array(count);
  return new Promise((resolve) => {
    let k = 0;
    const step = () => {
      times[k] = now();
      fanout.publish(k);
      k += 1;
      if (k === count) resolve(times);
      else if (gapMs > 0) setTimeout(step, gapMs);
      else setImmediate(step);
    };
    setImmediate(step);
  });
}

async function bare(port: number): Promise<FanOut> {
  const frame = Buffer.from(JSON.stringify(wireEvent(syntheticEvent(1, Date.now()).event)));
  const wss = new WebSocketServer({ port, host: '127.0.0.1', perMessageDeflate: false, backlog: 4096 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  return {
    prepare: () => undefined,
    publish: () => {
      for (const c of wss.clients) c.send(frame, { binary: false });
    },
    connections: () => wss.clients.size,
  };
}

async function raw(port: number): Promise<FanOut> {
  const frame = textFrame(Buffer.from(JSON.stringify(wireEvent(syntheticEvent(1, Date.now()).event))));
  const server = http.createServer();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const sockets = new Set<Duplex>();
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    wss.handleUpgrade(req, socket, head, (ws) => {
      sockets.add(socket);
      ws.once('close', () => sockets.delete(socket));
    });
  });
  await new Promise<void>((resolve) => server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => resolve()));
  return {
    prepare: () => undefined,
    publish: () => {
      for (const s of sockets) s.write(frame);
    },
    connections: () => sockets.size,
  };
}

/**
 * Bench-only prototype of the change proposed for the gateway: a publish appends the event's
 * frame to one shared list (O(1), whatever the subscriber count); a flusher walks the subscribers
 * in chunks of 500 per event-loop turn and writes every frame a subscriber has not had yet inside
 * one cork()/uncork() of its socket, so the kernel sees one writev per subscriber per pass. Under
 * load a pass carries several events; a lone event still goes out in one pass.
 */
async function coalesce(port: number): Promise<FanOut> {
  const frame = Buffer.from(JSON.stringify(wireEvent(syntheticEvent(1, Date.now()).event)));
  const server = http.createServer();
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false });
  const subs: { ws: WebSocket; raw: Duplex; cursor: number }[] = [];
  const frames: Buffer[] = [];
  let base = 0; // sequence number of frames[0]
  let running = false;
  server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    wss.handleUpgrade(req, socket, head, (ws) => subs.push({ ws, raw: socket, cursor: base + frames.length }));
  });
  await new Promise<void>((resolve) => server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => resolve()));
  const CHUNK = 500;
  const pass = (from: number): void => {
    const head = base + frames.length;
    const end = Math.min(subs.length, from + CHUNK);
    for (let i = from; i < end; i++) {
      const s = subs[i];
      if (s.cursor >= head || s.ws.readyState !== s.ws.OPEN) continue;
      if (s.ws.bufferedAmount > 1024 * 1024) {
        s.ws.close(4008, 'slow_consumer');
        continue;
      }
      s.raw.cork();
      for (let q = s.cursor; q < head; q++) s.ws.send(frames[q - base], { binary: false });
      s.raw.uncork();
      s.cursor = head;
    }
    if (end < subs.length) {
      setImmediate(pass, end);
      return;
    }
    const last = base + frames.length;
    if (subs.some((s) => s.cursor < last)) {
      setImmediate(pass, 0); // published during this pass
      return;
    }
    base = last;
    frames.length = 0;
    running = false;
  };
  return {
    prepare: () => undefined,
    publish: () => {
      frames.push(frame);
      if (!running) {
        running = true;
        setImmediate(pass, 0);
      }
    },
    connections: () => subs.length,
  };
}

async function socketio(port: number): Promise<FanOut> {
  const server = http.createServer();
  const sio = new SocketIoServer(server, { transports: ['websocket'], serveClient: false, perMessageDeflate: false });
  await new Promise<void>((resolve) => server.listen({ port, host: '127.0.0.1', backlog: 4096 }, () => resolve()));
  const wire = wireEvent(syntheticEvent(1, Date.now()).event);
  return {
    prepare: () => undefined,
    publish: () => {
      sio.emit('e', wire);
    },
    connections: () => sio.engine.clientsCount,
  };
}

async function harness(port: number): Promise<FanOut> {
  const { db, config } = await openStore(
    loadConfig({
      SVC_DATA_DIR: BENCH_DATA,
      SVC_SIMULATOR: 'off',
      SVC_LOG_LEVEL: 'silent',
      SVC_BOOTSTRAP_KEY: BENCH_KEY,
    }),
  );
  await runImport(db, systemClock, () => undefined);
  const { app, services, gateway } = await buildApp({ config, db, clock: systemClock });
  await services.keys.ensureBootstrap(BENCH_KEY, new Date());
  await app.listen({ port, host: '127.0.0.1', backlog: 4096 });
  let batch: StoredEvent[] = [];
  let seq = 1_000_000_000;
  return {
    // Distinct event objects, as the log hands out: each is serialised once, in its broadcast.
    prepare: (count) => {
      batch = Array.from({ length: count }, () => syntheticEvent(++seq, Date.now()));
    },
    publish: (k) => {
      void services.bus.publish([batch[k]]);
    },
    connections: () => gateway.connections,
  };
}

async function main() {
  const [mode, portArg] = process.argv.slice(2);
  const port = Number(portArg);
  const modes: Record<string, (port: number) => Promise<FanOut>> = { bare, raw, coalesce, socketio, harness };
  const start = modes[mode];
  if (!start) throw new Error(`unknown mode '${mode}' (${Object.keys(modes).join(' | ')})`);
  const fanout = await start(port);
  onParent(async (m) => {
    if (m.op === 'stats') toParent({ op: 'stats', connections: fanout.connections() });
    else if (m.op === 'publish') {
      const count = num(m, 'events');
      fanout.prepare(count);
      const times = await publishLoop(count, fanout, num(m, 'gapMs'));
      toParent({ op: 'published', times });
    } else throw new Error(`unknown op ${m.op}`);
  });
  // A clean exit on SIGTERM, so --cpu-prof (BENCH_CPU_PROF) writes its profile.
  process.once('SIGTERM', () => process.exit(0));
  toParent({ op: 'ready' });
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
