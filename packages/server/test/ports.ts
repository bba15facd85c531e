import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Ports for the processes a test starts itself (svc, its own Redis, its own PostgreSQL).
 *
 * A port picked by listening on port 0 and closing again is in the kernel's ephemeral range, so
 * between the pick and the child's own listen (or while a test has its Redis stopped) another
 * test's listen(0) or outgoing connection may take it, and the test then talks to a stranger.
 * These ports come from below that range, where nothing is handed out by the kernel, and each is
 * reserved by an exclusively created file that every test process, in Node or Python
 * (clients/python/tests/conftest.py), honours; docs/testing.md "Ports".
 */
const RESERVATIONS = path.join(os.tmpdir(), 'svc-test-ports');
const LOWEST = 10_000;
/** A reservation older than this is from a run that is over. */
const RESERVATION_TTL_MS = 30 * 60_000;

function ephemeralLow(): number {
  try {
    const low = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST + 1000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

function reserve(port: number): boolean {
  const file = path.join(RESERVATIONS, String(port));
  try {
    fs.closeSync(fs.openSync(file, 'wx'));
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  try {
    if (Date.now() - fs.statSync(file).mtimeMs < RESERVATION_TTL_MS) return false;
    fs.rmSync(file, { force: true });
    fs.closeSync(fs.openSync(file, 'wx'));
    return true;
  } catch {
    return false;
  }
}

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

export async function freePort(): Promise<number> {
  fs.mkdirSync(RESERVATIONS, { recursive: true });
  const high = ephemeralLow();
  for (let attempt = 0; attempt < 1000; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (high - LOWEST));
    if (reserve(port) && (await bindable(port))) return port;
  }
  throw new Error(`no free port between ${LOWEST} and ${high}`);
}
